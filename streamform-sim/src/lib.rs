//! The deterministic simulator: executes a chain of Streaming IR models over a sequence of
//! source events and returns the changelog of the last model's Sink.
//!
//! Single-threaded, in-memory, with no wall clock and no randomness: the same chain and the
//! same events give the same [`Output`] on every run. Every record between operators is a
//! [`Change`]; the Source emits an insert per event, Filter and Project are stateless over
//! any changelog, Aggregate keeps keyed state shaped exactly like the node's state
//! fingerprint, a window aggregation emits its rows when the watermark makes them final,
//! Sort buffers a bounded input and emits it sorted when the input ends. Each operator is
//! one module behind one interface (`operator.rs`); this file is the driver that delivers
//! events, watermarks and the end of the input to them.
//!
//! See docs/concepts.md, from "Changelog" to "Accumulators" (types, checked arithmetic,
//! boundedness, changelog modes, null grouping keys, updates that change nothing), and
//! docs/fixtures.md.

#![warn(missing_docs)]

mod eval;
mod keyed;
mod operator;
mod operators;

use std::borrow::Cow;
use std::fmt;

use streamform_ir::{
    DataType, Field, Input, LateEvents, ModelPlan, NodeId, Operator, Retention, State, Value,
};

use crate::operator::{Fault, InputShape, Out, Rec, Stage, StageKind};

/// The operation of one changelog record (docs/concepts.md, "Changelog").
///
/// `Display` renders `insert`, `update`, `delete`, as fixtures write them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// A row appears.
    Insert,
    /// The row with this key takes new values.
    Update,
    /// A row leaves.
    Delete,
}

impl Op {
    /// `insert`, `update` or `delete`.
    pub fn name(self) -> &'static str {
        match self {
            Op::Insert => "insert",
            Op::Update => "update",
            Op::Delete => "delete",
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One changelog record (docs/concepts.md, "Changelog").
///
/// Rows have the emitting node's schema, one [`Value`] per column, in schema order.
/// - `Insert`: `row` is the new row, `before` is `None`.
/// - `Update`: `row` is the after-image, `before` is `Some(previous image)`.
/// - `Delete`: `row` is the row that leaves, as it was last emitted; `before` is `None`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Change {
    /// insert, update or delete.
    pub op: Op,
    /// The after-image for an insert or update; the row that leaves for a delete.
    pub row: Vec<Value>,
    /// The previous image for an update; `None` for an insert or a delete.
    pub before: Option<Vec<Value>>,
}

/// One changelog record borrowed from a [`Changelog`]; the fields mean what [`Change`]'s do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChangeRef<'a> {
    /// insert, update or delete.
    pub op: Op,
    /// The after-image for an insert or update; the row that leaves for a delete.
    pub row: &'a [Value],
    /// The previous image for an update; `None` for an insert or a delete.
    pub before: Option<&'a [Value]>,
}

impl ChangeRef<'_> {
    /// The record as an owned [`Change`].
    pub fn to_change(&self) -> Change {
        Change {
            op: self.op,
            row: self.row.to_vec(),
            before: self.before.map(<[Value]>::to_vec),
        }
    }
}

/// A changelog in emission order, stored flat: the images of the records one after another
/// in chunks of values, so a record costs its values and a few bytes rather than an
/// allocation per image, and a long changelog grows by adding chunks, never by copying
/// what it holds.
#[derive(Clone, Default)]
pub struct Changelog {
    ops: Vec<Op>,
    /// Each record's chunk and the offset of its first image there; an update's row is
    /// followed by its before-image.
    starts: Vec<(u32, u32)>,
    chunks: Vec<Vec<Value>>,
}

/// Values per chunk (2 MiB): large enough that chunks are few, small enough that the
/// unused tail of the last one does not matter.
const CHUNK_VALUES: usize = 1 << 16;

