//! Top-N: `ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)` in a subquery, filtered by the
//! query around it to the first rows (docs/ranking.md), lowered into one Rank node, as
//! Flink's planner turns the filter over the row number into its rank operator.
//!
//! Flink emits the row number only when something reads it after the filter; without it,
//! a rank emits another changelog (rows entering and leaving instead of places updated).
//! Which it is, is decided on the planned query before lowering, by following the row
//! number's column up from the filter ([`numbers_read`]).

use std::collections::HashMap;

use datafusion_common::Column;
use datafusion_expr::logical_plan::{Filter, Projection, Window};
use datafusion_expr::{Expr as DfExpr, LogicalPlan, Operator as DfOp};
use streamform_ir::{
    Changelog, DataType, Expr, Field, KeyedState, Operator, ProjectItem, RankStrategy, Ranking,
    SortKey, State, Value,
};

use crate::diagnostic::Code;

use super::Upstreams;
use super::catalog::ROW_NUMBER;
use super::lowering::*;

/// A filter over a ROW_NUMBER column, as the planner plans it: the Window node, the
/// projection over it (the subquery's SELECT list), and where the row number is in the
/// filter's input.
pub(super) struct RankRead<'p> {
    window: &'p Window,
    projection: Option<&'p Projection>,
    /// The row number's index in the filter's input.
    number: usize,
}

/// The ROW_NUMBER a filter reads, when it reads one: through the subquery's alias and
/// SELECT list, down to the Window node.
pub(super) fn rank_read(f: &Filter) -> Option<RankRead<'_>> {
    let mut plan = f.input.as_ref();
    while let LogicalPlan::SubqueryAlias(a) = plan {
        plan = a.input.as_ref();
    }
    let (projection, window) = match plan {
        LogicalPlan::Projection(p) => match p.input.as_ref() {
            LogicalPlan::Window(w) => (Some(p), w),
            _ => return None,
        },
        LogicalPlan::Window(w) => (None, w),
        _ => return None,
    };
    // A Window node of aggregates is an OVER aggregation, which a filter may read.
    if super::over::aggregates_only(window) {
        return None;
    }
    let width = window.input.schema().fields().len();
    let number_col = Column::from(window.schema.qualified_field(width));
    let number = match projection {
        None => width,
        Some(p) => p
            .expr
            .iter()
            .position(|e| matches!(e.clone().unalias(), DfExpr::Column(c) if c == number_col))?,
    };
    Some(RankRead {
        window,
        projection,
        number,
    })
}

/// Whether the row number of each rank filter (by the filter node's address) is read above
/// the filter: by an expression, or as a column the model outputs.
pub(super) fn numbers_read(root: &LogicalPlan) -> HashMap<usize, bool> {
    let mut found = HashMap::new();
    let mut path: Vec<&LogicalPlan> = Vec::new();
    visit(root, &mut path, &mut found);
    found
}

fn visit<'p>(
    plan: &'p LogicalPlan,
    path: &mut Vec<&'p LogicalPlan>,
    found: &mut HashMap<usize, bool>,
) {
    if let LogicalPlan::Filter(f) = plan
        && let Some(read) = rank_read(f)
    {
        found.insert(
            plan as *const LogicalPlan as usize,
            read_above(plan, read.number, path),
        );
    }
    path.push(plan);
    for input in plan.inputs() {
        visit(input, path, found);
    }
    path.pop();
}

/// Whether column `index` of `plan`'s output is read by a node of `path` (its ancestors,
/// the root first) or reaches the root.
fn read_above(plan: &LogicalPlan, index: usize, path: &[&LogicalPlan]) -> bool {
    let mut child = plan;
    let mut tracked = vec![index];
    for parent in path.iter().rev() {
        let cols: Vec<Column> = tracked
            .iter()
            .map(|&i| Column::from(child.schema().qualified_field(i)))
            .collect();
        let reads = |e: &DfExpr| e.column_refs().iter().any(|c| cols.contains(c));
        tracked = match parent {
            LogicalPlan::Projection(p) => {
                let mut next = Vec::new();
                for (k, e) in p.expr.iter().enumerate() {
                    match e.clone().unalias() {
                        DfExpr::Column(c) if cols.contains(&c) => next.push(k),
                        other if reads(&other) => return true,
                        _ => {}
                    }
                }
                next
            }
            _ if parent.expressions().iter().any(reads) => return true,
            // A join's output is its left input's columns, then its right's.
            LogicalPlan::Join(j) if std::ptr::eq(j.right.as_ref(), child) => {
                let offset = j.left.schema().fields().len();
                tracked.iter().map(|i| i + offset).collect()
            }
            // An aggregation outputs only its groups and calls, and reads neither.
            LogicalPlan::Aggregate(_) => Vec::new(),
            // The rest pass their input's columns on in place (a filter, a sort, an
            // alias, a union's branch) without reading it.
            _ => tracked,
        };
        if tracked.is_empty() {
            return false;
        }
        child = parent;
    }
    true
}

