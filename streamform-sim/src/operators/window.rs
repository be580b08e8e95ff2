//! Window aggregation (docs/windows.md): the rows of an append input grouped by window and
//! key, each (key, window) that holds a row emitted once, as an insert, when the watermark
//! reaches its end minus 1 ms.
//!
//! Windows are aligned to the epoch. A row at `t` belongs to:
//! - TUMBLE(size): the window ending at `floor(t, size) + size`;
//! - HOP(slide, size): the `size / slide` windows whose ends run from its slice's end,
//!   `floor(t, slide) + slide`, in steps of `slide`;
//! - CUMULATE(step, size): the windows of its base window `[floor(t, size), +size)` that
//!   end at or after its step's end, `floor(t, step) + step`.
//!
//! State is one set of accumulators per (key, window end), created by the first row of the
//! key in the window and freed when the window fires. A window has fired once the
//! watermark is at or past its end minus 1 ms; a row whose every window has fired is
//! dropped as late (the driver reports it), and a row with some windows still open counts
//! in those only. Rows that one watermark makes final come out in window end order, then by
//! the grouping values ascending (null first). Nothing fires at the end of the input: an
//! unbounded source has no end, and a window is final only once the watermark passes it.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::collections::btree_map::Entry as MapEntry;

use streamform_ir::{
    AggCall, DataType, Node, State, Value, WINDOW_END, WINDOW_START, WINDOW_TIME, Window,
    WindowKind,
};

use super::accumulate::Calls;
use crate::eval::resolve;
use crate::keyed::{Arena, Index, entry_number};
use crate::operator::{Fault, InputShape, Operator, Out, Rec, cmp_rows};

/// Where one grouping column's value comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Slot {
    /// The key's value number `i`.
    Key(usize),
    Start,
    End,
    Time,
}

pub(crate) struct WindowAggregate {
    kind: WindowKind,
    /// The input's time column.
    time: usize,
    time_name: String,
    /// The input columns of the key (the grouping columns that are not the window's).
    group: Vec<usize>,
    /// One per grouping column, in GROUP BY order.
    layout: Vec<Slot>,
    calls: Calls,
    /// Every open (key, window)'s key values and accumulators.
    arena: Arena,
    /// Per window end not yet fired: the keys that have rows in it.
    panes: BTreeMap<i64, Pane>,
    /// Panes of windows that fired, emptied, whose memory the next windows take.
    spare: Vec<Pane>,
    /// A new entry's accumulators.
    fresh: Vec<Value>,
    /// The last watermark received; `i64::MIN` before any.
    watermark: i64,
    ends: Vec<i64>,
    /// A firing window's entries with their key as an ordered number (one numeric key
    /// column).
    numbered: Vec<(u64, u32)>,
    /// A firing window's entries in the order they are emitted.
    sorted: Vec<u32>,
}

/// The keys of one window: an index from key values to entries in the arena, and the
/// entries in the order they came.
#[derive(Default)]
struct Pane {
    index: Index,
    entries: Vec<u32>,
}

/// The start of the window of length `len` that holds `t`, aligned to the epoch.
fn floor(t: i64, len: i64) -> i64 {
    t - t.rem_euclid(len)
}

/// The ends of the aligned windows (TUMBLE, HOP, CUMULATE) a row at `t` belongs to,
/// earliest first, into `ends` (cleared first).
pub(crate) fn window_ends(kind: WindowKind, t: i64, ends: &mut Vec<i64>) {
    ends.clear();
    match kind {
        WindowKind::Tumble { size } => {
            let size = millis(size);
            ends.push(floor(t, size).saturating_add(size));
        }
        WindowKind::Hop { slide, size } => {
            let (slide, size) = (millis(slide), millis(size));
            let first = floor(t, slide).saturating_add(slide);
            for k in 0..size / slide {
                ends.push(first.saturating_add(k * slide));
            }
        }
        WindowKind::Session { .. } => {
            unreachable!("sessions are not aligned windows; operator.rs builds them apart")
        }
        WindowKind::Cumulate { step, size } => {
            let (step, size) = (millis(step), millis(size));
            let last = floor(t, size).saturating_add(size);
            let mut end = floor(t, step).saturating_add(step);
            while end <= last {
                ends.push(end);
                end = end.saturating_add(step);
            }
        }
    }
}