impl Changelog {
    /// Appends a record. An update's `before` has as many values as its `row`.
    ///
    /// # Panics
    /// When an update's images differ in width.
    pub fn push(&mut self, op: Op, row: &[Value], before: Option<&[Value]>) {
        if let Some(b) = before {
            assert_eq!(b.len(), row.len(), "an update's images have one width");
        }
        let need = row.len() * if before.is_some() { 2 } else { 1 };
        let full = self
            .chunks
            .last()
            .is_none_or(|c| c.len() + need > c.capacity());
        if full {
            self.chunks.push(Vec::with_capacity(CHUNK_VALUES.max(need)));
        }
        let chunk = self.chunks.len() - 1;
        let values = &mut self.chunks[chunk];
        let at = values.len();
        values.extend_from_slice(row);
        if let Some(b) = before {
            values.extend_from_slice(b);
        }
        self.ops.push(op);
        self.starts.push((
            u32::try_from(chunk).expect("fewer than 2^32 chunks"),
            u32::try_from(at).expect("a chunk holds fewer than 2^32 values"),
        ));
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Record `i`, if there are that many.
    pub fn get(&self, i: usize) -> Option<ChangeRef<'_>> {
        let op = *self.ops.get(i)?;
        let (chunk, at) = self.starts[i];
        let values = &self.chunks[chunk as usize];
        let at = at as usize;
        // A record ends where the next one in its chunk starts, or with the chunk.
        let end = match self.starts.get(i + 1) {
            Some(&(c, next)) if c == chunk => next as usize,
            _ => values.len(),
        };
        let images = &values[at..end];
        Some(if op == Op::Update {
            let (row, before) = images.split_at(images.len() / 2);
            ChangeRef {
                op,
                row,
                before: Some(before),
            }
        } else {
            ChangeRef {
                op,
                row: images,
                before: None,
            }
        })
    }

    /// The records in emission order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = ChangeRef<'_>> {
        (0..self.len()).map(|i| self.get(i).expect("in range"))
    }

    /// The records as owned [`Change`]s.
    pub fn to_vec(&self) -> Vec<Change> {
        self.iter().map(|c| c.to_change()).collect()
    }
}

impl PartialEq for Changelog {
    fn eq(&self, other: &Changelog) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Changelog {}

impl std::hash::Hash for Changelog {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.len().hash(state);
        for c in self.iter() {
            c.hash(state);
        }
    }
}

impl fmt::Debug for Changelog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The result of a run: the target model's Sink changelog, in emission order, how many
/// source events were delivered, and the windows the input left open.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Output {
    /// The target model's Sink changelog, record by record.
    pub changes: Changelog,
    /// Number of source events delivered by [`Simulator::push`].
    pub events_processed: usize,
    /// Per window node holding windows that have not fired when the input ended: nothing
    /// fires at the end of a run (docs/windows.md), so these emitted nothing.
    pub open_windows: Vec<OpenWindows>,
}

/// The windows of one window node still open when a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OpenWindows {
    /// The window node.
    pub node: NodeId,
    /// Its (key, window) pairs that hold a row and have not fired.
    pub count: usize,
    /// The watermark at which the first of them would fire (its end minus 1 ms).
    pub first_fires_at: i64,
}

/// Why a chain cannot be simulated or a run failed (docs/sql.md: an overflow or a division by zero
/// names the model, the column and the event).
///
/// - `model`: the model whose node failed (for a malformed chain, the model at fault, or the
///   empty string for an empty chain).
/// - `column`: the output column of a Project item, the rendered predicate of a Filter
///   (`((amount / 0) > 1)`), the accumulator of an Aggregate (`sum(amount)`), the source
///   column of an ill-typed event value; `None` when no column is at fault.
/// - `event`: the 1-based number of the source event being processed; for errors raised
///   by [`Simulator::finish`], the number of events pushed; 0 for a chain rejected by
///   [`Simulator::new`].
/// - `message`: what went wrong (`arithmetic overflow`, `division by zero`, ...).
///
/// `Display`: ``model `m`, column `c`, event 3: arithmetic overflow``, without the column
/// part when `column` is `None`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SimError {
    /// What kind of failure it is, for the help that fits it.
    pub failure: Failure,
    /// The model at fault.
    pub model: String,
    /// The column, predicate or accumulator at fault, if any.
    pub column: Option<String>,
    /// 1-based source event number; 0 for a malformed chain.
    pub event: usize,
    /// What went wrong.
    pub message: String,
}

