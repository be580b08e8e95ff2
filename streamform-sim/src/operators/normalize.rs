//! An upsert source read as a table that changes (docs/changing-tables.md): keyed state from
//! the key's values to the key's current row, as Flink's ChangelogNormalize keeps it behind
//! an upsert-kafka source. A record is its key's new row: the key's first row is an insert,
//! a changed row an update whose before-image is the stored row, an identical repeat
//! nothing. A tombstone (the key's columns, every other column null) deletes the key: a
//! delete carrying the stored row, or nothing when the key holds no row.

use std::borrow::Cow;

use streamform_ir::{Changelog, Node, State, Value};

use crate::Op;
use crate::eval::resolve;
use crate::keyed::{KeyedState, same_key_value, sorted};
use crate::operator::{Fault, Operator, Out, Rec};

pub(crate) struct Normalize {
    key: Vec<usize>,
    state: KeyedState,
    key_buf: Vec<Value>,
}

impl Normalize {
    /// The normalization of the upsert Source node `node`: its changelog names the key, its
    /// state stores the last row per key.
    pub(crate) fn build(node: &Node) -> Result<Normalize, Fault> {
        let Changelog::Upsert(key) = &node.changelog else {
            return Err(Fault::plain(format!(
                "node `{}`: only an upsert source is normalized",
                node.id
            )));
        };
        let expected = State::Keyed(streamform_ir::KeyedState::last_row(key, &node.schema));
        if node.state != expected {
            return Err(Fault::plain(format!(
                "node `{}`: an upsert source's state must be keyed by [{}] and store the row's columns",
                node.id,
                key.join(", ")
            )));
        }
        let mut columns = Vec::with_capacity(key.len());
        for k in key {
            columns.push(resolve(&node.schema, k).map_err(|m| Fault::at(k, m))?);
        }
        Ok(Normalize {
            state: KeyedState::new(key.len(), key.len() + node.schema.len()),
            key: columns,
            key_buf: Vec::with_capacity(key.len()),
        })
    }

    /// The live keyed state as (key, current row) pairs sorted by key.
    pub(crate) fn snapshot(&self) -> Vec<(Vec<Value>, Vec<Value>)> {
        sorted(&self.state, None)
    }
}

impl Operator for Normalize {
    fn on_change<'a>(
        &'a mut self,
        rec: Rec<'a>,
        _time: Option<i64>,
        _out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        self.key_buf.clear();
        self.key_buf
            .extend(self.key.iter().map(|&i| rec.row[i].clone()));
        let found = self.state.find(&self.key_buf);
        match (rec.op, found) {
            (Op::Insert, Ok(entry)) => {
                let stored = self.state.accumulators_mut(entry);
                // Flink compares the whole row: an identical repeat changes nothing.
                if stored
                    .iter()
                    .zip(rec.row.iter())
                    .all(|(a, b)| same_key_value(a, b))
                {
                    return Ok(None);
                }
                let before = stored.to_vec();
                stored.clone_from_slice(&rec.row);
                Ok(Some(Rec {
                    op: Op::Update,
                    row: rec.row,
                    before: Some(Cow::Owned(before)),
                    half: false,
                }))
            }
            (Op::Insert, Err(vacant)) => {
                self.state.insert(vacant, &self.key_buf, &rec.row);
                Ok(Some(rec))
            }
            (Op::Delete, Ok(entry)) => {
                let stored = self.state.accumulators_mut(entry).to_vec();
                self.state.remove(entry);
                Ok(Some(Rec::delete(Cow::Owned(stored))))
            }
            (Op::Delete, Err(_)) => Ok(None),
            (Op::Update, _) => Err(Fault::plain(
                "an upsert source received an update; its records are rows and tombstones",
            )),
        }
    }
}
