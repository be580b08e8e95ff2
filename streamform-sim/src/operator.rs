//! The operator interface of the simulator, and the compiled node that wraps each operator.
//!
//! An operator receives three things, one at a time: a change from its input, a watermark
//! (the event time below which nothing more arrives on time), and the end of a bounded
//! input. For each it appends what it emits to an [`Out`] buffer, any number of records: a
//! Filter emits at most one per change, a window emits nothing per change and every row it
//! makes final per watermark. The driver in `lib.rs` owns delivery: it hands each record an
//! operator emits to the next one, depth first, so a record reaches the Sink before the
//! next record of the same buffer leaves, and it passes a watermark down the chain only
//! after the operators above it have emitted what that watermark made final (so a window
//! downstream sees those rows before the watermark that closed them; docs/windows.md).
//!
//! Each operator lives in its own module under `operators/`; `StageKind` dispatches to them
//! statically, so the common case (one record in, at most one out) costs no allocation and
//! no dynamic call.

use std::borrow::Cow;

use smallvec::SmallVec;
use streamform_ir::value::ArithError;
use streamform_ir::{
    Boundedness, Changelog, Field, Node, NodeId, Operator as IrOperator, Value, WindowKind,
};

use crate::eval::{EvalError, resolve};
use crate::operators::{
    aggregate::Aggregate,
    deduplicate::Deduplicate,
    filter::Filter,
    interval_join::IntervalJoin,
    join::Join,
    normalize::Normalize,
    over::Over,
    project::Project,
    rank::Rank,
    session::SessionAggregate,
    sort::Sort,
    temporal_join::TemporalJoin,
    window::{Shape, WindowAggregate},
    window_rank::WindowRank,
    window_table::WindowTable,
};
use crate::{Failure, Op};

/// A change in flight between operators. Rows are borrowed from the event where no operator
/// rebuilt them, and from the operator that emitted them where it lends them from its own
/// state or buffers (docs/architecture.md, "streamform-sim").
#[derive(Clone)]
pub(crate) struct Rec<'a> {
    pub op: Op,
    pub row: Cow<'a, [Value]>,
    pub before: Option<Cow<'a, [Value]>>,
    /// Whether the record is one half of an update that Flink emits apart, as a join does
    /// with the joined rows of an updated side (docs/joins.md, "Tables that change"): a
    /// delete is then Flink's `-U`, an insert its `+U`. Operators fold it as the delete or
    /// insert it is and pass the mark on; the target's changelog pairs the two halves of
    /// one key into an update.
    pub half: bool,
}

impl<'a> Rec<'a> {
    pub(crate) fn insert(row: Cow<'a, [Value]>) -> Rec<'a> {
        Rec {
            op: Op::Insert,
            row,
            before: None,
            half: false,
        }
    }

    /// A delete of `row`.
    pub(crate) fn delete(row: Cow<'a, [Value]>) -> Rec<'a> {
        Rec {
            op: Op::Delete,
            row,
            before: None,
            half: false,
        }
    }
}

/// What an operator emits beyond the one record it returns: records, each with the event
/// time it carries downstream (the time an aggregate's retention counts from), and whether
/// the operator dropped the change it received as late.
pub(crate) struct Out<'a> {
    recs: SmallVec<[(Rec<'a>, Option<i64>); 1]>,
    late: bool,
}

impl<'a> Out<'a> {
    pub(crate) fn new() -> Out<'a> {
        Out {
            recs: SmallVec::new(),
            late: false,
        }
    }

    /// Emits `rec` at event time `time`.
    #[inline]
    pub(crate) fn emit(&mut self, rec: Rec<'a>, time: Option<i64>) {
        self.recs.push((rec, time));
    }

    /// Makes room for `n` more records.
    pub(crate) fn reserve(&mut self, n: usize) {
        self.recs.reserve(n);
    }

    /// Says that the change received was dropped as late (and so emits nothing for it).
    pub(crate) fn dropped_late(&mut self) {
        self.late = true;
    }

    /// Whether the change received was dropped as late; clears the mark.
    pub(crate) fn take_late(&mut self) -> bool {
        std::mem::take(&mut self.late)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    pub(crate) fn drain(&mut self) -> smallvec::Drain<'_, [(Rec<'a>, Option<i64>); 1]> {
        self.recs.drain(..)
    }
}

/// The interface every operator implements. `time` is the event time of the change (on an
/// event-time source), which state with a retention counts from.
pub(crate) trait Operator {
    /// One change from the input. The operator returns the record it emits for it, if one
    /// (at the change's time): the common case, which costs no buffer. One that emits more
    /// (a fan-out) returns the first and appends the others to `out`, in order. What it
    /// emits may borrow the operator itself (its state or a buffer it reuses): the driver
    /// hands the operator nothing more until those records have gone down the graph.
    fn on_change<'a>(
        &'a mut self,
        rec: Rec<'a>,
        time: Option<i64>,
        out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault>;

