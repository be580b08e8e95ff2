//! The operators of the simulator: every node after the chain's Source, compiled against its
//! input schema, processing one change at a time.
//!
//! Every operator emits at most one change per change it receives (a Filter over an update
//! turns it into an update, an insert, a delete or nothing; an Aggregate folds an insert
//! into an insert, an update or nothing), so a chain runs as a straight loop with no
//! intermediate buffers.
//!
//! Spec: streamform-docs "Changelogs" and "State" (lines 374-446); DECISIONS.md D4, D5, D9,
//! D10.

use std::borrow::Cow;
use std::cmp::Ordering;

use streamform_ir::value::{ArithError, F64};
use streamform_ir::{
    AggCall, AggFunc, Boundedness, Changelog, DataType, Decimal, Field, Node, NodeId, Operator,
    Retention, State, Value,
};

use crate::eval::{CExpr, EvalError, resolve};
use crate::keyed::{Entry, Expiry, KeyedState};
use crate::{Failure, Op};

/// A change in flight between operators. Rows are borrowed from the event where no operator
/// rebuilt them.
pub(crate) struct Rec<'a> {
    pub op: Op,
    pub row: Cow<'a, [Value]>,
    pub before: Option<Cow<'a, [Value]>>,
}

impl<'a> Rec<'a> {
    pub(crate) fn insert(row: Cow<'a, [Value]>) -> Rec<'a> {
        Rec {
            op: Op::Insert,
            row,
            before: None,
        }
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
    fn plain(message: impl Into<String>) -> Fault {
        Fault {
            column: None,
            message: message.into(),
            failure: Failure::Plan,
        }
    }

    #[cold]
    #[inline(never)]
    fn at(column: &str, message: impl Into<String>) -> Fault {
        Fault {
            column: Some(column.to_string()),
            message: message.into(),
            failure: Failure::Plan,
        }
    }

    /// An expression over `column` that failed to evaluate.
    #[cold]
    #[inline(never)]
    fn eval(column: &str, e: &EvalError) -> Fault {
        Fault {
            failure: match e {
                EvalError::Arith(ArithError::Overflow) => Failure::Overflow,
                EvalError::Arith(ArithError::DivisionByZero) => Failure::DivisionByZero,
                EvalError::Arith(ArithError::Cast(_)) => Failure::Cast,
                EvalError::Type(_) => Failure::Plan,
            },
            ..Fault::at(column, e.to_string())
        }
    }
}

/// What a node reads: the previous node's output, or the previous model's Sink.
pub(crate) struct InputShape<'a> {
    pub schema: &'a [Field],
    pub changelog: &'a Changelog,
    pub boundedness: Boundedness,
}

/// One compiled node.
pub(crate) struct Stage {
    /// Index of the node's model in the chain.
    pub model: usize,
    pub id: NodeId,
    pub kind: StageKind,
}

pub(crate) enum StageKind {
    Filter(Filter),
    Project(Project),
    Aggregate(Aggregate),
    Deduplicate(Deduplicate),
    Sort(Sort),
    Sink,
}

impl Stage {
    /// Compiles `node` (anything but a Source) against what it reads.
    ///
    /// # Errors
    /// A [`Fault`] describing a node the simulator cannot run: unknown columns, a schema
    /// that does not match the operator, an accumulator whose type breaks D4 or differs from
    /// the node's state fingerprint, an Aggregate or Sort over an updating input, a Sort over
    /// an unbounded input.
    pub(crate) fn build(model: usize, node: &Node, input: &InputShape<'_>) -> Result<Stage, Fault> {
        if node.op.kind() != node.id.kind {
            return Err(Fault::plain(format!(
                "node `{}` is a {} operator, but its id says {}",
                node.id,
                node.op.kind().id_name(),
                node.id.kind.id_name()
            )));
        }
        let kind = match &node.op {
            Operator::Source { .. } => {
                return Err(Fault::plain(format!(
                    "node `{}`: a Source can only start the chain",
                    node.id
                )));
            }
            Operator::Filter { predicate } => {
                same_schema(node, input.schema)?;
                let text = predicate.to_string();
                let pred =
                    CExpr::compile(predicate, input.schema).map_err(|m| Fault::at(&text, m))?;
                StageKind::Filter(Filter { pred, text })
            }
            Operator::Project { items } => {
                if node.schema.len() != items.len() {
                    return Err(Fault::plain(format!(
                        "node `{}` projects {} columns but its schema has {}",
                        node.id,
                        items.len(),
                        node.schema.len()
                    )));
                }
                let mut exprs = Vec::with_capacity(items.len());
                for (item, field) in items.iter().zip(&node.schema) {
                    let e = CExpr::compile(&item.expr, input.schema)
                        .map_err(|m| Fault::at(&item.name, m))?;
                    let ty = item.expr.data_type();
                    if field.ty != ty {
                        return Err(Fault::at(
                            &item.name,
                            format!(
                                "node `{}`: the expression is {ty} but the schema says {}",
                                node.id, field.ty
                            ),
                        ));
                    }
                    exprs.push(e);
                }
                let identity = exprs.len() == input.schema.len()
                    && exprs
                        .iter()
                        .enumerate()
                        .all(|(i, e)| e.as_column() == Some(i));
                let names = items.iter().map(|i| i.name.clone()).collect();
                StageKind::Project(Project {
                    exprs,
                    names,
                    identity,
                })
            }
            Operator::Aggregate { group_by, calls } => {
                StageKind::Aggregate(Aggregate::build(node, group_by, calls, input)?)
            }
            Operator::Deduplicate { key } => {
                StageKind::Deduplicate(Deduplicate::build(node, key, input)?)
            }
            Operator::Sort { keys } => {
                same_schema(node, input.schema)?;
                if input.changelog.is_updating() {
                    return Err(Fault::plain(format!(
                        "node `{}`: ORDER BY needs an append input, this one is {}",
                        node.id,
                        input.changelog.title()
                    )));
                }
                if input.boundedness != Boundedness::Bounded {
                    return Err(Fault::plain(format!(
                        "node `{}`: ORDER BY cannot produce a final ordering over an unbounded input",
                        node.id
                    )));
                }
                let mut cols = Vec::with_capacity(keys.len());
                for k in keys {
                    let i =
                        resolve(input.schema, &k.column).map_err(|m| Fault::at(&k.column, m))?;
                    cols.push((i, k.descending));
                }
                StageKind::Sort(Sort {
                    keys: cols,
                    rows: Vec::new(),
                })
            }
            Operator::Sink { .. } => {
                same_schema(node, input.schema)?;
                StageKind::Sink
            }
        };
        Ok(Stage {
            model,
            id: node.id.clone(),
            kind,
        })
    }

