//! The scan: where a model's rows come from.

use streamform_ir::{Changelog, Operator, State};

use super::contract::Upstream;
use super::lowering::*;

impl Lowering<'_> {
    /// The input's scan: a source's Source node, or a model's contract as the input.
    pub(super) fn scan(&mut self, upstream: &Upstream<'_>) -> Lowered<()> {
        match upstream {
            Upstream::Source(def) => {
                self.boundedness = def.connector.boundedness();
                self.changelog = Changelog::Append;
                self.time = def.event_time.as_ref().map(|t| t.column.clone());
                self.clock = def.event_time.is_some();
                let schema = source_fields(def);
                self.push(
                    Operator::Source {
                        name: def.name.clone(),
                        connector: def.connector.clone(),
                        format: def.format.clone(),
                        event_time: def.event_time.clone(),
                    },
                    schema,
                    State::Stateless,
                );
            }
            Upstream::Model(_, c) => {
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
