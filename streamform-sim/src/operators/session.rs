//! Session window aggregation (docs/windows.md): per key, the rows that follow each other
//! by less than the gap form one session, emitted once, as an insert, when the watermark
//! reaches its end minus 1 ms.
//!
//! A row at `t` opens the window `[t, t + gap)`. Windows of one key that overlap or meet
//! (one ends where the other starts) merge into one, from the earliest start to the latest
//! end, as Flink merges them. A row whose own window merges with no open session and has
//! already ended (its end minus 1 ms at or before the watermark) is dropped as late; a
//! row that joins an open session counts in it, however old the row is.
//!
//! A session keeps its rows until it fires; the calls are folded over them then, in arrival
//! order. Sessions that one watermark makes final come out in end order, then by the key's
//! values ascending (null first). Nothing fires at the end of the input.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};

use streamform_ir::Value;

use super::accumulate::Calls;
use super::window::{Shape, Slot, row_time};
use crate::keyed::KeyValues;
use crate::operator::{Fault, Operator, Out, Rec, cmp_rows};

/// One open session of a key.
struct Session {
    start: i64,
    /// Exclusive: the latest row's time plus the gap.
    end: i64,
    rows: Vec<Vec<Value>>,
}

pub(crate) struct SessionAggregate {
    gap: i64,
    shape: Shape,
    /// Key values to the key's number.
    ids: HashMap<KeyValues, u32>,
    /// Per key number: its values and its open sessions, by start (they do not overlap).
    keys: Vec<(Vec<Value>, Vec<Session>)>,
    /// Key numbers no longer in use.
    free: Vec<u32>,
    /// Every open session as (end, key number, start): the next to fire first.
    schedule: BTreeSet<(i64, u32, i64)>,
    /// The last watermark received; `i64::MIN` before any.
    watermark: i64,
}

/// The entry number the calls' distinct sets use while folding a firing session.
const FIRING: u32 = u32::MAX;

impl SessionAggregate {
    /// The aggregation of session windows of `gap` milliseconds over `shape`.
    pub(crate) fn new(shape: Shape, gap: u64) -> SessionAggregate {
        SessionAggregate {
            gap: i64::try_from(gap).unwrap_or(i64::MAX),
            shape,
            ids: HashMap::new(),
            keys: Vec::new(),
            free: Vec::new(),
            schedule: BTreeSet::new(),
            watermark: i64::MIN,
        }
    }

    /// Whether a window ending at `end` has ended by the watermark.
    fn ended(&self, end: i64) -> bool {
        self.watermark != i64::MIN && self.watermark >= end - 1
    }

    /// The number of the key `values`, made for it if it has none.
    fn key_id(&mut self, values: Vec<Value>) -> u32 {
        let values = KeyValues(values);
        if let Some(&id) = self.ids.get(&values) {
            return id;
        }
        let id = match self.free.pop() {
            Some(id) => {
                self.keys[id as usize] = (values.0.clone(), Vec::new());
                id
            }
            None => {
                self.keys.push((values.0.clone(), Vec::new()));
                u32::try_from(self.keys.len() - 1).unwrap_or(u32::MAX)
            }
        };
        self.ids.insert(values, id);
        id
    }

    /// The row a fired session emits: the grouping columns in GROUP BY order, then the
    /// calls' results over its rows.
    fn output(&mut self, key: &[Value], session: &Session) -> Result<Vec<Value>, Fault> {
        output(&self.shape.layout, &mut self.shape.calls, key, session)
    }

    /// The sessions still open, and the watermark at which the first of them fires (its
    /// end minus 1 ms).
    pub(crate) fn open(&self) -> Option<(usize, i64)> {
        let &(end, _, _) = self.schedule.first()?;
        Some((self.schedule.len(), end - 1))
    }

    /// The open sessions as (key values with the session's end, results so far) pairs
    /// sorted by key.
    pub(crate) fn snapshot(&self) -> Vec<(Vec<Value>, Vec<Value>)> {
        let mut calls = self.shape.calls.clone();
        let mut out = Vec::new();
        for (values, sessions) in &self.keys {
            for session in sessions {
                let Ok(row) = output(&self.shape.layout, &mut calls, values, session) else {
                    continue;
                };
                let mut key = values.clone();
                key.push(Value::Timestamp(session.end));
                out.push((key, row[self.shape.layout.len()..].to_vec()));
            }
        }
        out.sort_by(|a, b| cmp_rows(&a.0, &b.0));
        out
    }
}