    /// Processes one change; returns the change to pass on, if any.
    ///
    /// # Errors
    /// Evaluation errors (D4), and a change an operator cannot take (an update into an
    /// Aggregate or a Sort).
    /// `time` is the event's time on an event-time source.
    #[inline]
    pub(crate) fn process<'a>(
        &mut self,
        rec: Rec<'a>,
        time: Option<i64>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        match &mut self.kind {
            StageKind::Filter(f) => f.process(rec),
            StageKind::Project(p) => p.process(rec),
            StageKind::Aggregate(a) => a.process(rec, time),
            StageKind::Deduplicate(d) => d.process(rec, time),
            StageKind::Sort(s) => s.process(rec),
            StageKind::Sink => Ok(Some(rec)),
        }
    }

    /// Drops the keyed state that expires at `watermark` (with retention only).
    pub(crate) fn expire(&mut self, watermark: i64) {
        match &mut self.kind {
            StageKind::Aggregate(a) => a.expire(watermark),
            StageKind::Deduplicate(d) => d.expire(watermark),
            _ => {}
        }
    }
}

/// A Filter, Sort or Sink passes rows through: its schema must be its input's (nullability
/// aside, which a filter may narrow).
fn same_schema(node: &Node, input: &[Field]) -> Result<(), Fault> {
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

fn update_without_before() -> Fault {
    Fault::plain("an update arrived without its before-image")
}

/// WHERE / HAVING, stateless, over any changelog (spec: "Changelogs").
pub(crate) struct Filter {
    pred: CExpr,
    /// The predicate as explain renders it; errors name it as the column.
    text: String,
}

impl Filter {
    fn matches(&self, row: &[Value]) -> Result<bool, Fault> {
        self.pred.test(row).map_err(|e| Fault::eval(&self.text, &e))
    }

    /// insert / delete pass when the row matches. An update is judged on both images: both
    /// match, update; only the after-image, insert; only the before-image, delete of the
    /// before-image; neither, nothing.
    fn process<'a>(&mut self, rec: Rec<'a>) -> Result<Option<Rec<'a>>, Fault> {
        match rec.op {
            Op::Insert | Op::Delete => Ok(if self.matches(&rec.row)? {
                Some(rec)
            } else {
                None
            }),
            Op::Update => {
                let before = rec.before.ok_or_else(update_without_before)?;
                let was = self.matches(&before)?;
                let is = self.matches(&rec.row)?;
                Ok(match (was, is) {
                    (true, true) => Some(Rec {
                        op: Op::Update,
                        row: rec.row,
                        before: Some(before),
                    }),
                    (false, true) => Some(Rec {
                        op: Op::Insert,
                        row: rec.row,
                        before: None,
                    }),
                    (true, false) => Some(Rec {
                        op: Op::Delete,
                        row: before,
                        before: None,
                    }),
                    (false, false) => None,
                })
            }
        }
    }
}

