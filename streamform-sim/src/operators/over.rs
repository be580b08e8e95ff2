//! OVER aggregation (docs/over.md): each row of an append input, once the watermark passes
//! its time, emitted with the calls' results over its frame, as Flink's event-time OVER
//! functions compute them:
//!
//! - a row waits, per partition, under its time; the watermark makes the times at or
//!   before it final, which are processed in time order, the rows of one time in arrival
//!   order;
//! - ROWS: each row is added to the accumulators and emitted with their results, one by
//!   one, so rows of equal time get different results; with `n PRECEDING`, the row
//!   `n + 1` places back is taken out first;
//! - RANGE: every row of one time is added, then each is emitted with the same results;
//!   with `d PRECEDING`, the rows more than `d` before that time are taken out first;
//! - a frame back to the first row drops a row whose time is at or behind the watermark
//!   when it arrives; a bounded frame drops a row at or before the last time its
//!   partition emitted (Flink keeps that time per partition, from 0), so a row behind the
//!   watermark but after it is still emitted, at the next watermark;
//! - a RANGE frame forgets a partition once the watermark passes its last row's time by
//!   one and a half times the frame (Flink's cleanup timer), its last time included: a row
//!   arriving after that is not late for it.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use streamform_ir::{AggCall, FrameUnit, Node, OverFrame, State, Value};

use super::accumulate::Calls;
use crate::eval::resolve;
use crate::keyed::KeyValues;
use crate::operator::{Fault, InputShape, Operator, Out, Rec, appended_time, cmp_rows};

/// A row, owned.
type Row = Vec<Value>;

/// One partition.
struct Part {
    key: Row,
    /// The calls' accumulators.
    accs: Vec<Value>,
    /// The rows waiting for the watermark, by time, each time's in arrival order.
    pending: BTreeMap<i64, Vec<Row>>,
    /// A bounded frame's rows, oldest first, with their times.
    frame: VecDeque<(i64, Row)>,
    /// The last time the partition processed (Flink's `lastTriggeringTs`), which a
    /// bounded frame drops rows at or before; 0 at first, as Flink starts it.
    last: i64,
    /// A RANGE frame's cleanup time (Flink's `cleanupTsState`).
    cleanup: Option<i64>,
}

pub(crate) struct Over {
    partition: Vec<usize>,
    time: usize,
    time_name: String,
    unit: FrameUnit,
    /// How far back a bounded frame reaches: rows (ROWS) or milliseconds (RANGE).
    preceding: Option<i64>,
    calls: Calls,
    fresh: Vec<Value>,
    parts: Vec<Part>,
    index: HashMap<KeyValues, u32>,
    /// Every partition's timers, as Flink's timer service holds them: (time, partition),
    /// one per distinct pair, fired in time order.
    timers: BTreeSet<(i64, u32)>,
    /// The watermark last received; `i64::MIN` before any.
    watermark: i64,
}

impl Over {
    pub(crate) fn build(
        node: &Node,
        partition_by: &[String],
        frame: &OverFrame,
        calls: &[AggCall],
        input: &InputShape<'_>,
    ) -> Result<Over, Fault> {
        let id = &node.id;
        input.appends(node, "an OVER aggregation")?;
        let State::Keyed(keyed) = &node.state else {
            return Err(Fault::plain(format!(
                "node `{id}`: an Over node must have keyed state"
            )));
        };
        if *keyed != streamform_ir::KeyedState::over(partition_by, frame, calls) {
            return Err(Fault::plain(format!(
                "node `{id}`: its state must be keyed by [{}] over the frame {frame}, with one accumulator per call",
                partition_by.join(", ")
            )));
        }
        let width = input.schema.len();
        let columns_match = node.schema.len() == width + calls.len()
            && node
                .schema
                .iter()
                .zip(input.schema)
                .all(|(a, b)| a.name == b.name && a.ty == b.ty);
        if !columns_match {
            return Err(Fault::plain(format!(
                "node `{id}`: an Over node's columns are its input's, then one per call"
            )));
        }
        let calls = Calls::build(id, calls, keyed, &node.schema[width..], input.schema)?;
        let time = resolve(input.schema, &frame.time).map_err(|m| Fault::at(&frame.time, m))?;
        if input.schema[time].ty != streamform_ir::DataType::Timestamp {
            return Err(Fault::at(
                &frame.time,
                format!("node `{id}`: an OVER frame is ordered by a timestamp"),
            ));
        }
        let partition = partition_by
            .iter()
            .map(|c| resolve(input.schema, c).map_err(|m| Fault::at(c, m)))
            .collect::<Result<_, _>>()?;
        let mut fresh = Vec::new();
        calls.fresh(&mut fresh);
        Ok(Over {
            partition,
            time,
            time_name: frame.time.clone(),
            unit: frame.unit,
            preceding: frame
                .preceding
                .map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
            calls,
            fresh,
            parts: Vec::new(),
            index: HashMap::new(),
            timers: BTreeSet::new(),
            watermark: i64::MIN,
        })
    }

    /// The rows waiting for the watermark, with the watermark the first of them is emitted
    /// at; `None` when none waits.
    pub(crate) fn waiting(&self) -> Option<(usize, i64)> {
        let (count, earliest) = self
            .parts
            .iter()
            .flat_map(|p| p.pending.iter())
            .fold((0, i64::MAX), |(n, e), (t, rows)| {
                (n + rows.len(), e.min(*t))
            });
        (count > 0).then(|| (count, earliest.max(self.watermark.saturating_add(1))))
    }

