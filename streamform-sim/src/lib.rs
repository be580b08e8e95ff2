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
mod halves;
mod keyed;
mod operator;
mod operators;
mod strings;

use std::borrow::Cow;
use std::fmt;

use streamform_ir::{
    DataType, Field, Input, LateEvents, ModelPlan, Node, NodeId, NodeKind, Operator, Retention,
    State, Value,
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
    /// Per interval join keeping rows that matched nothing when the input ended: a row is
    /// padded only once the watermark passes its last chance to match (docs/joins.md,
    /// "Joins in time"), so these emitted nothing yet.
    pub waiting_rows: Vec<OpenWindows>,
    /// Per window or interval join that dropped rows as late that no event given stands
    /// for (an operator before it emitted them on a watermark or padded them late, or the
    /// event went on by another way), how many.
    pub dropped_rows: Vec<(NodeId, usize)>,
    /// Per interval join that padded rows, how many of each side (left, right); per
    /// temporal join, the left rows that met no version valid at their time (and 0).
    pub padded: Vec<(NodeId, [usize; 2])>,
}

/// The windows of one window node still open when a run ended; for an interval join, its
/// unmatched rows still kept (`count`), the first padded when the watermark reaches
/// `first_fires_at`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OpenWindows {
    /// The window node.
    pub node: NodeId,
    /// Its (key, window) pairs that hold a row and have not fired.
    pub count: usize,
    /// The watermark at which the first of them would fire (its end minus 1 ms).
    pub first_fires_at: i64,
    /// The event-time sources upstream of the node that saw no event and no watermark, so
    /// held its watermark back (docs/sql.md, "Several inputs"), by name.
    pub held_back_by: Vec<String>,
    /// When every source upstream moved: those whose watermark, less the delay of the
    /// interval joins on the way, is the node's and short of `first_fires_at`, each with
    /// its watermark and that delay.
    pub behind: Vec<(String, i64, i64)>,
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
    /// A value for which the simulator cannot promise Flink's result (a pattern read from
    /// a column outside what Java and the simulator read alike, Java's `$` before a final
    /// line break): the run stops rather than guess (docs/sql.md).
    Unfollowed,
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
            | (Value::Timestamp(_), DataType::Timestamp)
            | (Value::Date(_), DataType::Date) => Conform::Ok,
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

/// A running simulation of the models a model reads, down to it (docs/fixtures.md,
/// "Fixtures for models that read models"; docs/sql.md, "Several inputs"): their plans form
/// a graph from the sources they read to the target model's Sink, a model's changelog
/// crossing each `ref()` edge.
///
/// Built by [`Simulator::new`], fed by [`Simulator::push`] (or [`Simulator::push_to`] a
/// named source), ended by [`Simulator::finish`]. After an error every further `push` or
/// `finish` returns the same error.
pub struct Simulator {
    /// Model names, in plan order; stages refer to them by index.
    models: Vec<String>,
    /// The sources read, in the order their first Source node appears.
    feeds: Vec<Feed>,
    /// Every node after a Source (and an upsert Source's normalization), across all models,
    /// in topological order.
    stages: Vec<Stage>,
    /// Per stage, where what it emits goes: (stage, input port), in order. Empty for the
    /// target model's Sink, whose records are the run's changelog.
    consumers: Vec<Vec<(usize, u8)>>,
    /// Per stage, the same in short for the driver's loop.
    hops: Vec<Hop>,
    /// The target model's Sink.
    target: usize,
    /// Per stage, the feeds upstream of it, each with how far the interval joins between
    /// it and the stage hold its watermark back: the stage's watermark is the least of
    /// their clocks, each less its delay.
    upstream: Vec<Vec<(usize, i64)>>,
    /// Per stage, the last watermark it was handed.
    handed: Vec<i64>,
    changes: Changelog,
    /// The halves of an update a join emitted apart, paired again in `changes`.
    halves: halves::Halves,
    /// Per stage, the rows it dropped as late that no fixture event stands for.
    dropped_rows: Vec<usize>,
    /// Events delivered (late events dropped are not).
    events: usize,
    /// Events pushed, delivered or dropped: the number an error names.
    arrived: usize,
    failed: Option<SimError>,
    /// What an operator emits on a watermark or at the end, kept between calls so that a
    /// window firing many rows reuses one buffer.
    out: Out<'static>,
    /// The stages that do anything on a watermark, in topological order.
    watching: Vec<usize>,
}

/// One source the plans read: its columns, how its events are told apart, its clock, and
/// the stages each of its Source nodes feeds.
struct Feed {
    name: String,
    /// The first model reading it, which its events' errors name.
    model: usize,
    columns: Vec<SourceColumn>,
    /// Whether it is an upsert source, read as a table that changes: its events are its
    /// keys' new rows, and it takes deletes ([`Simulator::push_delete`]).
    upsert: bool,
    /// Whether it ends (a file): its end is then a final watermark.
    bounded: bool,
    /// Its event-time clock; `None` on processing time, which never moves a watermark.
    clock: Option<Clock>,
    /// The (stage, port) pairs its events go to, one per reader of each of its Source nodes.
    entries: Vec<(usize, u8)>,
}