/// What kind of failure stopped a run (docs/sql.md names the first three).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Failure {
    /// A result did not fit its type.
    Overflow,
    /// A division or remainder by zero.
    DivisionByZero,
    /// A value a CAST could not convert.
    Cast,
    /// A timestamp computed outside the years 1 to 9999 (moved by an INTERVAL, rounded up,
    /// or a window's bound).
    TimeRange,
    /// An event that does not fit its source's columns.
    Event,
    /// An event without its event time, on a source that runs on event time.
    MissingEventTime,
    /// A row whose key is null reached a model's upsert sink, which Flink's sink refuses.
    NullKey,
    /// A chain the simulator cannot run: a malformed plan, not bad data.
    Plan,
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "model `{}`, ", self.model)?;
        if let Some(c) = &self.column {
            write!(f, "column `{c}`, ")?;
        }
        write!(f, "event {}: {}", self.event, self.message)
    }
}

impl std::error::Error for SimError {}

/// A node of `model` the simulator cannot build.
fn build_error(model: &str, f: Fault) -> SimError {
    SimError {
        failure: f.failure,
        model: model.to_string(),
        column: f.column,
        event: 0,
        message: f.message,
    }
}

fn shape_error(model: &str, message: impl Into<String>) -> SimError {
    SimError {
        failure: Failure::Plan,
        model: model.to_string(),
        column: None,
        event: 0,
        message: message.into(),
    }
}

/// One source column as events are checked against it.
struct SourceColumn {
    name: String,
    ty: DataType,
    /// 10^precision for a decimal column: mantissas at the column's scale must stay below.
    decimal_limit: u128,
}

/// How an event value relates to its column's type.
enum Conform {
    Ok,
    /// A decimal at another scale, converted exactly to the column's scale.
    Replace(Value),
    Wrong(String),
}

impl SourceColumn {
    fn conform(&self, v: &Value) -> Conform {
        match (v, self.ty) {
            (Value::Null, _)
            | (Value::Int32(_), DataType::Int32)
            | (Value::Int64(_), DataType::Int64)
            | (Value::Float64(_), DataType::Float64)
            | (Value::String(_), DataType::String)
            | (Value::Boolean(_), DataType::Boolean)
            | (Value::Timestamp(_), DataType::Timestamp) => Conform::Ok,
            (Value::Decimal(d), DataType::Decimal { precision, scale }) => {
                if d.scale == scale && d.mantissa.unsigned_abs() < self.decimal_limit {
                    return Conform::Ok;
                }
                match d.fit(precision, scale) {
                    Ok(d) => Conform::Replace(Value::Decimal(d)),
                    Err(_) => Conform::Wrong(format!("{} does not fit {}", v.render(), self.ty)),
                }
            }
            (v, ty) => Conform::Wrong(format!("expected {ty}, got {}", v.render())),
        }
    }
}

/// A running simulation of one chain of models (docs/fixtures.md, "Fixtures for models that
/// read models": each model reads the previous one's Sink, and its changelog crosses the
/// edge).
///
/// Built by [`Simulator::new`], fed by [`Simulator::push`], ended by
/// [`Simulator::finish`]. After an error every further `push` or `finish` returns the same
/// error.
pub struct Simulator {
    /// Model names, in chain order; stages refer to them by index.
    models: Vec<String>,
    source_name: String,
    source: Vec<SourceColumn>,
    /// Whether the source is an upsert source, read as a table that changes: its events are
    /// its keys' new rows, and it takes deletes ([`Simulator::push_delete`]).
    upsert: bool,
    /// Whether the source ends (a file): its end is then a final watermark.
    bounded: bool,
    /// Every node after the Source, across all models, in order.
    stages: Vec<Stage>,
    changes: Changelog,
    /// Events delivered (late events dropped are not).
    events: usize,
    /// Events pushed, delivered or dropped: the number an error names.
    arrived: usize,
    /// The source's clock, when it runs on event time.
    clock: Option<Clock>,
    failed: Option<SimError>,
    /// What an operator emits on a watermark or at the end, kept between calls so that a
    /// window firing many rows reuses one buffer.
    out: Out<'static>,
    /// The stages that do anything on a watermark, in chain order.
    watching: Vec<usize>,
}

