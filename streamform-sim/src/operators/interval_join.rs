//! An interval join (docs/joins.md, "Joins in time"): two append inputs on event time,
//! each row matched with the other side's rows of its join key whose time lies within the
//! bounds, with the rules of Flink's row-time interval join:
//!
//! - The join's time is its watermark (the least of its inputs'), read as 0 before any.
//! - A row is matched at once against the other side's stored rows within its bounds, and
//!   each match is inserted joined.
//! - It is stored (under its time) while the watermark is below the last time a row of
//!   the other side could match it (its time plus its side's wait); otherwise it is late:
//!   not stored, and, on a side that keeps unmatched rows, inserted padded at once when it
//!   matched nothing. A late row that matches nothing on a side that pads nothing is
//!   dropped, and the run says so.
//! - Each key has one clean-up timer per side, set for the first row stored when none is
//!   set, at its time plus its side's wait plus 1 ms. When the watermark reaches it, every
//!   row of that side whose last chance to match has passed is removed (an unmatched one,
//!   on a side that pads, inserted padded) and the timer is set again for the earliest row
//!   left. A row of the other side arriving also removes (and pads) the rows of this side
//!   that expired while it looks for matches.
//! - Its output appends; the watermark after it is held back by the longer wait (the
//!   driver applies [`streamform_ir::TimeBounds::delay`]).
//!
//! Rows whose join key holds a null never match. The records one row or one watermark
//! produces come in one canonical order (rows by time, then arrival); Flink's follow its
//! state backend, and the differential test compares them as a multiset.

use std::collections::{BTreeMap, BTreeSet};

use streamform_ir::{Expr, JoinKind, Node, TimeBounds, Value};

use crate::eval::{CExpr, resolve};
use crate::keyed::KeyValues as Key;
use crate::operator::{Fault, InputShape, Operator, Out, Rec};
use crate::operators::join::joined;
use crate::operators::slots::Slots;

/// One side's rows of a join key by their time, each with whether it matched.
type Rows = BTreeMap<i64, Vec<(Vec<Value>, bool)>>;

/// What one join key keeps: per side, its rows by time (each with whether it matched), and
/// the time of the timer that cleans that side's rows, when one is set.
#[derive(Default)]
struct Keyed {
    rows: [Rows; 2],
    timer: [Option<i64>; 2],
}

impl Keyed {
    fn is_empty(&self) -> bool {
        self.rows.iter().all(BTreeMap::is_empty) && self.timer.iter().all(Option::is_none)
    }
}

pub(crate) struct IntervalJoin {
    kind: JoinKind,
    /// Each side's join key columns, in ON's order.
    keys: [Vec<usize>; 2],
    /// Each side's time column.
    times: [usize; 2],
    widths: [usize; 2],
    /// How long after its own time a row of each side may still meet a match.
    waits: [i64; 2],
    /// The rest of ON, over the joined row.
    filter: Option<(CExpr, String)>,
    /// The state of each join key, by slot; a key whose rows and timers are all gone
    /// gives its slot back.
    slots: Slots<Keyed>,
    /// The timers set, by time, then slot.
    timers: BTreeSet<(i64, usize)>,
    /// Per side, the time up to which its rows were last expired, for the whole operator
    /// (Flink keeps these two beside the keyed state): a row of the other side looks for
    /// matches only when its bounds reach past it.
    expired: [i64; 2],
    /// The watermark last handed; `i64::MIN` before any.
    watermark: i64,
    /// Rows of each side padded so far.
    padded: [usize; 2],
    /// How far the join holds back the watermark it passes on.
    delay: i64,
}

