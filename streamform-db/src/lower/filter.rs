//! WHERE and HAVING: a Filter node.

use streamform_ir::{DataType, Operator, State};

use crate::diagnostic::Code;

use super::expr::*;
use super::lowering::*;

impl Lowering<'_> {
    /// A WHERE (or, past the aggregation, the HAVING): one Filter node.
    pub(super) fn filter(&mut self, f: &datafusion_expr::logical_plan::Filter) -> Lowered<()> {
        let df = f.input.schema();
        let predicate = self.expr(df, &f.predicate).map_err(|d| {
            if d.span.is_some() {
                return d;
            }
            let parts = Parts::of(self.query, self.text);
            d.with_span(if self.aggregated {
                parts.having
            } else {
                parts.selection
            })
        })?;
        let predicate = retype_null(predicate, DataType::Boolean);
        self.expect_boolean(&predicate, "a filter")?;
        if self.window.is_some()
            && let Some(col) = predicate
                .columns()
                .into_iter()
                .find(|c| streamform_ir::WINDOW_COLUMNS.contains(c))
        {
            return Err(self
                .err(
                    Code::UnsupportedSql,
                    format!("a WHERE over the window's column `{col}` is not supported yet"),
                    "filter windows after aggregating them, with HAVING, or filter rows on their own columns",
                )
                .with_span(Parts::of(self.query, self.text).selection));
        }
        let mut schema = self.schema.clone();
        for col in not_null_columns(&predicate) {
            if let Some(field) = schema.iter_mut().find(|f| f.name == col) {
                field.nullable = false;
            }
        }
        self.push(Operator::Filter { predicate }, schema, State::Stateless);
        Ok(())
    }
}