/// The start of the aligned window of `kind` that ends at `end`.
pub(crate) fn window_start(kind: WindowKind, end: i64) -> i64 {
    match kind {
        WindowKind::Tumble { size } | WindowKind::Hop { size, .. } => end - millis(size),
        WindowKind::Cumulate { size, .. } => floor(end - 1, millis(size)),
        WindowKind::Session { .. } => {
            unreachable!("sessions are not aligned windows; operator.rs builds them apart")
        }
    }
}

/// A duration as the simulator computes with it.
fn millis(d: u64) -> i64 {
    i64::try_from(d).unwrap_or(i64::MAX)
}

/// What every window aggregation compiles from its node: the time column, the key and
/// where each grouping column comes from, and the calls.
pub(crate) struct Shape {
    /// The input's time column.
    pub(crate) time: usize,
    pub(crate) time_name: String,
    /// The input columns of the key (the grouping columns that are not the window's).
    pub(crate) group: Vec<usize>,
    /// One per grouping column, in GROUP BY order.
    pub(crate) layout: Vec<Slot>,
    pub(crate) calls: Calls,
}

/// The time of a row a window receives, which must be an insert with its time.
pub(crate) fn row_time(rec: &Rec<'_>, time: usize, time_name: &str) -> Result<i64, Fault> {
    crate::operator::appended_time(rec, time, time_name, "a window")
}

impl Shape {
    /// Checks a window node against its input and compiles what it reads.
    pub(crate) fn build(
        node: &Node,
        window: &Window,
        group_by: &[String],
        calls: &[AggCall],
        input: &InputShape<'_>,
    ) -> Result<Shape, Fault> {
        let id = &node.id;
        input.appends(node, "a window")?;
        let State::Keyed(keyed) = &node.state else {
            return Err(Fault::plain(format!(
                "node `{id}`: a Window must have keyed state"
            )));
        };
        if keyed.key.as_slice() != group_by || keyed.window.as_ref() != Some(window) {
            return Err(Fault::plain(format!(
                "node `{id}`: the state must be kept per [{}] and window {window}",
                group_by.join(", ")
            )));
        }
        let positive = |d: u64| d > 0 && i64::try_from(d).is_ok();
        let valid = match window.kind {
            WindowKind::Tumble { size } => positive(size),
            WindowKind::Session { gap } => positive(gap),
            WindowKind::Hop { slide, size } | WindowKind::Cumulate { step: slide, size } => {
                positive(slide) && positive(size) && size.is_multiple_of(slide)
            }
        };
        if !valid {
            return Err(Fault::plain(format!(
                "node `{id}`: the window {} needs positive durations, the size a multiple of the slide or step",
                window.kind
            )));
        }
        let time = resolve(input.schema, &window.time).map_err(|m| Fault::at(&window.time, m))?;
        if input.schema[time].ty != DataType::Timestamp {
            return Err(Fault::at(
                &window.time,
                format!("node `{id}`: the window's time column is not a timestamp"),
            ));
        }
        if !group_by.iter().any(|g| g == WINDOW_START) || !group_by.iter().any(|g| g == WINDOW_END)
        {
            return Err(Fault::plain(format!(
                "node `{id}`: a window groups by {WINDOW_START} and {WINDOW_END}"
            )));
        }
        if node.schema.len() != group_by.len() + calls.len() {
            return Err(Fault::plain(format!(
                "node `{id}`: the schema has {} columns, expected the {} grouping columns and {} accumulators",
                node.schema.len(),
                group_by.len(),
                calls.len()
            )));
        }
        let mut group = Vec::new();
        let mut layout = Vec::with_capacity(group_by.len());
        for (g, field) in group_by.iter().zip(&node.schema) {
            let slot = match g.as_str() {
                WINDOW_START => Slot::Start,
                WINDOW_END => Slot::End,
                WINDOW_TIME => Slot::Time,
                _ => {
                    let i = resolve(input.schema, g).map_err(|m| Fault::at(g, m))?;
                    if field.ty != input.schema[i].ty {
                        return Err(Fault::at(
                            g,
                            format!("node `{id}`: grouping column type changes"),
                        ));
                    }
                    group.push(i);
                    Slot::Key(group.len() - 1)
                }
            };
            if !matches!(slot, Slot::Key(_)) && field.ty != DataType::Timestamp {
                return Err(Fault::at(
                    g,
                    format!("node `{id}`: a window's own columns are timestamps"),
                ));
            }
            layout.push(slot);
        }
        let calls = Calls::build(
            id,
            calls,
            keyed,
            &node.schema[group_by.len()..],
            input.schema,
        )?;
        Ok(Shape {
            time,
            time_name: window.time.clone(),
            group,
            layout,
            calls,
        })
    }
}

