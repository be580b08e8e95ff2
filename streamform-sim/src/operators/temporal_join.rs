//! An event-time temporal join (docs/joins.md, "Joins in time"): each row of the probe side
//! (left, appending) joined with the version of the versioned side (right, an upsert
//! source) valid at the probe row's time, with the rules of Flink's row-time temporal join:
//!
//! - A probe row is kept, under the next number of its key, until the watermark passes
//!   its time; a version is kept under its time (a later one at the same time replaces it).
//! - Each key has one timer, set for the earliest time of a row kept (probe row or version)
//!   when none is set or an earlier one arrives. When the watermark reaches it, every probe
//!   row at or before the watermark is emitted, in the order the key's rows arrived, joined
//!   with the latest version at or before its time; a deleted version, or none, is no
//!   match (padded with nulls in a LEFT join). Then every version older than the latest
//!   one at or before the watermark is dropped, and the timer is set again for the
//!   earliest probe row left, if any.
//!
//! A later change of a version never changes what was emitted: the output appends. The
//! records one watermark produces come key by key, earliest timer first; Flink's order
//! across keys follows its timers, and the differential test compares them as a multiset.

use std::collections::{BTreeMap, BTreeSet};

use streamform_ir::{JoinKind, Node, Value};

use crate::Op;
use crate::eval::resolve;
use crate::keyed::KeyValues as Key;
use crate::operator::{Fault, InputShape, Operator, Out, Rec};
use crate::operators::join::joined;
use crate::operators::slots::Slots;

/// What one key keeps.
#[derive(Default)]
struct Keyed {
    /// The probe rows waiting, by their number in arrival order, with their time.
    probes: BTreeMap<u64, (i64, Vec<Value>)>,
    /// The versions by time; `None` for a delete.
    versions: BTreeMap<i64, Option<Vec<Value>>>,
    /// The key's timer, when one is set.
    timer: Option<i64>,
}

pub(crate) struct TemporalJoin {
    kind: JoinKind,
    /// Each side's join key columns, in ON's order.
    keys: [Vec<usize>; 2],
    /// Each side's time column.
    times: [usize; 2],
    widths: [usize; 2],
    slots: Slots<Keyed>,
    /// The timers set, by time, then slot.
    timers: BTreeSet<(i64, usize)>,
    /// The number the next probe row gets.
    next: u64,
    watermark: i64,
    /// The probe rows that met no version valid at their time, so far.
    unmatched: usize,
}