/// The event-time clock of the chain's one source: its watermark is the later of the
/// largest event time seen minus the delay and the last explicit watermark, and never
/// decreases.
struct Clock {
    /// The event-time column's index in the source's events.
    column: usize,
    /// Its name, for errors.
    name: String,
    delay: i64,
    late: LateEvents,
    /// The current watermark; `i64::MIN` before anything is seen.
    watermark: i64,
}

/// What became of an event handed to [`Simulator::push`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arrival {
    /// It went through the chain (on time, or late and kept).
    Delivered,
    /// It arrived behind the watermark on a source with `late_events: drop`: not
    /// delivered.
    Dropped,
    /// A window aggregation dropped it: every window it belongs to had already fired.
    DroppedByWindow(NodeId),
}

impl Simulator {
    /// Compiles `chain`: the models from the one whose input is `Input::Source` down to the
    /// target model, each reading the previous one's Sink (`Input::Model(prev.name)`).
    /// Columns are resolved to row indices here, once.
    ///
    /// # Errors
    /// A [`SimError`] with `event` 0 when the chain is malformed: empty; the first model
    /// does not read a source or does not start with a matching Source node; a later model
    /// does not read its predecessor; a model has no nodes, does not end in a Sink, or has a
    /// Sink or Source elsewhere; a node's id kind differs from its operator; an expression
    /// names a column its input lacks or types it differently; a pass-through node's schema
    /// differs from its input; an Aggregate whose keyed state differs from its calls or
    /// whose accumulator types break docs/sql.md's rules; an Aggregate or Sort over an updating input, or a
    /// Sort over an unbounded input (docs/concepts.md).
    pub fn new(chain: &[ModelPlan]) -> Result<Simulator, SimError> {
        let Some(first) = chain.first() else {
            return Err(shape_error(
                "",
                "the chain is empty; it needs at least one model",
            ));
        };
        let Input::Source(source_name) = &first.input else {
            return Err(shape_error(
                &first.name,
                "the first model of a chain must read a source, this one reads a model",
            ));
        };
        let Some(source_node) = first.nodes.first() else {
            return Err(shape_error(&first.name, "the model has no nodes"));
        };
        match &source_node.op {
            Operator::Source { name, .. } if name == source_name => {}
            Operator::Source { name, .. } => {
                return Err(shape_error(
                    &first.name,
                    format!(
                        "the model reads source `{source_name}` but its Source node is `{name}`"
                    ),
                ));
            }
            _ => {
                return Err(shape_error(
                    &first.name,
                    format!(
                        "the model reads source `{source_name}` but does not start with a Source node"
                    ),
                ));
            }
        }
        let source = source_node
            .schema
            .iter()
            .map(|f: &Field| SourceColumn {
                name: f.name.clone(),
                ty: f.ty,
                decimal_limit: match f.ty {
                    DataType::Decimal { precision, .. } => 10u128.pow(u32::from(precision)),
                    _ => 0,
                },
            })
            .collect();

        let mut stages = Vec::new();
        let upsert = source_node.changelog.is_updating();
        if upsert {
            stages.push(Stage::normalize(source_node).map_err(|f| build_error(&first.name, f))?);
        }
        let mut models = Vec::with_capacity(chain.len());
        let mut prev = source_node;
        for (mi, plan) in chain.iter().enumerate() {
            if mi > 0 {
                let predecessor = &chain[mi - 1].name;
                if plan.input != Input::Model(predecessor.clone()) {
                    return Err(shape_error(
                        &plan.name,
                        format!(
                            "the model must read its predecessor in the chain, `{predecessor}`"
                        ),
                    ));
                }
            }
            let skip = usize::from(mi == 0);
            if plan.nodes.len() <= skip {
                return Err(shape_error(
                    &plan.name,
                    "the model has no operators; it must end in a Sink",
                ));
            }
            let last = plan.nodes.len() - 1;
            for (ni, node) in plan.nodes.iter().enumerate().skip(skip) {
                let is_sink = matches!(node.op, Operator::Sink { .. });
                if is_sink != (ni == last) {
                    let msg = if is_sink {
                        format!("node `{}`: a Sink must be the model's last node", node.id)
                    } else {
                        format!("node `{}`: the model must end in a Sink", node.id)
                    };
                    return Err(shape_error(&plan.name, msg));
                }
                if let Operator::Sink { model, .. } = &node.op
                    && *model != plan.name
                {
                    return Err(shape_error(
                        &plan.name,
                        format!("node `{}`: the Sink belongs to model `{model}`", node.id),
                    ));
                }
                if node.id.model != plan.name {
                    return Err(shape_error(
                        &plan.name,
                        format!(
                            "node `{}` does not belong to model `{}`",
                            node.id, plan.name
                        ),
                    ));
                }
                // The driver runs a chain: each node reads the node before it.
                if node.inputs.as_slice() != std::slice::from_ref(&prev.id) {
                    return Err(shape_error(
                        &plan.name,
                        format!(
                            "node `{}` must read `{}`, the node before it in the chain",
                            node.id, prev.id
                        ),
                    ));
                }
                let input = InputShape {
                    schema: &prev.schema,
                    changelog: &prev.changelog,
                    boundedness: prev.boundedness,
                };
                let stage =
                    Stage::build(mi, node, &input).map_err(|f| build_error(&plan.name, f))?;
                stages.push(stage);
                prev = node;
            }
            models.push(plan.name.clone());
        }
        let clock = match &source_node.op {
            Operator::Source {
                event_time: Some(t),
                ..
            } => {
                let column = source_node
                    .schema
                    .iter()
                    .position(|f| f.name == t.column && f.ty == DataType::Timestamp)
                    .ok_or_else(|| {
                        shape_error(
                            &first.name,
                            format!(
                                "the event-time column `{}` is not a timestamp column of source `{source_name}`",
                                t.column
                            ),
                        )
                    })?;
                Some(Clock {
                    column,
                    name: t.column.clone(),
                    delay: i64::try_from(t.watermark).unwrap_or(i64::MAX),
                    late: t.late,
                    watermark: i64::MIN,
                })
            }
            _ => None,
        };
        if clock.is_none()
            && let Some(node) = chain.iter().flat_map(|p| &p.nodes).find(
                |n| matches!(&n.state, State::Keyed(k) if k.retention != Retention::Unbounded),
            )
        {
            return Err(shape_error(
                &node.id.model,
                format!(
                    "node `{}` has a retention, but source `{source_name}` runs on processing time",
                    node.id
                ),
            ));
        }
        Ok(Simulator {
            models,
            source_name: source_name.clone(),
            upsert,
            bounded: source_node.boundedness == streamform_ir::Boundedness::Bounded,
            source,
            changes: Changelog::default(),
            events: 0,
            arrived: 0,
            clock,
            failed: None,
            out: Out::new(),
            watching: (0..stages.len())
                .filter(|&i| stages[i].watches_watermark())
                .collect(),
            stages,
        })
    }

