//! OVER aggregations as the SQL validator accepts them (docs/over.md): SUM, COUNT, MIN, MAX
//! or AVG over a window written in the call, partitioned by plain columns, ordered by one
//! column, with a frame from UNBOUNDED PRECEDING, n PRECEDING (ROWS) or INTERVAL …
//! PRECEDING (RANGE) up to the current row. That the order is the time attribute, and the
//! input appends, is checked when the plan is lowered.

use sqlparser::ast::{self, Expr as SqlExpr, Spanned};

use super::Validator;

/// How an OVER aggregation is written, for the help lines.
pub(crate) const OVER_SHAPE: &str = "SUM(amount) OVER (PARTITION BY customer_id ORDER BY ordered_at ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)";

/// Whether `name` (lower case) is an aggregate an OVER clause may run.
pub(crate) fn over_aggregate(name: &str) -> bool {
    matches!(name, "sum" | "count" | "min" | "max" | "avg" | "lag")
}

/// Writes each named window (`WINDOW w AS (…)`, read with `OVER w`) into the calls that
/// read it, and drops the WINDOW clauses, so that what follows sees every window in its
/// call. The definitions keep their own positions, so an error in one points at it. A
/// name defined twice, a definition naming another window, or a call adding to a named
/// window (`OVER (w ORDER BY …)`) is left as written, for the check to refuse.
pub(crate) fn inline_named_windows(q: &mut ast::Query) {
    use std::collections::HashMap;
    use std::ops::ControlFlow;

    /// Every definition of the query and its subqueries, by name; `None` for a name
    /// defined twice or as another window.
    #[derive(Default)]
    struct Definitions(HashMap<String, Option<ast::WindowSpec>>);

    impl ast::VisitorMut for Definitions {
        type Break = ();
        fn pre_visit_query(&mut self, q: &mut ast::Query) -> ControlFlow<()> {
            self.take(q.body.as_mut());
            ControlFlow::Continue(())
        }
    }

    impl Definitions {
        /// Takes the definitions of each SELECT of `body` (each branch of a UNION ALL).
        fn take(&mut self, body: &mut ast::SetExpr) {
            match body {
                ast::SetExpr::Select(select) => {
                    let mut kept = Vec::new();
                    for def in std::mem::take(&mut select.named_window) {
                        let name = def.0.value.clone();
                        match (&def.1, self.0.contains_key(&name)) {
                            (ast::NamedWindowExpr::WindowSpec(spec), false)
                                if spec.window_name.is_none() =>
                            {
                                self.0.insert(name, Some(spec.clone()));
                            }
                            _ => {
                                self.0.insert(name, None);
                                kept.push(def);
                            }
                        }
                    }
                    select.named_window = kept;
                }
                ast::SetExpr::SetOperation { left, right, .. } => {
                    self.take(left);
                    self.take(right);
                }
                _ => {}
            }
        }
    }

    let mut defs = Definitions::default();
    let _ = ast::VisitMut::visit(q, &mut defs);
    if defs.0.is_empty() {
        return;
    }
    let _ = ast::visit_expressions_mut(q, |e| {
        if let SqlExpr::Function(f) = e
            && let Some(ast::WindowType::NamedWindow(name)) = &f.over
            && let Some(Some(spec)) = defs.0.get(&name.value)
        {
            f.over = Some(ast::WindowType::WindowSpec(spec.clone()));
        }
        ControlFlow::<()>::Continue(())
    });
}