    /// One change from input `port` (left 0, right 1 for a join); an operator that reads
    /// one input takes it as [`Operator::on_change`].
    fn on_input<'a>(
        &'a mut self,
        _port: u8,
        rec: Rec<'a>,
        time: Option<i64>,
        out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        self.on_change(rec, time, out)
    }

    /// The watermark reached `watermark` (it only moves forward): emit what it makes final,
    /// drop state it expires.
    fn on_watermark(&mut self, _watermark: i64, _out: &mut Out<'static>) -> Result<(), Fault> {
        Ok(())
    }

    /// The (bounded) input ended.
    fn on_end(&mut self, _out: &mut Out<'static>) -> Result<(), Fault> {
        Ok(())
    }
}

/// An operator failure before the model and event are attached.
#[derive(Debug)]
pub(crate) struct Fault {
    pub column: Option<String>,
    pub message: String,
    pub failure: Failure,
}

impl Fault {
    #[cold]
    #[inline(never)]
    pub(crate) fn plain(message: impl Into<String>) -> Fault {
        Fault {
            column: None,
            message: message.into(),
            failure: Failure::Plan,
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn at(column: &str, message: impl Into<String>) -> Fault {
        Fault {
            column: Some(column.to_string()),
            message: message.into(),
            failure: Failure::Plan,
        }
    }

    /// A window of the event in `column` that would end past the year 9999 (or start before
    /// the year 1), which no timestamp holds.
    #[cold]
    #[inline(never)]
    pub(crate) fn window_out_of_range(column: &str, start: i64) -> Fault {
        let side = if streamform_ir::time::in_range(start) {
            "ends after the year 9999"
        } else {
            "starts before the year 1"
        };
        Fault {
            failure: Failure::TimeRange,
            ..Fault::at(
                column,
                format!("the event's window {side}, which a timestamp cannot hold"),
            )
        }
    }

    /// An expression over `column` that failed to evaluate.
    #[cold]
    #[inline(never)]
    pub(crate) fn eval(column: &str, e: &EvalError) -> Fault {
        Fault {
            failure: match e {
                EvalError::Arith(ArithError::Overflow) => Failure::Overflow,
                EvalError::Arith(ArithError::DivisionByZero) => Failure::DivisionByZero,
                EvalError::Arith(ArithError::Cast(_)) => Failure::Cast,
                EvalError::Arith(ArithError::TimeRange) => Failure::TimeRange,
                EvalError::Type(_) => Failure::Plan,
                EvalError::Unfollowed(_) | EvalError::Arith(ArithError::Unfollowed(_)) => {
                    Failure::Unfollowed
                }
            },
            ..Fault::at(column, e.to_string())
        }
    }
}

/// The timestamp at column `at` (named `column`) of a row an operator of an append input
/// (`operator`, for the message: "a window") receives, which must be an insert.
pub(crate) fn appended_time(
    rec: &Rec<'_>,
    at: usize,
    column: &str,
    operator: &str,
) -> Result<i64, Fault> {
    if rec.op != crate::Op::Insert {
        return Err(Fault::plain(format!(
            "{operator} received an {}; it reads an append input only",
            rec.op
        )));
    }
    match rec.row[at] {
        Value::Timestamp(t) => Ok(t),
        _ => Err(Fault::at(
            column,
            format!("{operator} received a row without its `{column}`"),
        )),
    }
}

pub(crate) fn update_without_before() -> Fault {
    Fault::plain("an update arrived without its before-image")
}

/// What a node reads: the previous node's output, or the previous model's Sink.
pub(crate) struct InputShape<'a> {
    pub schema: &'a [Field],
    pub changelog: &'a Changelog,
    pub boundedness: Boundedness,
}

impl InputShape<'_> {
    /// Fails unless the input only appends, as `node` (`what`, for the message: "a
    /// window") needs.
    pub(crate) fn appends(&self, node: &Node, what: &str) -> Result<(), Fault> {
        if self.changelog.is_updating() {
            return Err(Fault::plain(format!(
                "node `{}`: {what} reads an append input, not one that is {}",
                node.id,
                self.changelog.title()
            )));
        }
        Ok(())
    }
}

/// One compiled node.
pub(crate) struct Stage {
    /// Index of the node's model in the chain.
    pub model: usize,
    pub id: NodeId,
    pub kind: StageKind,
}