impl WindowAggregate {
    /// The aggregation of the aligned windows (TUMBLE, HOP, CUMULATE) `kind` over `shape`;
    /// operator.rs builds a session's with the session operator instead.
    pub(crate) fn new(shape: Shape, kind: WindowKind) -> WindowAggregate {
        let Shape {
            time,
            time_name,
            group,
            layout,
            calls,
        } = shape;
        let mut fresh = Vec::with_capacity(calls.width());
        calls.fresh(&mut fresh);
        WindowAggregate {
            kind,
            time,
            time_name,
            arena: Arena::new(group.len(), group.len() + calls.width()),
            group,
            layout,
            calls,
            panes: BTreeMap::new(),
            spare: Vec::new(),
            fresh,
            watermark: i64::MIN,
            ends: Vec::new(),
            numbered: Vec::new(),
            sorted: Vec::new(),
        }
    }

    /// Whether the window ending at `end` has fired.
    fn fired(&self, end: i64) -> bool {
        self.watermark != i64::MIN && self.watermark >= end - 1
    }

    /// The ends of the windows a row at `t` belongs to, earliest first, into `self.ends`.
    fn assign(&mut self, t: i64) {
        window_ends(self.kind, t, &mut self.ends);
    }

    /// Counts `row` in the window ending at `end` (not fired), under its key.
    #[inline]
    fn add(&mut self, end: i64, row: &[Value]) -> Result<(), Fault> {
        let start = self.start_of(end);
        let pane = match self.panes.entry(end) {
            MapEntry::Occupied(o) => o.into_mut(),
            MapEntry::Vacant(v) => {
                // Checked once per window: its bounds must be timestamps.
                if !(streamform_ir::time::in_range(start) && streamform_ir::time::in_range(end)) {
                    return Err(Fault::window_out_of_range(&self.time_name, start));
                }
                v.insert(self.spare.pop().unwrap_or_default())
            }
        };
        let key = self.group.iter().map(|&c| &row[c]);
        let entry = match pane.index.find(&self.arena, key.clone()) {
            Ok(entry) => entry,
            Err(vacant) => {
                let entry = self.arena.alloc(key, &self.fresh);
                pane.index.insert(&self.arena, vacant, entry);
                pane.entries.push(entry_number(entry));
                entry
            }
        };
        self.calls
            .fold(self.arena.accumulators_mut(entry), row, entry_number(entry))?;
        Ok(())
    }

    /// The start of the window that ends at `end`.
    fn start_of(&self, end: i64) -> i64 {
        window_start(self.kind, end)
    }

    /// The row a fired entry emits: the grouping columns in GROUP BY order, then the calls'
    /// results.
    fn output(&self, entry: usize, end: i64) -> Vec<Value> {
        let (key, accs) = self.arena.row(entry).split_at(self.group.len());
        let mut row = Vec::with_capacity(self.layout.len() + self.calls.len());
        for slot in &self.layout {
            row.push(match *slot {
                Slot::Key(i) => key[i].clone(),
                Slot::Start => Value::Timestamp(self.start_of(end)),
                Slot::End => Value::Timestamp(end),
                Slot::Time => Value::Timestamp(end - 1),
            });
        }
        row.extend_from_slice(&accs[..self.calls.len()]);
        row
    }

