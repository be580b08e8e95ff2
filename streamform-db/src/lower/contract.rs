//! What lowering a model reads and is told: the contract of a model it reads, the
//! relation it reads, and what streamform.yml declares for it.

use streamform_ir::{Boundedness, Changelog, Field, Materialized, SinkTarget};

use crate::config::SourceDef;

/// What a reader of `ref(model)` depends on: the model's Sink schema, changelog and
/// boundedness. Narrow on purpose, so that readers are re-lowered only when it changes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Contract {
    /// The Sink's output columns.
    pub schema: Vec<Field>,
    /// The Sink's changelog mode.
    pub changelog: Changelog,
    /// The Sink's boundedness.
    pub boundedness: Boundedness,
    /// The Sink's time attribute: the event-time column it still carries.
    pub time: Option<String>,
    /// Whether an event-time source is upstream, which gives a reader's state a clock to
    /// expire by (true even when the time attribute was grouped away).
    pub clock: bool,
    /// The Sink's columns holding a window's bounds (`streamform_ir::window_bounds`), which
    /// a rank partitioned by both would rank per window.
    pub window_bounds: Option<(String, String)>,
}

/// The relation a model reads, resolved.
pub enum Upstream<'a> {
    /// `source('name')`: the declared source.
    Source(&'a SourceDef),
    /// `ref('name')`: the model's name and its contract.
    Model(&'a str, &'a Contract),
}

/// The declaration streamform.yml makes for a model (defaults: append, no sink). Span-free:
/// diagnostics about it are anchored to the model's entry and positioned later.
pub struct Declared<'a> {
    /// The declared materialization (`Append` when the model has no entry).
    pub materialized: &'a Materialized,
    /// The `sink:` destination, if declared.
    pub sink: Option<&'a SinkTarget>,
    /// `retention:` in milliseconds, if declared.
    pub retention: Option<u64>,
}