pub(crate) enum StageKind {
    /// An upsert source's normalization, the chain's first stage.
    Normalize(Normalize),
    Filter(Filter),
    Project(Project),
    Aggregate(Aggregate),
    Window(WindowAggregate),
    Session(SessionAggregate),
    Deduplicate(Deduplicate),
    /// A Top-N (docs/ranking.md).
    Rank(Rank),
    /// An OVER aggregation (docs/over.md).
    Over(Over),
    /// A Top-N per window (docs/ranking.md).
    WindowRank(WindowRank),
    /// A window table a rank per window reads (docs/ranking.md).
    WindowTable(WindowTable),
    Sort(Sort),
    /// UNION ALL: every change of every input passes on unchanged.
    Union,
    /// A regular join; its input port says which side a change comes from.
    Join(Join),
    /// An interval join; its input port says which side a change comes from.
    IntervalJoin(IntervalJoin),
    /// A temporal join; port 0 is the probe side, port 1 the versioned side.
    TemporalJoin(TemporalJoin),
    /// A model's Sink: with the key columns of its upsert sink, where a null key stops the
    /// run as Flink's NOT NULL enforcer stops the job (docs/concepts.md, "Append, upsert
    /// and keys"); empty when the model writes nowhere or appends.
    Sink(Vec<(usize, String)>),
}

impl Stage {
    /// Compiles `node` (anything but a Source) against what it reads, one shape per input
    /// (the driver checked how many the operator takes).
    ///
    /// # Errors
    /// A [`Fault`] describing a node the simulator cannot run: unknown columns, a schema
    /// that does not match the operator, an accumulator whose type breaks docs/sql.md's rules or differs from
    /// the node's state fingerprint, an Aggregate, window or Sort over an updating input, a
    /// Sort over an unbounded input, a Union whose inputs' types differ from its own.
    pub(crate) fn build(
        model: usize,
        node: &Node,
        inputs: &[InputShape<'_>],
    ) -> Result<Stage, Fault> {
        let input = &inputs[0];
        if node.op.kind() != node.id.kind {
            return Err(Fault::plain(format!(
                "node `{}` is a {} operator, but its id says {}",
                node.id,
                node.op.kind().id_name(),
                node.id.kind.id_name()
            )));
        }
        let kind = match &node.op {
            IrOperator::Source { .. } => {
                return Err(Fault::plain(format!(
                    "node `{}`: a Source can only start the chain",
                    node.id
                )));
            }
            IrOperator::Filter { predicate } => {
                StageKind::Filter(Filter::build(node, predicate, input)?)
            }
            IrOperator::Project { items } => {
                StageKind::Project(Project::build(node, items, input)?)
            }
            IrOperator::Aggregate { group_by, calls } => {
                StageKind::Aggregate(Aggregate::build(node, group_by, calls, input)?)
            }
            IrOperator::Window {
                window,
                group_by,
                calls,
            } => {
                let shape = Shape::build(node, window, group_by, calls, input)?;
                match window.kind {
                    WindowKind::Session { gap } => {
                        StageKind::Session(SessionAggregate::new(shape, gap))
                    }
                    kind => StageKind::Window(WindowAggregate::new(shape, kind)),
                }
            }
            IrOperator::WindowTable { window } => {
                StageKind::WindowTable(WindowTable::build(node, window, input)?)
            }
            IrOperator::Deduplicate { key } => {
                StageKind::Deduplicate(Deduplicate::build(node, key, input)?)
            }
            IrOperator::Rank {
                partition_by,
                ranking,
                number,
            } if ranking.strategy.per_window() => StageKind::WindowRank(WindowRank::build(
                node,
                partition_by,
                ranking,
                number.as_deref(),
                input,
            )?),
            IrOperator::Rank {
                partition_by,
                ranking,
                number,
            } => StageKind::Rank(Rank::build(
                node,
                partition_by,
                ranking,
                number.as_deref(),
                input,
            )?),
            IrOperator::Over {
                partition_by,
                frame,
                calls,
            } => StageKind::Over(Over::build(node, partition_by, frame, calls, input)?),
            IrOperator::Sort { keys } => StageKind::Sort(Sort::build(node, keys, input)?),
            IrOperator::Join { kind, on, filter } => {
                StageKind::Join(Join::build(node, *kind, on, filter.as_ref(), inputs)?)
            }
            IrOperator::IntervalJoin {
                kind,
                on,
                bounds,
                filter,
            } => StageKind::IntervalJoin(IntervalJoin::build(
                node,
                *kind,
                on,
                bounds,
                filter.as_ref(),
                inputs,
            )?),
            IrOperator::TemporalJoin {
                kind,
                on,
                left_time,
                right_time,
            } => StageKind::TemporalJoin(TemporalJoin::build(
                node,
                *kind,
                on,
                (left_time, right_time),
                inputs,
            )?),
            IrOperator::Union => {
                for (i, shape) in inputs.iter().enumerate() {
                    same_types(node, i, shape.schema)?;
                }
                StageKind::Union
            }
            IrOperator::Sink {
                materialized,
                target,
                model,
            } => {
                same_schema(node, input.schema)?;
                let keys = match (materialized, target) {
                    (streamform_ir::Materialized::Upsert { key }, Some(_)) => key
                        .iter()
                        .map(|k| {
                            resolve(&node.schema, k)
                                .map(|i| (i, k.clone()))
                                .map_err(|m| Fault::at(k, format!("model `{model}`: {m}")))
                        })
                        .collect::<Result<_, _>>()?,
                    _ => Vec::new(),
                };
                StageKind::Sink(keys)
            }
        };
        Ok(Stage {
            model,
            id: node.id.clone(),
            kind,
        })
    }

    /// The normalization of the upsert Source node `node` of model number `model`, the
    /// first stage its readers read.
    pub(crate) fn normalize(model: usize, node: &Node) -> Result<Stage, Fault> {
        Ok(Stage {
            model,
            id: node.id.clone(),
            kind: StageKind::Normalize(Normalize::build(node)?),
        })
    }

    /// Hands one change to the operator (see [`Operator::on_change`]), arrived on input
    /// `port` (0 but for an operator that reads several).
    #[inline]
    pub(crate) fn on_change<'a>(
        &'a mut self,
        port: u8,
        rec: Rec<'a>,
        time: Option<i64>,
        out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        match &mut self.kind {
            StageKind::Normalize(n) => n.on_change(rec, time, out),
            StageKind::Filter(f) => f.on_change(rec, time, out),
            StageKind::Project(p) => p.on_change(rec, time, out),
            StageKind::Aggregate(a) => a.on_change(rec, time, out),
            StageKind::Window(w) => w.on_change(rec, time, out),
            StageKind::Session(w) => w.on_change(rec, time, out),
            StageKind::Deduplicate(d) => d.on_change(rec, time, out),
            StageKind::Rank(r) => r.on_change(rec, time, out),
            StageKind::Over(o) => o.on_change(rec, time, out),
            StageKind::WindowRank(r) => r.on_change(rec, time, out),
            StageKind::WindowTable(w) => w.on_change(rec, time, out),
            StageKind::Sort(s) => s.on_change(rec, time, out),
            StageKind::Union => Ok(Some(rec)),
            StageKind::Join(j) => j.on_input(port, rec, time, out),
            StageKind::IntervalJoin(j) => j.on_input(port, rec, time, out),
            StageKind::TemporalJoin(j) => j.on_input(port, rec, time, out),
            StageKind::Sink(keys) => {
                keys_hold(keys, &rec)?;
                Ok(Some(rec))
            }
        }
    }

