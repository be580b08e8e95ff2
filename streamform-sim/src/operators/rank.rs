//! `ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)` filtered to the first rows
//! (docs/ranking.md): per partition, the rows first by the ordering, kept and emitted as
//! Flink's rank operators keep and emit them, change by change. Which operator Flink runs
//! depends on the input (the plan's [`RankStrategy`]):
//!
//! - over an append input, only the rows that can still rank are kept; a new row that
//!   enters the top pushes the last one out (`delete` it, `insert` the new one) or, with
//!   the row number read, moves every row after it one place down (an update per place);
//!   with a top of one, a better row replaces the first as an update of its partition;
//! - over an updating input, every row is kept, counted per ordering value, and a row
//!   that leaves the top is replaced by the next one.
//!
//! Rows that tie on the ordering keep their arrival order, and a row taken back is found
//! by its whole value. An update from the input is taken back first, then added: Flink
//! receives it as the two messages `-U` and `+U`.
//!
//! A top of one ordered by the time attribute alone is Flink's deduplication instead:
//! keeping the last row, a row whose time is the same or later replaces the kept one (an
//! update); keeping the first, the row with the earliest time waits until the watermark
//! passes it, is inserted then, once, and a row behind the watermark is dropped as late
//! (Flink 2.2's insert-only deduplication, docs/ranking.md).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;

use smallvec::SmallVec;
use streamform_ir::{Node, RankStrategy, Ranking, State, Value};

use crate::Op;
use crate::eval::resolve;
use crate::keyed::{KeyValues, same_key_value};
use crate::operator::{Fault, InputShape, Operator, Out, Rec, update_without_before};

/// A row, owned.
type Row = Vec<Value>;

/// The rows of one partition with one value of the ordering, in arrival order.
struct Group {
    key: Row,
    rows: Vec<Row>,
}

/// One partition's rows, grouped by the ordering's values, best first.
#[derive(Default)]
struct Partition {
    groups: Vec<Group>,
    /// How many rows the groups hold (Flink's `currentTopNum`).
    len: usize,
}

/// Which of Flink's functions the rank follows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Function {
    /// `AppendOnlyTopNFunction`.
    AppendTopN,
    /// `FastTop1Function` over an append input.
    Top1,
    /// `RetractableTopNFunction`.
    Retractable,
    /// `RowTimeDeduplicateFunction` keeping the last row: by the time at this column.
    LastByTime(usize),
    /// `RowTimeDeduplicateKeepFirstRowFunction`: by the time at this column.
    FirstByTime(usize),
}

/// One partition of a deduplication keeping the first row.
#[derive(Default)]
struct First {
    /// The earliest row so far, waiting for the watermark, with its time.
    waiting: Option<(i64, Row)>,
    /// Whether the partition's row was emitted: nothing more is.
    emitted: bool,
}

pub(crate) struct Rank {
    partition: Vec<usize>,
    /// (column index, descending) of the ordering.
    order: Vec<(usize, bool)>,
    top: usize,
    function: Function,
    /// Whether the row number is emitted after the row's columns.
    number: bool,
    parts: HashMap<KeyValues, Partition>,
    /// A deduplication's partitions keeping the first row.
    first: HashMap<KeyValues, First>,
    /// The watermark last received (a deduplication keeping the first row drops rows
    /// behind it).
    watermark: i64,
}

