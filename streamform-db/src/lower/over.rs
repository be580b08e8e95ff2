//! OVER aggregations (docs/over.md): the planner's Window node of SUM, COUNT, MIN, MAX and
//! AVG calls over one window, lowered into one Over node, as Flink's planner plans its
//! event-time OVER aggregation. The window must be ordered by the time attribute of an
//! append input; the frame reaches back from the current row, without bound, a number of
//! rows (ROWS) or a time (RANGE).

use datafusion_common::ScalarValue;
use datafusion_expr::expr::{WindowFunction, WindowFunctionParams};
use datafusion_expr::logical_plan::Window;
use datafusion_expr::{
    Expr as DfExpr, WindowFrame, WindowFrameBound, WindowFrameUnits, WindowFunctionDefinition,
};
use streamform_ir::{
    AggCall, AggFunc, Expr, Field, FrameUnit, KeyedState, Operator, OverFrame, ProjectItem, State,
};

use crate::diagnostic::Code;

use super::Upstreams;
use super::expr::may_be_null;
use super::lowering::*;

/// Where the model first writes OVER, for an error about the window as a whole: the
/// planner keeps no position for a window function.
fn over_span(text: &str) -> Option<std::ops::Range<usize>> {
    let lower = text.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut from = 0;
    while let Some(at) = lower[from..].find("over").map(|i| i + from) {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + 4).copied();
        let word = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !word(before) && !word(after) {
            return Some(at..at + 4);
        }
        from = at + 4;
    }
    None
}

/// Whether every call of the planner's Window node is an aggregate (not ROW_NUMBER or
/// another window function).
pub(super) fn aggregates_only(w: &Window) -> bool {
    w.window_expr.iter().all(|e| {
        matches!(
            e.clone().unalias(),
            DfExpr::WindowFunction(f) if matches!(f.fun, WindowFunctionDefinition::AggregateUDF(_))
        )
    })
}

/// Milliseconds of a RANGE bound as the planner keeps it: the interval's text as the SQL
/// rewrite gives it (`0 months 0 days 3600000 milliseconds`), or an interval value.
fn range_millis(v: &ScalarValue) -> Option<u64> {
    match v {
        ScalarValue::Utf8(Some(text)) => {
            let words: Vec<&str> = text.split_whitespace().collect();
            match words.as_slice() {
                [months, "months", days, "days", millis, "milliseconds"] => {
                    let (months, days, millis) = (
                        months.parse::<i64>().ok()?,
                        days.parse::<i64>().ok()?,
                        millis.parse::<i64>().ok()?,
                    );
                    if months != 0 {
                        return None;
                    }
                    u64::try_from(days.checked_mul(86_400_000)?.checked_add(millis)?).ok()
                }
                _ => None,
            }
        }
        ScalarValue::IntervalMonthDayNano(Some(v)) if v.months == 0 => u64::try_from(
            i64::from(v.days)
                .checked_mul(86_400_000)?
                .checked_add(v.nanoseconds / 1_000_000)?,
        )
        .ok(),
        _ => None,
    }
}