    /// What a Sink does with a record: nothing but check its key (see [`keys_hold`]). The
    /// driver runs it in place for the target's Sink; every other stage passes.
    #[inline]
    pub(crate) fn sink_takes(&self, rec: &Rec<'_>) -> Result<(), Fault> {
        match &self.kind {
            StageKind::Sink(keys) => keys_hold(keys, rec),
            _ => Ok(()),
        }
    }

    /// Whether the stage hands every record on unchanged and can fail on none (a Project
    /// of its input's columns in order): the driver leaves it out of the graph.
    pub(crate) fn passes_through(&self) -> bool {
        matches!(&self.kind, StageKind::Project(p) if p.identity())
    }

    /// Hands the operator a new watermark.
    pub(crate) fn on_watermark(
        &mut self,
        watermark: i64,
        out: &mut Out<'static>,
    ) -> Result<(), Fault> {
        match &mut self.kind {
            StageKind::Aggregate(a) => a.on_watermark(watermark, out),
            StageKind::Window(w) => w.on_watermark(watermark, out),
            StageKind::Session(w) => w.on_watermark(watermark, out),
            StageKind::Deduplicate(d) => d.on_watermark(watermark, out),
            StageKind::Rank(r) => r.on_watermark(watermark, out),
            StageKind::Over(o) => o.on_watermark(watermark, out),
            StageKind::WindowRank(r) => r.on_watermark(watermark, out),
            StageKind::Join(j) => j.on_watermark(watermark, out),
            StageKind::IntervalJoin(j) => j.on_watermark(watermark, out),
            StageKind::TemporalJoin(j) => j.on_watermark(watermark, out),
            StageKind::Normalize(_)
            | StageKind::Filter(_)
            | StageKind::Project(_)
            | StageKind::WindowTable(_)
            | StageKind::Sort(_)
            | StageKind::Union
            | StageKind::Sink(_) => Ok(()),
        }
    }

