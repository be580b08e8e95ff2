//! GROUP BY: an Aggregate node, or a Window node over a window table (docs/windows.md).

use datafusion_common::DFSchemaRef;
use datafusion_expr::Expr as DfExpr;
use datafusion_expr::expr::AggregateFunction;
use streamform_ir::{
    AggCall, AggFunc, Changelog, Field, KeyedState, Operator, ProjectItem, Retention, State,
};

use crate::diagnostic::Code;

use super::expr::*;
use super::lowering::*;

impl Lowering<'_> {
    /// A GROUP BY: an Aggregate node, or a Window node over a window table, with a Project
    /// in front when a call's argument is an expression.
    pub(super) fn aggregate(
        &mut self,
        a: &datafusion_expr::logical_plan::Aggregate,
    ) -> Lowered<()> {
        self.aggregated = true;
        // Over an updating input the accumulators take the before-image of each update
        // back (docs/changing-tables.md); a window over one is refused at its scan.
        let retracting = self.changelog.is_updating();
        let df = a.input.schema();
        let mut group_by = Vec::new();
        let mut schema = Vec::new();
        // Arguments and grouping expressions (`sum(price * qty)`, `GROUP BY FLOOR(t TO
        // HOUR)`) are computed by a projection in front of the aggregate, as a column named
        // after the expression; the aggregate then reads plain columns, as Flink's plan does.
        let mut computed: Vec<ProjectItem> = Vec::new();
        for g in &a.group_expr {
            let f = match g {
                DfExpr::Column(c) => self.column(df, c)?,
                _ if self.window.is_some() => {
                    return Err(self.err(
                        Code::UnsupportedSql,
                        format!("a window aggregation grouped by the expression `{g}` is not supported yet"),
                        "compute the expression in an upstream model and group the window by its column",
                    ));
                }
                _ => {
                    let expr = self.expr(df, g)?;
                    if untyped_null(&expr) {
                        return Err(self.err(
                            Code::TypeMismatch,
                            "GROUP BY a bare NULL, which has no type".into(),
                            "group by a column or an expression over one",
                        ));
                    }
                    let name = argument_name(&expr);
                    let field = Field {
                        name: name.clone(),
                        ty: expr.data_type(),
                        nullable: may_be_null(&expr, &self.schema),
                    };
                    if !computed.iter().any(|c| c.name == name) {
                        computed.push(ProjectItem { expr, name });
                    }
                    field
                }
            };
            group_by.push(f.name.clone());
            schema.push(f);
        }
        if let Some(w) = self.window {
            let has = |c: &str| group_by.iter().any(|g| g == c);
            if !has(streamform_ir::WINDOW_START) || !has(streamform_ir::WINDOW_END) {
                let missing = if has(streamform_ir::WINDOW_START) {
                    "window_end"
                } else {
                    "window_start"
                };
                return Err(self
                    .err(
                        Code::InvalidAggregate,
                        format!("a window aggregation must group by window_start and window_end; this one leaves out {missing}"),
                        "group by both, and by your key columns: GROUP BY window_start, window_end, page; without both, Flink silently builds an updating aggregate instead of a window",
                    )
                    .with_span(w.span.clone()));
            }
            if matches!(w.kind, streamform_ir::WindowKind::Session { .. }) {
                self.session_key(w, &group_by)?;
            }
        }
        let mut calls: Vec<AggCall> = Vec::new();
        for e in &a.aggr_expr {
            let (call, argument) = self.agg_call(df, e)?;
            if let Some(item) = argument
                && !computed.iter().any(|c| c.name == item.name)
            {
                computed.push(item);
            }
            schema.push(Field {
                name: call.name(),
                ty: call.ty,
                nullable: !matches!(call.func, AggFunc::Count | AggFunc::CountDistinct),
            });
            calls.push(call);
        }
        if let Some(dup) = group_by
            .iter()
            .find(|g| calls.iter().any(|c| c.name() == **g))
        {
            return Err(self.err(
                Code::OutputColumns,
                format!("the aggregate's output would have two columns named `{dup}`: the grouping column and the aggregate call"),
                "rename the source column, or group by it under another name in an upstream model",
            ));
        }
        // A call reads a window column directly, or through an argument computed
        // before the window, where the window's columns do not exist yet.
        let reads_window = |c: &&AggCall| {
            c.arg.as_ref().is_some_and(|a| {
                streamform_ir::WINDOW_COLUMNS.contains(&a.as_str())
                    || computed.iter().any(|item| {
                        &item.name == a
                            && item
                                .expr
                                .columns()
                                .iter()
                                .any(|c| streamform_ir::WINDOW_COLUMNS.contains(c))
                    })
            })
        };
        if let Some(w) = self.window
            && let Some(call) = calls.iter().find(reads_window)
        {
            return Err(self
                .err(
                    Code::UnsupportedSql,
                    format!("the aggregate `{}` over the window's own column is not supported yet", call.name()),
                    "aggregate the input's columns; the window's bounds are in window_start and window_end",
                )
                .with_span(
                    aggregate_over_window_column(self.query, self.text, call.func.name())
                        .or_else(|| w.span.clone()),
                ));
        }
        // An aggregate groups the time attribute away; a window keeps window_time
        // as its output's time attribute when it groups by it.
        self.time = match self.window {
            Some(_) if group_by.iter().any(|g| g == streamform_ir::WINDOW_TIME) => {
                Some(streamform_ir::WINDOW_TIME.to_string())
            }
            _ => None,
        };
        let window = self.window.map(|w| streamform_ir::Window {
            kind: w.kind,
            time: w.time.clone(),
        });
        let state = KeyedState {
            key: group_by.clone(),
            accumulators: streamform_ir::Accumulator::of_calls(&calls),
            retention: Retention::Unbounded,
            window: window.clone(),
            retracting,
            bounds: None,
            ranking: None,
            frame: None,
        };
        if !computed.is_empty() {
            let input = self.schema.clone();
            // What the aggregate reads: its grouping columns and the columns its
            // calls take, in input order, then the computed arguments (and the
            // time column a window needs).
            let read: Vec<&Field> = input
                .iter()
                .filter(|f| {
                    !(window.is_some() && streamform_ir::WINDOW_COLUMNS.contains(&f.name.as_str()))
                        && (group_by.contains(&f.name)
                            || calls.iter().any(|c| c.arg.as_ref() == Some(&f.name))
                            || window.as_ref().is_some_and(|w| w.time == f.name))
                })
                .collect();
            let mut items: Vec<ProjectItem> = read.iter().map(|f| ProjectItem::column(f)).collect();
            let mut fields: Vec<Field> = read.into_iter().cloned().collect();
            for item in computed {
                if fields.iter().any(|f| f.name == item.name) {
                    return Err(self.err(
                        Code::OutputColumns,
                        format!(
                            "the aggregate's argument `{}` has the name of an input column",
                            item.name
                        ),
                        "rename the input column in an upstream model",
                    ));
                }
                fields.push(Field {
                    name: item.name.clone(),
                    ty: item.expr.data_type(),
                    nullable: may_be_null(&item.expr, &input),
                });
                items.push(item);
            }
            // Over an updating input, a projection without the key retracts.
            if let Changelog::Upsert(key) = &self.changelog
                && !key.iter().all(|k| fields.iter().any(|f| f.name == *k))
            {
                self.changelog = Changelog::Retract;
            }
            self.push(
                Operator::Project { items },
                fields.clone(),
                State::Stateless,
            );
            self.schema = fields;
        }
        if let Some(window) = window {
            self.window = None;
            self.changelog = Changelog::Append;
            self.push(
                Operator::Window {
                    window,
                    group_by,
                    calls,
                },
                schema,
                State::Keyed(state),
            );
            return Ok(());
        }
        self.changelog = Changelog::Upsert(group_by.clone());
        self.unkeyed = None;
        self.push(
            Operator::Aggregate { group_by, calls },
            schema,
            State::Keyed(state),
        );
        Ok(())
    }
}