/// The event-time clock of a source: its watermark is the later of the largest event time
/// seen minus the delay and the last explicit watermark, and never decreases.
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
    /// It went through the plans (on time, or late and kept).
    Delivered,
    /// It arrived behind the watermark on a source with `late_events: drop`: not
    /// delivered.
    Dropped,
    /// An operator dropped it as late: a window aggregation, every window it belongs to
    /// having fired, or an inner interval join, which it reached after its last chance to
    /// match and met none of the rows kept (docs/joins.md, "Joins in time").
    DroppedBy(NodeId),
}

/// Where a node's output is, while the graph is built.
#[derive(Clone, Copy)]
enum Place {
    /// The Source node of this feed (an append source: its events are the node's output).
    Feed(usize),
    /// This stage's output.
    Stage(usize),
}

impl Simulator {
    /// Compiles `plans`: the target model last, every model before the models that read it
    /// (each `Input::Model` of a plan names an earlier plan), every plan but the target read
    /// by a later one. Columns are resolved to row indices here, once.
    ///
    /// # Errors
    /// A [`SimError`] with `event` 0 when the plans are malformed: none; a model reads a
    /// model that is not before it, or no later model reads it; a model reads no source and
    /// no model; a model has no nodes, does not end in a Sink, or has a Sink elsewhere; a
    /// Source node reads something or names a source its model does not read; a node reads
    /// no node, a node that is not before it, or (but a Union) more than one; a node's id
    /// kind differs from its operator; an expression names a column its input lacks or
    /// types it differently; a pass-through node's schema differs from its input; a Union's
    /// inputs differ in their types; an Aggregate whose keyed state differs from its calls
    /// or whose accumulator types break docs/sql.md's rules; an Aggregate or Sort over an
    /// updating input, or a Sort over an unbounded input (docs/concepts.md); a retention
    /// with no event-time source upstream.
    pub fn new(plans: &[ModelPlan]) -> Result<Simulator, SimError> {
        if plans.is_empty() {
            return Err(shape_error(
                "",
                "the chain is empty; it needs at least one model",
            ));
        }
        let mut b = Builder::default();
        for (mi, plan) in plans.iter().enumerate() {
            b.model(mi, plan, plans)?;
        }
        let target_plan = plans.last().expect("not empty");
        let Some(&Place::Stage(target)) = b.places.get(&target_plan.sink().id) else {
            return Err(shape_error(
                &target_plan.name,
                "the model must end in a Sink",
            ));
        };
        for (mi, plan) in plans.iter().enumerate().take(plans.len() - 1) {
            if !plans[mi + 1..]
                .iter()
                .any(|p| p.models_read().any(|m| m == plan.name))
            {
                return Err(shape_error(
                    &plan.name,
                    format!(
                        "no model after `{}` reads it, so its changes would reach no one",
                        plan.name
                    ),
                ));
            }
        }
        let Builder {
            feeds,
            stages,
            consumers,
            upstream,
            ..
        } = b;
        // The target's upsert key, by which the halves of an update are paired again.
        let sink = target_plan.sink();
        let key = match target_plan.materialized() {
            streamform_ir::Materialized::Upsert { key } => key
                .iter()
                .filter_map(|k| sink.schema.iter().position(|f| &f.name == k))
                .collect(),
            streamform_ir::Materialized::Append => Vec::new(),
        };
        let hops = consumers
            .iter()
            .enumerate()
            .map(|(i, c)| match c.as_slice() {
                [(stage, _)] if *stage == target && consumers[target].is_empty() => Hop::IntoTarget,
                [(stage, port)] => Hop::One(*stage, *port),
                [] if i == target => Hop::Target,
                _ => Hop::Fan,
            })
            .collect();
        Ok(Simulator {
            models: plans.iter().map(|p| p.name.clone()).collect(),
            hops,
            feeds,
            target,
            changes: Changelog::default(),
            halves: halves::Halves::new(key),
            events: 0,
            arrived: 0,
            failed: None,
            out: Out::new(),
            watching: (0..stages.len())
                .filter(|&i| stages[i].watches_watermark())
                .collect(),
            handed: vec![i64::MIN; stages.len()],
            dropped_rows: vec![0; stages.len()],
            stages,
            consumers,
            upstream,
        })
    }

    /// The names of the sources the plans read, in the order [`Simulator::push_to`] numbers
    /// them: the order their first Source node appears.
    pub fn sources(&self) -> Vec<&str> {
        self.feeds.iter().map(|f| f.name.as_str()).collect()
    }

    /// Delivers one event of the plans' only source: `event` holds one value per column of
    /// the Source node's schema, in that order (`Value::Null` for a missing value). The
    /// target model's Sink emissions are accumulated for [`Simulator::finish`].
    ///
    /// On an event-time source, an event strictly behind the watermark is late: with
    /// `late_events: drop` it is not delivered ([`Arrival::Dropped`]), with `keep` it is
    /// delivered as if on time. After a delivered event the watermark advances to its time
    /// minus the delay, if that is later, and keyed state whose retention has passed expires.
    ///
    /// # Errors
    /// A [`SimError`] naming the event (1-based, counting every event pushed): the plans read
    /// several sources (use [`Simulator::push_to`]); the event has the wrong number of
    /// values or a value of the wrong type (naming the source column), or no event time on
    /// an event-time source; or an operator failed (overflow, division by zero, a failed
    /// cast; docs/sql.md). The simulator is then failed: later calls return the same error.
    pub fn push(&mut self, event: &[Value]) -> Result<Arrival, SimError> {
        let feed = self.only_feed()?;
        self.push_as(feed, Op::Insert, event)
    }

