//! The scan: where a model's rows come from.

use streamform_ir::{Changelog, KeyedState, Operator, State};

use super::contract::Upstream;
use super::lowering::*;

impl Lowering<'_> {
    /// The input's scan: a source's Source node, or a model's contract as the input.
    pub(super) fn scan(&mut self, upstream: &Upstream<'_>) -> Lowered<()> {
        match upstream {
            Upstream::Source(def) => {
                self.boundedness = def.connector.boundedness();
                self.time = def.event_time.as_ref().map(|t| t.column.clone());
                self.clock = def.event_time.is_some();
                let schema = source_fields(def);
                // An upsert source is a table that changes: its node keeps the last row per
                // key, as Flink normalizes an upsert-kafka topic (docs/changing-tables.md).
                let state = match &def.key {
                    Some(key) => {
                        self.changelog = Changelog::Upsert(key.clone());
                        State::Keyed(KeyedState::last_row(key, &schema))
                    }
                    None => {
                        self.changelog = Changelog::Append;
                        State::Stateless
                    }
                };
                // A Source reads nothing, whatever branch came before it.
                self.current = None;
                self.push(
                    Operator::Source {
                        name: def.name.clone(),
                        connector: def.connector.clone(),
                        format: def.format.clone(),
                        event_time: def.event_time.clone(),
                    },
                    schema,
                    state,
                );
            }
            Upstream::Model(m, c) => {
                self.current = Some(streamform_ir::NodeId {
                    model: m.to_string(),
                    kind: streamform_ir::NodeKind::Sink,
                    ordinal: 0,
                });
                self.boundedness = c.boundedness;
                self.changelog = c.changelog.clone();
                self.schema = c.schema.clone();
                self.time = c.time.clone();
                self.clock = c.clock;
            }
        }
        if let Some(w) = self.window {
            self.window_scan(w)?;
        }
        Ok(())
    }
}