    /// `entries` (of one window) in the order they are emitted, into `self.sorted`: by their
    /// key's values, ascending, nulls first (keys within one window are unique). A key of
    /// one integer or timestamp column, the common case, is sorted as numbers.
    fn sort_by_key(&mut self, entries: &[u32]) {
        let arena = &self.arena;
        self.sorted.clear();
        if self.group.len() == 1 {
            // The one null key, if any, goes first; the numbers' order is kept by flipping
            // the sign bit.
            self.numbered.clear();
            let mut null = None;
            let all_numbers = entries.iter().all(|&e| {
                let n = match arena.key(e as usize)[0] {
                    Value::Null => {
                        null = Some(e);
                        return true;
                    }
                    Value::Int64(n) | Value::Timestamp(n) => n,
                    Value::Int32(n) => i64::from(n),
                    _ => return false,
                };
                self.numbered.push((n.cast_unsigned() ^ (1 << 63), e));
                true
            });
            if all_numbers {
                self.numbered.sort_unstable_by_key(|&(n, _)| n);
                self.sorted.extend(null);
                self.sorted.extend(self.numbered.iter().map(|&(_, e)| e));
                return;
            }
        }
        self.sorted.extend_from_slice(entries);
        self.sorted
            .sort_unstable_by(|&a, &b| cmp_rows(arena.key(a as usize), arena.key(b as usize)));
    }

    /// The (key, window) pairs still open, and the watermark at which the first of them
    /// fires (its end minus 1 ms).
    pub(crate) fn open(&self) -> Option<(usize, i64)> {
        let (&end, _) = self.panes.first_key_value()?;
        Some((self.arena.held(), end - 1))
    }

    /// The live state as (key values with the window end, results) pairs sorted by key.
    pub(crate) fn snapshot(&self) -> Vec<(Vec<Value>, Vec<Value>)> {
        let (keys, results) = (self.group.len(), self.calls.len());
        let mut out: Vec<(Vec<Value>, Vec<Value>)> = self
            .panes
            .iter()
            .flat_map(|(&end, pane)| {
                pane.entries.iter().map(move |&e| {
                    let row = self.arena.row(e as usize);
                    let mut key = row[..keys].to_vec();
                    key.push(Value::Timestamp(end));
                    (key, row[keys..keys + results].to_vec())
                })
            })
            .collect();
        out.sort_by(|a, b| cmp_rows(&a.0, &b.0));
        out
    }
}

impl Operator for WindowAggregate {
    fn on_change<'a>(
        &'a mut self,
        rec: Rec<'a>,
        _time: Option<i64>,
        out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        let t = row_time(&rec, self.time, &self.time_name)?;
        let row: &[Value] = &rec.row;
        if let WindowKind::Tumble { size } = self.kind {
            // One window: the common case, without the list of ends.
            let size = millis(size);
            let end = floor(t, size).saturating_add(size);
            if self.fired(end) {
                out.dropped_late();
                return Ok(None);
            }
            self.add(end, row)?;
            return Ok(None);
        }
        self.assign(t);
        let last = *self
            .ends
            .last()
            .expect("a row belongs to at least one window");
        if self.fired(last) {
            out.dropped_late();
            return Ok(None);
        }
        for i in 0..self.ends.len() {
            let end = self.ends[i];
            if !self.fired(end) {
                self.add(end, row)?;
            }
        }
        Ok(None)
    }

    /// Fires every window whose end minus 1 ms the watermark has reached, in end order, and
    /// within one end by key; frees their state.
    fn on_watermark(&mut self, watermark: i64, out: &mut Out<'static>) -> Result<(), Fault> {
        self.watermark = self.watermark.max(watermark);
        while let Some((&end, _)) = self.panes.first_key_value() {
            if !self.fired(end) {
                break;
            }
            let mut pane = self.panes.pop_first().map(|(_, p)| p).unwrap_or_default();
            self.sort_by_key(&pane.entries);
            out.reserve(self.sorted.len());
            for &e in &self.sorted {
                let row = self.output(e as usize, end);
                out.emit(Rec::insert(Cow::Owned(row)), Some(end - 1));
            }
            // Released last first: a window's keys mostly took the arena's entries in
            // order, so the next window's keys take them in order again, writing memory
            // next to what they wrote before.
            for &e in pane.entries.iter().rev() {
                self.arena.release(e as usize);
                self.calls.forget(e);
            }
            pane.entries.clear();
            pane.index.clear();
            self.spare.push(pane);
        }
        Ok(())
    }
}
