//! Aggregate calls: compiled against the input, folded into one key's accumulators in
//! place. Shared by the Aggregate (one set of accumulators per key) and the window
//! aggregation (one per key and window).
//!
//! An entry's accumulators are the calls' results (the part of the row the operator emits),
//! then the hidden values some calls compute their result from: an avg's sum and count.
//! count(distinct x) keeps the values it has seen in a set per entry.
//!
//! The rules (accumulator types, checked arithmetic, nulls, avg and count(distinct x), an
//! update that changes nothing) are in docs/sql.md, "Aggregates".

use std::cmp::Ordering;

use streamform_ir::value::{ArithError, F64};
use streamform_ir::{AggCall, AggFunc, DataType, Decimal, Field, KeyedState, NodeId, Value};

use crate::eval::{EvalError, resolve};
use crate::operator::Fault;

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
    /// count(distinct x): non-null x not seen before for the entry; the values seen are in
    /// set number `set`.
    CountDistinct {
        arg: usize,
        set: usize,
    },
    Min(usize),
    Max(usize),
    /// LAG(x, n): the last `n + 1` values of x (nulls too) in bag number `bag`.
    Lag {
        arg: usize,
        offset: usize,
        bag: usize,
    },
    /// avg(x): the result, computed from a sum and a count of the non-null values kept in
    /// the entry's hidden values at `hidden` and `hidden + 1`.
    Avg {
        arg: usize,
        of: SumOf,
        out: DataType,
        hidden: usize,
    },
    /// sum(x) over an updating input, as Flink's retracting sum: the raw sum and the count
    /// of non-null values at `hidden` and `hidden + 1`; the result is the sum, or null when
    /// the count is 0 (the raw sum is kept then, as Flink keeps it).
    SumRetract {
        arg: usize,
        of: SumOf,
        hidden: usize,
    },
    /// count(distinct x) over an updating input: a count per value in bag number `bag`; the
    /// result moves when a value's count goes from 0 to 1 or from 1 to 0.
    CountDistinctRetract {
        arg: usize,
        bag: usize,
    },
    /// min(x) or max(x) over an updating input: a count per value in bag number `bag`; the
    /// result is the least (greatest) value whose count is positive, as Flink's retracting
    /// min and max keep a count per value.
    MinRetract {
        arg: usize,
        bag: usize,
    },
    MaxRetract {
        arg: usize,
        bag: usize,
    },
}

#[derive(Clone)]
struct Call {
    kind: AccKind,
    /// `sum(amount)`: errors name it as the column.
    name: String,
}

/// 10^38 - 1, the largest mantissa of a decimal(38, s).
const MAX_MANTISSA_38: u128 = 99_999_999_999_999_999_999_999_999_999_999_999_999;

type Fx = rustc_hash::FxBuildHasher;

/// The values one count(distinct x) call has seen, per entry.
pub(crate) type Seen = hashbrown::HashMap<u32, hashbrown::HashSet<Distinct, Fx>, Fx>;

/// A value ordered as [`Value::sort_cmp`] orders it, to key the counts of a retracting min
/// or max.
#[derive(Debug, Clone)]
pub(crate) struct Sorted(Value);

impl PartialEq for Sorted {
    fn eq(&self, other: &Sorted) -> bool {
        self.0.sort_cmp(&other.0).is_eq()
    }
}

impl Eq for Sorted {}

