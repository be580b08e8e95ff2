//! A regular join (docs/joins.md): each side's rows kept per join key, each change of one
//! side matched against the other side's rows, with the emission rules of Flink's streaming
//! join operator:
//!
//! - A row arriving on a side that pads (the left of a LEFT JOIN): with no match it is
//!   inserted padded with nulls; with matches, each match is inserted joined.
//! - A row arriving on a side that does not pad: each match is inserted joined; a match on
//!   the other side that pads and had no match yet first has its padded row deleted.
//! - A row retracted (a delete) is taken out of its side, and each joined row it made is
//!   deleted (a padded one when it had no match); a match on a padding side that loses its
//!   last match is inserted padded again.
//!
//! Rows whose join key holds a null never match. One change may produce several records
//! (a fan-out): they come in one canonical order, the other side's rows in the order they
//! arrived, and for each, the record that retracts a padded row before the joined row.
//! Flink orders them by its state backend, and 2.0 and 2.2 differently; the differential
//! test compares one change's records as a multiset (docs/joins.md, "Order").
//!
//! An update is taken apart as Flink takes it: its old row retracted, then its new row
//! added. The joined rows Flink emits with the input's kind are marked as halves of an
//! update (`-U`, `+U`): an aggregate folds them as the deletes and inserts they are, and
//! the target's changelog pairs the two halves of one key into an update
//! (docs/joins.md, "Tables that change").

use std::collections::HashMap;

use streamform_ir::{Expr, JoinKind, Node, Value};

use crate::Op;
use crate::eval::{CExpr, resolve};
use crate::keyed::{KeyValues as Key, same_key_value};
use crate::operator::{Fault, InputShape, Operator, Out, Rec};

/// One stored row of a side: how many copies of it are kept, (on a side that pads) how
/// many rows of the other side it matches, and the latest event time it arrived at (with
/// retention).
#[derive(Debug)]
struct Stored {
    row: Vec<Value>,
    count: u64,
    matches: u64,
    time: Option<i64>,
}

/// One side's rows per join key (compared as grouping keys are: a float by its bits, as
/// Flink compares binary rows), each key's rows in the order they arrived.
#[derive(Default)]
struct Side {
    rows: HashMap<Key, Vec<Stored>, rustc_hash::FxBuildHasher>,
}

/// The joined row of `row` (from side `s`) and `other` (from the other side, nulls for
/// `None`), left columns first; `widths` are the sides' widths.
pub(crate) fn joined(
    widths: [usize; 2],
    s: usize,
    row: &[Value],
    other: Option<&[Value]>,
) -> Vec<Value> {
    let mut out = Vec::with_capacity(widths[0] + widths[1]);
    let other_side = |out: &mut Vec<Value>| match other {
        Some(o) => out.extend_from_slice(o),
        None => out.resize(out.len() + widths[1 - s], Value::Null),
    };
    if s == 0 {
        out.extend_from_slice(row);
        other_side(&mut out);
    } else {
        other_side(&mut out);
        out.extend_from_slice(row);
    }
    out
}

/// A join's schema must be its inputs' columns, as [`streamform_ir::join_schema`] names
/// them.
pub(crate) fn check_schema(
    node: &Node,
    kind: JoinKind,
    left: &[streamform_ir::Field],
    right: &[streamform_ir::Field],
) -> Result<(), Fault> {
    let expected = streamform_ir::join_schema(kind, left, right);
    let same = expected.len() == node.schema.len()
        && expected
            .iter()
            .zip(&node.schema)
            .all(|(a, b)| a.name == b.name && a.ty == b.ty);
    if same {
        Ok(())
    } else {
        Err(Fault::plain(format!(
            "node `{}`: its schema {} is not its inputs' columns {}",
            node.id,
            streamform_ir::identity::schema_fingerprint(&node.schema),
            streamform_ir::identity::schema_fingerprint(&expected)
        )))
    }
}

/// Where `row` is among `rows`, by value.
fn position(rows: &[Stored], row: &[Value]) -> Option<usize> {
    rows.iter()
        .position(|r| r.row.iter().zip(row).all(|(a, b)| same_key_value(a, b)))
}

