//! `ROW_NUMBER() OVER (…)` as the SQL validator accepts it (docs/ranking.md): a column of a
//! SELECT list, numbering the rows of each partition by plain columns. Whether the model
//! filters it to a top is checked when the plan is lowered.

use sqlparser::ast::{self, Expr as SqlExpr, Spanned};

use super::Validator;

/// How a ROW_NUMBER column is written, for the help lines.
pub(crate) const ROW_NUMBER_SHAPE: &str = "SELECT … FROM (SELECT …, ROW_NUMBER() OVER (PARTITION BY category ORDER BY revenue DESC) AS rn FROM …) WHERE rn <= 3";

impl Validator<'_> {
    /// A select item `e`, the call `f` with an OVER clause: ROW_NUMBER is checked here, every
    /// other function over a window is refused by [`Validator::function`].
    pub(super) fn select_item_over(&mut self, e: &SqlExpr, f: &ast::Function) {
        let name = f.name.to_string().to_ascii_lowercase();
        if name != "row_number" {
            self.function(e, f, true);
            return;
        }
        let no_args = match &f.args {
            ast::FunctionArguments::None => true,
            ast::FunctionArguments::List(l) => l.args.is_empty() && l.clauses.is_empty(),
            ast::FunctionArguments::Subquery(_) => false,
        };
        if !no_args {
            self.refuse(
                "ROW_NUMBER with arguments",
                e.span(),
                "ROW_NUMBER() takes no arguments; the partition and the order go in OVER (PARTITION BY … ORDER BY …)",
            );
        }
        if f.filter.is_some() || f.null_treatment.is_some() || !f.within_group.is_empty() {
            self.refuse(
                "this clause on ROW_NUMBER",
                e.span(),
                "write ROW_NUMBER() OVER (PARTITION BY … ORDER BY …) alone",
            );
        }
        let spec = match &f.over {
            Some(ast::WindowType::WindowSpec(spec)) if spec.window_name.is_none() => spec,
            _ => {
                self.refuse(
                    "a named window for ROW_NUMBER",
                    e.span(),
                    "write the window in the call: ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)",
                );
                return;
            }
        };
        if spec.window_frame.is_some() {
            // The parser keeps no span for a frame: point at the call.
            self.refuse(
                "a window frame for ROW_NUMBER",
                e.span(),
                "ROW_NUMBER numbers every row of the partition; remove the ROWS or RANGE clause",
            );
        }
        for p in &spec.partition_by {
            if !plain_column(p) {
                self.refuse(
                    "PARTITION BY an expression",
                    p.span(),
                    "partition by columns: compute the value as a column in a subquery or a model this one reads with ref(), then PARTITION BY that column",
                );
            }
        }
        if spec.order_by.is_empty() {
            self.refuse(
                "ROW_NUMBER without ORDER BY",
                e.span(),
                "say which rows come first: ROW_NUMBER() OVER (PARTITION BY … ORDER BY revenue DESC); Flink needs the order to keep the top rows",
            );
        }
        for o in &spec.order_by {
            if !plain_column(&o.expr) {
                self.refuse(
                    "ORDER BY an expression in OVER",
                    o.expr.span(),
                    "order by columns: compute the value as a column in a subquery or a model this one reads with ref(), then ORDER BY that column",
                );
            }
            // Flink puts nulls first in an ascending order, last in a descending one.
            let descending = o.options.asc == Some(false);
            if let Some(first) = o.options.nulls_first
                && first == descending
            {
                let written = if first { "NULLS FIRST" } else { "NULLS LAST" };
                let order = if descending {
                    "a descending"
                } else {
                    "an ascending"
                };
                self.refuse(
                    &format!("{written} in {order} order"),
                    o.span(),
                    "Flink puts nulls first in an ascending order and last in a descending one; to rank nulls elsewhere, replace them with COALESCE in a column of a subquery, then ORDER BY that column",
                );
            }
        }
    }
}

/// Whether `e` names a column (`revenue`, `t.revenue`).
pub(super) fn plain_column(e: &SqlExpr) -> bool {
    match e {
        SqlExpr::Identifier(_) | SqlExpr::CompoundIdentifier(_) => true,
        SqlExpr::Nested(inner) => plain_column(inner),
        _ => false,
    }
}