/// SELECT list, stateless. An update maps both images and stays an update (D10).
pub(crate) struct Project {
    exprs: Vec<CExpr>,
    names: Vec<String>,
    /// Every item is the input column at its own position: rows pass through unchanged.
    identity: bool,
}

impl Project {
    fn map(&self, row: &[Value]) -> Result<Vec<Value>, Fault> {
        let mut out = Vec::with_capacity(self.exprs.len());
        for (e, name) in self.exprs.iter().zip(&self.names) {
            let v = e.eval(row).map_err(|err| Fault::eval(name, &err))?;
            out.push(v.into_owned());
        }
        Ok(out)
    }

    fn process<'a>(&mut self, rec: Rec<'a>) -> Result<Option<Rec<'a>>, Fault> {
        if self.identity {
            return Ok(Some(rec));
        }
        let before = match &rec.before {
            Some(b) => Some(Cow::Owned(self.map(b)?)),
            None if rec.op == Op::Update => return Err(update_without_before()),
            None => None,
        };
        let row = Cow::Owned(self.map(&rec.row)?);
        Ok(Some(Rec {
            op: rec.op,
            row,
            before,
        }))
    }
}

/// How a sum adds: over int32/int64 in int64, over decimal(p,s) in decimal(38,s), over
/// float64 in float64.
#[derive(Debug, Clone, Copy)]
enum SumOf {
    Int,
    Decimal(u8),
    Float,
}

impl SumOf {
    /// How a sum (or an avg's sum) of values of type `arg` adds.
    fn of(arg: DataType) -> SumOf {
        match arg {
            DataType::Decimal { scale, .. } => SumOf::Decimal(scale),
            DataType::Float64 => SumOf::Float,
            _ => SumOf::Int,
        }
    }
}

/// What one accumulator does, with its argument's row index.
#[derive(Debug, Clone, Copy)]
enum AccKind {
    /// sum(x).
    Sum(usize, SumOf),
    /// count(*): every row.
    CountStar,
    /// count(x): non-null x.
    Count(usize),
    /// count(distinct x): non-null x not seen before for the key; the values seen are in
    /// the aggregate's set number `set`.
    CountDistinct {
        arg: usize,
        set: usize,
    },
    Min(usize),
    Max(usize),
    /// avg(x): the result, computed from a sum and a count of the non-null values kept in
    /// the entry's hidden values at `hidden` and `hidden + 1`.
    Avg {
        arg: usize,
        of: SumOf,
        out: DataType,
        hidden: usize,
    },
}

struct Call {
    kind: AccKind,
    /// `sum(amount)`: errors name it as the column.
    name: String,
}

/// 10^38 - 1, the largest mantissa of a decimal(38, s).
const MAX_MANTISSA_38: u128 = 99_999_999_999_999_999_999_999_999_999_999_999_999;

/// The values count(distinct x) has seen, per key: (the key's entry, the value).
type Seen = hashbrown::HashSet<(u32, Distinct), rustc_hash::FxBuildHasher>;

/// A value as Flink's distinct aggregates tell values apart: by `equals`, under which a
/// double is its bit pattern (0.0 and -0.0 differ, every NaN is one value), unlike SQL's
/// comparison.
#[derive(Debug, Clone)]
struct Distinct(Value);

impl Distinct {
    fn bits(&self) -> Option<u64> {
        match &self.0 {
            Value::Float64(f) if f.0.is_nan() => Some(f64::NAN.to_bits()),
            Value::Float64(f) => Some(f.0.to_bits()),
            _ => None,
        }
    }
}

impl PartialEq for Distinct {
    fn eq(&self, other: &Distinct) -> bool {
        match (self.bits(), other.bits()) {
            (Some(a), Some(b)) => a == b,
            (None, None) => self.0 == other.0,
            _ => false,
        }
    }
}

impl Eq for Distinct {}

impl std::hash::Hash for Distinct {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self.bits() {
            Some(b) => b.hash(state),
            None => self.0.hash(state),
        }
    }
}

/// GROUP BY: keyed state from the group-by values to one accumulator per call, typed as the
/// node's state fingerprint says (spec: "State"; D4, D9, D10, D14).
///
/// An entry of the keyed store is the key's values, the calls' results (the row the
/// aggregate emits), then the hidden values some calls compute their result from: an avg's
/// sum and count. count(distinct x) keeps the values it has seen in a set of its own.
pub(crate) struct Aggregate {
    group: Vec<usize>,
    calls: Vec<Call>,
    state: KeyedState,
    /// Values per emitted row: the key's and the calls' results.
    out_width: usize,
    /// One set per count(distinct x) call.
    seen: Vec<Seen>,
    /// Retention in event time, when the node declares one.
    expiry: Option<Expiry>,
    key_buf: Vec<Value>,
    /// A new key's accumulators before they are stored.
    acc_buf: Vec<Value>,
}