    /// Delivers one source event: `event` holds one value per column of the first model's
    /// Source node schema, in that order (`Value::Null` for a missing value). The target
    /// model's Sink emissions are accumulated for [`Simulator::finish`].
    ///
    /// On an event-time source, an event strictly behind the watermark is late: with
    /// `late_events: drop` it is not delivered ([`Arrival::Dropped`]), with `keep` it is
    /// delivered as if on time. After a delivered event the watermark advances to its time
    /// minus the delay, if that is later, and keyed state whose retention has passed expires.
    ///
    /// # Errors
    /// A [`SimError`] naming the event (1-based, counting every event pushed): the event has
    /// the wrong number of values or a value of the wrong type (naming the source column),
    /// or no event time on an event-time source; or an operator failed (overflow, division
    /// by zero, a failed cast; docs/sql.md). The simulator is then failed: later calls return the
    /// same error.
    pub fn push(&mut self, event: &[Value]) -> Result<Arrival, SimError> {
        self.push_as(Op::Insert, event)
    }

    /// Delivers a tombstone of an upsert source: `key` holds one value per column of the
    /// Source node's schema, the key's columns set and every other column null. The key's
    /// row is deleted, or nothing happens when it holds none (docs/changing-tables.md).
    ///
    /// # Errors
    /// As [`Simulator::push`]; and a [`Failure::Plan`] error on a source that is not an
    /// upsert source, which has no keys to delete.
    pub fn push_delete(&mut self, key: &[Value]) -> Result<Arrival, SimError> {
        if !self.upsert && self.failed.is_none() {
            let e = SimError {
                failure: Failure::Plan,
                model: self.models[0].clone(),
                column: None,
                event: self.arrived + 1,
                message: format!(
                    "source `{}` is an append source, which has no keys to delete",
                    self.source_name
                ),
            };
            return Err(self.fail(e));
        }
        self.push_as(Op::Delete, key)
    }

