//! Lowering a model that reads a window table (docs/windows.md): the window's column must
//! be the input's event-time attribute, a session's key its grouping, and the window is
//! aggregated.

use streamform_ir::{DataType, Expr, Field, Node, NodeKind, Operator, State, Window, WindowKind};

use crate::diagnostic::{Code, Diagnostic};

use super::lowering::*;

impl Lowering<'_> {
    /// After the input's scan, for a model that reads a window table: the window's column
    /// must be the input's time attribute, and the planner's schema has the window's three
    /// columns after the input's.
    pub(super) fn window_scan(&mut self, w: &crate::window::WindowRead) -> Lowered<()> {
        let at = |d: Diagnostic| d.with_span(w.time_span.clone().or_else(|| w.span.clone()));
        if self.changelog.is_updating() {
            return Err(self
                .err(
                    Code::UpdatingInput,
                    "a window over an updating input is not supported yet".into(),
                    "Flink takes updates back from a window until it fires, which Streamform does not simulate yet; aggregate the updates with a plain GROUP BY, or window the append stream they come from",
                )
                .with_span(self.from_span.clone()));
        }
        match &self.time {
            None => {
                // No Source node yet: the model reads another model, whose rows lost their
                // time attribute (an aggregate or a regular join drops it, a FULL interval
                // join keeps none, a window keeps window_time only when it groups by it).
                let help = if self.nodes.is_empty() {
                    "the model this one reads carries no event-time attribute: an aggregate and a regular join end it, a FULL interval join keeps none (either side's time may be null, docs/joins.md), a window's output carries one when it groups by window_time (GROUP BY window_start, window_end, window_time), and a source's when the source declares `event_time:` (docs/windows.md)"
                } else {
                    "declare `event_time:` on the source the model reads (sources.yml): a window closes when the watermark passes its end"
                };
                return Err(at(self.err(
                    Code::EventTime,
                    format!(
                        "a window needs event time, and the input of DESCRIPTOR({}) has none",
                        w.time
                    ),
                    help,
                )));
            }
            Some(t) if *t != w.time => {
                return Err(at(self.err(
                    Code::EventTime,
                    format!("DESCRIPTOR({}) names a column that is not the input's event-time attribute, `{t}`", w.time),
                    &format!("windows are measured on the event time: write DESCRIPTOR({t})"),
                )));
            }
            Some(_) => {}
        }
        for name in streamform_ir::WINDOW_COLUMNS {
            self.schema.push(Field {
                name: name.to_string(),
                ty: DataType::Timestamp,
                nullable: false,
            });
        }
        Ok(())
    }

    /// A SESSION's PARTITION BY must be its aggregation's key (the grouping columns that
    /// are not the window's), in any order: otherwise Flink sessions the rows by one key and
    /// aggregates them by another in an updating aggregate, never final (docs/windows.md).
    pub(super) fn session_key(
        &self,
        w: &crate::window::WindowRead,
        group_by: &[String],
    ) -> Lowered<()> {
        let key: Vec<&String> = group_by
            .iter()
            .filter(|g| !streamform_ir::WINDOW_COLUMNS.contains(&g.as_str()))
            .collect();
        let same = key.len() == w.partition.len() && key.iter().all(|k| w.partition.contains(k));
        if same {
            return Ok(());
        }
        let list = |cols: &[&String]| match cols {
            [] => "nothing".to_string(),
            cols => cols
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        };
        let partition: Vec<&String> = w.partition.iter().collect();
        let help = match key.as_slice() {
            [] => "remove the PARTITION BY to keep one session for all rows, or group by its columns too".to_string(),
            [one] => format!("partition the sessions by the key you group by: SESSION(TABLE ... PARTITION BY {one}, DESCRIPTOR(...), ...)"),
            more => format!(
                "partition the sessions by the key you group by: SESSION(TABLE ... PARTITION BY ({}), DESCRIPTOR(...), ...)",
                list(more)
            ),
        };
        let message = if partition.is_empty() {
            format!(
                "a SESSION window without PARTITION BY keeps one session for all rows, but this aggregation groups them by {}; Flink then builds an updating aggregate instead of a window",
                list(&key)
            )
        } else {
            format!(
                "a SESSION window's PARTITION BY ({}) must be the columns it groups by besides the window's ({}); otherwise Flink builds an updating aggregate instead of a window",
                list(&partition),
                list(&key)
            )
        };
        Err(self
            .err(Code::InvalidAggregate, message, &help)
            .with_span(w.partition_span.clone().or_else(|| w.span.clone())))
    }

    /// The window table a rank reads (docs/ranking.md, "A top per window"): a WindowTable
    /// node giving each row its windows, after which the rows have the window's columns and
    /// `window_time` is their time attribute. Returns the windows.
    pub(super) fn window_table(&mut self, w: &crate::window::WindowRead) -> Lowered<Window> {
        if let WindowKind::Session { .. } = w.kind {
            return Err(self
                .err(
                    Code::UnsupportedSql,
                    "ROW_NUMBER over a SESSION window table is not supported".into(),
                    "rank or deduplicate over TUMBLE, HOP or CUMULATE windows; Flink plans a rank over sessions only as a beta feature and no deduplication over them (docs/ranking.md, \"A top per window\")",
                )
                .with_span(w.span.clone()));
        }
        let window = Window {
            kind: w.kind,
            time: w.time.clone(),
        };
        // The window's columns are the rows' from here on.
        self.window = None;
        let schema = self.schema.clone();
        self.time = Some(streamform_ir::WINDOW_TIME.to_string());
        self.push(
            Operator::WindowTable {
                window: window.clone(),
            },
            schema,
            State::Stateless,
        );
        Ok(window)
    }

    /// A window table read without aggregating it by window.
    pub(super) fn unaggregated_window(&self, w: &crate::window::WindowRead) -> Diagnostic {
        self.err(
            Code::UnsupportedSql,
            "reading a window table without aggregating it is not supported yet".into(),
            "aggregate it by window (SELECT window_start, window_end, COUNT(*) AS views ... GROUP BY window_start, window_end), or rank or deduplicate its rows per window with ROW_NUMBER() OVER (PARTITION BY window_start, window_end ...) in a subquery reading the window table itself, its columns under their own names (docs/ranking.md, \"A top per window\")",
        )
        .with_span(w.span.clone())
    }
}

/// Whether `key` (output columns) holds every grouping column of the model's window node,
/// seen through the projections after it: then each key is emitted once, when its window
/// fires, and an upsert sink keyed so needs no last-row state (docs/windows.md).
pub(super) fn keys_every_window(nodes: &[Node], key: &[String]) -> bool {
    let Some(at) = nodes.iter().rposition(|n| n.id.kind == NodeKind::Window) else {
        return false;
    };
    let Operator::Window { group_by, .. } = &nodes[at].op else {
        return false;
    };
    // Each key column's name at the window's output, traced back through projections.
    let mut names: Vec<Option<String>> = key.iter().cloned().map(Some).collect();
    for node in nodes[at + 1..].iter().rev() {
        if let Operator::Project { items } = &node.op {
            for name in &mut names {
                *name = name.as_ref().and_then(|n| {
                    items
                        .iter()
                        .find(|i| &i.name == n)
                        .and_then(|i| match &i.expr {
                            Expr::Column { name, .. } => Some(name.clone()),
                            _ => None,
                        })
                });
            }
        }
    }
    group_by
        .iter()
        .filter(|g| g.as_str() != streamform_ir::WINDOW_TIME)
        .all(|g| names.iter().any(|n| n.as_ref() == Some(g)))
}
