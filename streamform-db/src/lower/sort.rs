//! ORDER BY: a Sort node, over a bounded append input only.

use datafusion_expr::Expr as DfExpr;
use streamform_ir::{Boundedness, Operator, SortKey, State};

use crate::diagnostic::{Code, Diagnostic};

use super::lowering::*;

impl Lowering<'_> {
    /// An ORDER BY over a bounded append input: one Sort node.
    pub(super) fn sort(&mut self, s: &datafusion_expr::logical_plan::Sort) -> Lowered<()> {
        if s.fetch.is_some() {
            return Err(self.err(
                Code::UnsupportedSql,
                "LIMIT is not supported yet".into(),
                "filter with WHERE instead",
            ));
        }
        if self.boundedness == Boundedness::Unbounded {
            return Err(Diagnostic::error(
                Code::UnboundedSort,
                format!(
                    "could not compile model `{m}`: model `{m}`: ORDER BY cannot produce a final ordering over an unbounded input; remove it, or sort downstream of a bounded materialization",
                    m = self.model
                ),
            )
            .with_help("ORDER BY needs an input that ends, such as a file source")
            .with_span(self.query.order_by.as_ref().and_then(|o| {
                use sqlparser::ast::Spanned;
                // The parser's span covers the keys: from the ORDER keyword before them.
                let keys = crate::sql::byte_span(self.text, o.span())?;
                let order = self.text[..keys.start].to_ascii_lowercase().rfind("order");
                Some(order.unwrap_or(keys.start)..keys.end)
            })));
        }
        if self.changelog.is_updating() {
            return Err(self.err(
                Code::UpdatingInput,
                "ORDER BY over an updating input is not supported yet".into(),
                "sort an append-only input",
            ));
        }
        let df = s.input.schema();
        let mut keys = Vec::new();
        for k in &s.expr {
            let DfExpr::Column(c) = &k.expr else {
                return Err(self.err(
                    Code::UnsupportedSql,
                    format!("ORDER BY `{}` is not a column", k.expr),
                    "order by output columns",
                ));
            };
            keys.push(SortKey {
                column: self.column(df, c)?.name,
                descending: !k.asc,
            });
        }
        let schema = self.schema.clone();
        self.push(Operator::Sort { keys }, schema, State::Stateless);
        Ok(())
    }
}
