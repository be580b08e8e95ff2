//! ORDER BY over a bounded append input: buffers rows, emits them sorted when the input
//! ends (docs/concepts.md).

use std::borrow::Cow;
use std::cmp::Ordering;

use streamform_ir::{Boundedness, Node, SortKey, Value};

use crate::Op;
use crate::eval::resolve;
use crate::operator::{Fault, InputShape, Operator, Out, Rec, same_schema};

pub(crate) struct Sort {
    /// (column index, descending).
    keys: Vec<(usize, bool)>,
    rows: Vec<Vec<Value>>,
}

impl Sort {
    pub(crate) fn build(
        node: &Node,
        keys: &[SortKey],
        input: &InputShape<'_>,
    ) -> Result<Sort, Fault> {
        same_schema(node, input.schema)?;
        if input.changelog.is_updating() {
            return Err(Fault::plain(format!(
                "node `{}`: ORDER BY needs an append input, this one is {}",
                node.id,
                input.changelog.title()
            )));
        }
        if input.boundedness != Boundedness::Bounded {
            return Err(Fault::plain(format!(
                "node `{}`: ORDER BY cannot produce a final ordering over an unbounded input",
                node.id
            )));
        }
        let mut cols = Vec::with_capacity(keys.len());
        for k in keys {
            let i = resolve(input.schema, &k.column).map_err(|m| Fault::at(&k.column, m))?;
            cols.push((i, k.descending));
        }
        Ok(Sort {
            keys: cols,
            rows: Vec::new(),
        })
    }
}

impl Operator for Sort {
    fn on_change<'a>(
        &'a mut self,
        rec: Rec<'a>,
        _time: Option<i64>,
        _out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        if rec.op != Op::Insert {
            return Err(Fault::plain(format!(
                "ORDER BY received an {}; it needs an append input",
                rec.op
            )));
        }
        self.rows.push(rec.row.into_owned());
        Ok(None)
    }

    /// Emits the buffered rows, stably sorted: ascending puts nulls first, descending
    /// reverses; ties keep arrival order.
    fn on_end(&mut self, out: &mut Out<'static>) -> Result<(), Fault> {
        let mut rows = std::mem::take(&mut self.rows);
        let keys = &self.keys;
        rows.sort_by(|a, b| {
            for &(i, desc) in keys {
                let o = a[i].sort_cmp(&b[i]);
                let o = if desc { o.reverse() } else { o };
                if o.is_ne() {
                    return o;
                }
            }
            Ordering::Equal
        });
        for row in rows {
            out.emit(Rec::insert(Cow::Owned(row)), None);
        }
        Ok(())
    }
}