    fn push_as(&mut self, op: Op, event: &[Value]) -> Result<Arrival, SimError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.arrived += 1;
        let row = match self.check_event(event) {
            Ok(row) => row,
            Err(e) => return Err(self.fail(e)),
        };
        let time = match &self.clock {
            None => None,
            Some(clock) => match &row[clock.column] {
                Value::Timestamp(t) => {
                    if *t < clock.watermark && clock.late == LateEvents::Drop {
                        return Ok(Arrival::Dropped);
                    }
                    Some(*t)
                }
                _ => {
                    let e = SimError {
                        failure: Failure::MissingEventTime,
                        model: self.models[0].clone(),
                        column: Some(clock.name.clone()),
                        event: self.arrived,
                        message: format!(
                            "event {} has no `{}`; source `{}` runs on event time, so every event needs one",
                            self.arrived, clock.name, self.source_name
                        ),
                    };
                    return Err(self.fail(e));
                }
            },
        };
        self.events += 1;
        let mut late = None;
        if let Err((stage, fault)) = drive(
            &mut self.stages,
            0,
            Rec {
                op,
                row,
                before: None,
            },
            time,
            &mut self.changes,
            &mut late,
        ) {
            let e = self.error_at(stage, fault);
            return Err(self.fail(e));
        }
        let arrival = match late {
            Some(stage) => {
                // Dropped, not delivered.
                self.events -= 1;
                Arrival::DroppedByWindow(self.stages[stage].id.clone())
            }
            None => Arrival::Delivered,
        };
        if let (Some(t), Some(clock)) = (time, &self.clock) {
            let to = t.saturating_sub(clock.delay);
            if let Err(e) = self.advance(to) {
                return Err(self.fail(e));
            }
        }
        Ok(arrival)
    }

    /// Moves the watermark to `to` (milliseconds since the epoch) if that is later, as a
    /// fixture's `- watermark:` item does: windows it makes final emit their rows, and keyed
    /// state whose retention has passed expires. Nothing happens on a source that runs on
    /// processing time.
    ///
    /// # Errors
    /// An error recorded earlier, or an operator failure while the rows the watermark made
    /// final flow downstream (naming the number of events pushed).
    pub fn advance_watermark(&mut self, to: i64) -> Result<(), SimError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.advance(to).map_err(|e| self.fail(e))
    }

    /// The current watermark on an event-time source; `None` before anything moved it, or
    /// on processing time.
    pub fn watermark(&self) -> Option<i64> {
        self.clock
            .as_ref()
            .map(|c| c.watermark)
            .filter(|w| *w != i64::MIN)
    }

    /// Hands the watermark to every operator in chain order; what one emits flows through
    /// the operators after it before they receive the watermark themselves.
    fn advance(&mut self, to: i64) -> Result<(), SimError> {
        let Some(clock) = &mut self.clock else {
            return Ok(());
        };
        if to <= clock.watermark {
            return Ok(());
        }
        clock.watermark = to;
        let mut out = std::mem::replace(&mut self.out, Out::new());
        let result = (0..self.watching.len()).try_for_each(|w| {
            let i = self.watching[w];
            self.stages[i]
                .on_watermark(to, &mut out)
                .map_err(|f| self.error_at(i, f))?;
            self.flow(i, &mut out)
        });
        if result.is_ok() {
            self.out = out;
        }
        result
    }

    /// Delivers what stage `i` emitted to the stages after it.
    fn flow(&mut self, i: usize, out: &mut Out<'static>) -> Result<(), SimError> {
        let mut late = None;
        for (rec, time) in out.drain() {
            drive(
                &mut self.stages[i + 1..],
                i + 1,
                rec,
                time,
                &mut self.changes,
                &mut late,
            )
            .map_err(|(stage, fault)| self.error_at(stage, fault))?;
        }
        Ok(())
    }

    /// Ends the input. An unbounded source (Kafka) never ends, so its windows emit nothing
    /// (a run's end is not a watermark) and are counted in [`Output::open_windows`]; a
    /// bounded one (a file) ends with the final watermark Flink sends when a file is read
    /// to its end, which fires every open window. Then every Sort emits its buffered rows,
    /// sorted, through the rest of the chain. Returns the target model's changelog and the
    /// number of events delivered.
    ///
    /// # Errors
    /// An error recorded by an earlier [`Simulator::push`], or an operator failure while
    /// the sorted rows flow downstream (with `event` = the number of events delivered).
    pub fn finish(mut self) -> Result<Output, SimError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if self.bounded {
            self.advance(i64::MAX)?;
        }
        for i in 0..self.stages.len() {
            let mut out = Out::new();
            self.stages[i]
                .on_end(&mut out)
                .map_err(|f| self.error_at(i, f))?;
            self.flow(i, &mut out)?;
        }
        let open_windows = self
            .stages
            .iter()
            .filter_map(|s| {
                match &s.kind {
                    StageKind::Window(w) => w.open(),
                    StageKind::Session(w) => w.open(),
                    _ => None,
                }
                .map(|(count, first_fires_at)| OpenWindows {
                    node: s.id.clone(),
                    count,
                    first_fires_at,
                })
            })
            .collect();
        Ok(Output {
            changes: self.changes,
            events_processed: self.events,
            open_windows,
        })
    }

    /// The keyed state of the Aggregate node `id` (e.g. `customer_metrics::aggregate::0`):
    /// (group-by values in group-by order, accumulator values in call order) pairs sorted by
    /// key (lexicographic [`Value::sort_cmp`]); for a window node, the key is the values of
    /// its grouping columns that are not the window's, then the window's end. Each accumulator value's variant is the one
    /// of its fingerprint type (`Value::Decimal` at the accumulator's scale for a decimal
    /// sum, `Value::Int64` for a count) or `Value::Null`. `None` when the chain has no keyed
    /// node with that id.
    pub fn keyed_state(&self, id: &NodeId) -> Option<Vec<(Vec<Value>, Vec<Value>)>> {
        self.stages
            .iter()
            .find(|s| &s.id == id)
            .and_then(|s| match &s.kind {
                StageKind::Aggregate(a) => Some(a.snapshot()),
                StageKind::Window(w) => Some(w.snapshot()),
                StageKind::Session(w) => Some(w.snapshot()),
                StageKind::Deduplicate(d) => Some(d.snapshot()),
                StageKind::Normalize(n) => Some(n.snapshot()),
                _ => None,
            })
    }

    /// Number of events delivered so far.
    pub fn events_processed(&self) -> usize {
        self.events
    }

    /// Checks `event` against the Source schema; decimals at another scale are converted
    /// exactly to the column's scale.
    fn check_event<'e>(&self, event: &'e [Value]) -> Result<Cow<'e, [Value]>, SimError> {
        if event.len() != self.source.len() {
            return Err(SimError {
                failure: Failure::Event,
                model: self.models[0].clone(),
                column: None,
                event: self.arrived,
                message: format!(
                    "the event has {} values but source `{}` declares {} columns",
                    event.len(),
                    self.source_name,
                    self.source.len()
                ),
            });
        }
        let mut row = Cow::Borrowed(event);
        for (i, (v, col)) in event.iter().zip(&self.source).enumerate() {
            match col.conform(v) {
                Conform::Ok => {}
                Conform::Replace(v) => row.to_mut()[i] = v,
                Conform::Wrong(message) => {
                    return Err(SimError {
                        failure: Failure::Event,
                        model: self.models[0].clone(),
                        column: Some(col.name.clone()),
                        event: self.arrived,
                        message: format!("source `{}`: {message}", self.source_name),
                    });
                }
            }
        }
        Ok(row)
    }

    fn error_at(&self, stage: usize, fault: Fault) -> SimError {
        SimError {
            failure: fault.failure,
            model: self.models[self.stages[stage].model].clone(),
            column: fault.column,
            event: self.arrived,
            message: fault.message,
        }
    }

    fn fail(&mut self, e: SimError) -> SimError {
        self.failed = Some(e.clone());
        e
    }
}