impl PartialOrd for Sorted {
    fn partial_cmp(&self, other: &Sorted) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Sorted {
    fn cmp(&self, other: &Sorted) -> Ordering {
        self.0.sort_cmp(&other.0)
    }
}

/// What a retracting call counts per entry: each value's count.
#[derive(Clone)]
pub(crate) enum Bag {
    /// count(distinct x): values as distinct aggregates tell them apart.
    Distinct(hashbrown::HashMap<u32, hashbrown::HashMap<Distinct, i64, Fx>, Fx>),
    /// min(x), max(x): values in order.
    Ordered(hashbrown::HashMap<u32, std::collections::BTreeMap<Sorted, i64>, Fx>),
    /// LAG(x, n): the last values, oldest first.
    Recent(hashbrown::HashMap<u32, std::collections::VecDeque<Value>, Fx>),
}

/// A value as Flink's distinct aggregates tell values apart: as grouping keys are
/// ([`crate::keyed::same_key_value`]: a double by its bit pattern, 0.0 and -0.0 apart,
/// every NaN one value), unlike SQL's comparison.
#[derive(Debug, Clone)]
pub(crate) struct Distinct(Value);

impl PartialEq for Distinct {
    fn eq(&self, other: &Distinct) -> bool {
        crate::keyed::same_key_value(&self.0, &other.0)
    }
}

impl Eq for Distinct {}

impl std::hash::Hash for Distinct {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        crate::keyed::hash_key_value(&self.0, state);
    }
}

/// The accumulator type docs/sql.md gives `func` over an argument of type `arg` (the rule is the
/// IR's), or why there is none.
fn d4_type(func: AggFunc, arg: Option<DataType>) -> Result<DataType, String> {
    func.accumulator_type(arg).ok_or_else(|| match arg {
        None => format!("{}(*) is only defined for count", func.name()),
        Some(t) => format!("{} is not defined over {t}", func.name()),
    })
}

/// The compiled calls of one aggregating node, with the distinct sets they keep.
#[derive(Clone)]
pub(crate) struct Calls {
    calls: Vec<Call>,
    /// Accumulator values per entry: the results, then the hidden values.
    width: usize,
    /// One set per count(distinct x) call.
    seen: Vec<Seen>,
    /// Over an updating input: one bag per retracting count(distinct x), min or max call,
    /// and the hidden row count (an entry whose rows are all retracted is gone).
    bags: Vec<Bag>,
    rows: Option<usize>,
}