impl Validator<'_> {
    /// The aggregate call `f` with an OVER clause (`e`, the whole call).
    pub(super) fn over_call(&mut self, e: &SqlExpr, f: &ast::Function, aggregates_allowed: bool) {
        let name = f.name.to_string().to_ascii_uppercase();
        if !aggregates_allowed {
            self.refuse(
                &format!("{name}(…) OVER (…) here"),
                e.span(),
                "an OVER aggregation is a column of the SELECT list; to filter on it, select it in a subquery and filter in the query around it",
            );
            return;
        }
        if f.filter.is_some() {
            self.refuse(
                &format!("FILTER on {name}(…) OVER (…)"),
                e.span(),
                "aggregate a CASE instead: SUM(CASE WHEN status = 'paid' THEN amount END) OVER (…)",
            );
        }
        let spec = match &f.over {
            Some(ast::WindowType::WindowSpec(spec)) if spec.window_name.is_none() => spec,
            Some(ast::WindowType::NamedWindow(name)) => {
                self.refuse(
                    &format!("OVER {name}, a window this SELECT does not define once,"),
                    e.span(),
                    &format!("define it once in the SELECT that reads it, WINDOW {name} AS (PARTITION BY … ORDER BY …), or write the window in the call: {OVER_SHAPE}"),
                );
                return;
            }
            _ => {
                self.refuse(
                    "a named window with more written after it",
                    e.span(),
                    &format!(
                        "write the whole window in the WINDOW clause or in the call: {OVER_SHAPE}"
                    ),
                );
                return;
            }
        };
        for p in &spec.partition_by {
            if !super::ranking::plain_column(p) {
                self.refuse(
                    "PARTITION BY an expression",
                    p.span(),
                    "partition by columns: compute the value as a column in a subquery or a model this one reads with ref(), then PARTITION BY that column",
                );
            }
        }
        // Without ORDER BY the planned query says why (the input's time attribute, or its
        // lack of one, is known there).
        match spec.order_by.as_slice() {
            [] => {}
            [o] => {
                if !super::ranking::plain_column(&o.expr) {
                    self.refuse(
                        "ORDER BY an expression in OVER",
                        o.expr.span(),
                        "order by the time attribute of the input, as a plain column",
                    );
                }
                if o.options.asc == Some(false) {
                    self.refuse(
                        "a descending order in OVER",
                        o.span(),
                        "an OVER aggregation runs forward in time: ORDER BY the time attribute ascending (remove DESC)",
                    );
                }
                if o.options.nulls_first.is_some() {
                    self.refuse(
                        "NULLS FIRST or NULLS LAST in OVER",
                        o.span(),
                        "the time attribute has no nulls; remove NULLS FIRST or NULLS LAST",
                    );
                }
            }
            [_, second, ..] => self.refuse(
                "ordering an OVER aggregation by several columns",
                second.span(),
                "order by the time attribute alone; rows of the same time are taken in arrival order (ROWS) or together (RANGE)",
            ),
        }
        if let Some(frame) = &spec.window_frame {
            self.over_frame(e, frame);
        }
        if name == "LAG" {
            self.lag(e, f);
            return;
        }
        // The call itself, as the same aggregate without OVER.
        let mut plain = f.clone();
        plain.over = None;
        self.function(e, &plain, true);
    }

    /// LAG's arguments: a value, and an offset written as a number.
    fn lag(&mut self, e: &SqlExpr, f: &ast::Function) {
        let args: Vec<&ast::FunctionArg> = match &f.args {
            ast::FunctionArguments::List(l) if l.duplicate_treatment.is_none() => {
                l.args.iter().collect()
            }
            _ => Vec::new(),
        };
        let expr = |a: &ast::FunctionArg| match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => Some(x.clone()),
            _ => None,
        };
        match args.as_slice() {
            [value] | [value, _] if expr(value).is_some() => {
                if let Some(x) = expr(value) {
                    self.expr(&x, false);
                }
                if let Some(offset) = args.get(1) {
                    let number = matches!(
                        expr(offset),
                        Some(SqlExpr::Value(v)) if matches!(&v.value, ast::Value::Number(n, false) if n.parse::<u32>().is_ok())
                    );
                    if !number {
                        self.refuse(
                            "this offset of LAG",
                            e.span(),
                            "write the offset as a number of rows: LAG(amount, 2) OVER (…)",
                        );
                    }
                }
            }
            [_, _, _] => self.refuse(
                "LAG with a default value",
                e.span(),
                "write LAG(x) or LAG(x, n), which is null before the partition has n earlier rows; COALESCE(LAG(x) OVER (…), d) also replaces a null value of x",
            ),
            _ => self.refuse(
                "this call of LAG",
                e.span(),
                "write LAG(x) OVER (…) or LAG(x, n) OVER (…)",
            ),
        }
    }

    /// The frame of an OVER aggregation: from UNBOUNDED PRECEDING or a bound PRECEDING up
    /// to the current row. The parser keeps no span for a frame: refusals point at the call.
    fn over_frame(&mut self, e: &SqlExpr, frame: &ast::WindowFrame) {
        let rows = match frame.units {
            ast::WindowFrameUnits::Rows => true,
            ast::WindowFrameUnits::Range => false,
            ast::WindowFrameUnits::Groups => {
                self.refuse(
                    "a GROUPS frame",
                    e.span(),
                    "Flink's OVER frames are ROWS (a number of rows) or RANGE (a time before the row): ROWS BETWEEN 2 PRECEDING AND CURRENT ROW, RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW",
                );
                return;
            }
        };
        let ends_at_row = matches!(
            frame.end_bound,
            None | Some(ast::WindowFrameBound::CurrentRow)
        );
        if !ends_at_row {
            self.refuse(
                "a frame that does not end at the current row",
                e.span(),
                "Flink's OVER frame runs from a bound before each row up to the row itself: … PRECEDING AND CURRENT ROW",
            );
        }
        match &frame.start_bound {
            ast::WindowFrameBound::Preceding(None) => {}
            ast::WindowFrameBound::Preceding(Some(bound)) => {
                let fits = match (rows, bound.as_ref()) {
                    (true, SqlExpr::Value(v)) => {
                        matches!(&v.value, ast::Value::Number(n, false) if n.parse::<u32>().is_ok())
                    }
                    // Under 1000 days, which Flink's code generation takes.
                    (false, SqlExpr::Interval(i)) => {
                        self.interval(i, bound.span())
                            && crate::interval::read(i).is_ok_and(|i| {
                                i.months == 0 && (0..1000 * 86_400_000).contains(&i.millis)
                            })
                    }
                    _ => false,
                };
                if !fits {
                    let (what, help) = if rows {
                        (
                            "this ROWS bound",
                            "a ROWS frame counts rows back: ROWS BETWEEN 2 PRECEDING AND CURRENT ROW",
                        )
                    } else {
                        (
                            "this RANGE bound",
                            "a RANGE frame reaches back a time, in days, hours, minutes or seconds, under 1000 days: RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW",
                        )
                    };
                    self.refuse(what, bound.span(), help);
                }
            }
            ast::WindowFrameBound::CurrentRow | ast::WindowFrameBound::Following(_) => {
                self.refuse(
                    "a frame that starts at or after the current row",
                    e.span(),
                    "an OVER frame reaches back from the current row: ROWS BETWEEN 2 PRECEDING AND CURRENT ROW, or UNBOUNDED PRECEDING for every earlier row",
                );
            }
        }
    }
}
