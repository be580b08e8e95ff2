//! The SQL frontend's second half: plan a validated model with DataFusion against the
//! declared schemas, then lower the logical plan at once into the Streaming IR.
//!
//! DataFusion's `LogicalPlan` lives only inside [`lower_model`] and is never stored.
//! Expression and accumulator types are Streamform's own (docs/sql.md), not DataFusion's coercion.
//!
//! The rules it follows are in docs/concepts.md ("Changelog", "Append, upsert and keys",
//! "Boundedness") and docs/sql.md ("Aggregates", "Upsert models").

use datafusion_expr::LogicalPlan;
use datafusion_sql::planner::{ParserOptions, SqlToRel};
use sqlparser::ast::{Query, Statement};
use streamform_ir::{
    Boundedness, Changelog, DataType, Field, KeyedState, Materialized, ModelPlan, NodeKind,
    Operator, Retention, State,
};

use crate::diagnostic::{Anchor, Code, Diagnostic};
use crate::sql::Reads;

mod aggregate;
mod catalog;
mod contract;
mod errors;
mod expr;
mod filter;
mod interval_join;
mod join;
mod lowering;
mod over;
mod project;
mod rank;
mod scan;
mod sort;
mod temporal_join;
mod union;
mod window;

use catalog::{Catalog, with_plain_relation};
use errors::*;
use window::keys_every_window;

pub use contract::{Contract, Declared, Upstream};
use lowering::{Lowered, Lowering, source_fields};

/// Each relation a model reads, by the plain name its scan has.
pub type Upstreams<'a> = [(String, Upstream<'a>)];

impl Lowering<'_> {
    fn plan(&mut self, plan: &LogicalPlan, upstream: &Upstreams<'_>) -> Lowered<()> {
        match plan {
            LogicalPlan::TableScan(scan) => {
                let name = scan.table_name.table();
                match upstream.iter().find(|(n, _)| n == name) {
                    Some((_, up)) => self.scan(up),
                    None => Err(self.err(
                        Code::Internal,
                        format!("the planner read `{name}`, which the model does not read"),
                        "this is a bug in Streamform, please report it with the model",
                    )),
                }
            }
            LogicalPlan::Join(j) => {
                self.aggregated = false;
                self.plan(&j.left, upstream)?;
                let left = self.take_stream()?;
                self.aggregated = false;
                self.plan(&j.right, upstream)?;
                let right = self.take_stream()?;
                self.aggregated = false;
                self.join(j, left, right)
            }
            LogicalPlan::Union(u) => {
                let mut branches: Vec<lowering::Stream> = Vec::with_capacity(u.inputs.len());
                for input in &u.inputs {
                    self.aggregated = false;
                    match (input.as_ref(), branches.first()) {
                        // A later SELECT's list takes the first SELECT's names.
                        (LogicalPlan::Projection(p), Some(first)) => {
                            self.plan(&p.input, upstream)?;
                            self.branch_names =
                                Some(first.schema.iter().map(|f| f.name.clone()).collect());
                            let projected = self.project(p);
                            self.branch_names = None;
                            projected?;
                        }
                        _ => self.plan(input, upstream)?,
                    }
                    branches.push(self.take_stream()?);
                }
                self.aggregated = false;
                self.union(branches)
            }
            LogicalPlan::SubqueryAlias(a) => self.plan(&a.input, upstream),
            LogicalPlan::Filter(f) => {
                if let Some(read) = rank::rank_read(f) {
                    let number_read = self
                        .numbers_read
                        .get(&(plan as *const LogicalPlan as usize))
                        .copied()
                        .unwrap_or(true);
                    return self.rank(f, read, number_read, upstream);
                }
                self.plan(&f.input, upstream)?;
                self.filter(f)
            }
            LogicalPlan::Window(w) if over::aggregates_only(w) => self.over(w, upstream),
            LogicalPlan::Window(_) => Err(self
                .err(
                Code::UnsupportedSql,
                "ROW_NUMBER() OVER (…) is not filtered to a top".into(),
                &format!(
                    "number the rows in a subquery and keep the first of each partition in the query around it (docs/ranking.md): {}",
                    crate::sql::ranking::ROW_NUMBER_SHAPE
                ),
            )
            .with_span(rank::row_number_span(self.text))),
            LogicalPlan::Projection(p) => {
                self.plan(&p.input, upstream)?;
                self.project(p)
            }
            LogicalPlan::Aggregate(a) => {
                self.plan(&a.input, upstream)?;
                self.aggregate(a)
            }
            LogicalPlan::Sort(s) => {
                self.plan(&s.input, upstream)?;
                self.sort(s)
            }
            other => Err(self.err(
                Code::UnsupportedSql,
                format!("`{}` is not supported yet", other.display()),
                crate::sql_help(),
            )),
        }
    }
}