impl Calls {
    /// Compiles `calls` against `input`, checking each against docs/sql.md, the node's keyed state
    /// (`keyed.accumulators`, one per call) and its output columns (`outputs`, one per call).
    pub(crate) fn build(
        id: &NodeId,
        calls: &[AggCall],
        keyed: &KeyedState,
        outputs: &[Field],
        input: &[Field],
    ) -> Result<Calls, Fault> {
        if keyed.accumulators.len() != calls.len() {
            return Err(Fault::plain(format!(
                "node `{id}`: {} aggregate calls but {} accumulators in the state",
                calls.len(),
                keyed.accumulators.len()
            )));
        }
        let mut compiled = Vec::with_capacity(calls.len());
        // Hidden values follow the calls' results in an entry's accumulators.
        let mut hidden = calls.len();
        let mut sets = 0;
        let mut bags = Vec::new();
        let retracting = keyed.retracting;
        for ((call, acc), field) in calls.iter().zip(&keyed.accumulators).zip(outputs) {
            let name = call.name();
            let fail = |m: String| Fault::at(&name, format!("node `{id}`: {m}"));
            let arg = match &call.arg {
                Some(a) => Some(resolve(input, a).map_err(&fail)?),
                None => None,
            };
            let arg_ty = arg.map(|i| input[i].ty);
            let want = d4_type(call.func, arg_ty).map_err(&fail)?;
            if call.ty != want {
                return Err(fail(format!(
                    "the accumulator is typed {}, the typing rules give {want}",
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
            let mut bag = |b: Bag| {
                bags.push(b);
                bags.len() - 1
            };
            let kind = match (call.func, arg.zip(arg_ty)) {
                (AggFunc::Lag(_), _) if retracting => {
                    return Err(fail(
                        "LAG takes no row back, so it runs over a frame back to the first row only"
                            .into(),
                    ));
                }
                (AggFunc::Lag(n), Some((arg, _))) => AccKind::Lag {
                    arg,
                    offset: n as usize,
                    bag: bag(Bag::Recent(Default::default())),
                },
                (AggFunc::Count, None) => AccKind::CountStar,
                (AggFunc::Sum, Some((arg, t))) if retracting => {
                    hidden += 2;
                    AccKind::SumRetract {
                        arg,
                        of: SumOf::of(t),
                        hidden: hidden - 2,
                    }
                }
                (AggFunc::CountDistinct, Some((arg, _))) if retracting => {
                    AccKind::CountDistinctRetract {
                        arg,
                        bag: bag(Bag::Distinct(Default::default())),
                    }
                }
                (AggFunc::Min, Some((arg, _))) if retracting => AccKind::MinRetract {
                    arg,
                    bag: bag(Bag::Ordered(Default::default())),
                },
                (AggFunc::Max, Some((arg, _))) if retracting => AccKind::MaxRetract {
                    arg,
                    bag: bag(Bag::Ordered(Default::default())),
                },
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
        let rows = retracting.then_some(hidden);
        Ok(Calls {
            calls: compiled,
            width: hidden + usize::from(retracting),
            seen: (0..sets).map(|_| Seen::default()).collect(),
            bags,
            rows,
        })
    }

    /// Accumulator values per entry: the calls' results, then the hidden values.
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// The number of calls, which is the number of results at the start of an entry's
    /// accumulators.
    pub(crate) fn len(&self) -> usize {
        self.calls.len()
    }

    /// A fresh entry's accumulators in `buf`: counts at 0, everything else null, an avg's
    /// sum at zero (as Flink's starts, so the average of one -0.0 is 0.0).
    pub(crate) fn fresh(&self, buf: &mut Vec<Value>) {
        buf.clear();
        buf.resize(self.width, Value::Null);
        for (acc, call) in buf.iter_mut().zip(&self.calls) {
            if matches!(
                call.kind,
                AccKind::CountStar
                    | AccKind::Count(_)
                    | AccKind::CountDistinct { .. }
                    | AccKind::CountDistinctRetract { .. }
            ) {
                *acc = Value::Int64(0);
            }
        }
        for call in &self.calls {
            match call.kind {
                AccKind::Avg { hidden, of, .. } => {
                    buf[hidden] = match of {
                        SumOf::Int => Value::Int64(0),
                        SumOf::Decimal(scale) => Value::Decimal(Decimal::new(0, scale)),
                        SumOf::Float => Value::Float64(F64(0.0)),
                    };
                    buf[hidden + 1] = Value::Int64(0);
                }
                AccKind::SumRetract { hidden, .. } => buf[hidden + 1] = Value::Int64(0),
                _ => {}
            }
        }
        if let Some(rows) = self.rows {
            buf[rows] = Value::Int64(0);
        }
    }

    /// Over an updating input, the rows an entry holds (its hidden count); `None` over an
    /// append input, where an entry never empties.
    pub(crate) fn rows(&self, accs: &[Value]) -> Option<i64> {
        self.rows.map(|i| match accs[i] {
            Value::Int64(n) => n,
            _ => 0,
        })
    }

    /// Forgets what count(distinct x) saw for `entry`, whose state is gone.
    pub(crate) fn forget(&mut self, entry: u32) {
        for set in &mut self.seen {
            set.remove(&entry);
        }
        for bag in &mut self.bags {
            match bag {
                Bag::Distinct(m) => {
                    m.remove(&entry);
                }
                Bag::Ordered(m) => {
                    m.remove(&entry);
                }
                Bag::Recent(m) => {
                    m.remove(&entry);
                }
            }
        }
    }

    /// Takes one input row back from the accumulators of the entry numbered `entry` (the
    /// before-image of an update, or a delete, over an updating input), as Flink's
    /// retracting accumulators do; says whether any call's result changed.
    pub(crate) fn unfold(
        &mut self,
        accs: &mut [Value],
        row: &[Value],
        entry: u32,
    ) -> Result<bool, Fault> {
        self.apply(accs, row, entry, -1)
    }

    /// Applies a row to an entry's accumulators with `sign` 1 (accumulate) or -1 (retract),
    /// for the calls of an aggregate over an updating input.
    fn apply(
        &mut self,
        accs: &mut [Value],
        row: &[Value],
        entry: u32,
        sign: i64,
    ) -> Result<bool, Fault> {
        let n = self.calls.len();
        let before: Vec<Value> = accs[..n].to_vec();
        if let Some(rows) = self.rows {
            step(&accs[rows].clone(), sign)
                .map(|v| accs[rows] = v)
                .ok_or_else(|| overflow(&self.calls[0]))?;
        }
        let (results, hidden_values) = accs.split_at_mut(n);
        for (call, acc) in self.calls.iter().zip(results.iter_mut()) {
            match call.kind {
                AccKind::CountStar => *acc = step(acc, sign).ok_or_else(|| overflow(call))?,
                AccKind::Count(arg) => {
                    if !row[arg].is_null() {
                        *acc = step(acc, sign).ok_or_else(|| overflow(call))?;
                    }
                }
                AccKind::SumRetract { arg, of, hidden } => {
                    let sum_and_count = &mut hidden_values[hidden - n..][..2];
                    if let Some((sum, _)) = move_sum(call, of, sum_and_count, &row[arg], sign)? {
                        *acc = sum;
                    } else if !row[arg].is_null() {
                        *acc = Value::Null;
                    }
                }
                AccKind::Avg {
                    arg,
                    of,
                    out,
                    hidden,
                } => {
                    let sum_and_count = &mut hidden_values[hidden - n..][..2];
                    if let Some((sum, count)) = move_sum(call, of, sum_and_count, &row[arg], sign)?
                    {
                        *acc = average(call, of, out, &sum, &count)?;
                    } else if !row[arg].is_null() {
                        *acc = Value::Null;
                    }
                }
                AccKind::CountDistinctRetract { arg, bag } => {
                    let v = &row[arg];
                    let Bag::Distinct(bags) = &mut self.bags[bag] else {
                        unreachable!("a distinct bag");
                    };
                    if v.is_null() {
                        continue;
                    }
                    let counts = bags.entry(entry).or_default();
                    let c = counts.entry(Distinct(v.clone())).or_insert(0);
                    *c += sign;
                    match (*c, sign) {
                        (1, 1) => *acc = step(acc, 1).ok_or_else(|| overflow(call))?,
                        (0, -1) => {
                            counts.remove(&Distinct(v.clone()));
                            *acc = step(acc, -1).ok_or_else(|| overflow(call))?;
                        }
                        _ => {}
                    }
                }
                AccKind::MinRetract { arg, bag } | AccKind::MaxRetract { arg, bag } => {
                    let v = &row[arg];
                    let Bag::Ordered(bags) = &mut self.bags[bag] else {
                        unreachable!("an ordered bag");
                    };
                    if v.is_null() {
                        continue;
                    }
                    let counts = bags.entry(entry).or_default();
                    let c = counts.entry(Sorted(v.clone())).or_insert(0);
                    *c += sign;
                    if *c == 0 {
                        counts.remove(&Sorted(v.clone()));
                    }
                    let extreme = if matches!(call.kind, AccKind::MinRetract { .. }) {
                        counts.iter().find(|(_, c)| **c > 0)
                    } else {
                        counts.iter().rev().find(|(_, c)| **c > 0)
                    };
                    *acc = extreme.map_or(Value::Null, |(v, _)| v.0.clone());
                }
                AccKind::Sum(..)
                | AccKind::CountDistinct { .. }
                | AccKind::Min(_)
                | AccKind::Max(_)
                | AccKind::Lag { .. } => {
                    unreachable!("over an updating input these calls are built retracting")
                }
            }
        }
        Ok(results.iter().zip(&before).any(|(a, b)| a != b))
    }

    /// Applies one input row to the accumulators of the entry numbered `entry` in place
    /// (docs/sql.md: sum, min, max and avg ignore nulls; count(x) and count(distinct x) count
    /// non-null values), and says whether any call's result changed: the row the aggregate
    /// emits (an avg can stay while its sum and count move). A failure leaves a value
    /// count(distinct x) met in its set, which no one reads again: a failed simulator stays
    /// failed.
    #[inline]
    pub(crate) fn fold(
        &mut self,
        accs: &mut [Value],
        row: &[Value],
        entry: u32,
    ) -> Result<bool, Fault> {
        if self.rows.is_some() {
            return self.apply(accs, row, entry, 1);
        }
        let mut changed = false;
        let calls = &self.calls;
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
                    changed |= count_distinct(call, acc, &row[arg], entry, &mut self.seen[set])?;
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
                    // Replaced only by a strictly smaller (larger) value, so a replacement
                    // is a change.
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
                AccKind::Lag { arg, offset, bag } => {
                    let Bag::Recent(bags) = &mut self.bags[bag] else {
                        unreachable!("a recent values bag");
                    };
                    // Flink's LagAggFunction: the last `offset + 1` values, the oldest
                    // the result once there are that many.
                    let recent = bags.entry(entry).or_default();
                    recent.push_back(row[arg].clone());
                    while recent.len() > offset + 1 {
                        recent.pop_front();
                    }
                    let value = if recent.len() == offset + 1 {
                        recent.front().cloned().unwrap_or(Value::Null)
                    } else {
                        Value::Null
                    };
                    changed |= *acc != value;
                    *acc = value;
                }
                AccKind::SumRetract { .. }
                | AccKind::CountDistinctRetract { .. }
                | AccKind::MinRetract { .. }
                | AccKind::MaxRetract { .. } => {
                    unreachable!("retracting calls are folded by `apply`")
                }
            }
        }
        Ok(changed)
    }
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

/// count(distinct x) meeting `v`: counts it when the entry has not seen it. Kept out of
/// line, so the common calls' loop stays small.
#[inline(never)]
fn count_distinct(
    call: &Call,
    acc: &mut Value,
    v: &Value,
    entry: u32,
    seen: &mut Seen,
) -> Result<bool, Fault> {
    if v.is_null() || !seen.entry(entry).or_default().insert(Distinct(v.clone())) {
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
            let (sum, finite) = match acc {
                Value::Null => (v, true),
                Value::Float64(a) => (a.0 + v, a.0.is_finite()),
                other => return Err(wrong_type(call, other)),
            };
            // Finite values whose sum is not finite overflowed; a NaN or an infinity
            // summed goes on as Java computes it.
            if !sum.is_finite() && v.is_finite() && finite {
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

/// Moves a retracting sum and its count of non-null values by `v` (added with `sign` 1,
/// taken back with -1; a null moves nothing). Returns the sum and count when values remain,
/// `None` when the count is 0 (the raw sum is kept, as Flink keeps it) or `v` is null.
fn move_sum(
    call: &Call,
    of: SumOf,
    sum_and_count: &mut [Value],
    v: &Value,
    sign: i64,
) -> Result<Option<(Value, Value)>, Fault> {
    if v.is_null() {
        return Ok(None);
    }
    let [sum, count] = sum_and_count else {
        return Err(wrong_type(call, v));
    };
    let v = if sign < 0 {
        negate(call, v)?
    } else {
        v.clone()
    };
    add(call, of, sum, &v)?;
    *count = step(count, sign).ok_or_else(|| overflow(call))?;
    Ok((*count != Value::Int64(0)).then(|| (sum.clone(), count.clone())))
}

/// A count moved by `by` (1 or -1); `None` on overflow or a value that is not a count.
fn step(count: &Value, by: i64) -> Option<Value> {
    match count {
        Value::Int64(n) => n.checked_add(by).map(Value::Int64),
        _ => None,
    }
}

/// `-v`, for retracting `v` from a sum.
fn negate(call: &Call, v: &Value) -> Result<Value, Fault> {
    Ok(match v {
        Value::Int32(x) => Value::Int64(-i64::from(*x)),
        Value::Int64(x) => Value::Int64(x.checked_neg().ok_or_else(|| overflow(call))?),
        Value::Decimal(d) => Value::Decimal(Decimal::new(-d.mantissa, d.scale)),
        Value::Float64(f) => Value::Float64(F64(-f.0)),
        other => return Err(wrong_type(call, other)),
    })
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
