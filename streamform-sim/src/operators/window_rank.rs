//! Window Top-N (docs/ranking.md, "A top per window"): `ROW_NUMBER()` partitioned by both
//! of a window's bounds, over an append input (a window aggregation's rows). As Flink's
//! window rank operator does, it keeps each window's rows until the watermark reaches the
//! window's end minus 1 ms, then inserts the window's top rows once, in rank order (with
//! their row numbers when the model reads them), and forgets the window. Rows that tie on
//! the ordering keep their arrival order; a row for a window that has fired is dropped as
//! late. Nothing is ever updated or deleted.
//!
//! Window deduplication (a top of one by the time attribute, the row number unread) keeps
//! one row per partition and window, as Flink's window deduplication does: ascending, a
//! row replaces the kept one only with an earlier time; descending, with a later or equal
//! time, so that among equal times the last to arrive is kept.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};

use streamform_ir::{Node, Ranking, Value};

use crate::eval::resolve;
use crate::keyed::KeyValues;
use crate::operator::{Fault, InputShape, Operator, Out, Rec, appended_time, cmp_rows};

/// A row, owned.
type Row = Vec<Value>;

pub(crate) struct WindowRank {
    partition: Vec<usize>,
    /// (column index, descending) of the ordering.
    order: Vec<(usize, bool)>,
    top: usize,
    /// Whether the row number is emitted after the row's columns.
    number: bool,
    /// Window deduplication: one row kept per partition; `Some(true)` when a row that ties
    /// with the kept one replaces it (keeping the last row).
    dedup: Option<bool>,
    /// The column holding the window's end.
    end: usize,
    end_name: String,
    /// Each open window's partitions, by the window's end, in the order they came.
    windows: BTreeMap<i64, Vec<KeyValues>>,
    /// Each partition's rows, in arrival order.
    rows: HashMap<KeyValues, Vec<Row>>,
    /// The last watermark received; `i64::MIN` before any.
    watermark: i64,
}

impl WindowRank {
    pub(crate) fn build(
        node: &Node,
        partition_by: &[String],
        ranking: &Ranking,
        number: Option<&str>,
        input: &InputShape<'_>,
    ) -> Result<WindowRank, Fault> {
        let id = &node.id;
        input.appends(node, "a rank per window")?;
        super::rank::check_node(node, partition_by, ranking, number, input)?;
        let Some(end_name) = ranking
            .window_end
            .as_ref()
            .filter(|e| partition_by.contains(e))
        else {
            return Err(Fault::plain(format!(
                "node `{id}`: a rank per window partitions by the column of the window's end"
            )));
        };
        let dedup = ranking.strategy == streamform_ir::RankStrategy::WindowDeduplicate;
        if dedup && (ranking.top != 1 || ranking.order.len() != 1 || number.is_some()) {
            return Err(Fault::plain(format!(
                "node `{id}`: a window deduplication keeps one row by one time column, without the row number"
            )));
        }
        if ranking.top == 0 || ranking.order.is_empty() {
            return Err(Fault::plain(format!(
                "node `{id}`: a Rank keeps at least one row, ordered by at least one column"
            )));
        }
        let col = |c: &String| resolve(input.schema, c).map_err(|m| Fault::at(c, m));
        let end = col(end_name)?;
        if input.schema[end].ty != streamform_ir::DataType::Timestamp {
            return Err(Fault::at(
                end_name,
                format!("node `{id}`: a window's end is a timestamp"),
            ));
        }
        Ok(WindowRank {
            partition: partition_by.iter().map(col).collect::<Result<_, _>>()?,
            order: ranking
                .order
                .iter()
                .map(|k| col(&k.column).map(|i| (i, k.descending)))
                .collect::<Result<_, _>>()?,
            top: usize::try_from(ranking.top).unwrap_or(usize::MAX),
            number: number.is_some(),
            dedup: dedup.then(|| ranking.order[0].descending),
            end,
            end_name: end_name.clone(),
            windows: BTreeMap::new(),
            rows: HashMap::new(),
            watermark: i64::MIN,
        })
    }

    /// The rows waiting for their window to fire, with the watermark the first fires at;
    /// `None` when none waits.
    pub(crate) fn waiting(&self) -> Option<(usize, i64)> {
        let count: usize = self.rows.values().map(Vec::len).sum();
        let first = self.windows.keys().next()?;
        Some((
            count,
            first
                .saturating_sub(1)
                .max(self.watermark.saturating_add(1)),
        ))
    }

    /// The kept rows as (partition values, row) pairs, partitions sorted, each partition's
    /// rows in arrival order.
    pub(crate) fn snapshot(&self) -> Vec<(Vec<Value>, Vec<Value>)> {
        let mut parts: Vec<(&KeyValues, &Vec<Row>)> = self.rows.iter().collect();
        parts.sort_by(|a, b| cmp_rows(&a.0.0, &b.0.0));
        parts
            .into_iter()
            .flat_map(|(k, rows)| rows.iter().map(|r| (k.0.clone(), r.clone())))
            .collect()
    }

    /// How two rows compare on the ordering, the better first, as a rank compares them.
    fn cmp(&self, a: &[Value], b: &[Value]) -> Ordering {
        self.order
            .iter()
            .map(|&(i, desc)| super::rank::cmp_ordering_value(&a[i], &b[i], desc))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}

impl Operator for WindowRank {
    fn on_change<'a>(
        &'a mut self,
        rec: Rec<'a>,
        _time: Option<i64>,
        out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        let end = appended_time(&rec, self.end, &self.end_name, "a rank per window")?;
        // A window is final once the watermark reaches its end minus 1 ms.
        if end.saturating_sub(1) <= self.watermark {
            out.dropped_late();
            return Ok(None);
        }
        let part = KeyValues(self.partition.iter().map(|&i| rec.row[i].clone()).collect());
        if let Some(keep_last) = self.dedup
            && let Some([kept]) = self.rows.get(&part).map(Vec::as_slice)
        {
            let o = self.cmp(&rec.row, kept);
            if o.is_lt() || (keep_last && o.is_eq()) {
                self.rows.insert(part, vec![rec.row.into_owned()]);
            }
            return Ok(None);
        }
        let rows = self.rows.entry(part.clone()).or_default();
        if rows.is_empty() {
            self.windows.entry(end).or_default().push(part);
        }
        rows.push(rec.row.into_owned());
        Ok(None)
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut Out<'static>) -> Result<(), Fault> {
        self.watermark = self.watermark.max(watermark);
        while let Some((&end, _)) = self.windows.first_key_value() {
            if end.saturating_sub(1) > self.watermark {
                break;
            }
            let Some((_, mut parts)) = self.windows.pop_first() else {
                break;
            };
            parts.sort_by(|a, b| cmp_rows(&a.0, &b.0));
            for part in parts {
                let Some(mut rows) = self.rows.remove(&part) else {
                    continue;
                };
                // A stable sort: rows that tie keep their arrival order.
                rows.sort_by(|a, b| self.cmp(a, b));
                for (i, mut row) in rows.into_iter().take(self.top).enumerate() {
                    if self.number {
                        row.push(Value::Int64(i64::try_from(i + 1).unwrap_or(i64::MAX)));
                    }
                    out.emit(Rec::insert(Cow::Owned(row)), Some(end - 1));
                }
            }
        }
        Ok(())
    }
}
