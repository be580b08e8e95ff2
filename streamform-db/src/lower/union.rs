//! UNION ALL: the branches' outputs as the inputs of one Union node (docs/sql.md, "Several
//! inputs").

use streamform_ir::{Boundedness, Changelog, Field, Operator, State};

use crate::diagnostic::Code;

use super::lowering::*;

impl Lowering<'_> {
    /// Joins the branches (each lowered already, in order) with a Union: the columns take
    /// the first branch's names, and each column's type must be the same in every branch.
    /// The output appends when every branch appends and retracts otherwise (a union has no
    /// key); it ends when every branch ends; it keeps a time attribute only when every
    /// branch has it under the same name, at the same place; its state has a clock only
    /// when every branch has one.
    pub(super) fn union(&mut self, branches: Vec<Stream>) -> Lowered<()> {
        let first = &branches[0];
        for (b, branch) in branches.iter().enumerate().skip(1) {
            if branch.schema.len() != first.schema.len() {
                return Err(self.err(
                    Code::OutputColumns,
                    format!(
                        "UNION ALL: the first SELECT has {} columns, SELECT {} has {}",
                        first.schema.len(),
                        b + 1,
                        branch.schema.len()
                    ),
                    "each SELECT of a UNION ALL lists the same number of columns, in the same order",
                ));
            }
            for (i, (a, c)) in first.schema.iter().zip(&branch.schema).enumerate() {
                if a.ty != c.ty {
                    let at = union_selects(self.query)
                        .get(b)
                        .and_then(|select| item_span(select, i, self.text));
                    return Err(self.err(
                        Code::TypeMismatch,
                        format!(
                            "UNION ALL: column {} is `{}` {} in the first SELECT but `{}` {} in SELECT {}",
                            i + 1,
                            a.name,
                            a.ty,
                            c.name,
                            c.ty,
                            b + 1
                        ),
                        &format!(
                            "CAST the column so that every SELECT gives it one type, e.g. CAST({} AS {})",
                            c.name,
                            a.ty.sql_name()
                        ),
                    )
                    .with_span(at));
                }
            }
        }
        let schema: Vec<Field> = first
            .schema
            .iter()
            .enumerate()
            .map(|(i, f)| Field {
                name: f.name.clone(),
                ty: f.ty,
                nullable: branches.iter().any(|b| b.schema[i].nullable),
            })
            .collect();
        let updating = branches.iter().any(|b| b.changelog.is_updating());
        let time = first.time.clone().filter(|t| {
            let at = first.schema.iter().position(|f| &f.name == t);
            branches.iter().all(|b| {
                b.time.as_ref() == Some(t) && b.schema.iter().position(|f| &f.name == t) == at
            })
        });
        self.boundedness = if branches
            .iter()
            .all(|b| b.boundedness == Boundedness::Bounded)
        {
            Boundedness::Bounded
        } else {
            Boundedness::Unbounded
        };
        self.changelog = if updating {
            Changelog::Retract
        } else {
            Changelog::Append
        };
        self.unkeyed = updating.then_some(Unkeyed::Union);
        self.time = time;
        self.clock = branches.iter().all(|b| b.clock);
        let inputs = branches.into_iter().filter_map(|b| b.current).collect();
        self.push_reading(Operator::Union, schema, State::Stateless, inputs);
        Ok(())
    }
}

/// The SELECTs of the first UNION ALL in the query (in its body, or in a subquery in FROM),
/// in order.
fn union_selects(query: &sqlparser::ast::Query) -> Vec<&sqlparser::ast::Select> {
    use sqlparser::ast::{SetExpr, TableFactor};
    fn flatten<'q>(body: &'q SetExpr, out: &mut Vec<&'q sqlparser::ast::Select>) {
        match body {
            SetExpr::SetOperation { left, right, .. } => {
                flatten(left, out);
                flatten(right, out);
            }
            SetExpr::Select(s) => out.push(s),
            SetExpr::Query(q) => flatten(&q.body, out),
            _ => {}
        }
    }
    match query.body.as_ref() {
        body @ SetExpr::SetOperation { .. } => {
            let mut out = Vec::new();
            flatten(body, &mut out);
            out
        }
        SetExpr::Select(s) => match s.from.first().map(|t| &t.relation) {
            Some(TableFactor::Derived { subquery, .. }) => union_selects(subquery),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}