impl IntervalJoin {
    /// The interval join `node` reads `inputs` (left, then right): its key and time
    /// columns resolved on each, its filter compiled against its own schema.
    pub(crate) fn build(
        node: &Node,
        kind: JoinKind,
        on: &[(String, String)],
        bounds: &TimeBounds,
        filter: Option<&Expr>,
        inputs: &[InputShape<'_>],
    ) -> Result<IntervalJoin, Fault> {
        let [left, right] = inputs else {
            return Err(Fault::plain(format!(
                "node `{}`: a join reads two inputs, not {}",
                node.id,
                inputs.len()
            )));
        };
        crate::operators::join::check_schema(node, kind, left.schema, right.schema)?;
        for (side, input) in [("left", left), ("right", right)] {
            if input.changelog.is_updating() {
                return Err(Fault::plain(format!(
                    "node `{}`: an interval join reads append inputs, and its {side} input updates",
                    node.id
                )));
            }
        }
        let mut keys = [Vec::new(), Vec::new()];
        for (l, r) in on {
            keys[0].push(resolve(left.schema, l).map_err(|m| Fault::at(l, m))?);
            keys[1].push(resolve(right.schema, r).map_err(|m| Fault::at(r, m))?);
        }
        let time = |name: &str, schema: &[streamform_ir::Field], offset: usize| {
            let at = resolve(&node.schema, name).map_err(|m| Fault::at(name, m))?;
            match at.checked_sub(offset) {
                Some(i)
                    if i < schema.len() && schema[i].ty == streamform_ir::DataType::Timestamp =>
                {
                    Ok(i)
                }
                _ => Err(Fault::at(
                    name,
                    format!(
                        "the interval join's time column `{name}` is not a timestamp of its side"
                    ),
                )),
            }
        };
        let times = [
            time(&bounds.left_time, left.schema, 0)?,
            time(&bounds.right_time, right.schema, left.schema.len())?,
        ];
        if bounds.lower > bounds.upper {
            return Err(Fault::plain(format!(
                "node `{}`: the time condition `{bounds}` matches no pair of rows",
                node.id
            )));
        }
        let filter = match filter {
            Some(f) => {
                let text = f.to_string();
                let compiled = CExpr::compile(f, &node.schema).map_err(|m| Fault::at(&text, m))?;
                Some((compiled, text))
            }
            None => None,
        };
        Ok(IntervalJoin {
            kind,
            keys,
            times,
            widths: [left.schema.len(), right.schema.len()],
            waits: [bounds.left_wait(), bounds.right_wait()],
            filter,
            slots: Slots::new(),
            timers: BTreeSet::new(),
            expired: [0, 0],
            watermark: i64::MIN,
            padded: [0, 0],
            delay: bounds.delay(),
        })
    }

    /// How far the join holds back the watermark it passes on.
    pub(crate) fn delay(&self) -> i64 {
        self.delay
    }

    /// Whether side `s` (0 left, 1 right) keeps its unmatched rows, padded.
    fn pads(&self, s: usize) -> bool {
        if s == 0 {
            self.kind.left_outer()
        } else {
            self.kind.right_outer()
        }
    }

    /// The join's time: its watermark, 0 before any (as Flink reads it).
    fn now(&self) -> i64 {
        self.watermark.max(0)
    }

    /// Up to which time the rows of a side waiting `wait` have no chance left to match.
    fn expiry(&self, wait: i64) -> i64 {
        if self.watermark == i64::MAX {
            i64::MAX
        } else {
            self.now().saturating_sub(wait).saturating_sub(1)
        }
    }

    /// Gives back the slot of a key that keeps nothing.
    fn release_if_empty(&mut self, at: usize) {
        self.slots.release_if(at, Keyed::is_empty);
    }

    /// Sets the timer that cleans side `s`'s rows of slot `at`, for a row at `time`.
    fn set_timer(&mut self, at: usize, s: usize, time: i64) {
        let when = time.saturating_add(self.waits[s]).saturating_add(1);
        self.slots[at].timer[s] = Some(when);
        self.timers.insert((when, at));
    }

    /// Whether `row` from side `s` and `other` from the other side meet the rest of ON.
    fn meets(&self, s: usize, row: &[Value], other: &[Value]) -> Result<bool, Fault> {
        let Some((filter, text)) = &self.filter else {
            return Ok(true);
        };
        let joined = joined(self.widths, s, row, Some(other));
        filter.test(&joined).map_err(|e| Fault::eval(text, &e))
    }

    /// The padded record of `row` from side `s`.
    fn padded_rec(&mut self, s: usize, row: &[Value]) -> Rec<'static> {
        self.padded[s] += 1;
        Rec::insert(joined(self.widths, s, row, None).into())
    }

    /// Removes the rows of side `s` of slot `at` whose time is at most `upto`, padding the
    /// unmatched ones where the side pads; when `rearm`, sets the side's timer again for
    /// the earliest row left, or clears it (and the side's rows) when none is left past 0.
    fn expire_side(
        &mut self,
        at: usize,
        s: usize,
        upto: i64,
        rearm: bool,
        time: i64,
        out: &mut Out<'_>,
    ) {
        let kept = self.slots[at].rows[s].split_off(&upto.saturating_add(1));
        let gone = std::mem::replace(&mut self.slots[at].rows[s], kept);
        if self.pads(s) {
            for (_, rows) in gone {
                for (row, matched) in rows {
                    if !matched {
                        let rec = self.padded_rec(s, &row);
                        out.emit(rec, Some(time));
                    }
                }
            }
        }
        if !rearm {
            return;
        }
        match self.slots[at].rows[s].keys().next().copied() {
            // Flink sets the timer again only for a time past 0, and otherwise forgets the
            // side's rows with it.
            Some(earliest) if earliest > 0 => self.set_timer(at, s, earliest),
            _ => {
                self.slots[at].timer[s] = None;
                self.slots[at].rows[s].clear();
            }
        }
    }