/// What one change makes the rank emit, in order.
type Emitted = SmallVec<[Rec<'static>; 2]>;

impl Rank {
    pub(crate) fn build(
        node: &Node,
        partition_by: &[String],
        ranking: &Ranking,
        number: Option<&str>,
        input: &InputShape<'_>,
    ) -> Result<Rank, Fault> {
        check_node(node, partition_by, ranking, number, input)?;
        let updating = input.changelog.is_updating();
        let function = match (ranking.strategy, updating, ranking.order.as_slice()) {
            (RankStrategy::Deduplicate, false, [key]) if ranking.top == 1 && number.is_none() => {
                let at =
                    resolve(input.schema, &key.column).map_err(|m| Fault::at(&key.column, m))?;
                if input.schema[at].ty != streamform_ir::DataType::Timestamp {
                    return Err(Fault::at(
                        &key.column,
                        format!("node `{}`: a deduplication orders by a timestamp", node.id),
                    ));
                }
                if key.descending {
                    Function::LastByTime(at)
                } else {
                    Function::FirstByTime(at)
                }
            }
            (RankStrategy::Append, false, _) if ranking.top == 1 => Function::Top1,
            (RankStrategy::Append, false, _) => Function::AppendTopN,
            (RankStrategy::Retract, true, _) => Function::Retractable,
            (strategy, _, _) => {
                return Err(Fault::plain(format!(
                    "node `{}`: a rank of strategy {} cannot read an input that is {}",
                    node.id,
                    strategy.name(),
                    input.changelog.title()
                )));
            }
        };
        if ranking.top == 0 || ranking.order.is_empty() {
            return Err(Fault::plain(format!(
                "node `{}`: a Rank keeps at least one row, ordered by at least one column",
                node.id
            )));
        }
        let cols = |names: &mut dyn Iterator<Item = &String>| -> Result<Vec<usize>, Fault> {
            names
                .map(|c| resolve(input.schema, c).map_err(|m| Fault::at(c, m)))
                .collect()
        };
        let partition = cols(&mut partition_by.iter())?;
        let order_cols = cols(&mut ranking.order.iter().map(|k| &k.column))?;
        Ok(Rank {
            partition,
            order: order_cols
                .into_iter()
                .zip(&ranking.order)
                .map(|(i, k)| (i, k.descending))
                .collect(),
            top: usize::try_from(ranking.top).unwrap_or(usize::MAX),
            function,
            number: number.is_some(),
            parts: HashMap::new(),
            first: HashMap::new(),
            watermark: i64::MIN,
        })
    }

    /// Whether the rank does anything on a watermark: a deduplication keeping the first row
    /// emits it then.
    pub(crate) fn watches_watermark(&self) -> bool {
        matches!(self.function, Function::FirstByTime(_))
    }

    /// The rows waiting for the watermark (a deduplication keeping the first row), with the
    /// watermark the first of them is emitted at; `None` when none waits.
    pub(crate) fn waiting(&self) -> Option<(usize, i64)> {
        let times = self
            .first
            .values()
            .filter_map(|f| f.waiting.as_ref().map(|(t, _)| *t));
        let (count, earliest) = times.fold((0, i64::MAX), |(n, e), t| (n + 1, e.min(t)));
        (count > 0).then(|| (count, earliest.max(self.watermark.saturating_add(1))))
    }

    /// `LastByTime`: a row whose time is the same or later than the kept row's replaces it.
    fn keep_last(&mut self, part: KeyValues, at: usize, row: Row, out: &mut Emitted) {
        let mut p = self.parts.remove(&part).unwrap_or_default();
        match p.groups.first_mut() {
            None => {
                out.push(Rec::insert(Cow::Owned(row.clone())));
                p.len = 1;
                p.groups.push(Group {
                    key: Vec::new(),
                    rows: vec![row],
                });
            }
            Some(kept) => {
                if kept.rows[0][at].sort_cmp(&row[at]).is_le() {
                    let before = std::mem::replace(&mut kept.rows[0], row);
                    out.push(Rec {
                        op: Op::Update,
                        row: Cow::Owned(kept.rows[0].clone()),
                        before: Some(Cow::Owned(before)),
                        half: false,
                    });
                }
            }
        }
        self.parts.insert(part, p);
    }

    /// `FirstByTime`: the earliest row waits for the watermark; a row behind the watermark
    /// is late. Whether the row was dropped as late.
    fn keep_first(&mut self, part: KeyValues, at: usize, row: Row) -> bool {
        let Value::Timestamp(t) = row[at] else {
            // A row without a time: Flink's time attribute is never null.
            return true;
        };
        if t < self.watermark {
            return true;
        }
        let f = self.first.entry(part).or_default();
        if f.emitted {
            return false;
        }
        if f.waiting.as_ref().is_none_or(|(w, _)| t < *w) {
            f.waiting = Some((t, row));
        }
        false
    }

    /// The kept rows as (partition values, row) pairs, partitions sorted, each
    /// partition's rows in rank order.
    pub(crate) fn snapshot(&self) -> Vec<(Vec<Value>, Vec<Value>)> {
        let mut parts: Vec<(&KeyValues, &Partition)> = self.parts.iter().collect();
        parts.sort_by(|a, b| cmp_rows(&a.0.0, &b.0.0));
        parts
            .into_iter()
            .flat_map(|(k, p)| {
                p.groups
                    .iter()
                    .flat_map(|g| g.rows.iter())
                    .map(|r| (k.0.clone(), r.clone()))
            })
            .collect()
    }

    /// How `a`'s ordering values compare with `b`'s: the better first. Ascending puts
    /// nulls first, as Flink's sort does; descending reverses. Two float64 values compare
    /// as Flink's generated comparator does (`a > b`, `a < b`, else a tie): `-0.0` ties
    /// with `0.0`, and NaN with every value.
    fn cmp_keys(&self, a: &[Value], b: &[Value]) -> Ordering {
        for (k, &(_, desc)) in self.order.iter().enumerate() {
            let o = cmp_ordering_value(&a[k], &b[k], desc);
            if o.is_ne() {
                return o;
            }
        }
        Ordering::Equal
    }

    fn sort_key(&self, row: &[Value]) -> Row {
        self.order.iter().map(|&(i, _)| row[i].clone()).collect()
    }

    /// `row`, with its row number when the rank emits it.
    fn out_row(&self, row: &[Value], rank: usize) -> Row {
        let mut r = row.to_vec();
        if self.number {
            r.push(Value::Int64(i64::try_from(rank).unwrap_or(i64::MAX)));
        }
        r
    }

    /// Flink's `collectInsert` with a rank: only within the top.
    fn insert_at(&self, out: &mut Emitted, row: &[Value], rank: usize) {
        if (1..=self.top).contains(&rank) {
            out.push(Rec::insert(Cow::Owned(self.out_row(row, rank))));
        }
    }

    fn delete_at(&self, out: &mut Emitted, row: &[Value], rank: usize) {
        if (1..=self.top).contains(&rank) {
            out.push(Rec::delete(Cow::Owned(self.out_row(row, rank))));
        }
    }

    /// Flink's `collectUpdateBefore` then `collectUpdateAfter` at one rank: the row at
    /// `rank` changes from `before` to `after`.
    fn update_at(&self, out: &mut Emitted, before: &[Value], after: &[Value], rank: usize) {
        if (1..=self.top).contains(&rank) {
            out.push(Rec {
                op: Op::Update,
                row: Cow::Owned(self.out_row(after, rank)),
                before: Some(Cow::Owned(self.out_row(before, rank))),
                half: false,
            });
        }
    }

    fn accumulate(&mut self, part: &KeyValues, row: Row, out: &mut Emitted) {
        let key = self.sort_key(&row);
        let mut p = self.parts.remove(part).unwrap_or_default();
        match self.function {
            Function::Top1 => self.top1(&mut p, key, row, out),
            Function::AppendTopN => self.append_top_n(&mut p, key, row, out),
            Function::Retractable => self.retractable_add(&mut p, key, row, out),
            Function::LastByTime(_) | Function::FirstByTime(_) => {
                unreachable!("a deduplication keeps its rows apart")
            }
        }
        if !p.groups.is_empty() {
            self.parts.insert(part.clone(), p);
        }
    }

    /// Where `key`'s group is among `p`'s groups, or where it would go.
    fn find(&self, p: &Partition, key: &[Value]) -> Result<usize, usize> {
        p.groups.binary_search_by(|g| self.cmp_keys(&g.key, key))
    }

    /// Adds `row` at the end of its group (Flink's `TopNBuffer.put`).
    fn put(&self, p: &mut Partition, key: Row, row: Row) -> usize {
        p.len += 1;
        match self.find(p, &key) {
            Ok(g) => {
                p.groups[g].rows.push(row);
                g
            }
            Err(g) => {
                p.groups.insert(
                    g,
                    Group {
                        key,
                        rows: vec![row],
                    },
                );
                g
            }
        }
    }

    /// `FastTop1Function`: a row strictly better than the partition's first replaces it.
    fn top1(&self, p: &mut Partition, key: Row, row: Row, out: &mut Emitted) {
        match p.groups.first_mut() {
            None => {
                self.insert_at(out, &row, 1);
                p.len = 1;
                p.groups.push(Group {
                    key,
                    rows: vec![row],
                });
            }
            Some(first) => {
                if self.cmp_keys(&key, &first.key).is_lt() {
                    let before = std::mem::replace(&mut first.rows[0], row);
                    first.key = key;
                    let after = &first.rows[0];
                    self.update_at(out, &before, after, 1);
                }
            }
        }
    }

    /// `AppendOnlyTopNFunction`: a row enters when it is better than the last row kept
    /// or fewer rows than the top are kept.
    fn append_top_n(&self, p: &mut Partition, key: Row, row: Row, out: &mut Emitted) {
        let in_range = match p.groups.last() {
            None => true,
            Some(worst) => self.cmp_keys(&key, &worst.key).is_lt() || p.len < self.top,
        };
        if !in_range {
            return;
        }
        let at = self.put(p, key, row);
        if self.number {
            // Every row after the new one moves one place down, to the end of the top;
            // groups wholly past it are dropped.
            let mut rank = 0;
            let mut current: Option<Row> = None;
            let mut g = 0;
            while g < p.groups.len() && rank <= self.top {
                if g == at {
                    rank += p.groups[g].rows.len();
                    current = p.groups[g].rows.last().cloned();
                } else if let Some(cur) = current.as_mut() {
                    let mut i = 0;
                    while i < p.groups[g].rows.len() && rank <= self.top {
                        let prev = p.groups[g].rows[i].clone();
                        self.update_at(out, &prev, cur, rank);
                        *cur = prev;
                        rank += 1;
                        i += 1;
                    }
                } else {
                    rank += p.groups[g].rows.len();
                }
                g += 1;
            }
            if rank <= self.top
                && let Some(cur) = &current
            {
                self.insert_at(out, cur, rank);
            }
            let dropped: usize = p.groups[g..].iter().map(|g| g.rows.len()).sum();
            p.groups.truncate(g);
            p.len -= dropped;
        } else {
            let new_row = p.groups[at].rows.last().cloned();
            if p.len > self.top {
                let last = p.groups.last_mut().expect("a row was just put");
                let pushed_out = last.rows.pop().expect("groups are never empty");
                if last.rows.is_empty() {
                    p.groups.pop();
                }
                p.len -= 1;
                if new_row.as_ref() == Some(&pushed_out) {
                    return;
                }
                out.push(Rec::delete(Cow::Owned(pushed_out)));
            }
            if let Some(r) = new_row {
                out.push(Rec::insert(Cow::Owned(r)));
            }
        }
    }

    /// `RetractableTopNFunction` receiving a row: its place is found with its count
    /// already added, the row is stored after.
    fn retractable_add(&self, p: &mut Partition, key: Row, row: Row, out: &mut Emitted) {
        let at = match self.find(p, &key) {
            Ok(g) => g,
            Err(g) => {
                p.groups.insert(
                    g,
                    Group {
                        key,
                        rows: Vec::new(),
                    },
                );
                g
            }
        };
        // The count of the row's group includes the row (Flink counts it before it
        // looks), while the rows stored do not yet.
        let count = |g: usize| p.groups[g].rows.len() + usize::from(g == at);
        if self.number {
            let mut rank = 0;
            let mut current: Option<&[Value]> = None;
            let mut g = 0;
            while g < p.groups.len() && rank <= self.top {
                if g == at {
                    rank += count(g);
                    current = Some(&row);
                } else if let Some(cur) = current {
                    let rows = &p.groups[g].rows;
                    let mut i = 0;
                    let mut cur = cur;
                    while i < rows.len() && rank <= self.top {
                        self.update_at(out, &rows[i], cur, rank);
                        cur = &rows[i];
                        rank += 1;
                        i += 1;
                    }
                    current = Some(cur);
                } else {
                    rank += count(g);
                }
                g += 1;
            }
            if rank <= self.top
                && let Some(cur) = current
            {
                self.insert_at(out, cur, rank);
            }
        } else {
            let mut rank = 0;
            let mut collect = false;
            let mut to_delete: Option<&Row> = None;
            for g in 0..p.groups.len() {
                if rank > self.top {
                    break;
                }
                if g == at {
                    rank += count(g);
                    collect = (1..=self.top).contains(&rank);
                } else if g > at {
                    let last = rank + count(g);
                    if last <= self.top {
                        rank = last;
                    } else {
                        to_delete = p.groups[g].rows.get(self.top - rank);
                        break;
                    }
                } else {
                    rank += count(g);
                }
            }
            if let Some(d) = to_delete {
                out.push(Rec::delete(Cow::Owned(d.clone())));
            }
            if collect {
                out.push(Rec::insert(Cow::Owned(row.clone())));
            }
        }
        p.groups[at].rows.push(row);
        p.len += 1;
    }

    /// `RetractableTopNFunction` taking a row back.
    fn retract(&mut self, part: &KeyValues, row: &[Value], out: &mut Emitted) -> Result<(), Fault> {
        let key = self.sort_key(row);
        let Some(mut p) = self.parts.remove(part) else {
            return Err(stale());
        };
        let Ok(at) = self.find(&p, &key) else {
            return Err(stale());
        };
        let found = if self.number {
            self.retract_numbered(&mut p, at, row, out)
        } else {
            self.retract_unnumbered(&mut p, at, row, out)
        };
        if !found {
            // Past the top: removed from the stored rows without a word.
            let rows = &mut p.groups[at].rows;
            match rows.iter().position(|r| same_row(r, row)) {
                Some(i) => {
                    rows.remove(i);
                }
                None => return Err(stale()),
            }
        }
        p.len -= 1;
        if p.groups[at].rows.is_empty() {
            p.groups.remove(at);
        }
        if !p.groups.is_empty() {
            self.parts.insert(part.clone(), p);
        }
        Ok(())
    }

    /// Flink's `retractRecordWithRowNumber`: every row after the one taken back moves
    /// up a place, and the last place of the top is deleted. Whether the row was found
    /// (and removed) within the top.
    fn retract_numbered(
        &self,
        p: &mut Partition,
        at: usize,
        row: &[Value],
        out: &mut Emitted,
    ) -> bool {
        let mut rank = 0;
        let mut prev: Option<Row> = None;
        let mut found = false;
        let mut g = 0;
        while g < p.groups.len() && rank <= self.top {
            if g == at && !found {
                let mut i = 0;
                while i < p.groups[g].rows.len() && rank <= self.top {
                    if !found && same_row(&p.groups[g].rows[i], row) {
                        prev = Some(p.groups[g].rows.remove(i));
                        found = true;
                    } else {
                        let current = p.groups[g].rows[i].clone();
                        if found && let Some(pr) = prev.as_ref() {
                            self.update_at(out, pr, &current, rank);
                        }
                        prev = Some(current);
                        i += 1;
                    }
                    rank += 1;
                }
            } else if found {
                let mut i = 0;
                while i < p.groups[g].rows.len() && rank <= self.top {
                    let current = p.groups[g].rows[i].clone();
                    if let Some(pr) = prev.as_ref() {
                        self.update_at(out, pr, &current, rank);
                    }
                    prev = Some(current);
                    rank += 1;
                    i += 1;
                }
            } else {
                rank += p.groups[g].rows.len();
            }
            g += 1;
        }
        if rank <= self.top
            && found
            && let Some(pr) = &prev
        {
            self.delete_at(out, pr, rank);
        }
        found
    }

    /// Flink's `retractRecordWithoutRowNumber`: the row taken back is deleted, and the
    /// row that moves into the last place of the top is inserted. Whether the row was
    /// found (and removed) within the top.
    fn retract_unnumbered(
        &self,
        p: &mut Partition,
        at: usize,
        row: &[Value],
        out: &mut Emitted,
    ) -> bool {
        let mut next = 1;
        let mut found = false;
        for g in 0..p.groups.len() {
            if next > self.top {
                break;
            }
            if g == at && !found {
                let mut i = 0;
                while i < p.groups[g].rows.len() && next <= self.top {
                    if !found && same_row(&p.groups[g].rows[i], row) {
                        let r = p.groups[g].rows.remove(i);
                        self.delete_at(out, &r, next);
                        next -= 1;
                        found = true;
                    } else {
                        if found && next == self.top {
                            let r = p.groups[g].rows[i].clone();
                            self.insert_at(out, &r, next);
                        }
                        i += 1;
                    }
                    next += 1;
                }
            } else if found {
                let count = p.groups[g].rows.len();
                let last = next + count - 1;
                if last < self.top {
                    next = last + 1;
                } else {
                    let r = p.groups[g].rows[self.top - next].clone();
                    out.push(Rec::insert(Cow::Owned(r)));
                    break;
                }
            } else {
                next += p.groups[g].rows.len();
            }
        }
        found
    }

    fn partition_of(&self, row: &[Value]) -> KeyValues {
        KeyValues(self.partition.iter().map(|&i| row[i].clone()).collect())
    }
}

/// Checks a Rank node (a top per window's too) against its input: its keyed state is the
/// rank's, and its columns are its input's, then the row number (int64) when it is read.
pub(crate) fn check_node(
    node: &Node,
    partition_by: &[String],
    ranking: &Ranking,
    number: Option<&str>,
    input: &InputShape<'_>,
) -> Result<(), Fault> {
    let State::Keyed(keyed) = &node.state else {
        return Err(Fault::plain(format!(
            "node `{}`: a Rank must have keyed state",
            node.id
        )));
    };
    let mut expected = streamform_ir::KeyedState::rank(partition_by, ranking, input.schema);
    // A rank over a window table keeps its windows in its state (docs/ranking.md).
    if ranking.strategy.per_window() {
        expected.window.clone_from(&keyed.window);
    }
    if *keyed != expected {
        return Err(Fault::plain(format!(
            "node `{}`: its state must be keyed by [{}] and store its input's rows ranked by {ranking}",
            node.id,
            partition_by.join(", ")
        )));
    }
    let width = input.schema.len() + usize::from(number.is_some());
    let names_match = node.schema.len() == width
        && node
            .schema
            .iter()
            .zip(input.schema)
            .all(|(a, b)| a.name == b.name && a.ty == b.ty)
        && number.is_none_or(|n| {
            node.schema
                .last()
                .is_some_and(|f| f.name == n && f.ty == streamform_ir::DataType::Int64)
        });
    if !names_match {
        return Err(Fault::plain(format!(
            "node `{}`: a Rank's columns are its input's, then the row number (int64) when it is read",
            node.id
        )));
    }
    Ok(())
}

/// How two values of an ordering column compare, the better first, as Flink's rank
/// operators compare them: nulls first ascending, last descending; two float64 values by
/// `a > b`, `a < b`, else a tie (`-0.0` ties with `0.0`, NaN with every value).
pub(crate) fn cmp_ordering_value(a: &Value, b: &Value, descending: bool) -> Ordering {
    let o = match (a, b) {
        (Value::Float64(x), Value::Float64(y)) => x.0.partial_cmp(&y.0).unwrap_or(Ordering::Equal),
        (x, y) => x.sort_cmp(y),
    };
    if descending { o.reverse() } else { o }
}

/// Whether two rows are one, as Flink's generated equaliser tells them (a row taken back
/// is found by its value).
fn same_row(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_key_value(x, y))
}