pub(crate) struct Join {
    kind: JoinKind,
    /// Each side's join key columns, in ON's order.
    keys: [Vec<usize>; 2],
    widths: [usize; 2],
    /// The rest of ON, over the joined row.
    filter: Option<(CExpr, String)>,
    sides: [Side; 2],
    /// The declared retention in milliseconds: a row is dropped once the watermark reaches
    /// the latest time it arrived at plus this, without a record, as Flink's state TTL
    /// drops it (docs/joins.md, "Retention").
    retention: Option<i64>,
    /// The earliest time a stored row expires at; `i64::MAX` when none can.
    next_expiry: i64,
    /// The joined row a filter is tested on, reused from candidate to candidate.
    scratch: Vec<Value>,
    /// Per side, the columns of its rows (by position in the row) the filter reads.
    read: [Vec<usize>; 2],
}

impl Join {
    /// The join `node` reads `inputs` (left, then right): its key columns resolved on each,
    /// its filter compiled against its own schema.
    pub(crate) fn build(
        node: &Node,
        kind: JoinKind,
        on: &[(String, String)],
        filter: Option<&Expr>,
        inputs: &[InputShape<'_>],
    ) -> Result<Join, Fault> {
        let [left, right] = inputs else {
            return Err(Fault::plain(format!(
                "node `{}`: a join reads two inputs, not {}",
                node.id,
                inputs.len()
            )));
        };
        check_schema(node, kind, left.schema, right.schema)?;
        let mut keys = [Vec::new(), Vec::new()];
        for (l, r) in on {
            let li = resolve(left.schema, l).map_err(|m| Fault::at(l, m))?;
            let ri = resolve(right.schema, r).map_err(|m| Fault::at(r, m))?;
            if left.schema[li].ty != right.schema[ri].ty {
                return Err(Fault::at(
                    l,
                    format!(
                        "the join compares `{l}` ({}) with `{r}` ({}), of another type",
                        left.schema[li].ty, right.schema[ri].ty
                    ),
                ));
            }
            keys[0].push(li);
            keys[1].push(ri);
        }
        if keys[0].is_empty() {
            return Err(Fault::plain(format!(
                "node `{}`: a join needs at least one pair of equal columns",
                node.id
            )));
        }
        let mut read = [Vec::new(), Vec::new()];
        if let Some(f) = filter {
            for name in f.columns() {
                if let Some(at) = node.schema.iter().position(|c| c.name == name) {
                    let (side, column) = if at < left.schema.len() {
                        (0, at)
                    } else {
                        (1, at - left.schema.len())
                    };
                    if !read[side].contains(&column) {
                        read[side].push(column);
                    }
                }
            }
        }
        let filter = match filter {
            Some(f) => {
                let text = f.to_string();
                let compiled = CExpr::compile(f, &node.schema).map_err(|m| Fault::at(&text, m))?;
                Some((compiled, text))
            }
            None => None,
        };
        let retention = match &node.state {
            streamform_ir::State::Keyed(k) => match k.retention {
                streamform_ir::Retention::After(ms) => Some(i64::try_from(ms).unwrap_or(i64::MAX)),
                streamform_ir::Retention::Unbounded => None,
            },
            streamform_ir::State::Stateless => None,
        };
        Ok(Join {
            kind,
            keys,
            widths: [left.schema.len(), right.schema.len()],
            filter,
            sides: [Side::default(), Side::default()],
            retention,
            next_expiry: i64::MAX,
            scratch: Vec::new(),
            read,
        })
    }

    /// Whether side `s` (0 left, 1 right) keeps its unmatched rows, padded.
    fn pads(&self, s: usize) -> bool {
        if s == 0 {
            self.kind.left_outer()
        } else {
            self.kind.right_outer()
        }
    }

    /// The key of `row` on side `s`, or `None` when a key column is null (it matches
    /// nothing).
    fn key(&self, s: usize, row: &[Value]) -> (Key, bool) {
        let values: Vec<Value> = self.keys[s].iter().map(|&i| row[i].clone()).collect();
        let null = values.iter().any(Value::is_null);
        (Key(values), null)
    }

    /// The positions of the other side's rows (under `key`) that `row` from side `s`
    /// matches, in arrival order.
    ///
    /// The filter, when there is one, is tested on each candidate's joined row, built in
    /// one reused buffer: `row`'s columns stay in place and only the other side's are
    /// written for each candidate.
    fn find_matches(&mut self, s: usize, key: &Key, row: &[Value]) -> Result<Vec<usize>, Fault> {
        let mut out = Vec::new();
        let Some(rows) = self.sides[1 - s].rows.get(key) else {
            return Ok(out);
        };
        let Some((filter, text)) = &self.filter else {
            return Ok((0..rows.len()).collect());
        };
        let scratch = &mut self.scratch;
        scratch.clear();
        let own = if s == 0 { 0 } else { self.widths[0] };
        let other_at = if s == 0 { self.widths[0] } else { 0 };
        scratch.resize(self.widths[0] + self.widths[1], Value::Null);
        for &c in &self.read[s] {
            scratch[own + c] = row[c].clone();
        }
        for (i, stored) in rows.iter().enumerate() {
            // Only the columns the filter reads; the others stay null.
            for &c in &self.read[1 - s] {
                scratch[other_at + c].clone_from(&stored.row[c]);
            }
            if filter.test(scratch).map_err(|e| Fault::eval(text, &e))? {
                out.push(i);
            }
        }
        Ok(out)
    }

    /// The key of `row` (from side `s`) and the positions of the other side's rows it
    /// matches; none when its key holds a null.
    fn lookup(&mut self, s: usize, row: &[Value]) -> Result<(Key, Vec<usize>), Fault> {
        let (key, null) = self.key(s, row);
        let found = if null {
            Vec::new()
        } else {
            self.find_matches(s, &key, row)?
        };
        Ok((key, found))
    }

    /// Whether the join drops rows by the watermark (it declares a retention).
    pub(crate) fn expires(&self) -> bool {
        self.retention.is_some()
    }

    /// Drops every stored row whose latest arrival plus the retention the watermark has
    /// reached; nothing is emitted for them. The state is walked only when a row is due.
    pub(crate) fn expire(&mut self, watermark: i64) {
        let Some(retention) = self.retention else {
            return;
        };
        if watermark < self.next_expiry {
            return;
        }
        let mut next = i64::MAX;
        for side in &mut self.sides {
            side.rows.retain(|_, rows| {
                rows.retain(|r| {
                    let at = r.time.map_or(i64::MAX, |t| t.saturating_add(retention));
                    if at > watermark {
                        next = next.min(at);
                    }
                    at > watermark
                });
                !rows.is_empty()
            });
        }
        self.next_expiry = next;
    }

    /// A row added on side `s` at event time `time`: stored, and its records emitted. With
    /// `half`, the row is the new half of an update, and so is each joined row it makes
    /// that Flink emits with the input's kind (`+U`): all but those of an outer join.
    fn add(
        &mut self,
        s: usize,
        row: &[Value],
        time: Option<i64>,
        half: bool,
        out: &mut Vec<(Op, Vec<Value>, bool)>,
    ) -> Result<(), Fault> {
        let (key, found) = self.lookup(s, row)?;
        let (widths, other_pads) = (self.widths, self.pads(1 - s));
        let joined_half = half && !other_pads;
        let mut matched = 0;
        if let Some(others) = self.sides[1 - s].rows.get_mut(&key) {
            for &m in &found {
                let stored = &mut others[m];
                if other_pads && stored.matches == 0 {
                    out.push((Op::Delete, joined(widths, 1 - s, &stored.row, None), false));
                }
                for _ in 0..stored.count {
                    out.push((
                        Op::Insert,
                        joined(widths, s, row, Some(&stored.row)),
                        joined_half,
                    ));
                }
                if other_pads {
                    stored.matches += 1;
                }
                matched += stored.count;
            }
        }
        if self.pads(s) && found.is_empty() {
            out.push((Op::Insert, joined(widths, s, row, None), false));
        }
        if let (Some(retention), Some(t)) = (self.retention, time) {
            self.next_expiry = self.next_expiry.min(t.saturating_add(retention));
        }
        let rows = self.sides[s].rows.entry(key).or_default();
        match position(rows, row) {
            Some(at) => {
                rows[at].count += 1;
                rows[at].time = rows[at].time.max(time);
            }
            None => rows.push(Stored {
                row: row.to_vec(),
                count: 1,
                matches: matched,
                time,
            }),
        }
        Ok(())
    }

    /// A row retracted on side `s`: taken out, and its records emitted. With `half`, the
    /// row is the old half of an update, and so is each joined row it takes back that Flink
    /// emits with the input's kind (`-U`): all but those of a side that pads.
    fn retract(
        &mut self,
        s: usize,
        row: &[Value],
        half: bool,
        out: &mut Vec<(Op, Vec<Value>, bool)>,
    ) -> Result<(), Fault> {
        let (key, found) = self.lookup(s, row)?;
        if let Some(rows) = self.sides[s].rows.get_mut(&key)
            && let Some(at) = position(rows, row)
        {
            rows[at].count -= 1;
            if rows[at].count == 0 {
                rows.remove(at);
            }
            if rows.is_empty() {
                self.sides[s].rows.remove(&key);
            }
        }
        let (widths, other_pads) = (self.widths, self.pads(1 - s));
        if self.pads(s) && found.is_empty() {
            out.push((Op::Delete, joined(widths, s, row, None), false));
        }
        let joined_half = half && !self.pads(s);
        if let Some(others) = self.sides[1 - s].rows.get_mut(&key) {
            for &m in &found {
                let stored = &mut others[m];
                for _ in 0..stored.count {
                    out.push((
                        Op::Delete,
                        joined(widths, s, row, Some(&stored.row)),
                        joined_half,
                    ));
                }
                if other_pads {
                    if stored.matches == 1 {
                        out.push((Op::Insert, joined(widths, 1 - s, &stored.row, None), false));
                    }
                    stored.matches = stored.matches.saturating_sub(1);
                }
            }
        }
        Ok(())
    }

    /// The live state of each side as (join key, row followed by its count and matches)
    /// pairs, left side first, each in key order.
    pub(crate) fn snapshot(&self) -> Vec<(Vec<Value>, Vec<Value>)> {
        let mut out = Vec::new();
        for side in &self.sides {
            let mut keys: Vec<&Key> = side.rows.keys().collect();
            keys.sort_by(|a, b| crate::operator::cmp_rows(&a.0, &b.0));
            for k in keys {
                for stored in &side.rows[k] {
                    let mut v = stored.row.clone();
                    v.push(Value::Int64(stored.count as i64));
                    v.push(Value::Int64(stored.matches as i64));
                    out.push((k.0.clone(), v));
                }
            }
        }
        out
    }
}

impl Operator for Join {
    /// A change without a port is the left side's.
    fn on_change<'a>(
        &'a mut self,
        rec: Rec<'a>,
        time: Option<i64>,
        out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        self.on_input(0, rec, time, out)
    }