impl Lowering<'_> {
    /// A Window node of aggregate calls: its input, then an Over node (with a projection
    /// in front when a call's argument is an expression).
    pub(super) fn over(&mut self, w: &Window, upstream: &Upstreams<'_>) -> Lowered<()> {
        let several = |this: &Self| {
            this.err(
                Code::UnsupportedSql,
                "OVER aggregations over different windows in one query are not supported yet".into(),
                "give every OVER call of the query the same PARTITION BY, ORDER BY and frame, or compute the others in a model that reads this one with ref()",
            )
            .with_span(over_span(this.text))
        };
        if matches!(w.input.as_ref(), datafusion_expr::LogicalPlan::Window(_)) {
            return Err(several(self));
        }
        let calls: Vec<(DfExpr, WindowFunction)> = w
            .window_expr
            .iter()
            .filter_map(|e| match e.clone().unalias() {
                DfExpr::WindowFunction(f) => Some((e.clone(), *f)),
                _ => None,
            })
            .collect();
        let Some((_, first)) = calls.first() else {
            return Err(several(self));
        };
        let WindowFunctionParams {
            partition_by,
            order_by,
            window_frame,
            ..
        } = &first.params;
        let same = |f: &WindowFunction| {
            f.params.partition_by == *partition_by
                && f.params.order_by == *order_by
                && f.params.window_frame == *window_frame
        };
        if !calls.iter().all(|(_, f)| same(f)) {
            return Err(several(self));
        }
        self.plan(&w.input, upstream)?;
        if let Some(window) = self.window {
            return Err(self
                .err(
                    Code::UnsupportedSql,
                    "an OVER aggregation over a window table is not supported yet".into(),
                    "read the window's rows in a model of their own and run the OVER aggregation in a model that reads it with ref()",
                )
                .with_span(over_span(self.text).or_else(|| window.span.clone())));
        }
        if self.changelog.is_updating() {
            return Err(self
                .err(
                    Code::UnsupportedSql,
                    "an OVER aggregation over an updating input is not supported".into(),
                    "Flink runs event-time OVER aggregations over rows that are only appended; aggregate the appending source, or GROUP BY for a total per key that updates (declare the model `materialized: upsert`)",
                )
                .with_span(over_span(self.text)));
        }
        let df = w.input.schema();
        let time_column = match order_by.as_slice() {
            [s] => match &s.expr {
                DfExpr::Column(c) => Some(self.column(df, c)?.name),
                _ => None,
            },
            _ => None,
        };
        let Some(time) = self.time.clone() else {
            return Err(self
                .err(
                    Code::UnsupportedSql,
                    "an OVER aggregation over an input without event time is not supported".into(),
                    "declare `event_time:` (and `watermark:`) on the source, and ORDER BY that column in OVER: rows are aggregated in the order of their time, each once the watermark reaches it (docs/event-time.md)",
                )
                .with_span(over_span(self.text)));
        };
        if order_by.is_empty() {
            return Err(self
                .err(
                    Code::UnsupportedSql,
                    "an OVER aggregation without ORDER BY is not supported".into(),
                    &format!("Flink runs an OVER aggregation along event time: order it by the time attribute `{time}`, … OVER (PARTITION BY … ORDER BY {time}), which aggregates every row of the partition up to each one, emitted as the watermark reaches it; for one total per key that updates, GROUP BY the key (docs/over.md)"),
                )
                .with_span(over_span(self.text)));
        }
        if time_column.as_ref() != Some(&time) {
            return Err(self
                .err(
                    Code::UnsupportedSql,
                    format!(
                        "an OVER aggregation ordered by `{}` is not supported",
                        time_column.as_deref().unwrap_or("an expression")
                    ),
                    &format!("order it by the time attribute `{time}`: Flink runs an OVER aggregation along event time, emitting each row once the watermark passes it: … OVER (PARTITION BY … ORDER BY {time} …)"),
                )
                .with_span(over_span(self.text)));
        }
        let frame = self.frame(window_frame, time)?;
        let partition = self.partition_columns(df, partition_by)?;
        let mut agg_calls: Vec<AggCall> = Vec::new();
        let mut computed: Vec<ProjectItem> = Vec::new();
        for (e, f) in &calls {
            let WindowFunctionDefinition::AggregateUDF(udaf) = &f.fun else {
                return Err(several(self));
            };
            if f.params.filter.is_some() || f.params.null_treatment.is_some() {
                return Err(self.err(
                    Code::UnsupportedSql,
                    format!("`{e}` is not supported yet"),
                    "write the aggregate over a column or an expression: SUM(CASE WHEN … THEN amount END) OVER (…)",
                ));
            }
            let (call, argument) =
                self.agg_call_of(df, e, udaf.name(), &f.params.args, f.params.distinct)?;
            if call.func == AggFunc::CountDistinct {
                return Err(self
                    .err(
                        Code::UnsupportedSql,
                        "COUNT(DISTINCT …) OVER (…) is not supported yet".into(),
                        "count distinct values per key with GROUP BY (declare the model `materialized: upsert`)",
                    )
                    .with_span(over_span(self.text)));
            }
            if let Some(item) = argument
                && !computed.iter().any(|c| c.name == item.name)
            {
                computed.push(item);
            }
            agg_calls.push(call);
        }
        // The planner's columns after the Window node: the input's, then one per call.
        let input = self.schema.clone();
        let mut outputs: Vec<Field> = Vec::new();
        for call in &agg_calls {
            let name = call.name();
            if input.iter().chain(&outputs).any(|f| f.name == name) {
                return Err(self.err(
                    Code::OutputColumns,
                    format!("the OVER aggregation's column `{name}` has the name of a column of its input (or of another call)"),
                    "rename the input column in an upstream model, or compute the aggregate once and use its column twice",
                ));
            }
            outputs.push(Field {
                name,
                ty: call.ty,
                nullable: !matches!(call.func, AggFunc::Count),
            });
        }
        let column = |f: &Field| ProjectItem {
            expr: Expr::Column {
                name: f.name.clone(),
                ty: f.ty,
            },
            name: f.name.clone(),
        };
        // A call's argument that is an expression is computed in front of the Over node,
        // after the input's columns, and dropped again behind it, as Flink plans it.
        let mut read = input.clone();
        if !computed.is_empty() {
            let mut items: Vec<ProjectItem> = input.iter().map(column).collect();
            for item in computed {
                if read.iter().chain(&outputs).any(|f| f.name == item.name) {
                    return Err(self.err(
                        Code::OutputColumns,
                        format!(
                            "the OVER aggregation's argument `{}` has the name of an input column",
                            item.name
                        ),
                        "rename the input column in an upstream model",
                    ));
                }
                read.push(Field {
                    name: item.name.clone(),
                    ty: item.expr.data_type(),
                    nullable: may_be_null(&item.expr, &input),
                });
                items.push(item);
            }
            self.push(Operator::Project { items }, read.clone(), State::Stateless);
        }
        // Flink's parser takes no frame beside LAG: it runs over the default one.
        if (frame.bounded() || frame.unit == FrameUnit::Rows)
            && let Some(lag) = agg_calls.iter().find(|c| matches!(c.func, AggFunc::Lag(_)))
        {
            return Err(self
                .err(
                    Code::UnsupportedSql,
                    format!("`{}` in a window with a ROWS or bounded frame is not supported", lag.name()),
                    "Flink takes no frame beside LAG: write the window without ROWS or RANGE, … OVER (PARTITION BY … ORDER BY <time attribute>), and compute the framed aggregates in a model of their own",
                )
                .with_span(over_span(self.text)));
        }
        let state = State::Keyed(KeyedState::over(&partition, &frame, &agg_calls));
        let mut schema = read.clone();
        schema.extend(outputs.iter().cloned());
        self.push(
            Operator::Over {
                partition_by: partition,
                frame,
                calls: agg_calls,
            },
            schema,
            state,
        );
        if read.len() > input.len() {
            let mut items: Vec<ProjectItem> = input.iter().map(column).collect();
            items.extend(outputs.iter().map(column));
            let mut schema = input;
            schema.extend(outputs);
            self.push(Operator::Project { items }, schema, State::Stateless);
        }
        Ok(())
    }

    /// The frame of an OVER aggregation along `time`, as the planner keeps it.
    fn frame(&self, frame: &WindowFrame, time: String) -> Lowered<OverFrame> {
        let refuse = || {
            self.err(
                Code::UnsupportedSql,
                format!("the OVER frame `{frame}` is not supported"),
                "an OVER frame reaches back from the current row: ROWS BETWEEN 2 PRECEDING AND CURRENT ROW, RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW, or UNBOUNDED PRECEDING for every earlier row",
            )
            .with_span(over_span(self.text))
        };
        if !matches!(frame.end_bound, WindowFrameBound::CurrentRow) {
            return Err(refuse());
        }
        let (unit, preceding) = match (&frame.units, &frame.start_bound) {
            (WindowFrameUnits::Rows, WindowFrameBound::Preceding(v)) if v.is_null() => {
                (FrameUnit::Rows, None)
            }
            (WindowFrameUnits::Range, WindowFrameBound::Preceding(v)) if v.is_null() => {
                (FrameUnit::Range, None)
            }
            (WindowFrameUnits::Rows, WindowFrameBound::Preceding(ScalarValue::UInt64(Some(n)))) => {
                (FrameUnit::Rows, Some(*n))
            }
            (WindowFrameUnits::Range, WindowFrameBound::Preceding(v)) => {
                (FrameUnit::Range, Some(range_millis(v).ok_or_else(refuse)?))
            }
            _ => return Err(refuse()),
        };
        Ok(OverFrame {
            time,
            unit,
            preceding,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_bound_reads_from_the_rewritten_interval_text() {
        let text = |s: &str| ScalarValue::Utf8(Some(s.into()));
        assert_eq!(
            range_millis(&text("0 months 0 days 3600000 milliseconds")),
            Some(3_600_000)
        );
        assert_eq!(
            range_millis(&text("0 months 2 days 5 milliseconds")),
            Some(172_800_005)
        );
        assert_eq!(range_millis(&text("1 months 0 days 0 milliseconds")), None);
        assert_eq!(range_millis(&text("1 HOUR")), None);
    }

    #[test]
    fn over_is_found_as_a_word() {
        assert_eq!(over_span("SELECT overall, sum(x) OVER (…)"), Some(23..27));
        assert_eq!(over_span("SELECT rollover FROM t"), None);
    }
}