    /// Whether the operator does anything on a watermark (a window fires, keyed state
    /// expires): the driver hands watermarks to these stages only.
    pub(crate) fn watches_watermark(&self) -> bool {
        match &self.kind {
            StageKind::Aggregate(_)
            | StageKind::Window(_)
            | StageKind::Session(_)
            | StageKind::Deduplicate(_)
            | StageKind::IntervalJoin(_)
            | StageKind::TemporalJoin(_)
            | StageKind::Over(_)
            | StageKind::WindowRank(_) => true,
            StageKind::Join(j) => j.expires(),
            StageKind::Rank(r) => r.watches_watermark(),
            _ => false,
        }
    }

    /// Whether the operator may drop a change as late (a window, an interval join, a
    /// deduplication keeping the first row, an OVER aggregation).
    pub(crate) fn may_drop(&self) -> bool {
        match &self.kind {
            StageKind::Window(_)
            | StageKind::Session(_)
            | StageKind::IntervalJoin(_)
            | StageKind::Over(_)
            | StageKind::WindowRank(_) => true,
            StageKind::Rank(r) => r.watches_watermark(),
            _ => false,
        }
    }

    /// How far the stage holds back the watermark it passes on (an interval join's
    /// [`streamform_ir::TimeBounds::delay`]); 0 for every other stage.
    pub(crate) fn delay(&self) -> i64 {
        match &self.kind {
            StageKind::IntervalJoin(j) => j.delay(),
            _ => 0,
        }
    }

    /// Tells the operator that its bounded input ended.
    pub(crate) fn on_end(&mut self, out: &mut Out<'static>) -> Result<(), Fault> {
        match &mut self.kind {
            StageKind::Sort(s) => s.on_end(out),
            _ => Ok(()),
        }
    }
}

/// That no key column of an upsert sink (`keys`: position and name) is null in `rec`'s row:
/// a null key stops the job on Flink (docs/concepts.md, "Append, upsert and keys").
#[inline]
fn keys_hold(keys: &[(usize, String)], rec: &Rec<'_>) -> Result<(), Fault> {
    match keys.iter().find(|(i, _)| rec.row[*i].is_null()) {
        None => Ok(()),
        Some((_, column)) => Err(Fault {
            failure: Failure::NullKey,
            ..Fault::at(
                column,
                format!(
                    "a row whose key `{column}` is null reached the model's upsert sink, where Flink's upsert-kafka sink stops the job"
                ),
            )
        }),
    }
}

/// A Filter, Sort or Sink passes rows through: its schema must be its input's (nullability
/// aside, which a filter may narrow).
pub(crate) fn same_schema(node: &Node, input: &[Field]) -> Result<(), Fault> {
    let same = node.schema.len() == input.len()
        && node
            .schema
            .iter()
            .zip(input)
            .all(|(a, b)| a.name == b.name && a.ty == b.ty);
    if same {
        Ok(())
    } else {
        Err(Fault::plain(format!(
            "node `{}` passes its input through, but its schema {} differs from the input's {}",
            node.id,
            streamform_ir::identity::schema_fingerprint(&node.schema),
            streamform_ir::identity::schema_fingerprint(input)
        )))
    }
}

/// A Union's input number `i` must have the Union's column types, in order (its names are
/// the first input's, and nullability may differ).
fn same_types(node: &Node, i: usize, input: &[Field]) -> Result<(), Fault> {
    let same = node.schema.len() == input.len()
        && node.schema.iter().zip(input).all(|(a, b)| a.ty == b.ty);
    if same {
        Ok(())
    } else {
        Err(Fault::plain(format!(
            "node `{}`: input {} has the types {}, not the union's {}",
            node.id,
            i + 1,
            streamform_ir::identity::schema_fingerprint(input),
            streamform_ir::identity::schema_fingerprint(&node.schema)
        )))
    }
}

/// Lexicographic [`Value::sort_cmp`].
pub(crate) fn cmp_rows(a: &[Value], b: &[Value]) -> std::cmp::Ordering {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.sort_cmp(y))
        .find(|o| o.is_ne())
        .unwrap_or_else(|| a.len().cmp(&b.len()))
}
