//! The SELECT list: stateless. An update maps both images and stays an update (docs/concepts.md).

use std::borrow::Cow;

use streamform_ir::{Node, ProjectItem, Value};

use crate::Op;
use crate::eval::CExpr;
use crate::operator::{Fault, InputShape, Operator, Out, Rec, update_without_before};

pub(crate) struct Project {
    exprs: Vec<CExpr>,
    names: Vec<String>,
    /// Every item is the input column at its own position: rows pass through unchanged.
    identity: bool,
}

impl Project {
    pub(crate) fn build(
        node: &Node,
        items: &[ProjectItem],
        input: &InputShape<'_>,
    ) -> Result<Project, Fault> {
        if node.schema.len() != items.len() {
            return Err(Fault::plain(format!(
                "node `{}` projects {} columns but its schema has {}",
                node.id,
                items.len(),
                node.schema.len()
            )));
        }
        let mut exprs = Vec::with_capacity(items.len());
        for (item, field) in items.iter().zip(&node.schema) {
            let e =
                CExpr::compile(&item.expr, input.schema).map_err(|m| Fault::at(&item.name, m))?;
            let ty = item.expr.data_type();
            if field.ty != ty {
                return Err(Fault::at(
                    &item.name,
                    format!(
                        "node `{}`: the expression is {ty} but the schema says {}",
                        node.id, field.ty
                    ),
                ));
            }
            exprs.push(e);
        }
        let identity = exprs.len() == input.schema.len()
            && exprs
                .iter()
                .enumerate()
                .all(|(i, e)| e.as_column() == Some(i));
        let names = items.iter().map(|i| i.name.clone()).collect();
        Ok(Project {
            exprs,
            names,
            identity,
        })
    }

    fn map(&self, row: &[Value]) -> Result<Vec<Value>, Fault> {
        let mut out = Vec::with_capacity(self.exprs.len());
        for (e, name) in self.exprs.iter().zip(&self.names) {
            let v = e.eval(row).map_err(|err| Fault::eval(name, &err))?;
            out.push(v.into_owned());
        }
        Ok(out)
    }
}

impl Operator for Project {
    #[inline]
    fn on_change<'a>(
        &mut self,
        rec: Rec<'a>,
        _time: Option<i64>,
        _out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        if self.identity {
            return Ok(Some(rec));
        }
        let before = match &rec.before {
            Some(b) => Some(Cow::Owned(self.map(b)?)),
            None if rec.op == Op::Update => return Err(update_without_before()),
            None => None,
        };
        let row = Cow::Owned(self.map(&rec.row)?);
        Ok(Some(Rec {
            op: rec.op,
            row,
            before,
            half: rec.half,
        }))
    }
}