/// Plans and lowers one model into its chain of IR nodes, ending in the Sink, and checks
/// the declared materialization against what the SQL derives.
///
/// # Errors
/// One diagnostic for the first problem that stops lowering (an unknown column, a type
/// error, ORDER BY over an unbounded input, a declared key that disagrees, ...).
pub fn lower_model(
    model: &str,
    text: &str,
    query: &Query,
    reads: &Reads,
    upstream: &Upstreams<'_>,
    declared: &Declared<'_>,
) -> Result<ModelPlan, Diagnostic> {
    let fields_of = |up: &Upstream<'_>| -> Vec<Field> {
        match up {
            Upstream::Source(def) => source_fields(def),
            Upstream::Model(_, c) => c.schema.clone(),
        }
    };
    let window = reads.window();
    if let (Some(w), true) = (window, reads.relations.len() > 1) {
        return Err(Diagnostic::error(
            Code::UnsupportedSql,
            format!("model `{model}`: a window in a model that reads several relations is not supported yet"),
        )
        .with_span(w.span.clone())
        .with_help("put the UNION ALL in a model of its own and read it with TABLE ref('<model>') in the window"));
    }
    let input_fields = match upstream {
        [(_, up)] => fields_of(up),
        _ => Vec::new(),
    };
    let mut planned_fields = input_fields.clone();
    if let Some(w) = window {
        if let Some(clash) = input_fields
            .iter()
            .find(|f| streamform_ir::WINDOW_COLUMNS.contains(&f.name.as_str()))
        {
            return Err(Diagnostic::error(
                Code::OutputColumns,
                format!("model `{model}`: the window's input already has a column `{}`, which the window adds", clash.name),
            )
            .with_span(w.span.clone())
            .with_help(format!("rename it where it is made, e.g. `{} AS minute_{}` in the model this one reads", clash.name, clash.name.trim_start_matches("window_"))));
        }
        planned_fields.extend(streamform_ir::WINDOW_COLUMNS.iter().map(|c| Field {
            name: c.to_string(),
            ty: DataType::Timestamp,
            nullable: false,
        }));
    }
    let tables: Vec<(String, Vec<Field>)> = match upstream {
        [(name, _)] => vec![(name.clone(), planned_fields.clone())],
        _ => upstream
            .iter()
            .map(|(name, up)| (name.clone(), fields_of(up)))
            .collect(),
    };
    let catalog = Catalog::new(&tables);
    let options = ParserOptions::new()
        .with_parse_float_as_decimal(true)
        .with_enable_ident_normalization(false);
    let options = ParserOptions {
        collect_spans: true,
        ..options
    };
    let planner = SqlToRel::new_with_options(&catalog, options);
    let statement = Statement::Query(Box::new(with_plain_relation(query)));
    let plan = planner.sql_statement_to_plan(statement).map_err(|e| {
        let span = e.diagnostic().and_then(|d| d.span).map(|s| {
            let start =
                crate::diagnostic::offset_of(text, s.start.line as usize, s.start.column as usize);
            let end =
                crate::diagnostic::offset_of(text, s.end.line as usize, s.end.column as usize);
            start..end.max(start + 1).min(text.len())
        });
        // Past an aggregation the planner points at the FROM relation, whatever failed:
        // no position is better, and the query's parts are tried below.
        let span = span.filter(|at| {
            reads.relations.iter().all(|r| {
                r.span
                    .as_ref()
                    .is_none_or(|from| at.end <= from.start || at.start >= from.end)
            })
        });
        // The planner's own advice, unless it names a function Streamform does not have
        // (for a column outside GROUP BY it suggests ANY_VALUE).
        let help = e
            .diagnostic()
            .and_then(|d| d.helps.first().map(|h| h.message.clone()))
            .filter(|h| !h.contains("ANY_VALUE"))
            .unwrap_or_else(|| {
                if datafusion_message(&e).contains("GROUP BY") {
                    "every selected column must be in GROUP BY or inside an aggregate (sum, count, min, max); docs/sql.md lists what a model can use".into()
                } else {
                    "docs/sql.md lists what a model can use".into()
                }
            });
        // With a position, the planner's short message and the text it points at read
        // better than its full one, which names columns by internal qualified names.
        let short = e.diagnostic().zip(span.clone()).map(|(d, at)| {
            // The planner qualifies columns with the relation's name, which the model
            // never wrote (it wrote source('orders')).
            let message = upstream.iter().fold(d.message.clone(), |m, (name, _)| {
                m.replace(&format!("'{name}."), "'")
            });
            format!("`{}`: {}", text[at].trim(), message.trim_end_matches('.'))
        });
        let (code, message, help) = unknown_column(&e, &planned_fields)
            .map(|(m, h)| (Code::UnknownColumn, m, h))
            .or_else(|| type_problem(&e, span.as_ref().map(|at| text[at.clone()].trim())))
            .unwrap_or_else(|| {
                (
                    planning_code(&e),
                    short.unwrap_or_else(|| datafusion_message(&e)),
                    help,
                )
            });
        // Without a position from the planner, find the part of the query it failed on.
        let span = span.or_else(|| failing_part(&planner, query, text));
        Diagnostic::error(code, format!("model `{model}`: {message}"))
            .with_span(span)
            .with_help(help)
    })?;
    let mut l = Lowering {
        model,
        text,
        nodes: Vec::new(),
        schema: Vec::new(),
        changelog: Changelog::Append,
        boundedness: Boundedness::Unbounded,
        from_span: reads.first().span.clone(),
        time: None,
        clock: false,
        query,
        aggregated: false,
        window,
        unkeyed: None,
        current: None,
        renamed: std::collections::HashMap::new(),
        branch_names: None,
        other_keys: Vec::new(),
        as_of: reads
            .relations
            .iter()
            .filter_map(|r| match (&r.input, &r.as_of) {
                (streamform_ir::Input::Source(name), Some(a)) => Some((name.clone(), a.clone())),
                _ => None,
            })
            .collect(),
        as_of_used: Vec::new(),
        phantom: None,
        numbers_read: rank::numbers_read(&plan),
    };
    l.plan(&plan, upstream).map_err(|d| {
        if d.span.is_none() {
            d.with_span(reads.first().span.clone())
        } else {
            d
        }
    })?;
    if let Some(w) = l.window {
        return Err(l.unaggregated_window(w));
    }
    // A source read `FOR SYSTEM_TIME AS OF` that no temporal join read (it stands alone or
    // on the left of a join).
    if let Some((source, as_of)) = l.as_of.iter().find(|(s, _)| !l.as_of_used.contains(s)) {
        return Err(Diagnostic::error(
            Code::UnsupportedSql,
            format!("model `{model}`: `{source}` is read FOR SYSTEM_TIME AS OF, but it is not the right side of a join"),
        )
        .with_span(Some(as_of.span.clone()))
        .with_help("a temporal join reads the versioned table on the right: FROM the appending stream, then JOIN source('<versioned table>') FOR SYSTEM_TIME AS OF <left alias>.<event-time column> ON its key"));
    }
    let mut changelog = sink_changelog(&l, declared)?;
    if let (false, Changelog::Upsert(key)) = (l.changelog.is_updating(), &changelog)
        && !key.is_empty()
    {
        if keys_every_window(&l.nodes, key) {
            // Keyed by its window and key, each key is written once, when its window fires:
            // the rows stay inserts, for the upsert sink and for a model reading this one
            // (on Flink, a reader reads the model's view, the window's append output).
            changelog = Changelog::Append;
        } else {
            // An upsert model over an append input keeps the last row per key (docs/sql.md): a
            // keyed node whose state is that row.
            l.changelog = changelog.clone();
            let schema = l.schema.clone();
            let state = State::Keyed(KeyedState::last_row(key, &schema));
            l.push(Operator::Deduplicate { key: key.clone() }, schema, state);
        }
    }
    l.changelog = changelog;
    let schema = l.schema.clone();
    l.push(
        Operator::Sink {
            model: model.to_string(),
            materialized: declared.materialized.clone(),
            target: declared.sink.cloned(),
        },
        schema,
        State::Stateless,
    );
    if let Some(ms) = declared.retention {
        retain(&mut l, ms)?;
    }
    Ok(ModelPlan {
        name: model.to_string(),
        inputs: reads.inputs(),
        nodes: l.nodes,
    })
}