impl TemporalJoin {
    /// The temporal join `node` reads `inputs` (probe side, then versioned side).
    pub(crate) fn build(
        node: &Node,
        kind: JoinKind,
        on: &[(String, String)],
        (left_time, right_time): (&str, &str),
        inputs: &[InputShape<'_>],
    ) -> Result<TemporalJoin, Fault> {
        let [left, right] = inputs else {
            return Err(Fault::plain(format!(
                "node `{}`: a join reads two inputs, not {}",
                node.id,
                inputs.len()
            )));
        };
        crate::operators::join::check_schema(node, kind, left.schema, right.schema)?;
        if !matches!(kind, JoinKind::Inner | JoinKind::Left) {
            return Err(Fault::plain(format!(
                "node `{}`: a temporal join is an inner or a left join, not {}",
                node.id,
                kind.name()
            )));
        }
        if left.changelog.is_updating() {
            return Err(Fault::plain(format!(
                "node `{}`: a temporal join's probe side appends, and this one updates",
                node.id
            )));
        }
        let mut keys = [Vec::new(), Vec::new()];
        for (l, r) in on {
            keys[0].push(resolve(left.schema, l).map_err(|m| Fault::at(l, m))?);
            keys[1].push(resolve(right.schema, r).map_err(|m| Fault::at(r, m))?);
        }
        let time = |name: &str, offset: usize, width: usize| {
            let at = resolve(&node.schema, name).map_err(|m| Fault::at(name, m))?;
            at.checked_sub(offset)
                .filter(|i| *i < width)
                .ok_or_else(|| {
                    Fault::at(
                        name,
                        format!("the temporal join's time column `{name}` is not of its side"),
                    )
                })
        };
        let times = [
            time(left_time, 0, left.schema.len())?,
            time(right_time, left.schema.len(), right.schema.len())?,
        ];
        Ok(TemporalJoin {
            kind,
            keys,
            times,
            widths: [left.schema.len(), right.schema.len()],
            slots: Slots::new(),
            timers: BTreeSet::new(),
            next: 0,
            watermark: i64::MIN,
            unmatched: 0,
        })
    }

    /// Sets the key's timer to `time` when it has none or a later one.
    fn set_smallest_timer(&mut self, at: usize, time: i64) {
        match self.slots[at].timer {
            Some(t) if t <= time => {}
            current => {
                if let Some(t) = current {
                    self.timers.remove(&(t, at));
                }
                self.slots[at].timer = Some(time);
                self.timers.insert((time, at));
            }
        }
    }

    /// The time in column `column` of `row`.
    fn time_of(row: &[Value], column: usize) -> Result<i64, Fault> {
        match row[column] {
            Value::Timestamp(t) => Ok(t),
            _ => Err(Fault::plain(
                "a row reached the temporal join without a time".to_string(),
            )),
        }
    }

    /// The key of `row` on side `s`.
    fn key_of(&self, s: usize, row: &[Value]) -> Key {
        Key(self.keys[s].iter().map(|&i| row[i].clone()).collect())
    }

    /// Emits the probe rows of slot `at` the watermark has passed, then drops the versions
    /// no probe row can need any more, and sets the timer again for the earliest probe row
    /// left.
    fn fire(&mut self, at: usize, out: &mut Out<'static>) {
        let watermark = self.watermark;
        let keyed = &mut self.slots[at];
        keyed.timer = None;
        let due: Vec<u64> = keyed
            .probes
            .iter()
            .filter(|(_, (t, _))| *t <= watermark)
            .map(|(n, _)| *n)
            .collect();
        let mut records = Vec::with_capacity(due.len());
        for n in due {
            let Some((t, row)) = keyed.probes.remove(&n) else {
                continue;
            };
            let null = self.keys[0].iter().any(|&i| row[i].is_null());
            let version = keyed
                .versions
                .range(..=t)
                .next_back()
                .and_then(|(_, v)| v.as_ref())
                .filter(|_| !null);
            match version {
                Some(v) => records.push((joined(self.widths, 0, &row, Some(v)), t)),
                None if self.kind.left_outer() => {
                    self.unmatched += 1;
                    records.push((joined(self.widths, 0, &row, None), t));
                }
                None => self.unmatched += 1,
            }
        }
        // Keep the latest version at or before the watermark and every later one.
        if let Some(&latest) = keyed
            .versions
            .range(..=watermark)
            .next_back()
            .map(|(t, _)| t)
        {
            keyed.versions = keyed.versions.split_off(&latest);
        }
        let earliest = keyed.probes.values().map(|(t, _)| *t).min();
        for (row, t) in records {
            out.emit(Rec::insert(row.into()), Some(t));
        }
        if let Some(t) = earliest {
            self.slots[at].timer = Some(t);
            self.timers.insert((t, at));
        }
        self.slots.release_if(at, |k| {
            k.probes.is_empty() && k.versions.is_empty() && k.timer.is_none()
        });
    }

    /// The probe rows still waiting, and the earliest watermark at which one is emitted:
    /// its key's timer, or the next watermark for one whose time has passed (a late row).
    pub(crate) fn waiting(&self) -> Option<(usize, i64)> {
        let mut count = 0;
        let mut first = i64::MAX;
        for keyed in self.slots.values() {
            for (t, _) in keyed.probes.values() {
                count += 1;
                let at = (*t)
                    .max(keyed.timer.unwrap_or(*t))
                    .max(self.watermark.saturating_add(1));
                first = first.min(at);
            }
        }
        (count > 0).then_some((count, first))
    }

    /// The probe rows that met no version valid at their time (padded in a LEFT join, not
    /// emitted in an inner one).
    pub(crate) fn unmatched(&self) -> usize {
        self.unmatched
    }

    /// Every kept row, by key: a probe row's columns then the right side's null, or a
    /// version's columns after the left side's null (a deleted version all null).
    pub(crate) fn snapshot(&self) -> Vec<(Vec<Value>, Vec<Value>)> {
        let mut out = Vec::new();
        for (key, at) in self.slots.sorted() {
            for (_, row) in self.slots[at].probes.values() {
                out.push((key.0.clone(), joined(self.widths, 0, row, None)));
            }
            for version in self.slots[at].versions.values() {
                let v = match version {
                    Some(v) => joined(self.widths, 1, v, None),
                    None => vec![Value::Null; self.widths[0] + self.widths[1]],
                };
                out.push((key.0.clone(), v));
            }
        }
        out
    }
}

impl Operator for TemporalJoin {
    /// A change without a port is the probe side's.
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
        _out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        if port == 0 {
            if rec.op != Op::Insert {
                return Err(Fault::plain(
                    "a temporal join's probe side appends, and received a change that is not an insert",
                ));
            }
            let t = Self::time_of(&rec.row, self.times[0])?;
            let at = self.slots.slot(self.key_of(0, &rec.row));
            let n = self.next;
            self.next += 1;
            self.slots[at].probes.insert(n, (t, rec.row.into_owned()));
            self.set_smallest_timer(at, t);
        } else {
            // A version: an insert's or an update's row. A tombstone has no time, which
            // Flink 2.0 and 2.2 read differently, so fixtures cannot give one (docs/joins.md).
            if rec.op == Op::Delete {
                return Err(Fault::plain(
                    "a temporal join's versioned side received a delete, which carries no time",
                ));
            }
            let t = Self::time_of(&rec.row, self.times[1])?;
            let at = self.slots.slot(self.key_of(1, &rec.row));
            self.slots[at]
                .versions
                .insert(t, Some(rec.row.into_owned()));
            self.set_smallest_timer(at, t);
        }
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
            if self.slots[at].timer == Some(when) {
                self.fire(at, out);
            }
        }
        Ok(())
    }
}