/// `rn > 1`: a conjunct as the model wrote it, for a message (the planner's own rendering
/// writes `Int64(1)` and drops a string's quotes).
fn written(e: &DfExpr) -> String {
    use datafusion_common::ScalarValue;
    match e {
        DfExpr::Column(c) => c.name.clone(),
        DfExpr::Literal(ScalarValue::Utf8(Some(s)) | ScalarValue::LargeUtf8(Some(s)), _) => {
            format!("'{}'", s.replace('\'', "''"))
        }
        DfExpr::Literal(v, _) if v.is_null() => "NULL".into(),
        DfExpr::Literal(v, _) => v.to_string(),
        DfExpr::Cast(c) => format!("CAST({} AS {})", written(&c.expr), c.field.data_type()),
        DfExpr::Negative(inner) => format!("-{}", written(inner)),
        DfExpr::Not(inner) => format!("NOT {}", written(inner)),
        DfExpr::BinaryExpr(b) => format!("{} {} {}", written(&b.left), b.op, written(&b.right)),
        DfExpr::Between(b) => format!(
            "{}{} BETWEEN {} AND {}",
            written(&b.expr),
            if b.negated { " NOT" } else { "" },
            written(&b.low),
            written(&b.high)
        ),
        DfExpr::InList(l) => format!(
            "{}{} IN ({})",
            written(&l.expr),
            if l.negated { " NOT" } else { "" },
            l.list.iter().map(written).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}

/// An integer literal, as Flink reads a top: a plain integer, or one cast to an integer
/// type. A string, a decimal or an expression is not one.
fn integer(e: &DfExpr) -> Option<i64> {
    use datafusion_common::ScalarValue as V;
    match e {
        DfExpr::Literal(v, _) => match v {
            V::Int8(Some(n)) => Some(i64::from(*n)),
            V::Int16(Some(n)) => Some(i64::from(*n)),
            V::Int32(Some(n)) => Some(i64::from(*n)),
            V::Int64(Some(n)) => Some(*n),
            V::UInt8(Some(n)) => Some(i64::from(*n)),
            V::UInt16(Some(n)) => Some(i64::from(*n)),
            V::UInt32(Some(n)) => Some(i64::from(*n)),
            V::UInt64(Some(n)) => i64::try_from(*n).ok(),
            _ => None,
        },
        DfExpr::Cast(c) if c.field.data_type().is_integer() => integer(&c.expr),
        _ => None,
    }
}

/// The top a filter's conjunct on the row number sets: `rn <= 3`, `rn < 4` and
/// `rn BETWEEN 1 AND 3` are 3, `rn = 1` is 1; `None` for a conjunct that does not read the
/// row number alone.
fn top_of(e: &DfExpr, number: &Column) -> Option<Result<u64, String>> {
    let is_number = |e: &DfExpr| matches!(e, DfExpr::Column(c) if c == number);
    let unsupported = || Some(Err(format!("filtering the row number by `{}`", written(e))));
    let (op, n) = match e {
        DfExpr::Between(b) if is_number(&b.expr) && !b.negated => {
            match (integer(&b.low), integer(&b.high)) {
                (Some(1), Some(high)) => (DfOp::LtEq, high),
                _ => return unsupported(),
            }
        }
        // Written `rn op n`, or `n op rn` read the other way round.
        DfExpr::BinaryExpr(b) if is_number(&b.left) => match integer(&b.right) {
            Some(n) => (b.op, n),
            None => return unsupported(),
        },
        DfExpr::BinaryExpr(b) if is_number(&b.right) => {
            let flipped = match b.op {
                DfOp::Lt => DfOp::Gt,
                DfOp::LtEq => DfOp::GtEq,
                DfOp::Gt => DfOp::Lt,
                DfOp::GtEq => DfOp::LtEq,
                other => other,
            };
            match integer(&b.left) {
                Some(n) => (flipped, n),
                None => return unsupported(),
            }
        }
        _ => return None,
    };
    let top = match op {
        DfOp::LtEq => n,
        DfOp::Lt => n.saturating_sub(1),
        DfOp::Eq if n == 1 => 1,
        DfOp::Eq => {
            return Some(Err(format!(
                "keeping only the row numbered {n} (`{}`)",
                written(e)
            )));
        }
        _ => return unsupported(),
    };
    Some(if top < 1 {
        Err(format!("a top of no row (`{}`)", written(e)))
    } else {
        Ok(u64::try_from(top).unwrap_or(u64::MAX))
    })
}

/// Where the model calls ROW_NUMBER (the first call), for an error about the rank as a
/// whole: the planner keeps no position for a window function.
pub(super) fn row_number_span(text: &str) -> Option<std::ops::Range<usize>> {
    let lower = text.to_ascii_lowercase();
    let at = lower.find(ROW_NUMBER)?;
    Some(at..at + ROW_NUMBER.len())
}

impl Lowering<'_> {
    /// The PARTITION BY columns of a window function (a rank's, an OVER aggregation's) by
    /// their names here, each once.
    pub(super) fn partition_columns(
        &self,
        df: &datafusion_common::DFSchemaRef,
        exprs: &[DfExpr],
    ) -> Lowered<Vec<String>> {
        let mut partition_by = Vec::new();
        for p in exprs {
            let DfExpr::Column(c) = p else {
                return Err(self.err(
                    Code::UnsupportedSql,
                    format!("PARTITION BY `{p}` is not a column"),
                    "partition by columns",
                ));
            };
            let name = self.column(df, c)?.name;
            // A column written twice partitions as once.
            if !partition_by.contains(&name) {
                partition_by.push(name);
            }
        }
        Ok(partition_by)
    }

    /// Where a condition of the filter around the subquery is: its column, when the planner
    /// kept where, or the query's WHERE.
    fn where_of(&self, c: &DfExpr) -> Option<std::ops::Range<usize>> {
        self.span_of(c)
            .or_else(|| Parts::of(self.query, self.text).selection)
    }

    /// A filter over a ROW_NUMBER column: the Window's input, then a Rank node, then the
    /// subquery's SELECT list, then the filter's other conjuncts.
    pub(super) fn rank(
        &mut self,
        f: &Filter,
        read: RankRead<'_>,
        number_read: bool,
        upstream: &Upstreams<'_>,
    ) -> Lowered<()> {
        let w = read.window;
        let help = &format!(
            "keep the first rows of each partition: {}",
            crate::sql::ranking::ROW_NUMBER_SHAPE
        );
        // Two ROW_NUMBER columns: two Window nodes, or one the planner shares between two
        // columns of the same window.
        let several = || {
            self.err(
                Code::UnsupportedSql,
                "a subquery with several ROW_NUMBER columns is not supported yet".into(),
                "number the rows once per subquery; rank again in a model that reads this one with ref()",
            )
            .with_span(row_number_span(self.text))
        };
        let shared = read.projection.is_some_and(|p| {
            let number = Column::from(w.schema.qualified_field(w.input.schema().fields().len()));
            p.expr
                .iter()
                .filter(|e| matches!((*e).clone().unalias(), DfExpr::Column(c) if c == number))
                .count()
                > 1
        });
        let [DfExpr::WindowFunction(call)] = w.window_expr.as_slice() else {
            return Err(several());
        };
        if shared || matches!(w.input.as_ref(), LogicalPlan::Window(_)) {
            return Err(several());
        }
        if !call.fun.name().eq_ignore_ascii_case(ROW_NUMBER) {
            return Err(self.err(
                Code::UnsupportedSql,
                format!("`{}` over a window is not supported yet", call.fun.name()),
                help,
            ));
        }
        // The filter's conjuncts: the one on the row number sets the top.
        let number_col = Column::from(f.input.schema().qualified_field(read.number));
        let mut top = None;
        let mut rest = Vec::new();
        for c in datafusion_expr::utils::split_conjunction(&f.predicate) {
            match top_of(c, &number_col) {
                Some(Ok(n)) if top.is_none() => top = Some(n),
                Some(Ok(_)) => {
                    return Err(self
                        .err(
                            Code::UnsupportedSql,
                            format!(
                                "the row number is filtered to a top twice (`{}` is the second)",
                                written(c)
                            ),
                            "filter it once: WHERE rn <= 3",
                        )
                        .with_span(self.where_of(c)));
                }
                Some(Err(what)) => {
                    return Err(self
                        .err(
                            Code::UnsupportedSql,
                            format!("{what} is not supported yet"),
                            "a rank keeps the first rows of each partition: WHERE rn <= 3 keeps three, WHERE rn = 1 the first",
                        )
                        .with_span(self.where_of(c)));
                }
                None if c.column_refs().contains(&number_col) => {
                    return Err(self
                        .err(
                            Code::UnsupportedSql,
                            format!("filtering the row number by `{}` is not supported yet", written(c)),
                            "a rank keeps the first rows of each partition: WHERE rn <= 3 keeps three, WHERE rn = 1 the first",
                        )
                        .with_span(self.where_of(c)));
                }
                None => rest.push(c.clone()),
            }
        }
        let Some(top) = top else {
            return Err(self
                .err(
                    Code::UnsupportedSql,
                    "the row number is not filtered to a top".into(),
                    "add the top to the WHERE around the subquery: WHERE rn <= 3 keeps three rows per partition, WHERE rn = 1 one",
                )
                .with_span(row_number_span(self.text)));
        };
        self.plan(&w.input, upstream)?;
        // Over a window table, each row is first given its windows (Flink's window table
        // function), which the rank then ranks per window.
        let table_window = match self.window {
            Some(read) => Some(self.window_table(read)?),
            None => None,
        };
        let df = w.input.schema();
        let partition_by = self.partition_columns(df, &call.params.partition_by)?;
        // Flink ranks per window (a window Top-N, final when the window closes) when the
        // partition has both of a window's bounds, under whatever names they have here.
        let of_model = |m: &str| {
            upstream.iter().find_map(|(_, up)| match up {
                super::Upstream::Model(name, c) if *name == m => c.window_bounds.clone(),
                _ => None,
            })
        };
        let bounds = self.current.as_ref().and_then(|id| {
            if id.model == self.model {
                streamform_ir::window_bounds(&self.nodes, id, &of_model)
            } else {
                of_model(&id.model)
            }
        });
        // The window's end, when the rank is per window: Flink's window Top-N.
        let window_end = bounds
            .filter(|(start, end)| partition_by.contains(start) && partition_by.contains(end))
            .map(|(_, end)| end);
        if table_window.is_some() && window_end.is_none() {
            return Err(self
                .err(
                    Code::UnsupportedSql,
                    "ROW_NUMBER over a window table is not partitioned by window_start and window_end".into(),
                    "partition by the window's bounds to rank each window's rows, final when the window closes: ROW_NUMBER() OVER (PARTITION BY window_start, window_end[, your keys] ORDER BY …) (docs/ranking.md, \"A top per window\")",
                )
                .with_span(row_number_span(self.text)));
        }
        let mut order = Vec::new();
        for s in &call.params.order_by {
            let DfExpr::Column(c) = &s.expr else {
                return Err(self.err(
                    Code::UnsupportedSql,
                    format!("ORDER BY `{}` in OVER is not a column", s.expr),
                    "order by columns",
                ));
            };
            order.push(SortKey {
                column: self.column(df, c)?.name,
                descending: !s.asc,
            });
        }
        let input_schema = self.schema.clone();
        // Flink deduplicates instead of ranking when the top is one row ordered by the time
        // attribute alone and the row number is not read; over a window table, by the
        // column the windows are measured on or by their `window_time`.
        let by_time = match (&table_window, order.as_slice()) {
            (Some(window), [k]) => {
                k.column == window.time || k.column == streamform_ir::WINDOW_TIME
            }
            (None, [k]) => self.time.as_ref() == Some(&k.column),
            _ => false,
        };
        // Reading the row number changes nothing here: Flink's planner makes a number that
        // can only be 1 a constant, and deduplicates all the same.
        let dedup = by_time && top == 1;
        let strategy = match (&table_window, &window_end) {
            (Some(_), _) if dedup => RankStrategy::WindowDeduplicate,
            (_, Some(_)) => RankStrategy::Window,
            _ if self.changelog.is_updating() => RankStrategy::Retract,
            _ if dedup => RankStrategy::Deduplicate,
            _ => RankStrategy::Append,
        };
        if strategy == RankStrategy::Window && dedup {
            return Err(self
                .err(
                    Code::UnsupportedSql,
                    "deduplicating a window aggregation's rows (ROW_NUMBER per window ordered by its time, rn = 1) is not supported".into(),
                    "a window aggregation's rows of one window all have the same time, and Flink emits them in an order of its own: order the rank by a column that tells them apart (a window Top-N, ORDER BY views DESC); to keep each window's first or last event, rank the window table's rows themselves: ROW_NUMBER() OVER (PARTITION BY window_start, window_end, key ORDER BY ts) … FROM TABLE(TUMBLE(…)) (docs/ranking.md, \"A top per window\")",
                )
                .with_span(row_number_span(self.text)));
        }
        let keeps_first = strategy == RankStrategy::Deduplicate && !order[0].descending;
        let ranking = Ranking {
            order,
            top,
            strategy,
            window_end,
        };
        // The row number goes by the name the subquery gives it (`AS rn`).
        let number_name = read
            .projection
            .and_then(|p| {
                p.expr.get(read.number).and_then(|e| match e {
                    DfExpr::Alias(a) => Some(a.name.clone()),
                    _ => None,
                })
            })
            .unwrap_or_else(|| "row_number".to_string());
        if input_schema.iter().any(|f| f.name == number_name) {
            return Err(self.err(
                Code::OutputColumns,
                format!("the row number is named `{number_name}`, like a column of its input"),
                "give the row number a name of its own: ROW_NUMBER() OVER (…) AS rn",
            ));
        }
        let mut schema = input_schema.clone();
        schema.push(Field {
            name: number_name.clone(),
            ty: DataType::Int64,
            nullable: false,
        });
        self.changelog = match (number_read, strategy, &self.changelog) {
            // A window's top rows are inserted once, when it fires.
            (_, RankStrategy::Window | RankStrategy::WindowDeduplicate, _) => Changelog::Append,
            // Keeping the first row by time inserts it once, when the watermark passes it
            // (Flink 2.2); keeping the last updates it.
            (_, RankStrategy::Deduplicate, _) if keeps_first => Changelog::Append,
            (true, _, _) => {
                let mut key = partition_by.clone();
                key.push(number_name.clone());
                Changelog::Upsert(key)
            }
            (false, RankStrategy::Retract, c) => c.clone(),
            (false, RankStrategy::Deduplicate, _) => Changelog::Upsert(partition_by.clone()),
            (false, RankStrategy::Append, _) if top == 1 => Changelog::Upsert(partition_by.clone()),
            (false, RankStrategy::Append, _) => {
                self.unkeyed = Some(Unkeyed::Rank(
                    partition_by.clone(),
                    number_name.clone(),
                    row_number_span(self.text),
                ));
                Changelog::Retract
            }
        };
        let mut keyed = KeyedState::rank(&partition_by, &ranking, &input_schema);
        // Over a window table the windows are the rank's own: they are in its state.
        keyed.window = table_window;
        let state = State::Keyed(keyed);
        if strategy == RankStrategy::Deduplicate {
            // Flink's deduplication gives no time attribute on.
            self.time = None;
        }
        // A deduplication's row number, when read, is the constant 1 after it.
        let deduplicates = matches!(
            strategy,
            RankStrategy::Deduplicate | RankStrategy::WindowDeduplicate
        );
        if !number_read || deduplicates {
            // The planner's schema still has the row number: the current schema keeps it
            // aligned with the planner's, and nothing above reads it (that is what decided),
            // or, for a deduplication, it reads the constant given after the rank.
            self.phantom = Some(number_name.clone());
        }
        // The deduplication itself is keyed without the constant number.
        let with_number = self.changelog.clone();
        if let (true, Changelog::Upsert(key)) = (number_read && deduplicates, &with_number) {
            self.changelog = Changelog::Upsert(partition_by.clone());
            debug_assert_eq!(key.last(), Some(&number_name));
        }
        self.push(
            Operator::Rank {
                partition_by,
                ranking,
                number: (number_read && !deduplicates).then(|| number_name.clone()),
            },
            schema.clone(),
            state,
        );
        if number_read && deduplicates {
            self.phantom = None;
            self.changelog = with_number;
            let mut items: Vec<ProjectItem> =
                input_schema.iter().map(ProjectItem::column).collect();
            items.push(ProjectItem {
                expr: Expr::Literal {
                    value: Value::Int64(1),
                    ty: DataType::Int64,
                },
                name: number_name,
            });
            self.push(Operator::Project { items }, schema, State::Stateless);
        }
        if let Some(p) = read.projection {
            self.project(p)?;
        }
        if let Some(rest) = datafusion_expr::utils::conjunction(rest) {
            let filter = Filter::try_new(rest, f.input.clone()).map_err(|e| {
                self.err(
                    Code::Internal,
                    format!("the filter beside the row number could not be planned: {e}"),
                    "this is a bug in Streamform's lowering",
                )
            })?;
            self.filter(&filter)?;
        }
        Ok(())
    }
}