    /// One row from side `s`.
    fn on_row<'a>(&mut self, s: usize, row: &[Value], out: &mut Out<'a>) -> Result<(), Fault> {
        let o = 1 - s;
        let t = match &row[self.times[s]] {
            Value::Timestamp(t) => *t,
            _ => {
                return Err(Fault::plain(
                    "a row reached the interval join without a time".to_string(),
                ));
            }
        };
        let lowest = t.saturating_sub(self.waits[o]);
        let highest = t.saturating_add(self.waits[s]);
        let key: Vec<Value> = self.keys[s].iter().map(|&i| row[i].clone()).collect();
        let null = key.iter().any(Value::is_null);
        let at = self.slots.slot(Key(key));
        let mut matched = false;
        if self.expired[o] < highest {
            self.expired[o] = self.expiry(self.waits[o]);
            let upto = self.expired[o];
            let mut records = Vec::new();
            let mut others = std::mem::take(&mut self.slots[at].rows[o]);
            for (&time, rows) in others.range_mut(lowest..=highest) {
                let _ = time;
                for (other, other_matched) in rows.iter_mut() {
                    if null || !self.meets(s, row, other)? {
                        continue;
                    }
                    records.push(joined(self.widths, s, row, Some(other)));
                    matched = true;
                    *other_matched = true;
                }
            }
            self.slots[at].rows[o] = others;
            for r in records {
                out.emit(Rec::insert(r.into()), Some(t));
            }
            self.expire_side(at, o, upto, false, t, out);
        }
        if self.now() < highest {
            self.slots[at].rows[s]
                .entry(t)
                .or_default()
                .push((row.to_vec(), matched));
            if self.slots[at].timer[s].is_none() {
                self.set_timer(at, s, t);
            }
        } else if !matched && self.pads(s) {
            let rec = self.padded_rec(s, row);
            out.emit(rec, Some(t));
        } else if !matched {
            out.dropped_late();
        }
        self.release_if_empty(at);
        Ok(())
    }

    /// The rows waiting to be padded: how many unmatched rows are kept on the sides that
    /// pad, and the earliest watermark at which one of them is: its deadline (its time plus
    /// its side's wait plus 1 ms), or its key's timer when that is later, and past the
    /// watermark the join has now.
    pub(crate) fn waiting(&self) -> Option<(usize, i64)> {
        let mut count = 0;
        let mut first = i64::MAX;
        for keyed in self.slots.values() {
            for s in (0..2).filter(|&s| self.pads(s)) {
                for (&time, rows) in &keyed.rows[s] {
                    let waiting = rows.iter().filter(|(_, m)| !m).count();
                    if waiting > 0 {
                        count += waiting;
                        let deadline = time.saturating_add(self.waits[s]).saturating_add(1);
                        let at = deadline
                            .max(keyed.timer[s].unwrap_or(deadline))
                            .max(self.watermark.saturating_add(1));
                        first = first.min(at);
                    }
                }
            }
        }
        (count > 0).then_some((count, first))
    }

    /// The rows padded so far, left and right.
    pub(crate) fn padded(&self) -> [usize; 2] {
        self.padded
    }

    /// Every stored row, by join key: the key's values, then the row's side's columns and
    /// whether it matched, the other side's columns null.
    pub(crate) fn snapshot(&self) -> Vec<(Vec<Value>, Vec<Value>)> {
        let keys = self.slots.sorted();
        let mut out = Vec::new();
        for s in 0..2 {
            for &(key, at) in &keys {
                for rows in self.slots[at].rows[s].values() {
                    for (row, matched) in rows {
                        let mut v = Vec::with_capacity(self.widths[0] + self.widths[1] + 2);
                        if s == 1 {
                            v.resize(self.widths[0] + 1, Value::Null);
                        }
                        v.extend_from_slice(row);
                        v.push(Value::Boolean(*matched));
                        if s == 0 {
                            v.resize(v.len() + self.widths[1] + 1, Value::Null);
                        }
                        out.push((key.0.clone(), v));
                    }
                }
            }
        }
        out
    }
}

impl Operator for IntervalJoin {
    /// A change without a port is the left side's.
    fn on_change<'a>(
        &'a mut self,
        rec: Rec<'a>,
        time: Option<i64>,
        out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        self.on_input(0, rec, time, out)
    }

    fn on_input<'a>(
        &'a mut self,
        port: u8,
        rec: Rec<'a>,
        _time: Option<i64>,
        out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        if rec.op != crate::Op::Insert {
            return Err(Fault::plain(
                "an interval join reads append inputs, and received a change that is not an insert",
            ));
        }
        self.on_row(usize::from(port.min(1)), &rec.row, out)?;
        Ok(None)
    }

    /// Fires every timer the watermark reached, earliest first.
    fn on_watermark(&mut self, watermark: i64, out: &mut Out<'static>) -> Result<(), Fault> {
        self.watermark = self.watermark.max(watermark);
        while let Some(&(when, at)) = self.timers.first() {
            if when > self.watermark {
                break;
            }
            self.timers.pop_first();
            // Flink cleans the right side's rows first, then the left's.
            for s in [1, 0] {
                if self.slots[at].timer[s] == Some(when) {
                    self.expired[s] = self.expiry(self.waits[s]);
                    let upto = self.expired[s];
                    self.expire_side(at, s, upto, true, when, out);
                }
            }
            self.release_if_empty(at);
        }
        Ok(())
    }
}