fn cmp_rows(a: &[Value], b: &[Value]) -> Ordering {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.sort_cmp(y))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

/// A row taken back that the rank never received: Flink fails the job ("state is
/// stale") unless a state retention may have dropped it.
#[cold]
fn stale() -> Fault {
    Fault::plain(
        "the rank was asked to take back a row it does not hold; its input took back a row it never sent",
    )
}

impl Operator for Rank {
    fn on_change<'a>(
        &'a mut self,
        rec: Rec<'a>,
        time: Option<i64>,
        out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        let mut emitted = Emitted::new();
        match (self.function, rec.op) {
            (Function::LastByTime(at), Op::Insert) => {
                let part = self.partition_of(&rec.row);
                self.keep_last(part, at, rec.row.into_owned(), &mut emitted);
            }
            (Function::FirstByTime(at), Op::Insert) => {
                let part = self.partition_of(&rec.row);
                if self.keep_first(part, at, rec.row.into_owned()) {
                    out.dropped_late();
                }
            }
            (Function::LastByTime(_) | Function::FirstByTime(_), op) => {
                return Err(Fault::plain(format!(
                    "a deduplication over an append input received an {op}"
                )));
            }
            _ => self.rank_change(rec, &mut emitted)?,
        }
        let mut it = emitted.into_iter();
        let first = it.next();
        out.reserve(it.len());
        for r in it {
            out.emit(r, time);
        }
        Ok(first)
    }

    /// A deduplication keeping the first row emits each partition's row the watermark
    /// passed, earliest first.
    fn on_watermark(&mut self, watermark: i64, out: &mut Out<'static>) -> Result<(), Fault> {
        self.watermark = watermark;
        let mut due: Vec<(i64, &KeyValues, &mut First)> = self
            .first
            .iter_mut()
            .filter_map(|(k, f)| match &f.waiting {
                Some((t, _)) if *t <= watermark => Some((*t, k, f)),
                _ => None,
            })
            .collect();
        due.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| cmp_rows(&a.1.0, &b.1.0)));
        for (t, _, f) in due {
            if let Some((_, row)) = f.waiting.take() {
                f.emitted = true;
                out.emit(Rec::insert(Cow::Owned(row)), Some(t));
            }
        }
        Ok(())
    }
}

impl Rank {
    /// A change of a rank's input (not a deduplication's).
    fn rank_change(&mut self, rec: Rec<'_>, emitted: &mut Emitted) -> Result<(), Fault> {
        match rec.op {
            Op::Insert => {
                let part = self.partition_of(&rec.row);
                self.accumulate(&part, rec.row.into_owned(), emitted);
            }
            Op::Delete if self.function == Function::Retractable => {
                let part = self.partition_of(&rec.row);
                self.retract(&part, &rec.row, emitted)?;
            }
            Op::Update if self.function == Function::Retractable => {
                let before = rec.before.ok_or_else(update_without_before)?;
                let part = self.partition_of(&before);
                self.retract(&part, &before, emitted)?;
                let part = self.partition_of(&rec.row);
                self.accumulate(&part, rec.row.into_owned(), emitted);
            }
            op => {
                return Err(Fault::plain(format!(
                    "a rank over an append input received an {op}"
                )));
            }
        }
        Ok(())
    }
}