/// The accumulator type D4 gives `func` over an argument of type `arg` (the rule is the
/// IR's), or why there is none.
fn d4_type(func: AggFunc, arg: Option<DataType>) -> Result<DataType, String> {
    func.accumulator_type(arg).ok_or_else(|| match arg {
        None => format!("{}(*) is only defined for count", func.name()),
        Some(t) => format!("{} is not defined over {t}", func.name()),
    })
}

impl Aggregate {
    fn build(
        node: &Node,
        group_by: &[String],
        calls: &[AggCall],
        input: &InputShape<'_>,
    ) -> Result<Aggregate, Fault> {
        if input.changelog.is_updating() {
            return Err(Fault::plain(format!(
                "node `{}`: GROUP BY over an updating input ({}) is not supported yet",
                node.id,
                input.changelog.title()
            )));
        }
        let State::Keyed(keyed) = &node.state else {
            return Err(Fault::plain(format!(
                "node `{}`: an Aggregate must have keyed state",
                node.id
            )));
        };
        if keyed.key.as_slice() != group_by {
            return Err(Fault::plain(format!(
                "node `{}`: the state key [{}] differs from the grouping key [{}]",
                node.id,
                keyed.key.join(", "),
                group_by.join(", ")
            )));
        }
        if keyed.accumulators.len() != calls.len() {
            return Err(Fault::plain(format!(
                "node `{}`: {} aggregate calls but {} accumulators in the state",
                node.id,
                calls.len(),
                keyed.accumulators.len()
            )));
        }
        if node.schema.len() != group_by.len() + calls.len() {
            return Err(Fault::plain(format!(
                "node `{}`: the schema has {} columns, expected the {} grouping columns and {} accumulators",
                node.id,
                node.schema.len(),
                group_by.len(),
                calls.len()
            )));
        }
        let mut group = Vec::with_capacity(group_by.len());
        for (g, field) in group_by.iter().zip(&node.schema) {
            let i = resolve(input.schema, g).map_err(|m| Fault::at(g, m))?;
            if field.ty != input.schema[i].ty {
                return Err(Fault::at(
                    g,
                    format!("node `{}`: grouping column type changes", node.id),
                ));
            }
            group.push(i);
        }
        let mut compiled = Vec::with_capacity(calls.len());
        // Hidden values follow the calls' results in an entry's accumulators.
        let mut hidden = calls.len();
        let mut sets = 0;
        for ((call, acc), field) in calls
            .iter()
            .zip(&keyed.accumulators)
            .zip(&node.schema[group_by.len()..])
        {
            let name = call.name();
            let fail = |m: String| Fault::at(&name, format!("node `{}`: {m}", node.id));
            let arg = match &call.arg {
                Some(a) => Some(resolve(input.schema, a).map_err(&fail)?),
                None => None,
            };
            let arg_ty = arg.map(|i| input.schema[i].ty);
            let want = d4_type(call.func, arg_ty).map_err(&fail)?;
            if call.ty != want {
                return Err(fail(format!(
                    "the accumulator is typed {}, D4 says {want}",
                    call.ty
                )));
            }
            if acc.name != name || acc.ty != call.ty {
                return Err(fail(format!(
                    "the state fingerprint stores `{}: {}` where the call is `{name}: {}`",
                    acc.name, acc.ty, call.ty
                )));
            }
            if field.ty != call.ty {
                return Err(fail(format!(
                    "the output column is {} but the accumulator {}",
                    field.ty, call.ty
                )));
            }
            let kind = match (call.func, arg.zip(arg_ty)) {
                (AggFunc::Count, None) => AccKind::CountStar,
                (AggFunc::Count, Some((i, _))) => AccKind::Count(i),
                (AggFunc::CountDistinct, Some((arg, _))) => {
                    sets += 1;
                    AccKind::CountDistinct { arg, set: sets - 1 }
                }
                (AggFunc::Sum, Some((i, t))) => AccKind::Sum(i, SumOf::of(t)),
                (AggFunc::Min, Some((i, _))) => AccKind::Min(i),
                (AggFunc::Max, Some((i, _))) => AccKind::Max(i),
                (AggFunc::Avg, Some((arg, t))) => {
                    hidden += 2;
                    AccKind::Avg {
                        arg,
                        of: SumOf::of(t),
                        out: call.ty,
                        hidden: hidden - 2,
                    }
                }
                (_, None) => {
                    unreachable!("d4_type refuses every call but count(*) without an argument")
                }
            };
            compiled.push(Call { kind, name });
        }
        let out_width = group_by.len() + calls.len();
        Ok(Aggregate {
            group,
            calls: compiled,
            state: KeyedState::new(group_by.len(), group_by.len() + hidden),
            out_width,
            seen: (0..sets).map(|_| Seen::default()).collect(),
            expiry: expiry_of(keyed),
            acc_buf: Vec::with_capacity(hidden),
            key_buf: Vec::with_capacity(group_by.len()),
        })
    }

