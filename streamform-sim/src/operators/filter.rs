//! WHERE / HAVING: stateless, over any changelog (docs/concepts.md, "Changelog").

use streamform_ir::{Expr, Node, Value};

use crate::Op;
use crate::eval::CExpr;
use crate::operator::{Fault, InputShape, Operator, Out, Rec, same_schema, update_without_before};

pub(crate) struct Filter {
    pred: CExpr,
    /// The predicate as explain renders it; errors name it as the column.
    text: String,
}

impl Filter {
    pub(crate) fn build(
        node: &Node,
        predicate: &Expr,
        input: &InputShape<'_>,
    ) -> Result<Filter, Fault> {
        same_schema(node, input.schema)?;
        let text = predicate.to_string();
        let pred = CExpr::compile(predicate, input.schema).map_err(|m| Fault::at(&text, m))?;
        Ok(Filter { pred, text })
    }

    fn matches(&self, row: &[Value]) -> Result<bool, Fault> {
        self.pred.test(row).map_err(|e| Fault::eval(&self.text, &e))
    }
}

impl Operator for Filter {
    /// insert / delete pass when the row matches. An update is judged on both images: both
    /// match, update; only the after-image, insert; only the before-image, delete of the
    /// before-image; neither, nothing.
    #[inline]
    fn on_change<'a>(
        &'a mut self,
        rec: Rec<'a>,
        _time: Option<i64>,
        _out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        match rec.op {
            Op::Insert | Op::Delete => Ok(self.matches(&rec.row)?.then_some(rec)),
            Op::Update => {
                let before = rec.before.ok_or_else(update_without_before)?;
                let was = self.matches(&before)?;
                let is = self.matches(&rec.row)?;
                let next = match (was, is) {
                    (true, true) => Rec {
                        op: Op::Update,
                        row: rec.row,
                        before: Some(before),
                        half: false,
                    },
                    (false, true) => Rec::insert(rec.row),
                    (true, false) => Rec::delete(before),
                    (false, false) => return Ok(None),
                };
                Ok(Some(next))
            }
        }
    }
}