/// Runs `rec` through `stages` (the first of which is stage number `first` of the chain),
/// depth first: every record an operator emits reaches the end of the chain before the next
/// one leaves it. What leaves the last stage is appended to `changes`; a stage that drops
/// the record as late is recorded in `late`. A failure names its stage's number.
#[inline]
fn drive<'a>(
    stages: &mut [Stage],
    first: usize,
    mut rec: Rec<'a>,
    time: Option<i64>,
    changes: &mut Changelog,
    late: &mut Option<usize>,
) -> Result<(), (usize, Fault)> {
    // While each operator returns one record and buffers none, the record moves on in this
    // loop; after one that fans out, each record goes through the rest of the chain in turn.
    let mut out = Out::new();
    for i in 0..stages.len() {
        let next = stages[i]
            .on_change(rec, time, &mut out)
            .map_err(|f| (first + i, f))?;
        if out.take_late() {
            late.get_or_insert(first + i);
        }
        if !out.is_empty() {
            let rest = &mut stages[i + 1..];
            if let Some(next) = next {
                drive(rest, first + i + 1, next, time, changes, late)?;
            }
            for (more, at) in out.drain() {
                drive(rest, first + i + 1, more, at, changes, late)?;
            }
            return Ok(());
        }
        match next {
            Some(next) => rec = next,
            None => return Ok(()),
        }
    }
    changes.push(rec.op, &rec.row, rec.before.as_deref());
    Ok(())
}