    /// Folds an insert into its key's accumulators. On a key's first row the output is an
    /// insert of the group values and results; afterwards an update (before = the row last
    /// emitted) when the row differs from the one last emitted, and nothing when it does
    /// not (D10; Flink compares the rows too, which matters for avg and count(distinct x),
    /// whose results can stay while their state moves).
    ///
    /// With retention, `time` (the event's time) extends the key's life, and a key whose
    /// state expired starts over: its next row is an insert.
    fn process<'a>(&mut self, rec: Rec<'a>, time: Option<i64>) -> Result<Option<Rec<'a>>, Fault> {
        if rec.op != Op::Insert {
            return Err(Fault::plain(format!(
                "an aggregate received an {}; GROUP BY over an updating input is not supported yet",
                rec.op
            )));
        }
        let row: &[Value] = &rec.row;
        self.key_buf.clear();
        self.key_buf
            .extend(self.group.iter().map(|&i| row[i].clone()));
        match self.state.find(&self.key_buf) {
            Ok(entry) if self.expiry.as_ref().is_some_and(|x| x.is_expired(entry)) => {
                self.fresh_accumulators();
                fold(
                    &self.calls,
                    &mut self.acc_buf,
                    row,
                    entry_number(entry),
                    &mut self.seen,
                )?;
                self.state
                    .accumulators_mut(entry)
                    .clone_from_slice(&self.acc_buf);
                touch(&mut self.expiry, entry, time);
                Ok(Some(Rec::insert(Cow::Owned(
                    self.state.row(entry)[..self.out_width].to_vec(),
                ))))
            }
            Ok(entry) => {
                // The entry as it was: the update's before-image, and the undo record if an
                // accumulator fails half-way through.
                let before = self.state.row(entry).to_vec();
                let folded = fold(
                    &self.calls,
                    self.state.accumulators_mut(entry),
                    row,
                    entry_number(entry),
                    &mut self.seen,
                );
                let changed = match folded {
                    Ok(changed) => changed,
                    Err(f) => {
                        self.state
                            .accumulators_mut(entry)
                            .clone_from_slice(&before[self.key_buf.len()..]);
                        return Err(f);
                    }
                };
                touch(&mut self.expiry, entry, time);
                if !changed {
                    return Ok(None);
                }
                let after = &self.state.row(entry)[..self.out_width];
                let mut before = before;
                before.truncate(self.out_width);
                Ok(Some(Rec {
                    op: Op::Update,
                    row: Cow::Owned(after.to_vec()),
                    before: Some(Cow::Owned(before)),
                }))
            }
            Err(vacant) => {
                self.fresh_accumulators();
                fold(
                    &self.calls,
                    &mut self.acc_buf,
                    row,
                    entry_number(self.state.len()),
                    &mut self.seen,
                )?;
                let entry = self.state.insert(vacant, &self.key_buf, &self.acc_buf);
                touch(&mut self.expiry, entry, time);
                Ok(Some(Rec::insert(Cow::Owned(
                    self.state.row(entry)[..self.out_width].to_vec(),
                ))))
            }
        }
    }

    /// A fresh key's accumulators in `acc_buf`: counts at 0, everything else null.
    fn fresh_accumulators(&mut self) {
        self.acc_buf.clear();
        self.acc_buf
            .resize(self.state.width() - self.key_buf.len(), Value::Null);
        for (acc, call) in self.acc_buf.iter_mut().zip(&self.calls) {
            if matches!(
                call.kind,
                AccKind::CountStar | AccKind::Count(_) | AccKind::CountDistinct { .. }
            ) {
                *acc = Value::Int64(0);
            }
        }
        // avg starts from a zero sum, as Flink's does (so the average of one -0.0 is 0.0).
        for call in &self.calls {
            if let AccKind::Avg { hidden, of, .. } = call.kind {
                self.acc_buf[hidden] = match of {
                    SumOf::Int => Value::Int64(0),
                    SumOf::Decimal(scale) => Value::Decimal(Decimal::new(0, scale)),
                    SumOf::Float => Value::Float64(F64(0.0)),
                };
                self.acc_buf[hidden + 1] = Value::Int64(0);
            }
        }
    }

    /// Drops the state of every key that expires at `watermark`, silently: the values
    /// count(distinct x) saw for it too.
    fn expire(&mut self, watermark: i64) {
        let Some(expiry) = &mut self.expiry else {
            return;
        };
        let gone = expiry.expire(watermark);
        if gone.is_empty() || self.seen.is_empty() {
            return;
        }
        let gone: std::collections::HashSet<u32> = gone.into_iter().map(entry_number).collect();
        for set in &mut self.seen {
            set.retain(|(e, _)| !gone.contains(e));
        }
    }

    /// The live keyed state as (key, results) pairs sorted by key.
    pub(crate) fn snapshot(&self) -> Vec<(Vec<Value>, Vec<Value>)> {
        let results = self.calls.len();
        sorted(&self.state, self.expiry.as_ref())
            .into_iter()
            .map(|(k, mut v)| {
                v.truncate(results);
                (k, v)
            })
            .collect()
    }
}

