//! GROUP BY: keyed state from the group-by values to one accumulator per call, typed as the
//! node's state fingerprint says (docs/concepts.md, "Keyed state" and "Accumulators";
//! docs/sql.md, "Aggregates").

use std::borrow::Cow;

use streamform_ir::{AggCall, Node, State, Value};

use super::accumulate::Calls;
use crate::Op;
use crate::eval::resolve;
use crate::keyed::{Expiry, KeyedState, entry_number, expiry_of, sorted, touch};
use crate::operator::{Fault, InputShape, Operator, Out, Rec, update_without_before};

pub(crate) struct Aggregate {
    group: Vec<usize>,
    calls: Calls,
    state: KeyedState,
    /// Values per emitted row: the key's and the calls' results.
    out_width: usize,
    /// Retention in event time, when the node declares one.
    expiry: Option<Expiry>,
    key_buf: Vec<Value>,
    /// A new key's accumulators before they are stored.
    acc_buf: Vec<Value>,
    /// An updated key's entry before the change: the before-image the update lends.
    before_buf: Vec<Value>,
}

impl Aggregate {
    pub(crate) fn build(
        node: &Node,
        group_by: &[String],
        calls: &[AggCall],
        input: &InputShape<'_>,
    ) -> Result<Aggregate, Fault> {
        let State::Keyed(keyed) = &node.state else {
            return Err(Fault::plain(format!(
                "node `{}`: an Aggregate must have keyed state",
                node.id
            )));
        };
        if input.changelog.is_updating() != keyed.retracting {
            return Err(Fault::plain(format!(
                "node `{}`: its input is {}, but its state {} retracting",
                node.id,
                input.changelog.title(),
                if keyed.retracting { "is" } else { "is not" }
            )));
        }
        if keyed.retracting && keyed.retention != streamform_ir::Retention::Unbounded {
            return Err(Fault::plain(format!(
                "node `{}`: a retention over an updating input is not supported",
                node.id
            )));
        }
        if keyed.key.as_slice() != group_by {
            return Err(Fault::plain(format!(
                "node `{}`: the state key [{}] differs from the grouping key [{}]",
                node.id,
                keyed.key.join(", "),
                group_by.join(", ")
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
        let calls = Calls::build(
            &node.id,
            calls,
            keyed,
            &node.schema[group_by.len()..],
            input.schema,
        )?;
        Ok(Aggregate {
            group,
            state: KeyedState::new(group_by.len(), group_by.len() + calls.width()),
            out_width: group_by.len() + calls.len(),
            expiry: expiry_of(keyed),
            acc_buf: Vec::with_capacity(calls.width()),
            before_buf: Vec::with_capacity(group_by.len() + calls.width()),
            key_buf: Vec::with_capacity(group_by.len()),
            calls,
        })
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

    fn emit_row(&self, entry: usize) -> Cow<'static, [Value]> {
        Cow::Owned(self.state.row(entry)[..self.out_width].to_vec())
    }

    /// The row `entry` emits, lent from keyed state until the record has gone down.
    fn lend_row(&self, entry: usize) -> Cow<'_, [Value]> {
        Cow::Borrowed(&self.state.row(entry)[..self.out_width])
    }

    /// Takes `row` back from its group, over an updating input (docs/changing-tables.md):
    /// nothing for a group that holds no state; a delete of the group's last values when
    /// its last row leaves (its state goes with it); otherwise an update, or nothing when
    /// no result moved.
    fn retract(&mut self, row: &[Value]) -> Result<Option<Rec<'static>>, Fault> {
        let Ok(entry) = self.state.find(self.group.iter().map(|&i| &row[i])) else {
            return Ok(None);
        };
        let mut before = self.state.row(entry).to_vec();
        let number = entry_number(entry);
        let changed = match self
            .calls
            .unfold(self.state.accumulators_mut(entry), row, number)
        {
            Ok(changed) => changed,
            Err(f) => {
                self.state
                    .accumulators_mut(entry)
                    .clone_from_slice(&before[self.group.len()..]);
                return Err(f);
            }
        };
        before.truncate(self.out_width);
        let key_len = self.group.len();
        if self.calls.rows(&self.state.row(entry)[key_len..]) == Some(0) {
            self.calls.forget(number);
            self.state.remove(entry);
            return Ok(Some(Rec::delete(Cow::Owned(before))));
        }
        if !changed {
            return Ok(None);
        }
        Ok(Some(Rec {
            op: Op::Update,
            row: self.emit_row(entry),
            before: Some(Cow::Owned(before)),
            half: false,
        }))
    }
}

impl Operator for Aggregate {
    /// Folds an insert into its key's accumulators. On a key's first row the output is an
    /// insert of the group values and results; afterwards an update (before = the row last
    /// emitted) when the row differs from the one last emitted, and nothing when it does
    /// not (docs/concepts.md; Flink compares the rows too, which matters for avg and count(distinct x),
    /// whose results can stay while their state moves).
    ///
    /// With retention, `time` (the event's time) extends the key's life, and a key whose
    /// state expired starts over: its next row is an insert.
    #[inline]
    fn on_change<'a>(
        &'a mut self,
        rec: Rec<'a>,
        time: Option<i64>,
        out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        match rec.op {
            Op::Insert => {}
            Op::Delete => return self.retract(&rec.row),
            // Flink folds an update's two halves as two changes, each with its own output:
            // the before-image retracted, then the after-image accumulated.
            Op::Update => {
                let before = rec.before.ok_or_else(update_without_before)?;
                let first = self.retract(&before)?;
                let second = self.on_change(Rec::insert(rec.row), time, out)?;
                return Ok(match (first, second) {
                    (Some(first), Some(second)) => {
                        out.emit(second, time);
                        Some(first)
                    }
                    (first, second) => first.or(second),
                });
            }
        }
        let row: &[Value] = &rec.row;
        match self.state.find(self.group.iter().map(|&i| &row[i])) {
            Ok(entry) if self.expiry.as_ref().is_some_and(|x| x.is_expired(entry)) => {
                self.calls.fresh(&mut self.acc_buf);
                self.calls.forget(entry_number(entry));
                self.calls
                    .fold(&mut self.acc_buf, row, entry_number(entry))?;
                self.state
                    .accumulators_mut(entry)
                    .clone_from_slice(&self.acc_buf);
                touch(&mut self.expiry, entry, time);
                Ok(Some(Rec::insert(self.lend_row(entry))))
            }
            Ok(entry) => {
                // The entry as it was: the update's before-image, and the undo record if an
                // accumulator fails half-way through.
                self.before_buf.clear();
                self.before_buf.extend_from_slice(self.state.row(entry));
                let key_len = self.group.len();
                let folded =
                    self.calls
                        .fold(self.state.accumulators_mut(entry), row, entry_number(entry));
                let changed = match folded {
                    Ok(changed) => changed,
                    Err(f) => {
                        self.state
                            .accumulators_mut(entry)
                            .clone_from_slice(&self.before_buf[key_len..]);
                        return Err(f);
                    }
                };
                touch(&mut self.expiry, entry, time);
                if !changed {
                    return Ok(None);
                }
                let this: &'a Aggregate = self;
                Ok(Some(Rec {
                    op: Op::Update,
                    row: this.lend_row(entry),
                    before: Some(Cow::Borrowed(&this.before_buf[..this.out_width])),
                    half: false,
                }))
            }
            Err(vacant) => {
                self.key_buf.clear();
                self.key_buf
                    .extend(self.group.iter().map(|&i| row[i].clone()));
                self.calls.fresh(&mut self.acc_buf);
                let number = entry_number(self.state.next_entry());
                self.calls.fold(&mut self.acc_buf, row, number)?;
                let entry = self.state.insert(vacant, &self.key_buf, &self.acc_buf);
                touch(&mut self.expiry, entry, time);
                Ok(Some(Rec::insert(self.lend_row(entry))))
            }
        }
    }

    /// Drops the state of every key that expires at `watermark`, silently: the values
    /// count(distinct x) saw for it too.
    fn on_watermark(&mut self, watermark: i64, _out: &mut Out<'static>) -> Result<(), Fault> {
        if let Some(expiry) = &mut self.expiry {
            for entry in expiry.expire(watermark) {
                self.calls.forget(entry_number(entry));
            }
        }
        Ok(())
    }
}
