//! The two halves of an update, paired again where the target's changelog is written.
//!
//! A join emits the joined rows of an updated side as Flink does, apart: the old rows
//! retracted (`-U`) and then the new ones added (`+U`), with other records in between when
//! one change fans out (docs/joins.md, "Tables that change"). Operators fold each half as
//! the delete or insert it is. The changelog of an upsert model states what its sink
//! receives per key, so there the retracted half of a key and the added half that follows
//! it become one update. A retracted half that nothing replaces by the end of its event is
//! a delete, as Flink's upsert sink writes it (a tombstone).

use streamform_ir::Value;

use crate::operator::Rec;
use crate::{Changelog, Op};

/// The target model's key columns and the retracted halves of its current event.
#[derive(Default)]
pub(crate) struct Halves {
    /// The positions of the target's upsert key in its rows; empty when it has none.
    key: Vec<usize>,
    /// Each retracted half of the current event not yet replaced: its key and its row.
    pending: Vec<(Vec<Value>, Vec<Value>)>,
}

impl Halves {
    pub(crate) fn new(key: Vec<usize>) -> Halves {
        Halves {
            key,
            pending: Vec::new(),
        }
    }

    /// The current event is delivered: each retracted half that nothing replaced is
    /// written as the delete it is, in the order they came.
    #[inline]
    pub(crate) fn end_event(&mut self, changes: &mut Changelog) {
        if self.pending.is_empty() {
            return;
        }
        for (_, row) in self.pending.drain(..) {
            changes.push(Op::Delete, &row, None);
        }
    }

    fn key_of(&self, row: &[Value]) -> Vec<Value> {
        self.key.iter().map(|&i| row[i].clone()).collect()
    }

    /// Writes `rec`, which the target's Sink emitted, to `changes`.
    #[inline]
    pub(crate) fn write(&mut self, changes: &mut Changelog, rec: &Rec<'_>) {
        // The common case: no half is waiting (and none arrives), so the record is written
        // as it is, without its key being looked at.
        if self.key.is_empty() || (self.pending.is_empty() && !rec.half) {
            changes.push(rec.op, &rec.row, rec.before.as_deref());
            return;
        }
        let key = || self.key_of(&rec.row);
        match rec.op {
            Op::Delete if rec.half => {
                let key = key();
                self.pending.push((key, rec.row.to_vec()));
            }
            Op::Insert => {
                let key = key();
                match self.pending.iter().position(|(k, _)| *k == key) {
                    Some(at) => {
                        let (_, before) = self.pending.remove(at);
                        changes.push(Op::Update, &rec.row, Some(&before));
                    }
                    None => changes.push(Op::Insert, &rec.row, None),
                }
            }
            Op::Delete => {
                let key = key();
                self.pending.retain(|(k, _)| *k != key);
                changes.push(Op::Delete, &rec.row, None);
            }
            Op::Update => changes.push(Op::Update, &rec.row, rec.before.as_deref()),
        }
    }
}