/// An entry's number as count(distinct x) sets store it (the store holds at most 2^32).
fn entry_number(entry: usize) -> u32 {
    u32::try_from(entry).expect("at most 2^32 keys in one aggregate")
}

/// The retention a keyed node declares, as the simulator enforces it.
fn expiry_of(keyed: &streamform_ir::KeyedState) -> Option<Expiry> {
    match keyed.retention {
        Retention::Unbounded => None,
        Retention::After(ms) => Some(Expiry::new(ms)),
    }
}

/// Records that the event at `time` wrote `entry` (with retention only).
fn touch(expiry: &mut Option<Expiry>, entry: Entry, time: Option<i64>) {
    if let (Some(x), Some(t)) = (expiry, time) {
        x.touch(entry, t);
    }
}

/// Live keyed state (expired entries left out) as (key, stored values) pairs sorted by
/// key.
fn sorted(state: &KeyedState, expiry: Option<&Expiry>) -> Vec<(Vec<Value>, Vec<Value>)> {
    let mut out: Vec<(Vec<Value>, Vec<Value>)> = state
        .iter()
        .enumerate()
        .filter(|(e, _)| !expiry.is_some_and(|x| x.is_expired(*e)))
        .map(|(_, (k, v))| (k.to_vec(), v.to_vec()))
        .collect();
    out.sort_by(|a, b| cmp_rows(&a.0, &b.0));
    out
}

/// Lexicographic [`Value::sort_cmp`].
fn cmp_rows(a: &[Value], b: &[Value]) -> Ordering {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.sort_cmp(y))
        .find(|o| o.is_ne())
        .unwrap_or_else(|| a.len().cmp(&b.len()))
}

#[cold]
#[inline(never)]
fn wrong_type(call: &Call, v: &Value) -> Fault {
    Fault::at(&call.name, format!("unexpected argument {}", v.render()))
}

#[cold]
#[inline(never)]
fn overflow(call: &Call) -> Fault {
    Fault::eval(&call.name, &EvalError::Arith(ArithError::Overflow))
}

