//! The SELECT list: a Project node.

use datafusion_expr::Expr as DfExpr;
use streamform_ir::{Changelog, Expr, Field, Operator, ProjectItem, State, Value};

use crate::diagnostic::Code;

use super::expr::*;
use super::lowering::*;

impl Lowering<'_> {
    /// The SELECT list: one Project node, or none when it selects the input as it is.
    pub(super) fn project(&mut self, p: &datafusion_expr::logical_plan::Projection) -> Lowered<()> {
        if let Some(w) = self.window {
            return Err(self.unaggregated_window(w));
        }
        let df = p.input.schema();
        let mut items = Vec::new();
        let mut schema = Vec::new();
        let phantom = self.phantom.take();
        for (i, e) in p.expr.iter().enumerate() {
            let lowered = self.expr(df, e).map_err(|d| {
                if d.span.is_some() {
                    return d;
                }
                let items = Parts::of(self.query, self.text).items;
                match items.get(i) {
                    Some(at) if items.len() == p.expr.len() => d.with_span(Some(at.clone())),
                    _ => d,
                }
            })?;
            // A later SELECT of a UNION ALL gives its columns the first SELECT's names.
            let branch_name = self.branch_names.as_ref().and_then(|n| n.get(i)).cloned();
            let name = match e {
                _ if branch_name.is_some() => branch_name.expect("checked"),
                DfExpr::Alias(a) => a.name.clone(),
                // A column a join renamed keeps the name it was written with.
                DfExpr::Column(_) => match &lowered {
                    Expr::Column { name, .. } => self
                        .renamed
                        .get(name)
                        .cloned()
                        .unwrap_or_else(|| name.clone()),
                    other => other.to_string(),
                },
                other => {
                    return Err(self
                        .err(
                            Code::OutputColumns,
                            format!("the column `{}` needs a name", argument_name(&lowered)),
                            "name it with AS, e.g. amount * 2 AS doubled",
                        )
                        .with_span(self.span_of(other)));
                }
            };
            if let Expr::Literal {
                value: Value::Null, ..
            } = lowered
            {
                return Err(self
                    .err(
                        Code::OutputColumns,
                        format!("the column `{name}` is an untyped NULL"),
                        "write CAST(NULL AS <type>)",
                    )
                    .with_span(self.null_named(&name)));
            }
            let nullable = may_be_null(&lowered, &self.schema);
            schema.push(Field {
                name: name.clone(),
                ty: lowered.data_type(),
                nullable,
            });
            // The phantom column passes on under its new name, in the schema alone.
            if let (Some(ph), Expr::Column { name: read, .. }) = (&phantom, &lowered)
                && read == ph
            {
                self.phantom = Some(name);
                continue;
            }
            items.push(ProjectItem {
                expr: lowered,
                name,
            });
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = schema.iter().find(|f| !seen.insert(f.name.clone())) {
            return Err(self.err(
                Code::OutputColumns,
                format!("the column `{}` appears twice in the output", dup.name),
                "give each output column its own name with AS",
            ));
        }
        // A key's columns under their output names, or the first column it loses.
        let map_key = |key: &[String]| -> Result<Vec<String>, String> {
            key.iter()
                .map(|k| {
                    items
                        .iter()
                        .find_map(|i| match &i.expr {
                            Expr::Column { name, .. } if name == k => Some(i.name.clone()),
                            _ => None,
                        })
                        .ok_or_else(|| k.clone())
                })
                .collect()
        };
        self.other_keys = self
            .other_keys
            .iter()
            .filter_map(|k| map_key(k).ok())
            .collect();
        if let Changelog::Upsert(key) = &self.changelog {
            // Without its key an update's two halves still come as a pair, but nothing
            // names the row they change: a retracting changelog, which an aggregate can
            // fold and a model's output cannot carry (docs/changing-tables.md).
            self.changelog = match map_key(key) {
                Ok(out_key) => Changelog::Upsert(out_key),
                // Another key the projection keeps still names the rows.
                Err(_) if !self.other_keys.is_empty() => {
                    Changelog::Upsert(self.other_keys.remove(0))
                }
                Err(lost) => {
                    self.unkeyed = Some(Unkeyed::DroppedKey(lost));
                    Changelog::Retract
                }
            };
        }
        // The phantom column is not an input column of the node.
        let visible: Vec<&Field> = self
            .schema
            .iter()
            .filter(|f| phantom.as_deref() != Some(f.name.as_str()))
            .collect();
        let identity = items.len() == visible.len()
            && items.iter().zip(visible).all(|(i, f)| {
                matches!(&i.expr, Expr::Column { name, .. } if *name == f.name) && i.name == f.name
            });
        if identity {
            self.schema = schema;
        } else {
            // The time attribute goes through a projection that selects its
            // column, under the column's new name.
            self.time = self.time.as_ref().and_then(|t| {
                items.iter().find_map(|i| match &i.expr {
                    Expr::Column { name, .. } if name == t => Some(i.name.clone()),
                    _ => None,
                })
            });
            self.push(Operator::Project { items }, schema, State::Stateless);
        }
        Ok(())
    }
}
