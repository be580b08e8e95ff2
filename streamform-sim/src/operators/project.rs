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
    /// The mapped row and before-image of the last change, which its record borrows.
    row_buf: Vec<Value>,
    before_buf: Vec<Value>,
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
            row_buf: Vec::with_capacity(exprs.len()),
            before_buf: Vec::with_capacity(exprs.len()),
            exprs,
            names,
            identity,
        })
    }

    /// Whether every item is the input column at its own position: the driver then
    /// leaves the stage out, and rows go on unchanged.
    pub(crate) fn identity(&self) -> bool {
        self.identity
    }
}

/// Maps `row` through `exprs` (each named for its failure) into `into`, replacing what it
/// held.
fn map(
    exprs: &[CExpr],
    names: &[String],
    row: &[Value],
    into: &mut Vec<Value>,
) -> Result<(), Fault> {
    into.clear();
    for (e, name) in exprs.iter().zip(names) {
        let v = e.eval(row).map_err(|err| Fault::eval(name, &err))?;
        into.push(v.into_owned());
    }
    Ok(())
}

impl Operator for Project {
    /// Maps both images of the change into the operator's own buffers, which the record it
    /// emits borrows until it has gone down the graph.
    #[inline]
    fn on_change<'a>(
        &'a mut self,
        rec: Rec<'a>,
        _time: Option<i64>,
        _out: &mut Out<'a>,
    ) -> Result<Option<Rec<'a>>, Fault> {
        if self.identity {
            return Ok(Some(rec));
        }
        let Project {
            exprs,
            names,
            row_buf,
            before_buf,
            ..
        } = self;
        // The before-image first, as Flink evaluates an update's two halves in order.
        let has_before = match &rec.before {
            Some(b) => {
                map(exprs, names, b, before_buf)?;
                true
            }
            None if rec.op == Op::Update => return Err(update_without_before()),
            None => false,
        };
        map(exprs, names, &rec.row, row_buf)?;
        let (row, before): (&'a [Value], &'a [Value]) = (row_buf, before_buf);
        Ok(Some(Rec {
            op: rec.op,
            row: Cow::Borrowed(row),
            before: has_before.then_some(Cow::Borrowed(before)),
            half: rec.half,
        }))
    }
}