/// Gives every keyed node of the model the declared retention, which needs a clock (an
/// event-time source upstream) and state to expire.
fn retain(l: &mut Lowering<'_>, ms: u64) -> Result<(), Diagnostic> {
    let model = l.model;
    let err = |message: String, help: &str| {
        Err(Diagnostic::error(Code::EventTime, message)
            .anchored(Anchor::ModelRetention(model.to_string()))
            .with_help(help))
    };
    if l.nodes.iter().any(|n| {
        n.id.kind == NodeKind::Aggregate && matches!(&n.state, State::Keyed(k) if k.retracting)
    }) {
        return err(
            format!(
                "model `{model}` declares retention, but it aggregates an updating input, which retention does not support yet"
            ),
            "remove `retention:`; an aggregate over updates keeps a group until its last row is retracted (docs/changing-tables.md)",
        );
    }
    // A join in time keeps its rows by the watermark already (docs/joins.md).
    if let Some(join) = l
        .nodes
        .iter()
        .find(|n| matches!(n.id.kind, NodeKind::IntervalJoin | NodeKind::TemporalJoin))
    {
        let why = if join.id.kind == NodeKind::IntervalJoin {
            "its interval join keeps each row only until the watermark passes the last time it can match"
        } else {
            "its temporal join keeps each row of its left side until the watermark passes it, and the versions the watermark has made old are dropped"
        };
        return err(
            format!("model `{model}` declares retention, but {why}"),
            "remove `retention:`: the join's state is bounded by the watermark, as Flink bounds it (docs/joins.md, \"Joins in time\")",
        );
    }
    if l.nodes.iter().any(|n| n.id.kind == NodeKind::Rank) {
        return err(
            format!(
                "model `{model}` declares retention, but it ranks rows, which retention does not support yet"
            ),
            "remove `retention:`; a rank keeps the rows it ranks until they are retracted or pushed out of its top (docs/ranking.md)",
        );
    }
    if l.nodes.iter().any(|n| n.id.kind == NodeKind::Over) {
        return err(
            format!(
                "model `{model}` declares retention, but it runs an OVER aggregation, which retention does not support yet"
            ),
            "remove `retention:`; an OVER aggregation keeps a partition's accumulators for as long as the partition may get rows (a bounded RANGE frame forgets it as the watermark passes its frame, docs/over.md)",
        );
    }
    if !l.clock {
        let several = l.nodes.iter().any(|n| {
            matches!(
                n.id.kind,
                NodeKind::Join | NodeKind::IntervalJoin | NodeKind::Union
            )
        });
        return err(
            if several {
                format!(
                    "model `{model}` declares retention, but not every source upstream runs on event time"
                )
            } else {
                format!(
                    "model `{model}` declares retention, but no source upstream runs on event time"
                )
            },
            "retention is enforced in event time: declare `event_time:` on the source the model reads (sources.yml), or remove `retention:`",
        );
    }
    let mut keyed = false;
    for node in &mut l.nodes {
        // A window frees its state when it fires; retention does not apply to it, nor to
        // an upsert source's current rows, which it reads as they change.
        if let State::Keyed(k) = &mut node.state
            && k.window.is_none()
            && node.id.kind != NodeKind::Source
        {
            k.retention = Retention::After(ms);
            keyed = true;
        }
    }
    if !keyed {
        return err(
            format!("model `{model}` declares retention, but keeps no state to expire"),
            if l.nodes.iter().any(|n| n.id.kind == NodeKind::Window) {
                "a window frees its state when it fires, so retention does not apply to it; remove `retention:`"
            } else {
                "retention applies to a model that keeps state per key (GROUP BY, or upsert over an append input); remove `retention:`"
            },
        );
    }
    Ok(())
}