/// Applies one input row to the accumulators of the key at `entry` in place (D4: sum, min,
/// max and avg ignore nulls; count(x) and count(distinct x) count non-null values), and
/// says whether any call's result changed: the row the aggregate emits (an avg can stay
/// while its sum and count move). A failure leaves a value count(distinct x) met in its
/// set, which no one reads again: a failed simulator stays failed.
#[inline]
fn fold(
    calls: &[Call],
    accs: &mut [Value],
    row: &[Value],
    entry: u32,
    seen: &mut [Seen],
) -> Result<bool, Fault> {
    let mut changed = false;
    // The results, one per call, then the hidden values (an avg's sum and count).
    let (results, hidden_values) = accs.split_at_mut(calls.len());
    for (call, acc) in calls.iter().zip(results.iter_mut()) {
        match call.kind {
            AccKind::Sum(arg, of) => changed |= add(call, of, acc, &row[arg])?,
            AccKind::CountStar => {
                bump(call, acc)?;
                changed = true;
            }
            AccKind::Count(arg) => {
                if !row[arg].is_null() {
                    bump(call, acc)?;
                    changed = true;
                }
            }
            AccKind::CountDistinct { arg, set } => {
                changed |= count_distinct(call, acc, &row[arg], entry, &mut seen[set])?;
            }
            AccKind::Min(arg) | AccKind::Max(arg) => {
                let v = &row[arg];
                if v.is_null() {
                    continue;
                }
                let want = if matches!(call.kind, AccKind::Min(_)) {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
                // Replaced only by a strictly smaller (larger) value, so a replacement is a
                // change.
                if acc.is_null() || v.sql_cmp(acc) == Some(want) {
                    *acc = v.clone();
                    changed = true;
                }
            }
            AccKind::Avg {
                arg,
                of,
                out,
                hidden,
            } => {
                let sum_and_count = &mut hidden_values[hidden - calls.len()..][..2];
                changed |= avg(call, (of, out), acc, sum_and_count, &row[arg])?;
            }
        }
    }
    Ok(changed)
}

/// count(distinct x) meeting `v`: counts it when the key has not seen it. Kept out of
/// line, so the common calls' loop stays small.
#[inline(never)]
fn count_distinct(
    call: &Call,
    acc: &mut Value,
    v: &Value,
    entry: u32,
    seen: &mut Seen,
) -> Result<bool, Fault> {
    if v.is_null() || !seen.insert((entry, Distinct(v.clone()))) {
        return Ok(false);
    }
    bump(call, acc)?;
    Ok(true)
}

/// avg meeting `v`: its hidden sum and count move, and its result is computed again;
/// whether the result changed.
#[inline(never)]
fn avg(
    call: &Call,
    (of, out): (SumOf, DataType),
    result: &mut Value,
    sum_and_count: &mut [Value],
    v: &Value,
) -> Result<bool, Fault> {
    if v.is_null() {
        return Ok(false);
    }
    let [sum, count] = sum_and_count else {
        return Err(wrong_type(call, v));
    };
    add(call, of, sum, v)?;
    bump(call, count)?;
    let new = average(call, of, out, sum, count)?;
    if new == *result {
        return Ok(false);
    }
    *result = new;
    Ok(true)
}

/// Adds `v` to a sum (null until the first non-null value; nulls are skipped); whether the
/// sum changed.
#[inline(always)]
fn add(call: &Call, of: SumOf, acc: &mut Value, v: &Value) -> Result<bool, Fault> {
    if v.is_null() {
        return Ok(false);
    }
    match of {
        SumOf::Int => {
            let v = match v {
                Value::Int32(v) => i64::from(*v),
                Value::Int64(v) => *v,
                other => return Err(wrong_type(call, other)),
            };
            match acc {
                Value::Null => *acc = Value::Int64(v),
                Value::Int64(_) if v == 0 => return Ok(false),
                Value::Int64(a) => *a = a.checked_add(v).ok_or_else(|| overflow(call))?,
                other => return Err(wrong_type(call, other)),
            }
        }
        SumOf::Decimal(scale) => {
            let v = match v {
                Value::Decimal(d) if d.scale == scale => *d,
                Value::Decimal(d) => d.fit(38, scale).map_err(|_| overflow(call))?,
                other => return Err(wrong_type(call, other)),
            };
            let sum = match acc {
                Value::Null => v.mantissa,
                Value::Decimal(_) if v.mantissa == 0 => return Ok(false),
                Value::Decimal(a) => a
                    .mantissa
                    .checked_add(v.mantissa)
                    .ok_or_else(|| overflow(call))?,
                other => return Err(wrong_type(call, other)),
            };
            if sum.unsigned_abs() > MAX_MANTISSA_38 {
                return Err(overflow(call));
            }
            *acc = Value::Decimal(Decimal::new(sum, scale));
        }
        SumOf::Float => {
            let v = match v {
                Value::Float64(f) => f.0,
                other => return Err(wrong_type(call, other)),
            };
            let sum = match acc {
                Value::Null => v,
                Value::Float64(a) => a.0 + v,
                other => return Err(wrong_type(call, other)),
            };
            if !sum.is_finite() && v.is_finite() {
                return Err(overflow(call));
            }
            let new = Value::Float64(F64(sum));
            if *acc == new {
                return Ok(false);
            }
            *acc = new;
        }
    }
    Ok(true)
}

/// avg's result from its sum and its (positive) count, as Flink computes it: integer
/// division truncating toward zero, float division, or decimal division rounded half away
/// from zero at the result's scale.
fn average(
    call: &Call,
    of: SumOf,
    out: DataType,
    sum: &Value,
    count: &Value,
) -> Result<Value, Fault> {
    let Value::Int64(n) = *count else {
        return Err(wrong_type(call, count));
    };
    match (of, sum, out) {
        (SumOf::Int, Value::Int64(s), DataType::Int32) => i32::try_from(s / n)
            .map(Value::Int32)
            .map_err(|_| overflow(call)),
        (SumOf::Int, Value::Int64(s), _) => Ok(Value::Int64(s / n)),
        (SumOf::Float, Value::Float64(s), _) => Ok(Value::Float64(F64(s.0 / n as f64))),
        (SumOf::Decimal(_), Value::Decimal(s), DataType::Decimal { scale, .. }) => s
            .div_count(n, scale)
            .map(Value::Decimal)
            .ok_or_else(|| overflow(call)),
        (_, other, _) => Err(wrong_type(call, other)),
    }
}

fn bump(call: &Call, acc: &mut Value) -> Result<(), Fault> {
    match acc {
        Value::Int64(n) => {
            *n = n.checked_add(1).ok_or_else(|| overflow(call))?;
            Ok(())
        }
        other => Err(wrong_type(call, other)),
    }
}

/// The last row per key of an append input (D13): keyed state from the key's values to the
/// row last seen for it. A key's first row is an insert; every later row an update whose
/// before-image is the row it replaces, even when the two are equal (Flink's keep-last-row
/// deduplication emits it too).
pub(crate) struct Deduplicate {
    key: Vec<usize>,
    state: KeyedState,
    /// Retention in event time, when the node declares one.
    expiry: Option<Expiry>,
    key_buf: Vec<Value>,
}

impl Deduplicate {
    fn build(node: &Node, key: &[String], input: &InputShape<'_>) -> Result<Deduplicate, Fault> {
        same_schema(node, input.schema)?;
        if input.changelog.is_updating() {
            return Err(Fault::plain(format!(
                "node `{}`: keeping the last row per key needs an append input, this one is {}",
                node.id,
                input.changelog.title()
            )));
        }
        let State::Keyed(keyed) = &node.state else {
            return Err(Fault::plain(format!(
                "node `{}`: a Deduplicate must have keyed state",
                node.id
            )));
        };
        let mut expected = streamform_ir::KeyedState::last_row(key, &node.schema);
        expected.retention = keyed.retention;
        if *keyed != expected {
            return Err(Fault::plain(format!(
                "node `{}`: its state must be keyed by [{}] and store the row's columns",
                node.id,
                key.join(", ")
            )));
        }
        let mut columns = Vec::with_capacity(key.len());
        for k in key {
            columns.push(resolve(input.schema, k).map_err(|m| Fault::at(k, m))?);
        }
        Ok(Deduplicate {
            state: KeyedState::new(key.len(), key.len() + node.schema.len()),
            key: columns,
            expiry: expiry_of(keyed),
            key_buf: Vec::with_capacity(key.len()),
        })
    }

    /// With retention, a key whose state expired starts over: its next row is an insert.
    fn process<'a>(&mut self, rec: Rec<'a>, time: Option<i64>) -> Result<Option<Rec<'a>>, Fault> {
        if rec.op != Op::Insert {
            return Err(Fault::plain(format!(
                "keeping the last row per key received an {}; it needs an append input",
                rec.op
            )));
        }
        self.key_buf.clear();
        self.key_buf
            .extend(self.key.iter().map(|&i| rec.row[i].clone()));
        match self.state.find(&self.key_buf) {
            Ok(entry) => {
                let expired = self.expiry.as_ref().is_some_and(|x| x.is_expired(entry));
                let stored = self.state.accumulators_mut(entry);
                let before = stored.to_vec();
                stored.clone_from_slice(&rec.row);
                touch(&mut self.expiry, entry, time);
                if expired {
                    return Ok(Some(rec));
                }
                Ok(Some(Rec {
                    op: Op::Update,
                    row: rec.row,
                    before: Some(Cow::Owned(before)),
                }))
            }
            Err(vacant) => {
                let entry = self.state.insert(vacant, &self.key_buf, &rec.row);
                touch(&mut self.expiry, entry, time);
                Ok(Some(rec))
            }
        }
    }

    /// Drops the last row of every key that expires at `watermark`, silently.
    fn expire(&mut self, watermark: i64) {
        if let Some(expiry) = &mut self.expiry {
            expiry.expire(watermark);
        }
    }

    /// The live keyed state as (key, last row) pairs sorted by key.
    pub(crate) fn snapshot(&self) -> Vec<(Vec<Value>, Vec<Value>)> {
        sorted(&self.state, self.expiry.as_ref())
    }
}

/// ORDER BY over a bounded append input: buffers rows, emits them sorted at the end (D5).
pub(crate) struct Sort {
    /// (column index, descending).
    keys: Vec<(usize, bool)>,
    rows: Vec<Vec<Value>>,
}

impl Sort {
    fn process<'a>(&mut self, rec: Rec<'a>) -> Result<Option<Rec<'a>>, Fault> {
        if rec.op != Op::Insert {
            return Err(Fault::plain(format!(
                "ORDER BY received an {}; it needs an append input",
                rec.op
            )));
        }
        self.rows.push(rec.row.into_owned());
        Ok(None)
    }

    /// Takes the buffered rows, stably sorted: ascending puts nulls first, descending
    /// reverses; ties keep arrival order.
    pub(crate) fn drain(&mut self) -> Vec<Vec<Value>> {
        let mut rows = std::mem::take(&mut self.rows);
        let keys = &self.keys;
        rows.sort_by(|a, b| {
            for &(i, desc) in keys {
                let o = a[i].sort_cmp(&b[i]);
                let o = if desc { o.reverse() } else { o };
                if o.is_ne() {
                    return o;
                }
            }
            Ordering::Equal
        });
        rows
    }
}
