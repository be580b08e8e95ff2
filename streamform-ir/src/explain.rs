//! The `explain` text rendering of a model's plan.
//!
//! See docs/commands.md, "streamform explain". The output is the contract; tests compare it
//! with golden text.

use std::fmt::Write;

use crate::identity::{node_digests, short};
use crate::plan::{ModelPlan, Node, Operator, State};

/// Renders one model as explain prints it: the model name, a blank line, then each node's
/// definition and properties, in plan order. A node that reads the node before it follows a
/// `↓` arrow; one that reads anything else (the second branch of a UNION ALL, a node with
/// several inputs) follows a blank line and names what it reads: `from=` a model it reads
/// through `ref()`, `inputs=` the nodes of its own model. Ends with a newline.
pub fn render_model(plan: &ModelPlan) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}\n", plan.name);
    for (i, node) in plan.nodes.iter().enumerate() {
        let previous = i.checked_sub(1).map(|p| &plan.nodes[p].id);
        let chained = matches!((previous, node.inputs.as_slice()), (Some(p), [only]) if only == p);
        if chained {
            out.push_str("     ↓\n");
        } else if i > 0 {
            out.push('\n');
        }
        // A chain's first operator reading a model says so with `from=`, as it always has.
        let from: Vec<&str> = node
            .inputs
            .iter()
            .filter(|id| id.model != plan.name)
            .map(|id| id.model.as_str())
            .collect();
        let own: Vec<String> = node
            .inputs
            .iter()
            .filter(|id| id.model == plan.name)
            .map(ToString::to_string)
            .collect();
        render_node(&mut out, node, &from, if chained { &[] } else { &own });
    }
    out
}