impl Operator for SessionAggregate {
    fn on_change<'a>(
        &'a mut self,
        rec: Rec<'a>,
        _time: Option<i64>,
        out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        let t = row_time(&rec, self.shape.time, &self.shape.time_name)?;
        let row: &[Value] = &rec.row;
        let (mut start, mut end) = (t, t.saturating_add(self.gap));
        if !streamform_ir::time::in_range(end) {
            return Err(Fault::window_out_of_range(&self.shape.time_name, start));
        }
        let values: Vec<Value> = self.shape.group.iter().map(|&c| row[c].clone()).collect();
        let id = self.key_id(values);
        let sessions = &mut self.keys[id as usize].1;
        // The open sessions this row's window meets or overlaps (Flink's windows intersect
        // when one's start is at or before the other's end).
        let meets = |s: &Session| s.start <= end && s.end >= start;
        let first = sessions.iter().position(meets);
        let Some(first) = first else {
            if self.watermark != i64::MIN && self.watermark >= end - 1 {
                if sessions.is_empty() {
                    let values = std::mem::take(&mut self.keys[id as usize].0);
                    self.ids.remove(&KeyValues(values));
                    self.free.push(id);
                }
                out.dropped_late();
                return Ok(None);
            }
            let at = sessions.partition_point(|s| s.start < start);
            sessions.insert(
                at,
                Session {
                    start,
                    end,
                    rows: vec![row.to_vec()],
                },
            );
            self.schedule.insert((end, id, start));
            return Ok(None);
        };
        let count = sessions[first..].iter().take_while(|s| meets(s)).count();
        let mut rows = Vec::new();
        for s in sessions.drain(first..first + count) {
            self.schedule.remove(&(s.end, id, s.start));
            start = start.min(s.start);
            end = end.max(s.end);
            rows.extend(s.rows);
        }
        rows.push(row.to_vec());
        sessions.insert(first, Session { start, end, rows });
        self.schedule.insert((end, id, start));
        Ok(None)
    }

    /// Fires every session whose end minus 1 ms the watermark has reached, in end order, and
    /// within one end by key; frees them.
    fn on_watermark(&mut self, watermark: i64, out: &mut Out<'static>) -> Result<(), Fault> {
        self.watermark = self.watermark.max(watermark);
        while let Some(&(end, _, _)) = self.schedule.first() {
            if !self.ended(end) {
                break;
            }
            let mut fired: Vec<(u32, Session)> = Vec::new();
            while let Some(&(e, id, start)) = self.schedule.first() {
                if e != end {
                    break;
                }
                self.schedule.pop_first();
                let sessions = &mut self.keys[id as usize].1;
                if let Some(at) = sessions.iter().position(|s| s.start == start) {
                    fired.push((id, sessions.remove(at)));
                }
            }
            fired.sort_by(|a, b| cmp_rows(&self.keys[a.0 as usize].0, &self.keys[b.0 as usize].0));
            out.reserve(fired.len());
            for (id, session) in fired {
                let values = std::mem::take(&mut self.keys[id as usize].0);
                let row = self.output(&values, &session);
                if self.keys[id as usize].1.is_empty() {
                    self.ids.remove(&KeyValues(values));
                    self.free.push(id);
                } else {
                    self.keys[id as usize].0 = values;
                }
                out.emit(Rec::insert(Cow::Owned(row?)), Some(end - 1));
            }
        }
        Ok(())
    }
}

/// The row `session` of the key `key` emits: the grouping columns in GROUP BY order, then
/// the calls' results over its rows.
fn output(
    layout: &[Slot],
    calls: &mut Calls,
    key: &[Value],
    session: &Session,
) -> Result<Vec<Value>, Fault> {
    let mut accs = Vec::with_capacity(calls.width());
    calls.fresh(&mut accs);
    let folded = session
        .rows
        .iter()
        .try_for_each(|row| calls.fold(&mut accs, row, FIRING).map(|_| ()));
    calls.forget(FIRING);
    folded?;
    let mut row = Vec::with_capacity(layout.len() + calls.len());
    for slot in layout {
        row.push(match *slot {
            Slot::Key(i) => key[i].clone(),
            Slot::Start => Value::Timestamp(session.start),
            Slot::End => Value::Timestamp(session.end),
            Slot::Time => Value::Timestamp(session.end - 1),
        });
    }
    accs.truncate(calls.len());
    row.extend(accs);
    Ok(row)
}