    fn on_watermark(&mut self, watermark: i64, _out: &mut Out<'static>) -> Result<(), Fault> {
        self.expire(watermark);
        Ok(())
    }

    /// One change from side `port` (0 left, 1 right): its records, the first returned and
    /// the rest in `out`, in the canonical order.
    fn on_input<'a>(
        &'a mut self,
        port: u8,
        rec: Rec<'a>,
        time: Option<i64>,
        out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        let s = usize::from(port.min(1));
        let mut records = Vec::new();
        match rec.op {
            Op::Insert => self.add(s, &rec.row, time, rec.half, &mut records)?,
            Op::Delete => self.retract(s, &rec.row, rec.half, &mut records)?,
            // Flink takes an update apart: the old row is retracted, with its records,
            // and then the new row added, with its own (docs/joins.md, "Tables that
            // change").
            Op::Update => {
                let before = rec
                    .before
                    .as_deref()
                    .ok_or_else(crate::operator::update_without_before)?;
                self.retract(s, before, true, &mut records)?;
                self.add(s, &rec.row, time, true, &mut records)?;
            }
        }
        let mut records = records.into_iter();
        let first = records.next().map(|(op, row, half)| Rec {
            op,
            row: row.into(),
            before: None,
            half,
        });
        out.reserve(records.len());
        for (op, row, half) in records {
            out.emit(
                Rec {
                    op,
                    row: row.into(),
                    before: None,
                    half,
                },
                time,
            );
        }
        Ok(first)
    }
}