fn render_node(out: &mut String, node: &Node, from: &[&str], inputs: &[String]) {
    let _ = writeln!(out, "{}", node.id.kind.title());
    if !from.is_empty() {
        let _ = writeln!(out, "  from={}", from.join(", "));
    }
    if !inputs.is_empty() {
        let _ = writeln!(out, "  inputs={}", inputs.join(", "));
    }
    match &node.op {
        Operator::Source {
            name,
            connector,
            event_time,
            ..
        } => {
            let time = event_time
                .as_ref()
                .map_or_else(|| "processing".to_string(), |t| t.title());
            let _ = writeln!(
                out,
                "  name={name}\n  connector={}\n  time={time}",
                connector.name()
            );
        }
        Operator::Filter { predicate } => {
            let _ = writeln!(out, "  predicate={predicate}");
        }
        Operator::Project { items } => {
            let cols: Vec<String> = items.iter().map(ToString::to_string).collect();
            let _ = writeln!(out, "  columns={}", cols.join(", "));
        }
        Operator::Aggregate { group_by, calls } => {
            let aggs: Vec<String> = calls.iter().map(|c| c.name()).collect();
            let _ = writeln!(
                out,
                "  key={}\n  aggregates={}",
                group_by.join(", "),
                aggs.join(", ")
            );
        }
        Operator::Window {
            window,
            group_by,
            calls,
        } => {
            let aggs: Vec<String> = calls.iter().map(|c| c.name()).collect();
            let _ = writeln!(
                out,
                "  window={}\n  on={}\n  key={}\n  aggregates={}\n  emits=once per key and window, when the watermark reaches window_end - 1ms",
                window.kind,
                window.time,
                group_by.join(", "),
                aggs.join(", ")
            );
        }
        Operator::WindowTable { window } => {
            let _ = writeln!(
                out,
                "  window={}\n  on={}\n  emits=each row once for every window it belongs to, with window_start, window_end and window_time",
                window.kind, window.time
            );
        }
        Operator::Deduplicate { key } => {
            let _ = writeln!(out, "  key={}\n  keep=last row", key.join(", "));
        }
        Operator::Union => out.push_str("  all=every change of each input\n"),
        Operator::Join { kind, on, filter } => {
            let on: Vec<String> = on.iter().map(|(l, r)| format!("{l} = {r}")).collect();
            let _ = writeln!(out, "  kind={}\n  on={}", kind.name(), on.join(" AND "));
            if let Some(f) = filter {
                let _ = writeln!(out, "  where={f}");
            }
            match &node.state {
                State::Keyed(k) if k.retention != crate::plan::Retention::Unbounded => {
                    let _ = writeln!(
                        out,
                        "  keeps=every row of both sides, per join key, until retracted or {} after it arrived",
                        k.retention
                    );
                }
                _ => {
                    out.push_str("  keeps=every row of both sides, per join key, until retracted\n")
                }
            }
        }
        Operator::TemporalJoin {
            kind,
            on,
            left_time,
            right_time,
        } => {
            let on: Vec<String> = on.iter().map(|(l, r)| format!("{l} = {r}")).collect();
            let _ = writeln!(
                out,
                "  kind={}\n  on={}\n  as of={left_time}\n  version={right_time}",
                kind.name(),
                on.join(" AND ")
            );
            out.push_str("  keeps=each left row until the watermark passes its time; per key, the latest version at or before the watermark and every later one
");
            let _ = writeln!(
                out,
                "  emits=each left row once the watermark passes its time, in arrival order, with the version valid then{}",
                if kind.left_outer() {
                    ", padded when there is none"
                } else {
                    ""
                }
            );
        }
        Operator::IntervalJoin {
            kind,
            on,
            bounds,
            filter,
        } => {
            let on: Vec<String> = on.iter().map(|(l, r)| format!("{l} = {r}")).collect();
            let on = if on.is_empty() {
                "no equal columns (every row meets every row of the other side)".to_string()
            } else {
                on.join(" AND ")
            };
            let _ = writeln!(out, "  kind={}\n  on={on}\n  time={bounds}", kind.name());
            if let Some(f) = filter {
                let _ = writeln!(out, "  where={f}");
            }
            let wait = |ms: i64| {
                if ms >= 0 {
                    format!("+ {}", crate::time::format_duration(ms.unsigned_abs()))
                } else {
                    format!("- {}", crate::time::format_duration(ms.unsigned_abs()))
                }
            };
            let _ = writeln!(
                out,
                "  keeps=left rows until the watermark passes {} {}, right rows until it passes {} {}",
                bounds.left_time,
                wait(bounds.left_wait()),
                bounds.right_time,
                wait(bounds.right_wait())
            );
            let padded: Vec<&str> = [(kind.left_outer(), "left"), (kind.right_outer(), "right")]
                .into_iter()
                .filter_map(|(pads, side)| pads.then_some(side))
                .collect();
            if !padded.is_empty() {
                let _ = writeln!(
                    out,
                    "  pads=a {} row that matched nothing, once it is dropped",
                    padded.join(" or ")
                );
            }
            let _ = writeln!(
                out,
                "  watermark=held back by {}",
                crate::time::format_duration(bounds.delay().unsigned_abs())
            );
        }
        Operator::Rank {
            partition_by,
            ranking,
            number,
        } => {
            let order: Vec<String> = ranking.order.iter().map(ToString::to_string).collect();
            let partition = if partition_by.is_empty() {
                "none (one ranking of every row)".to_string()
            } else {
                partition_by.join(", ")
            };
            let _ = writeln!(
                out,
                "  partition={partition}\n  order={}\n  top={}",
                order.join(", "),
                ranking.top
            );
            use crate::plan::RankStrategy;
            let first_key = ranking.order.first().map_or("", |k| k.column.as_str());
            let (keeps, emits) = match (ranking.strategy, number) {
                (RankStrategy::Window, number) => (
                    "each window's rows, per partition, until the window fires".to_string(),
                    format!(
                        "the top {} rows of each partition as inserts, in rank order{}, once the watermark reaches the window's end minus 1 ms",
                        ranking.top,
                        number
                            .as_ref()
                            .map(|n| format!(" with their row number {n}"))
                            .unwrap_or_default()
                    ),
                ),
                (RankStrategy::WindowDeduplicate, _) => {
                    let (which, ties) = if ranking.order.first().is_some_and(|k| k.descending) {
                        ("latest", "last")
                    } else {
                        ("earliest", "first")
                    };
                    (
                        format!(
                            "the row with the {which} {first_key} (the {ties} to arrive among equal times), per partition and window, until the window fires"
                        ),
                        "that row of each partition as an insert, once the watermark reaches the window's end minus 1 ms".to_string(),
                    )
                }
                (RankStrategy::Deduplicate, _) => {
                    let descending = ranking.order.first().is_some_and(|k| k.descending);
                    if descending {
                        (
                            format!("the row with the latest {first_key} so far, per partition"),
                            format!(
                                "the first row of each partition as an insert, then each row whose {first_key} is the same or later as an update of it"
                            ),
                        )
                    } else {
                        (
                            format!(
                                "the row with the earliest {first_key}, per partition, until the watermark passes it, then that it was emitted"
                            ),
                            format!(
                                "the row with the earliest {first_key} of each partition, once, as an insert when the watermark passes it; a row behind the watermark is dropped as late"
                            ),
                        )
                    }
                }
                (strategy, number) => {
                    let keeps = match strategy {
                        RankStrategy::Retract => {
                            "every row of its input, per partition, until retracted"
                        }
                        _ => {
                            "the rows that can still rank, per partition (a row pushed out is forgotten)"
                        }
                    };
                    let emits = match number {
                        Some(n) => format!(
                            "each change of the top {} with its row number {n}: a row that moves is updated at each position it leaves and takes",
                            ranking.top
                        ),
                        None if ranking.top == 1 && strategy == RankStrategy::Append => {
                            "the first row of each partition as an insert, then a better row as an update of it".to_string()
                        }
                        None => format!(
                            "each row entering the top {} as an insert, each row leaving it as a delete",
                            ranking.top
                        ),
                    };
                    (keeps.to_string(), emits)
                }
            };
            let _ = writeln!(out, "  keeps={keeps}");
            let _ = writeln!(out, "  emits={emits}");
        }
        Operator::Over {
            partition_by,
            frame,
            calls,
        } => {
            let partition = if partition_by.is_empty() {
                "none (one frame over every row)".to_string()
            } else {
                partition_by.join(", ")
            };
            let calls: Vec<String> = calls.iter().map(crate::plan::AggCall::name).collect();
            let over = match (frame.unit, frame.preceding) {
                (_, None) => "every earlier row of its partition".to_string(),
                (crate::plan::FrameUnit::Rows, Some(n)) => format!(
                    "the {n} row{} before it in its partition",
                    if n == 1 { "" } else { "s" }
                ),
                (crate::plan::FrameUnit::Range, Some(ms)) => format!(
                    "the rows of its partition up to {} earlier",
                    crate::time::format_duration(ms)
                ),
            };
            let peers = match frame.unit {
                crate::plan::FrameUnit::Rows => "rows of equal time one by one, in arrival order",
                crate::plan::FrameUnit::Range => "rows of equal time together, with one result",
            };
            let late = if frame.bounded() {
                "a row at or before the last time its partition emitted is dropped as late"
            } else {
                "a row at or behind the watermark is dropped as late"
            };
            let _ = writeln!(
                out,
                "  partition={partition}\n  frame={frame}\n  aggregates={}\n  emits=each row once the watermark reaches its {}, with the aggregates over itself and {over} ({peers}); {late}",
                calls.join(", "),
                frame.time
            );
        }
        Operator::Sort { keys } => {
            let keys: Vec<String> = keys
                .iter()
                .map(|k| {
                    if k.descending {
                        format!("{} DESC", k.column)
                    } else {
                        format!("{} ASC", k.column)
                    }
                })
                .collect();
            let _ = writeln!(out, "  order={}", keys.join(", "));
        }
        Operator::Sink {
            model,
            materialized,
            ..
        } => {
            let _ = writeln!(
                out,
                "  model={model}\n  materialized={}",
                materialized.name()
            );
        }
    }
    // The Source says its clock on its `time=` line.
    if let (Some(column), false) = (&node.time, matches!(node.op, Operator::Source { .. })) {
        let _ = writeln!(out, "  time attribute={column}");
    }
    let _ = writeln!(out, "  boundedness={}", node.boundedness.title());
    let _ = writeln!(out, "  changelog={}", node.changelog.title());
    match &node.state {
        State::Stateless => out.push_str("  state=Stateless\n"),
        State::Keyed(_) => {
            let d = node_digests(node);
            let fp = d.state_fingerprint.unwrap_or_default();
            let digest = d.state_digest.unwrap_or_default();
            let _ = writeln!(
                out,
                "  state=Keyed\n  fingerprint={fp}\n  digest={}",
                short(&digest)
            );
        }
    }
}