impl Lowering<'_> {
    /// The aggregate call `e`, and the projection item computing its argument when the
    /// argument is an expression rather than a column.
    pub(super) fn agg_call(
        &self,
        df: &DFSchemaRef,
        e: &DfExpr,
    ) -> Lowered<(AggCall, Option<ProjectItem>)> {
        let inner = match e {
            DfExpr::Alias(a) => &*a.expr,
            other => other,
        };
        let DfExpr::AggregateFunction(AggregateFunction { func, params }) = inner else {
            return Err(self.err(
                Code::InvalidAggregate,
                format!("`{e}` is not an aggregate call"),
                crate::sql_help(),
            ));
        };
        self.agg_call_of(df, inner, func.name(), &params.args, params.distinct)
    }

    /// The aggregate call `inner` of the function `func` over `args`, and the projection
    /// item computing its argument when the argument is an expression: an aggregate of a
    /// GROUP BY, or of an OVER clause.
    pub(super) fn agg_call_of(
        &self,
        df: &DFSchemaRef,
        inner: &DfExpr,
        func: &str,
        args: &[DfExpr],
        distinct: bool,
    ) -> Lowered<(AggCall, Option<ProjectItem>)> {
        let e = inner;
        if func == "lag" {
            return self.lag_call(df, e, args);
        }
        let surface = crate::surface::aggregate(func);
        let func_kind = match (surface, distinct) {
            (Some(f), false) => Some(f.func),
            (Some(f), true) => f.distinct,
            (None, _) => None,
        };
        // The SQL check refuses the rest, pointing at the call.
        let Some(func_kind) = func_kind else {
            return Err(self.err(
                Code::UnsupportedSql,
                format!("the aggregate `{e}` is not supported yet"),
                &format!(
                    "the aggregates are {}",
                    crate::surface::aggregate_names(true)
                ),
            ));
        };
        let mut computed = None;
        let arg = match args {
            [DfExpr::Column(c)] => Some(self.column(df, c)?),
            // count(1), count(*): every row.
            [DfExpr::Literal(v, ..)] if func_kind == AggFunc::Count && !v.is_null() => None,
            [] if func_kind == AggFunc::Count => None,
            #[allow(deprecated)]
            [DfExpr::Wildcard { .. }] if func_kind == AggFunc::Count => None,
            [arg] => {
                let expr = self.expr(df, arg)?;
                let name = argument_name(&expr);
                let field = Field {
                    name: name.clone(),
                    ty: expr.data_type(),
                    nullable: true,
                };
                computed = Some(ProjectItem { expr, name });
                Some(field)
            }
            _ => {
                return Err(self.err(
                    Code::InvalidAggregate,
                    format!("`{e}`: an aggregate takes one argument"),
                    "write e.g. sum(amount) or sum(price * qty)",
                ));
            }
        };
        let name = func_kind.call_name(arg.as_ref().map(|f| f.name.as_str()));
        let arg_type = arg.as_ref().map(|f| f.ty);
        if computed.as_ref().is_some_and(|c| untyped_null(&c.expr)) {
            return Err(self
                .err(
                    Code::TypeMismatch,
                    format!("`{name}` aggregates a bare NULL, which has no type"),
                    "write CAST(NULL AS <type>), or aggregate a column",
                )
                .with_span(self.bare_null()));
        }
        let ty = match (func_kind.accumulator_type(arg_type), arg_type) {
            (Some(t), _) => t,
            (None, Some(t)) => {
                return Err(self
                    .err(
                        Code::TypeMismatch,
                        format!("`{name}` is not supported over a {t} column"),
                        "sum and avg take numbers; min and max take numbers, strings, timestamps and dates",
                    )
                    .with_span(self.span_of(inner)));
            }
            (None, None) => {
                return Err(self.err(
                    Code::InvalidAggregate,
                    format!("`{name}` needs a column"),
                    "write e.g. sum(amount)",
                ));
            }
        };
        Ok((
            AggCall {
                func: func_kind,
                arg: arg.map(|f| f.name),
                ty,
            },
            computed,
        ))
    }
}

