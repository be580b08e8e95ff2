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

    /// Maps `row` into `into`, replacing what it held.
    fn map(&self, row: &[Value], into: &mut Vec<Value>) -> Result<(), Fault> {
        into.clear();
        for (e, name) in self.exprs.iter().zip(&self.names) {
            let v = e.eval(row).map_err(|err| Fault::eval(name, &err))?;
            into.push(v.into_owned());
        }
        Ok(())
    }
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
        let mut row = std::mem::take(&mut self.row_buf);
        let mut before = std::mem::take(&mut self.before_buf);
        // The before-image first, as Flink evaluates an update's two halves in order.
        let mapped = match &rec.before {
            Some(b) => self.map(b, &mut before).map(|()| true),
            None if rec.op == Op::Update => Err(update_without_before()),
            None => Ok(false),
        }
        .and_then(|has_before| self.map(&rec.row, &mut row).map(|()| has_before));
        (self.row_buf, self.before_buf) = (row, before);
        let has_before = mapped?;
        let this: &'a Project = self;
        Ok(Some(Rec {
            op: rec.op,
            row: Cow::Borrowed(&this.row_buf),
            before: has_before.then_some(Cow::Borrowed(&this.before_buf[..])),
            half: rec.half,
        }))
    }
}