    /// Delivers one event of source number `source` (in [`Simulator::sources`]' order), as
    /// [`Simulator::push`] does.
    ///
    /// # Errors
    /// As [`Simulator::push`]; and a [`Failure::Plan`] error for a source number the plans
    /// do not have.
    pub fn push_to(&mut self, source: usize, event: &[Value]) -> Result<Arrival, SimError> {
        let feed = self.feed(source)?;
        self.push_as(feed, Op::Insert, event)
    }

    /// Delivers a tombstone of the plans' only source, an upsert source: `key` holds one
    /// value per column of the Source node's schema, the key's columns set and every other
    /// column null. The key's row is deleted, or nothing happens when it holds none
    /// (docs/changing-tables.md).
    ///
    /// # Errors
    /// As [`Simulator::push`]; and a [`Failure::Plan`] error on a source that is not an
    /// upsert source, which has no keys to delete.
    pub fn push_delete(&mut self, key: &[Value]) -> Result<Arrival, SimError> {
        let feed = self.only_feed()?;
        self.push_delete_to(feed, key)
    }

    /// Delivers a tombstone of source number `source`, as [`Simulator::push_delete`] does.
    ///
    /// # Errors
    /// As [`Simulator::push_delete`] and [`Simulator::push_to`].
    pub fn push_delete_to(&mut self, source: usize, key: &[Value]) -> Result<Arrival, SimError> {
        let feed = self.feed(source)?;
        if !self.feeds[feed].upsert && self.failed.is_none() {
            let e = SimError {
                failure: Failure::Plan,
                model: self.models[self.feeds[feed].model].clone(),
                column: None,
                event: self.arrived + 1,
                message: format!(
                    "source `{}` is an append source, which has no keys to delete",
                    self.feeds[feed].name
                ),
            };
            return Err(self.fail(e));
        }
        self.push_as(feed, Op::Delete, key)
    }