    /// Each partition's key and its calls' results, sorted by key.
    pub(crate) fn snapshot(&self) -> Vec<(Vec<Value>, Vec<Value>)> {
        let n = self.calls.len();
        let mut parts: Vec<(Vec<Value>, Vec<Value>)> = self
            .parts
            .iter()
            .map(|p| (p.key.clone(), p.accs[..n].to_vec()))
            .collect();
        parts.sort_by(|a, b| cmp_rows(&a.0, &b.0));
        parts
    }

    /// The partition of `row`, created when new.
    fn part(&mut self, row: &[Value]) -> u32 {
        let key = KeyValues(self.partition.iter().map(|&i| row[i].clone()).collect());
        if let Some(&p) = self.index.get(&key) {
            return p;
        }
        let p = u32::try_from(self.parts.len()).unwrap_or(u32::MAX);
        self.parts.push(Part {
            key: key.0.clone(),
            accs: self.fresh.clone(),
            pending: BTreeMap::new(),
            frame: VecDeque::new(),
            last: 0,
            cleanup: None,
        });
        self.index.insert(key, p);
        p
    }

    /// Flink's timer for partition `p` at `t`: the rows waiting at `t` processed, or (a
    /// RANGE frame's cleanup) the partition forgotten.
    fn fire(&mut self, t: i64, p: u32, out: &mut Out<'static>) -> Result<(), Fault> {
        let part = &mut self.parts[p as usize];
        let bounded = self.preceding.is_some();
        if part.cleanup.is_some_and(|c| c <= t) {
            part.pending.clear();
            part.frame.clear();
            part.accs.clone_from(&self.fresh);
            part.last = 0;
            part.cleanup = None;
            self.calls.forget(p);
            return Ok(());
        }
        let Some(rows) = part.pending.remove(&t) else {
            if bounded {
                part.last = t;
            }
            return Ok(());
        };
        let n = self.calls.len();
        match (self.unit, self.preceding) {
            (FrameUnit::Rows, None) => {
                for row in rows {
                    self.calls.fold(&mut part.accs, &row, p)?;
                    out.emit(
                        Rec::insert(Cow::Owned(joined(row, &part.accs[..n]))),
                        Some(t),
                    );
                }
            }
            (FrameUnit::Range, None) => {
                for row in &rows {
                    self.calls.fold(&mut part.accs, row, p)?;
                }
                for row in rows {
                    out.emit(
                        Rec::insert(Cow::Owned(joined(row, &part.accs[..n]))),
                        Some(t),
                    );
                }
            }
            (FrameUnit::Rows, Some(preceding)) => {
                for row in rows {
                    if i64::try_from(part.frame.len()).unwrap_or(i64::MAX) > preceding
                        && let Some((_, old)) = part.frame.pop_front()
                    {
                        self.calls.unfold(&mut part.accs, &old, p)?;
                    }
                    self.calls.fold(&mut part.accs, &row, p)?;
                    out.emit(
                        Rec::insert(Cow::Owned(joined(row.clone(), &part.accs[..n]))),
                        Some(t),
                    );
                    part.frame.push_back((t, row));
                }
                part.last = t;
            }
            (FrameUnit::Range, Some(preceding)) => {
                while part
                    .frame
                    .front()
                    .is_some_and(|(at, _)| t.saturating_sub(*at) > preceding)
                {
                    if let Some((_, old)) = part.frame.pop_front() {
                        self.calls.unfold(&mut part.accs, &old, p)?;
                    }
                }
                for row in &rows {
                    self.calls.fold(&mut part.accs, row, p)?;
                }
                for row in rows {
                    out.emit(
                        Rec::insert(Cow::Owned(joined(row.clone(), &part.accs[..n]))),
                        Some(t),
                    );
                    part.frame.push_back((t, row));
                }
                part.last = t;
            }
        }
        Ok(())
    }
}

/// `row` followed by the calls' results.
fn joined(mut row: Row, results: &[Value]) -> Row {
    row.extend_from_slice(results);
    row
}

impl Operator for Over {
    fn on_change<'a>(
        &'a mut self,
        rec: Rec<'a>,
        _time: Option<i64>,
        out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        let t = appended_time(&rec, self.time, &self.time_name, "an OVER aggregation")?;
        let p = self.part(&rec.row);
        let part = &mut self.parts[p as usize];
        let late = match self.preceding {
            Some(_) => t <= part.last,
            None => t <= self.watermark,
        };
        if late {
            out.dropped_late();
            return Ok(None);
        }
        let rows = part.pending.entry(t).or_default();
        if rows.is_empty() {
            self.timers.insert((t, p));
        }
        rows.push(rec.row.into_owned());
        if let (FrameUnit::Range, Some(preceding)) = (self.unit, self.preceding) {
            // Flink's cleanup timer: at the latest row's time plus one and a half frames
            // (the product truncated, as Flink's `(long) (offset * 1.5)`), moved only once
            // a row's time plus the frame passes it.
            let least = t.saturating_add(preceding).saturating_add(1);
            if part.cleanup.is_none_or(|c| c < least) {
                #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
                let half_more = (preceding as f64 * 1.5) as i64;
                let at = t.saturating_add(half_more).saturating_add(1);
                part.cleanup = Some(at);
                self.timers.insert((at, p));
            }
        }
        Ok(None)
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut Out<'static>) -> Result<(), Fault> {
        self.watermark = self.watermark.max(watermark);
        while let Some(&(t, p)) = self.timers.first() {
            if t > self.watermark {
                break;
            }
            self.timers.pop_first();
            self.fire(t, p, out)?;
        }
        Ok(())
    }
}