/// Runs `chain` over `events` in one call: [`Simulator::new`], [`Simulator::push`] for every
/// event in order, then [`Simulator::finish`].
///
/// # Errors
/// The first [`SimError`] any of them returns.
pub fn run(chain: &[ModelPlan], events: &[Vec<Value>]) -> Result<Output, SimError> {
    run_with_deletes(chain, events, &[])
}

/// As [`run`], with the events whose indices `deletes` lists (in order) delivered as
/// tombstones of an upsert source ([`Simulator::push_delete`]).
///
/// # Errors
/// The first [`SimError`] any call returns.
pub fn run_with_deletes(
    chain: &[ModelPlan],
    events: &[Vec<Value>],
    deletes: &[usize],
) -> Result<Output, SimError> {
    let mut sim = Simulator::new(chain)?;
    for (i, e) in events.iter().enumerate() {
        if deletes.binary_search(&i).is_ok() {
            sim.push_delete(e)?;
        } else {
            sim.push(e)?;
        }
    }
    sim.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changelog_gives_back_each_record_across_chunks() {
        let mut log = Changelog::default();
        let row = |i: i64| vec![Value::Int64(i), Value::Int64(-i)];
        // Records of two and four values, enough to fill several chunks unevenly.
        let n = CHUNK_VALUES;
        for i in 0..n as i64 {
            match i % 3 {
                0 => log.push(Op::Insert, &row(i), None),
                1 => log.push(Op::Update, &row(i), Some(&row(i - 1))),
                _ => log.push(Op::Delete, &row(i), None),
            }
        }
        assert!(log.chunks.len() > 2);
        assert_eq!(log.len(), n);
        for (i, c) in log.iter().enumerate() {
            let i = i as i64;
            assert_eq!(c.row, row(i).as_slice());
            match i % 3 {
                0 => assert_eq!((c.op, c.before), (Op::Insert, None)),
                1 => assert_eq!((c.op, c.before), (Op::Update, Some(row(i - 1).as_slice()))),
                _ => assert_eq!((c.op, c.before), (Op::Delete, None)),
            }
        }
        assert_eq!(log.get(n), None);
        assert_eq!(log.clone(), log);
    }
}
