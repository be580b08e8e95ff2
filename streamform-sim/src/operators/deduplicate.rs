//! The last row per key of an append input (docs/sql.md): keyed state from the key's values to the
//! row last seen for it. A key's first row is an insert; every later row an update whose
//! before-image is the row it replaces, even when the two are equal (Flink's keep-last-row
//! deduplication emits it too).

use std::borrow::Cow;

use streamform_ir::{Node, State, Value};

use crate::Op;
use crate::eval::resolve;
use crate::keyed::{Expiry, KeyedState, expiry_of, sorted, touch};
use crate::operator::{Fault, InputShape, Operator, Out, Rec, same_schema};

pub(crate) struct Deduplicate {
    key: Vec<usize>,
    state: KeyedState,
    /// Retention in event time, when the node declares one.
    expiry: Option<Expiry>,
    key_buf: Vec<Value>,
}

impl Deduplicate {
    pub(crate) fn build(
        node: &Node,
        key: &[String],
        input: &InputShape<'_>,
    ) -> Result<Deduplicate, Fault> {
        same_schema(node, input.schema)?;
        if input.changelog.is_updating() {
            return Err(Fault::plain(format!(
                "node `{}`: keeping the last row per key needs an append input, this one is {}",
                node.id,
                input.changelog.title()
            )));
        }
        let State::Keyed(keyed) = &node.state else {
            return Err(Fault::plain(format!(
                "node `{}`: a Deduplicate must have keyed state",
                node.id
            )));
        };
        let mut expected = streamform_ir::KeyedState::last_row(key, &node.schema);
        expected.retention = keyed.retention;
        if *keyed != expected {
            return Err(Fault::plain(format!(
                "node `{}`: its state must be keyed by [{}] and store the row's columns",
                node.id,
                key.join(", ")
            )));
        }
        let mut columns = Vec::with_capacity(key.len());
        for k in key {
            columns.push(resolve(input.schema, k).map_err(|m| Fault::at(k, m))?);
        }
        Ok(Deduplicate {
            state: KeyedState::new(key.len(), key.len() + node.schema.len()),
            key: columns,
            expiry: expiry_of(keyed),
            key_buf: Vec::with_capacity(key.len()),
        })
    }

    /// The live keyed state as (key, last row) pairs sorted by key.
    pub(crate) fn snapshot(&self) -> Vec<(Vec<Value>, Vec<Value>)> {
        sorted(&self.state, self.expiry.as_ref())
    }
}

impl Operator for Deduplicate {
    /// With retention, a key whose state expired starts over: its next row is an insert.
    fn on_change<'a>(
        &'a mut self,
        rec: Rec<'a>,
        time: Option<i64>,
        _out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        if rec.op != Op::Insert {
            return Err(Fault::plain(format!(
                "keeping the last row per key received an {}; it needs an append input",
                rec.op
            )));
        }
        self.key_buf.clear();
        self.key_buf
            .extend(self.key.iter().map(|&i| rec.row[i].clone()));
        match self.state.find(&self.key_buf) {
            Ok(entry) => {
                let expired = self.expiry.as_ref().is_some_and(|x| x.is_expired(entry));
                let stored = self.state.accumulators_mut(entry);
                let before = stored.to_vec();
                stored.clone_from_slice(&rec.row);
                touch(&mut self.expiry, entry, time);
                if expired {
                    return Ok(Some(rec));
                }
                Ok(Some(Rec {
                    op: Op::Update,
                    row: rec.row,
                    before: Some(Cow::Owned(before)),
                    half: false,
                }))
            }
            Err(vacant) => {
                let entry = self.state.insert(vacant, &self.key_buf, &rec.row);
                touch(&mut self.expiry, entry, time);
                Ok(Some(rec))
            }
        }
    }

    /// Drops the last row of every key that expires at `watermark`, silently.
    fn on_watermark(&mut self, watermark: i64, _out: &mut Out<'static>) -> Result<(), Fault> {
        if let Some(expiry) = &mut self.expiry {
            expiry.expire(watermark);
        }
        Ok(())
    }
}