    /// The only feed, or the error that says the plans read several.
    fn only_feed(&mut self) -> Result<usize, SimError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.feeds.len() == 1 {
            return Ok(0);
        }
        let names: Vec<String> = self.feeds.iter().map(|f| format!("`{}`", f.name)).collect();
        Err(self.misuse(format!(
            "the plans read several sources ({}); each event must name its source",
            names.join(", ")
        )))
    }

    /// Fails the run for a call the plans cannot take, naming the next event and the target
    /// model.
    fn misuse(&mut self, message: String) -> SimError {
        let e = SimError {
            failure: Failure::Plan,
            model: self.models[self.models.len() - 1].clone(),
            column: None,
            event: self.arrived + 1,
            message,
        };
        self.fail(e)
    }

    /// Feed number `source`, or the error that says there is none.
    fn feed(&mut self, source: usize) -> Result<usize, SimError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if source < self.feeds.len() {
            return Ok(source);
        }
        let read = self.feeds.len();
        Err(self.misuse(format!(
            "there is no source number {source}: the plans read {read}"
        )))
    }

    fn push_as(&mut self, feed: usize, op: Op, event: &[Value]) -> Result<Arrival, SimError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.arrived += 1;
        let row = match self.check_event(feed, event) {
            Ok(row) => row,
            Err(e) => return Err(self.fail(e)),
        };
        let f = &self.feeds[feed];
        let time = match &f.clock {
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
                        model: self.models[f.model].clone(),
                        column: Some(clock.name.clone()),
                        event: self.arrived,
                        message: format!(
                            "event {} has no `{}`; source `{}` runs on event time, so every event needs one",
                            self.arrived, clock.name, f.name
                        ),
                    };
                    return Err(self.fail(e));
                }
            },
        };
        self.events += 1;
        let mut late = Drops::default();
        let mut graph = Graph {
            consumers: &self.consumers,
            hops: &self.hops,
            target: self.target,
            changes: &mut self.changes,
            halves: &mut self.halves,
            late: &mut late,
        };
        let entries = &self.feeds[feed].entries;
        let delivered = match entries.as_slice() {
            // The common case: one reader, the event passed on borrowed.
            [(stage, port)] => graph.drive(
                &mut self.stages,
                0,
                *stage,
                *port,
                Rec {
                    op,
                    row,
                    before: None,
                    half: false,
                },
                time,
            ),
            many => many.iter().try_for_each(|&(stage, port)| {
                graph.drive(
                    &mut self.stages,
                    0,
                    stage,
                    port,
                    Rec {
                        op,
                        row: row.clone(),
                        before: None,
                        half: false,
                    },
                    time,
                )
            }),
        };
        if let Err((stage, fault)) = delivered {
            let e = self.error_at(stage, fault);
            return Err(self.fail(e));
        }
        self.halves.end_event(&mut self.changes);
        // The event is dropped when the stages that may drop it all did; the rows a stage
        // dropped of an event that went on elsewhere are counted apart.
        let arrival = match late.stages.first() {
            Some(&stage) if !late.kept => {
                // Dropped, not delivered.
                self.events -= 1;
                Arrival::DroppedBy(self.stages[stage].id.clone())
            }
            _ => {
                for &stage in &late.stages {
                    self.dropped_rows[stage] += 1;
                }
                Arrival::Delivered
            }
        };
        if let (Some(t), Some(clock)) = (time, &self.feeds[feed].clock) {
            let to = t.saturating_sub(clock.delay);
            if let Err(e) = self.advance(Some(feed), to) {
                return Err(self.fail(e));
            }
        }
        Ok(arrival)
    }

    /// Moves the watermark of every source to `to` (milliseconds since the epoch) if that is
    /// later, as a fixture's `- watermark:` item does: windows it makes final emit their
    /// rows, and keyed state whose retention has passed expires. Nothing happens on a source
    /// that runs on processing time.
    ///
    /// # Errors
    /// An error recorded earlier, or an operator failure while the rows the watermark made
    /// final flow downstream (naming the number of events pushed).
    pub fn advance_watermark(&mut self, to: i64) -> Result<(), SimError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.advance(None, to).map_err(|e| self.fail(e))
    }

    /// Moves the watermark of source number `source` to `to`, as a fixture's `- watermark:`
    /// item naming that source does; a node's watermark is the least of its sources', so
    /// one source moving may move none.
    ///
    /// # Errors
    /// As [`Simulator::advance_watermark`] and [`Simulator::push_to`].
    pub fn advance_source_watermark(&mut self, source: usize, to: i64) -> Result<(), SimError> {
        let feed = self.feed(source)?;
        self.advance(Some(feed), to).map_err(|e| self.fail(e))
    }

    /// The current watermark: the least of the event-time sources' clocks; `None` before
    /// every one of them moved, or when every source runs on processing time.
    pub fn watermark(&self) -> Option<i64> {
        self.feeds
            .iter()
            .filter_map(|f| f.clock.as_ref().map(|c| c.watermark))
            .min()
            .filter(|w| *w != i64::MIN)
    }

    /// The event-time sources whose clock has not moved (no event and no watermark yet),
    /// which hold back the watermark of every node they reach.
    pub fn silent_sources(&self) -> Vec<&str> {
        self.feeds
            .iter()
            .filter(|f| f.clock.as_ref().is_some_and(|c| c.watermark == i64::MIN))
            .map(|f| f.name.as_str())
            .collect()
    }

    /// Moves the clock of `feed` (of every feed, for `None`) to `to` where that is later,
    /// then hands each watching stage, in topological order, the least clock of the feeds
    /// upstream of it when that moved; what one emits flows through the stages after it
    /// before they receive the watermark themselves.
    fn advance(&mut self, feed: Option<usize>, to: i64) -> Result<(), SimError> {
        let mut moved = false;
        for (i, f) in self.feeds.iter_mut().enumerate() {
            if feed.is_some_and(|only| only != i) {
                continue;
            }
            if let Some(clock) = &mut f.clock
                && to > clock.watermark
            {
                clock.watermark = to;
                moved = true;
            }
        }
        if !moved {
            return Ok(());
        }
        let mut out = std::mem::replace(&mut self.out, Out::new());
        let result = (0..self.watching.len()).try_for_each(|w| {
            let i = self.watching[w];
            let watermark = self.upstream[i]
                .iter()
                .map(|&(f, delay)| {
                    self.feeds[f]
                        .clock
                        .as_ref()
                        .map_or(i64::MIN, |c| c.watermark.saturating_sub(delay))
                })
                .min()
                .unwrap_or(i64::MIN);
            if watermark <= self.handed[i] {
                return Ok(());
            }
            self.handed[i] = watermark;
            self.stages[i]
                .on_watermark(watermark, &mut out)
                .map_err(|f| self.error_at(i, f))?;
            self.flow(i, &mut out)
        });
        if result.is_ok() {
            self.out = out;
        }
        result
    }

    /// Delivers what stage `i` emitted to its consumers.
    fn flow(&mut self, i: usize, out: &mut Out<'static>) -> Result<(), SimError> {
        let mut late = Drops::default();
        let mut graph = Graph {
            consumers: &self.consumers,
            hops: &self.hops,
            target: self.target,
            changes: &mut self.changes,
            halves: &mut self.halves,
            late: &mut late,
        };
        let mut result = Ok(());
        for (rec, time) in out.drain() {
            result = graph.deliver(&mut self.stages[i + 1..], i + 1, i, rec, time);
            if result.is_err() {
                break;
            }
        }
        // Rows an operator emitted on a watermark or at the end that a stage after it
        // dropped as late: no event of a fixture to acknowledge, so counted.
        for &stage in &late.stages {
            self.dropped_rows[stage] += 1;
        }
        result.map_err(|(stage, fault)| self.error_at(stage, fault))
    }

    /// Ends the input. An unbounded source (Kafka) never ends, so its windows emit nothing
    /// (a run's end is not a watermark) and are counted in [`Output::open_windows`]; a
    /// bounded one (a file) ends with the final watermark Flink sends when a file is read
    /// to its end, which fires every open window. Then every Sort emits its buffered rows,
    /// sorted, through the rest of the plans. Returns the target model's changelog and the
    /// number of events delivered.
    ///
    /// # Errors
    /// An error recorded by an earlier [`Simulator::push`], or an operator failure while
    /// the sorted rows flow downstream (with `event` = the number of events delivered).
    pub fn finish(mut self) -> Result<Output, SimError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        for f in 0..self.feeds.len() {
            if self.feeds[f].bounded {
                self.advance(Some(f), i64::MAX)?;
            }
        }
        for i in 0..self.stages.len() {
            let mut out = Out::new();
            self.stages[i]
                .on_end(&mut out)
                .map_err(|f| self.error_at(i, f))?;
            self.flow(i, &mut out)?;
        }
        let pending = |waiting: fn(&StageKind) -> Option<(usize, i64)>| -> Vec<OpenWindows> {
            self.stages
                .iter()
                .enumerate()
                .filter_map(|(i, s)| {
                    waiting(&s.kind).map(|(count, first_fires_at)| {
                        let clocks: Vec<(&Feed, i64, i64)> = self.upstream[i]
                            .iter()
                            .filter_map(|&(f, delay)| {
                                let feed = &self.feeds[f];
                                feed.clock.as_ref().map(|c| (feed, c.watermark, delay))
                            })
                            .collect();
                        let held_back_by: Vec<String> = clocks
                            .iter()
                            .filter(|(_, w, _)| *w == i64::MIN)
                            .map(|(f, _, _)| f.name.clone())
                            .collect();
                        let least = clocks.iter().map(|(_, w, d)| w.saturating_sub(*d)).min();
                        let behind = match least {
                            Some(least) if held_back_by.is_empty() && least < first_fires_at => {
                                clocks
                                    .iter()
                                    .filter(|(_, w, d)| w.saturating_sub(*d) == least)
                                    .map(|(f, w, d)| (f.name.clone(), *w, *d))
                                    .collect()
                            }
                            _ => Vec::new(),
                        };
                        OpenWindows {
                            node: s.id.clone(),
                            count,
                            first_fires_at,
                            held_back_by,
                            behind,
                        }
                    })
                })
                .collect()
        };
        let open_windows = pending(|kind| match kind {
            StageKind::Window(w) => w.open(),
            StageKind::Session(w) => w.open(),
            _ => None,
        });
        let waiting_rows = pending(|kind| match kind {
            StageKind::IntervalJoin(j) => j.waiting(),
            StageKind::TemporalJoin(j) => j.waiting(),
            StageKind::Rank(r) => r.waiting(),
            StageKind::Over(o) => o.waiting(),
            StageKind::WindowRank(r) => r.waiting(),
            _ => None,
        });
        let padded = self
            .stages
            .iter()
            .filter_map(|s| match &s.kind {
                StageKind::IntervalJoin(j) if j.padded() != [0, 0] => {
                    Some((s.id.clone(), j.padded()))
                }
                StageKind::TemporalJoin(j) if j.unmatched() > 0 => {
                    Some((s.id.clone(), [j.unmatched(), 0]))
                }
                _ => None,
            })
            .collect();
        let dropped_rows = self
            .stages
            .iter()
            .zip(&self.dropped_rows)
            .filter(|(_, n)| **n > 0)
            .map(|(s, n)| (s.id.clone(), *n))
            .collect();
        Ok(Output {
            changes: self.changes,
            events_processed: self.events,
            open_windows,
            waiting_rows,
            dropped_rows,
            padded,
        })
    }

    /// The keyed state of the Aggregate node `id` (e.g. `customer_metrics::aggregate::0`):
    /// (group-by values in group-by order, accumulator values in call order) pairs sorted by
    /// key (lexicographic [`Value::sort_cmp`]); for a window node, the key is the values of
    /// its grouping columns that are not the window's, then the window's end. Each accumulator value's variant is the one
    /// of its fingerprint type (`Value::Decimal` at the accumulator's scale for a decimal
    /// sum, `Value::Int64` for a count) or `Value::Null`. `None` when the plans have no
    /// keyed node with that id.
    pub fn keyed_state(&self, id: &NodeId) -> Option<Vec<(Vec<Value>, Vec<Value>)>> {
        self.stages
            .iter()
            .find(|s| &s.id == id)
            .and_then(|s| match &s.kind {
                StageKind::Aggregate(a) => Some(a.snapshot()),
                StageKind::Window(w) => Some(w.snapshot()),
                StageKind::Session(w) => Some(w.snapshot()),
                StageKind::Deduplicate(d) => Some(d.snapshot()),
                StageKind::Rank(r) => Some(r.snapshot()),
                StageKind::Over(o) => Some(o.snapshot()),
                StageKind::WindowRank(r) => Some(r.snapshot()),
                StageKind::Normalize(n) => Some(n.snapshot()),
                StageKind::Join(j) => Some(j.snapshot()),
                StageKind::IntervalJoin(j) => Some(j.snapshot()),
                StageKind::TemporalJoin(j) => Some(j.snapshot()),
                _ => None,
            })
    }

    /// Number of events delivered so far.
    pub fn events_processed(&self) -> usize {
        self.events
    }

    /// Number of records the target model's Sink emitted so far.
    pub fn changes_emitted(&self) -> usize {
        self.changes.len()
    }

    /// Checks `event` against the columns of feed `feed`; decimals at another scale are
    /// converted exactly to the column's scale.
    fn check_event<'e>(
        &self,
        feed: usize,
        event: &'e [Value],
    ) -> Result<Cow<'e, [Value]>, SimError> {
        let f = &self.feeds[feed];
        if event.len() != f.columns.len() {
            return Err(SimError {
                failure: Failure::Event,
                model: self.models[f.model].clone(),
                column: None,
                event: self.arrived,
                message: format!(
                    "the event has {} values but source `{}` declares {} columns",
                    event.len(),
                    f.name,
                    f.columns.len()
                ),
            });
        }
        let mut row = Cow::Borrowed(event);
        for (i, (v, col)) in event.iter().zip(&f.columns).enumerate() {
            match col.conform(v) {
                Conform::Ok => {}
                Conform::Replace(v) => row.to_mut()[i] = v,
                Conform::Wrong(message) => {
                    return Err(SimError {
                        failure: Failure::Event,
                        model: self.models[f.model].clone(),
                        column: Some(col.name.clone()),
                        event: self.arrived,
                        message: format!("source `{}`: {message}", f.name),
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

/// The graph while it is built from the plans, model by model.
#[derive(Default)]
struct Builder {
    feeds: Vec<Feed>,
    stages: Vec<Stage>,
    consumers: Vec<Vec<(usize, u8)>>,
    upstream: Vec<Vec<(usize, i64)>>,
    /// Where each node built so far has its output.
    places: std::collections::HashMap<NodeId, Place>,
}

impl Builder {
    /// Adds the nodes of `plan`, model number `mi` of `plans`.
    fn model(&mut self, mi: usize, plan: &ModelPlan, plans: &[ModelPlan]) -> Result<(), SimError> {
        let name = &plan.name;
        if plan.inputs.is_empty() {
            return Err(shape_error(name, "the model reads no source and no model"));
        }
        for m in plan.models_read() {
            if !plans[..mi].iter().any(|p| p.name == m) {
                return Err(shape_error(
                    name,
                    format!("the model reads `{m}`, which must come before it in the plans"),
                ));
            }
        }
        if plan.nodes.is_empty() {
            return Err(shape_error(
                name,
                "the model has no operators; it must end in a Sink",
            ));
        }
        let last = plan.nodes.len() - 1;
        for (ni, node) in plan.nodes.iter().enumerate() {
            let is_sink = matches!(node.op, Operator::Sink { .. });
            if is_sink != (ni == last) {
                let msg = if is_sink {
                    format!("node `{}`: a Sink must be the model's last node", node.id)
                } else {
                    format!("node `{}`: the model must end in a Sink", node.id)
                };
                return Err(shape_error(name, msg));
            }
            if let Operator::Sink { model, .. } = &node.op
                && model != name
            {
                return Err(shape_error(
                    name,
                    format!("node `{}`: the Sink belongs to model `{model}`", node.id),
                ));
            }
            if node.id.model != *name {
                return Err(shape_error(
                    name,
                    format!("node `{}` does not belong to model `{name}`", node.id),
                ));
            }
            if let Operator::Source { name: source, .. } = &node.op {
                self.source(mi, plan, node, source)?;
                continue;
            }
            self.operator(mi, plan, node, plans)?;
        }
        Ok(())
    }

    /// A Source node: its feed (shared with the other Source nodes of the same source), and
    /// the normalization in front of its readers when the source is an upsert source.
    fn source(
        &mut self,
        mi: usize,
        plan: &ModelPlan,
        node: &Node,
        source: &str,
    ) -> Result<(), SimError> {
        if !node.inputs.is_empty() {
            return Err(shape_error(
                &plan.name,
                format!("node `{}`: a Source reads nothing", node.id),
            ));
        }
        if !plan.inputs.contains(&Input::Source(source.to_string())) {
            return Err(shape_error(
                &plan.name,
                format!(
                    "node `{}` reads source `{source}`, which the model does not list among what it reads",
                    node.id
                ),
            ));
        }
        let feed = match self.feeds.iter().position(|f| f.name == source) {
            Some(f) => {
                let same = self.feeds[f].columns.len() == node.schema.len()
                    && self.feeds[f]
                        .columns
                        .iter()
                        .zip(&node.schema)
                        .all(|(c, f)| c.name == f.name && c.ty == f.ty);
                if !same {
                    return Err(shape_error(
                        &plan.name,
                        format!(
                            "node `{}` reads source `{source}` with other columns than an earlier Source node of it",
                            node.id
                        ),
                    ));
                }
                f
            }
            None => {
                self.feeds.push(feed_of(mi, plan, node, source)?);
                self.feeds.len() - 1
            }
        };
        let place = if node.changelog.is_updating() {
            let stage = Stage::normalize(mi, node).map_err(|f| build_error(&plan.name, f))?;
            let i = self.add(stage, vec![(feed, 0)]);
            self.feeds[feed].entries.push((i, 0));
            Place::Stage(i)
        } else {
            Place::Feed(feed)
        };
        self.places.insert(node.id.clone(), place);
        Ok(())
    }

    /// A node after a Source: compiled against what it reads, and connected to it.
    fn operator(
        &mut self,
        mi: usize,
        plan: &ModelPlan,
        node: &Node,
        plans: &[ModelPlan],
    ) -> Result<(), SimError> {
        let name = &plan.name;
        let want = match node.op {
            Operator::Union => "two or more nodes",
            Operator::Join { .. }
            | Operator::IntervalJoin { .. }
            | Operator::TemporalJoin { .. } => "exactly two nodes",
            _ => "exactly one node",
        };
        let count_ok = match node.op {
            Operator::Union => node.inputs.len() >= 2,
            Operator::Join { .. }
            | Operator::IntervalJoin { .. }
            | Operator::TemporalJoin { .. } => node.inputs.len() == 2,
            _ => node.inputs.len() == 1,
        };
        if !count_ok {
            return Err(shape_error(
                name,
                format!(
                    "node `{}` reads {} nodes; a {} reads {want}",
                    node.id,
                    node.inputs.len(),
                    node.op.kind().title()
                ),
            ));
        }
        let mut read: Vec<(&Node, Place)> = Vec::with_capacity(node.inputs.len());
        for input in &node.inputs {
            let found = self.places.get(input).copied().and_then(|place| {
                let owner = if input.model == *name {
                    Some(plan)
                } else if input.kind == NodeKind::Sink
                    && plan.models_read().any(|m| m == input.model)
                {
                    plans[..mi].iter().find(|p| p.name == input.model)
                } else {
                    None
                };
                owner
                    .and_then(|p| p.nodes.iter().find(|n| &n.id == input))
                    .map(|n| (n, place))
            });
            match found {
                Some(r) => read.push(r),
                None => {
                    return Err(shape_error(
                        name,
                        format!(
                            "node `{}` must read `{input}`, a node before it in its model or the Sink of a model it reads",
                            node.id
                        ),
                    ));
                }
            }
        }
        let shapes: Vec<InputShape<'_>> = read
            .iter()
            .map(|(n, _)| InputShape {
                schema: &n.schema,
                changelog: &n.changelog,
                boundedness: n.boundedness,
            })
            .collect();
        let stage = Stage::build(mi, node, &shapes).map_err(|f| build_error(name, f))?;
        if stage.passes_through() && read.len() == 1 {
            let place = read[0].1;
            self.places.insert(node.id.clone(), place);
            return Ok(());
        }
        // Each feed once, with the longest delay of the paths from it.
        let mut upstream: Vec<(usize, i64)> = Vec::new();
        for (_, place) in &read {
            let feeds = match *place {
                Place::Feed(f) => vec![(f, 0)],
                Place::Stage(s) => {
                    let delay = self.stages[s].delay();
                    self.upstream[s]
                        .iter()
                        .map(|&(f, d)| (f, d.saturating_add(delay)))
                        .collect()
                }
            };
            for (f, d) in feeds {
                match upstream.iter_mut().find(|(g, _)| *g == f) {
                    Some((_, e)) => *e = (*e).max(d),
                    None => upstream.push((f, d)),
                }
            }
        }
        // An interval join's deadlines and a retention both count on event time.
        let needs_clock = match (&node.op, &node.state) {
            (Operator::IntervalJoin { .. }, _) => Some("is an interval join"),
            (Operator::TemporalJoin { .. }, _) => Some("is a temporal join"),
            (_, State::Keyed(k)) if k.retention != Retention::Unbounded => Some("has a retention"),
            _ => None,
        };
        if let Some(what) = needs_clock
            && let Some(&(f, _)) = upstream
                .iter()
                .find(|&&(f, _)| self.feeds[f].clock.is_none())
        {
            return Err(shape_error(
                name,
                format!(
                    "node `{}` {what}, but source `{}` runs on processing time",
                    node.id, self.feeds[f].name
                ),
            ));
        }
        let i = self.add(stage, upstream);
        for (port, (_, place)) in read.iter().enumerate() {
            let port = u8::try_from(port).map_err(|_| {
                shape_error(
                    name,
                    format!("node `{}` reads more than 255 nodes", node.id),
                )
            })?;
            match *place {
                Place::Feed(f) => self.feeds[f].entries.push((i, port)),
                Place::Stage(s) => self.consumers[s].push((i, port)),
            }
        }
        self.places.insert(node.id.clone(), Place::Stage(i));
        Ok(())
    }

    fn add(&mut self, stage: Stage, upstream: Vec<(usize, i64)>) -> usize {
        self.stages.push(stage);
        self.consumers.push(Vec::new());
        self.upstream.push(upstream);
        self.stages.len() - 1
    }
}

/// The feed of the first Source node of `source`: its columns, kind and clock.
fn feed_of(mi: usize, plan: &ModelPlan, node: &Node, source: &str) -> Result<Feed, SimError> {
    let Operator::Source { event_time, .. } = &node.op else {
        unreachable!("called for Source nodes")
    };
    let clock = match event_time {
        Some(t) => {
            let column = node
                .schema
                .iter()
                .position(|f| f.name == t.column && f.ty == DataType::Timestamp)
                .ok_or_else(|| {
                    shape_error(
                        &plan.name,
                        format!(
                            "the event-time column `{}` is not a timestamp column of source `{source}`",
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
        None => None,
    };
    Ok(Feed {
        name: source.to_string(),
        model: mi,
        columns: node
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
            .collect(),
        upsert: node.changelog.is_updating(),
        bounded: node.boundedness == streamform_ir::Boundedness::Bounded,
        clock,
        entries: Vec::new(),
    })
}

/// Where a stage's records go, in short: to one consumer, to the changelog (the target's
/// Sink), through the target's Sink to the changelog (its only consumer is that Sink, which
/// the driver runs in place), or to the list of consumers (several, or none).
#[derive(Clone, Copy)]
enum Hop {
    One(usize, u8),
    Target,
    IntoTarget,
    Fan,
}

/// The edges between the stages and where the target's records go, borrowed for one
/// delivery. The stages themselves are passed along apart: an operator may lend the record
/// it emits from its own buffers or state (docs/architecture.md, "streamform-sim"), so the
/// stage stays borrowed until that record has gone all the way down. A stage's consumers
/// always come after it (a stage is added after every stage it reads), so the driver walks
/// down the graph holding the stages ahead of it, `stages[0]` being stage number `base`.
struct Graph<'g> {
    consumers: &'g [Vec<(usize, u8)>],
    hops: &'g [Hop],
    target: usize,
    changes: &'g mut Changelog,
    halves: &'g mut halves::Halves,
    /// What stages dropped as late of what was delivered.
    late: &'g mut Drops,
}

/// The rows stages dropped as late while one event, or one watermark's rows, went through
/// the plans: the stages that did, in order, and whether a stage that may drop kept it on
/// another way (a self-join's other side, another model reading the same source).
#[derive(Default)]
struct Drops {
    stages: smallvec::SmallVec<[usize; 1]>,
    kept: bool,
}

impl Graph<'_> {
    /// Runs `rec` into stage `at` on input `port`, depth first: every record a stage emits
    /// reaches the target's Sink (through each consumer in turn) before the next one leaves
    /// it. What the target's Sink emits is appended to the changelog; a stage that drops the
    /// record as late is recorded. A failure names its stage's number. `stages` holds stage
    /// `base` and those after it; `at` is one of them.
    #[inline]
    fn drive<'s>(
        &mut self,
        mut stages: &'s mut [Stage],
        mut base: usize,
        mut at: usize,
        mut port: u8,
        mut rec: Rec<'s>,
        time: Option<i64>,
    ) -> Result<(), (usize, Fault)> {
        // While each stage returns one record, buffers none and has one consumer, the record
        // moves on in this loop; a fan-out, or a stage read by several, hands each record to
        // each consumer in turn.
        let mut out = Out::new();
        loop {
            // The stage is borrowed for as long as what it emits, and the walk goes on
            // with the stages after it.
            let (stage, rest) = std::mem::take(&mut stages)[at - base..]
                .split_first_mut()
                .expect("a stage's consumers come after it");
            (stages, base) = (rest, at + 1);
            let may_drop = stage.may_drop();
            let next = match stage.on_change(port, rec, time, &mut out) {
                Ok(next) => next,
                Err(f) => return Err((at, f)),
            };
            if out.take_late() {
                self.late.stages.push(at);
            } else if may_drop {
                self.late.kept = true;
            }
            if out.is_empty() {
                match (self.hops[at], next) {
                    (_, None) => return Ok(()),
                    (Hop::One(consumer, p), Some(next)) => {
                        rec = next;
                        (at, port) = (consumer, p);
                        continue;
                    }
                    (Hop::Target, Some(next)) => {
                        self.halves.write(self.changes, &next);
                        return Ok(());
                    }
                    (Hop::IntoTarget, Some(next)) => {
                        let target = self.target;
                        stages[target - base]
                            .sink_takes(&next)
                            .map_err(|f| (target, f))?;
                        self.halves.write(self.changes, &next);
                        return Ok(());
                    }
                    (Hop::Fan, Some(next)) => return self.deliver(stages, base, at, next, time),
                }
            }
            if let Some(next) = next {
                self.deliver(stages, base, at, next, time)?;
            }
            for (more, t) in out.drain() {
                self.deliver(stages, base, at, more, t)?;
            }
            return Ok(());
        }
    }

    /// Hands `rec`, emitted by stage `from`, to each of its consumers in order, or to the
    /// changelog when `from` is the target's Sink. `stages` holds stage `base` and those
    /// after it, `from`'s consumers among them.
    fn deliver(
        &mut self,
        stages: &mut [Stage],
        base: usize,
        from: usize,
        rec: Rec<'_>,
        time: Option<i64>,
    ) -> Result<(), (usize, Fault)> {
        let consumers = self.consumers;
        match consumers[from].as_slice() {
            [] => {
                if from == self.target {
                    self.halves.write(self.changes, &rec);
                }
                Ok(())
            }
            [(c, p)] => self.drive(stages, base, *c, *p, rec, time),
            [rest @ .., (last, lp)] => {
                for &(c, p) in rest {
                    self.drive(stages, base, c, p, rec.clone(), time)?;
                }
                self.drive(stages, base, *last, *lp, rec, time)
            }
        }
    }
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