impl Lowering<'_> {
    /// `LAG(x)` or `LAG(x, n)` in an OVER window (docs/over.md): the value `n` rows before.
    fn lag_call(
        &self,
        df: &DFSchemaRef,
        e: &DfExpr,
        args: &[DfExpr],
    ) -> Lowered<(AggCall, Option<ProjectItem>)> {
        use datafusion_common::ScalarValue as V;
        let offset = match args.get(1) {
            None => Some(1),
            Some(DfExpr::Literal(V::Int64(Some(n)), _)) => u32::try_from(*n).ok(),
            Some(DfExpr::Literal(V::Int32(Some(n)), _)) => u32::try_from(*n).ok(),
            Some(_) => None,
        };
        let (Some(value), Some(offset), true) = (args.first(), offset, args.len() <= 2) else {
            return Err(self.err(
                Code::UnsupportedSql,
                format!("`{e}` is not supported yet"),
                "write LAG(x) OVER (…) or LAG(x, n) OVER (…), n a number of rows",
            ));
        };
        let (arg, computed) = match value {
            DfExpr::Column(c) => (self.column(df, c)?, None),
            other => {
                let expr = self.expr(df, other)?;
                let name = argument_name(&expr);
                let field = Field {
                    name: name.clone(),
                    ty: expr.data_type(),
                    nullable: true,
                };
                (field, Some(ProjectItem { expr, name }))
            }
        };
        Ok((
            AggCall {
                func: AggFunc::Lag(offset),
                ty: arg.ty,
                arg: Some(arg.name),
            },
            computed,
        ))
    }
}

/// Where the first call of the aggregate `name` whose argument reads a window column is
/// written, for the error that refuses it.
fn aggregate_over_window_column(
    query: &sqlparser::ast::Query,
    text: &str,
    name: &str,
) -> Option<std::ops::Range<usize>> {
    use sqlparser::ast::{Expr as SqlExpr, Spanned, visit_expressions};
    let mut found = None;
    let _ = visit_expressions(query, |e| {
        if let SqlExpr::Function(f) = e
            && f.name.to_string().eq_ignore_ascii_case(name)
            && streamform_ir::WINDOW_COLUMNS.iter().any(|c| {
                f.args
                    .to_string()
                    .to_ascii_lowercase()
                    .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                    .any(|word| word == *c)
            })
        {
            found = crate::sql::byte_span(text, e.span());
            return std::ops::ControlFlow::Break(());
        }
        std::ops::ControlFlow::Continue(())
    });
    found
}