/// Checks the declared materialization against the derived changelog and returns the
/// Sink's changelog (docs/concepts.md, "Append, upsert and keys").
fn sink_changelog(l: &Lowering<'_>, declared: &Declared<'_>) -> Result<Changelog, Diagnostic> {
    let model = l.model;
    let config_err = |message: String, help: String| {
        Diagnostic::error(Code::DeclarationMismatch, message)
            .anchored(Anchor::ModelEntry(model.to_string()))
            .with_help(help)
    };
    let key_err = |message: String, help: String| {
        Diagnostic::error(Code::DeclarationMismatch, message)
            .anchored(Anchor::ModelKey(model.to_string()))
            .with_help(help)
    };
    let has_aggregate = l.nodes.iter().any(|n| n.id.kind == NodeKind::Aggregate);
    if l.changelog == Changelog::Retract {
        return Err(match &l.unkeyed {
            Some(lowering::Unkeyed::OuterJoin(kind)) => Diagnostic::error(
                Code::UpdatingInput,
                format!(
                    "model `{model}`: a {} JOIN pads rows without a match and deletes them when their match arrives, so its rows have no key a model could output",
                    kind.name().to_uppercase()
                ),
            )
            .with_span(l.from_span.clone())
            .with_help("aggregate over the join (GROUP BY), which takes the deletes back, or write an inner JOIN, which only inserts"),
            Some(lowering::Unkeyed::UpdatingJoin(side, why)) => Diagnostic::error(
                Code::UpdatingInput,
                format!(
                    "model `{model}`: the join's {side} updates, so the join retracts each row it joined and adds it again as a side changes, and its rows have no key a model could output: {why}"
                ),
            )
            .with_span(l.from_span.clone())
            .with_help("aggregate over the join (GROUP BY) in this model, which takes the retractions back; only an inner join of sides keyed by its join key has a key its rows can be written under (docs/joins.md, \"Tables that change\")"),
            Some(lowering::Unkeyed::Rank(partition, number, at)) => {
                let mut key = partition.clone();
                key.push(number.clone());
                Diagnostic::error(
                    Code::UpdatingInput,
                    format!(
                        "model `{model}`: a top of more than one row over an append input deletes the row a new one pushes out, and without the row number its rows have no key a model could output"
                    ),
                )
                .with_span(at.clone().or_else(|| l.from_span.clone()))
                .with_help(format!(
                    "select the row number `{number}` too, and declare `materialized: upsert` with `key: [{}]`: each place of the top is then one row, updated as the top changes (docs/ranking.md)",
                    key.join(", ")
                ))
            }
            Some(lowering::Unkeyed::Union) => Diagnostic::error(
                Code::UpdatingInput,
                format!(
                    "model `{model}`: UNION ALL of an updating input gives rows without a key, which a model cannot output"
                ),
            )
            .with_span(l.from_span.clone())
            .with_help("aggregate over the UNION ALL (GROUP BY), which takes its updates back, or union only append inputs"),
            _ => {
                let key = match &l.unkeyed {
                    Some(lowering::Unkeyed::DroppedKey(k)) => k.as_str(),
                    _ => "",
                };
                // A join's right column renamed after a left one (`customer_id0`) is named
                // as the user wrote it.
                let what = match l.renamed.get(key) {
                    Some(written) => format!("`{written}` of the join's right side"),
                    None => format!("`{key}`"),
                };
                Diagnostic::error(
                    Code::UpdatingInput,
                    format!(
                        "model `{model}`: the SELECT list drops {what}, the key of its updating input"
                    ),
                )
                .with_span(l.from_span.clone())
                .with_help("keep the key columns in the SELECT list")
            }
        });
    }
    match (declared.materialized, &l.changelog) {
        (Materialized::Append, Changelog::Upsert(key)) if has_aggregate && key.is_empty() => Err(config_err(
            format!("model `{model}` is a global aggregate (no GROUP BY), which produces one updating row, but it is declared append"),
            format!("declare `materialized: upsert` with no `key:` for {model} in streamform.yml"),
        )),
        (Materialized::Append, Changelog::Upsert(key)) if has_aggregate => Err(config_err(
            format!("model `{model}` has a GROUP BY, so it produces an updating result keyed by [{}], but it is declared append", key.join(", ")),
            format!("declare `materialized: upsert` with `key: [{}]` for {model} in streamform.yml", key.join(", ")),
        )),
        (Materialized::Append, c) if c.is_updating() => Err(config_err(
            format!("model `{model}` is declared append, but its input emits updates ({})", c.title()),
            "declare it `materialized: upsert` with the key of its input; an append model cannot carry updates".into(),
        )),
        (Materialized::Append, c) => Ok(c.clone()),
        (Materialized::Upsert { key }, Changelog::Upsert(derived)) => {
            let ranked = l.nodes.iter().any(|n| n.id.kind == NodeKind::Rank);
            if derived.is_empty() && !key.is_empty() && ranked {
                return Err(key_err(
                    format!("model `{model}` keeps one row with no PARTITION BY (a top of one), which has no key, but declares key [{}]", key.join(", ")),
                    "select the row number too and declare `key: [<its name>]` (one row, updated as it changes), or remove `key:` when the model has no sink (docs/ranking.md)".into(),
                ));
            }
            if derived.is_empty() && !key.is_empty() {
                return Err(key_err(
                    format!("model `{model}` is a global aggregate (no GROUP BY), which has no key, but declares key [{}]", key.join(", ")),
                    format!("remove `key:` from {model} in streamform.yml"),
                ));
            }
            if key != derived && l.other_keys.contains(key) {
                return Ok(Changelog::Upsert(key.clone()));
            }
            // The same columns in another order: say that the order is what differs.
            let mut sorted_key = key.clone();
            let mut sorted_derived = derived.clone();
            sorted_key.sort();
            sorted_derived.sort();
            if key != derived && !key.is_empty() && sorted_key == sorted_derived {
                let what = if has_aggregate { "its GROUP BY" } else { "its input" };
                return Err(key_err(
                    format!(
                        "model `{model}` declares key [{}], the columns {what} keys its rows by but in another order: [{}]",
                        key.join(", "),
                        derived.join(", ")
                    ),
                    format!(
                        "declare `key: [{}]`: a key's columns are written in order, as the sink's primary key and as the fields of each Kafka message's key, and the order is the one {what} gives them",
                        derived.join(", ")
                    ),
                ));
            }
            if key != derived {
                let what = if has_aggregate { "its GROUP BY" } else { "its input" };
                let declared_key = if key.is_empty() { "no key".to_string() } else { format!("key [{}]", key.join(", ")) };
                return Err(key_err(
                    format!("model `{model}` declares {declared_key}, but {what} produces upsert({})", derived.join(", ")),
                    {
                        let others: Vec<String> = l
                            .other_keys
                            .iter()
                            .map(|k| format!("[{}]", k.join(", ")))
                            .collect();
                        match others.as_slice() {
                            [] => format!("declare `key: [{}]`", derived.join(", ")),
                            _ => format!(
                                "declare `key: [{}]` (or {}, which identify its rows too)",
                                derived.join(", "),
                                others.join(" or ")
                            ),
                        }
                    },
                ));
            }
            Ok(Changelog::Upsert(derived.clone()))
        }
        (Materialized::Upsert { key }, _) => {
            if key.is_empty() {
                return Err(config_err(
                    format!("model `{model}` is declared upsert but has no key"),
                    format!("declare `key:` with the columns that identify a row of {model}, or materialize it as append"),
                ));
            }
            if let Some((i, missing)) = key.iter().enumerate().find(|(_, k)| !l.schema.iter().any(|f| &f.name == *k)) {
                let cols: Vec<&str> = l.schema.iter().map(|f| f.name.as_str()).collect();
                return Err(Diagnostic::error(
                    Code::DeclarationMismatch,
                    format!("model `{model}` declares key column `{missing}`, which it does not output"),
                )
                .anchored(Anchor::ModelKeyColumn(model.to_string(), i))
                .with_help(crate::diagnostic::suggest(missing, &cols, "its columns are")));
            }
            Ok(Changelog::Upsert(key.clone()))
        }
    }
}
