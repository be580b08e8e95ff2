//! The application: Flink SQL statements generated from the model plans.
//!
//! See docs/flink-backend.md, with its walkthrough ("A complete example"): "Making Flink
//! compute the simulator's types", "Capability errors" (ORDER BY is refused) and "Warnings"
//! (nullable upsert keys).

mod over;
mod rank;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use streamform_ir::{
    AggCall, AggFunc, ArithOp, BinaryOp, Changelog, Connector, DataType, EventTime, Expr, Field,
    LateEvents, Materialized, ModelPlan, Node, NodeId, Operator, Retention, SinkTarget, State,
    uses_kafka,
};

use crate::sql::{data_type, expr, ident, string_literal};

/// How the application reaches Kafka, from the chosen target.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KafkaSettings {
    /// `properties.bootstrap.servers`: Kafka as Flink's processes see it.
    pub bootstrap_servers: String,
    /// `earliest` or `latest` (streamform.yml `kafka.startup`).
    pub startup: String,
}

/// What a statement creates or runs; apply reports each as `ok: source orders`, ...
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StatementKind {
    /// `CREATE TABLE` for a source (`<source>_raw` when late events are dropped).
    Source(String),
    /// `CREATE TEMPORARY VIEW <source>` keeping the source's rows that are not late, for a
    /// source with `late_events: drop`.
    OnTime(String),
    /// `CREATE TEMPORARY VIEW` for a model.
    Model(String),
    /// `CREATE TABLE sink_<model>` for a model's sink.
    Sink(String),
    /// The one `EXECUTE STATEMENT SET` holding every INSERT INTO.
    StatementSet,
    /// `COMPILE PLAN` or `EXECUTE PLAN` of the statement set, which apply runs instead of
    /// it on a target that deploys compiled plans (never part of `build`'s script).
    Plan,
}

/// One statement of the application, ending with `;`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Statement {
    /// What the statement is for.
    pub kind: StatementKind,
    /// The statement's SQL, without a trailing newline.
    pub sql: String,
}

/// What a finding is about, so the caller can point at the right file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Subject {
    /// The model's declaration as a whole.
    Model,
    /// The model's `sink:` (or its materialization as a sink sees it).
    Sink,
    /// One operator of the model's plan.
    Operator(NodeId),
    /// The model's `retention:`.
    Retention,
    /// The application as a whole.
    Application,
}

/// A capability error or a warning about the generated application.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Finding {
    /// What kind of finding it is.
    pub kind: FindingKind,
    /// The model it concerns; `None` for the application as a whole.
    pub model: Option<String>,
    /// What in the model it concerns.
    pub subject: Subject,
    /// What is wrong, e.g. "model `m`: ORDER BY ... cannot run on Flink".
    pub message: String,
    /// What to do about it.
    pub help: String,
}

/// The kinds of finding: what Flink cannot run faithfully, and what runs but deserves
/// attention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingKind {
    /// The application uses Kafka but no target gives its address.
    NoKafkaTarget,
    /// A generated table name is already taken.
    TableNameClash,
    /// `%` over float64: Flink's MOD takes exact numbers only.
    FloatModulo,
    /// ORDER BY: Flink's streaming mode sorts on a time attribute only.
    StreamingSort,
    /// An upsert changelog written to a file sink.
    UpsertFileSink,
    /// An upsert sink for a model without a key.
    UpsertWithoutKey,
    /// No model declares a sink (a warning).
    NoSink,
    /// A model nothing runs (a warning).
    UnusedModel,
    /// A key column that may be null at an upsert-kafka sink (a warning).
    NullableKey,
    /// A model's retention, which Flink enforces in processing time (a warning).
    ApproximateRetention,
    /// `kafka.startup: latest`, which an upsert source does not take (a warning).
    UpsertSourceStartup,
    /// An aggregate over an inner join that Flink 2.2 may split in two (a warning).
    PreAggregatedJoin,
}

impl FindingKind {
    /// Every kind, in the order docs/diagnostics.md lists them.
    pub const ALL: [FindingKind; 12] = [
        FindingKind::NoKafkaTarget,
        FindingKind::TableNameClash,
        FindingKind::FloatModulo,
        FindingKind::StreamingSort,
        FindingKind::UpsertFileSink,
        FindingKind::UpsertWithoutKey,
        FindingKind::NoSink,
        FindingKind::UnusedModel,
        FindingKind::NullableKey,
        FindingKind::ApproximateRetention,
        FindingKind::UpsertSourceStartup,
        FindingKind::PreAggregatedJoin,
    ];

    /// The stable code of a diagnostic of this kind, e.g. `streaming-sort`.
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::NoKafkaTarget => "no-kafka-target",
            FindingKind::TableNameClash => "table-name-clash",
            FindingKind::FloatModulo => "float-modulo",
            FindingKind::StreamingSort => "streaming-sort",
            FindingKind::UpsertFileSink => "upsert-file-sink",
            FindingKind::UpsertWithoutKey => "upsert-without-key",
            FindingKind::NoSink => "no-sink",
            FindingKind::UnusedModel => "unused-model",
            FindingKind::NullableKey => "nullable-key",
            FindingKind::ApproximateRetention => "approximate-retention",
            FindingKind::UpsertSourceStartup => "upsert-source-startup",
            FindingKind::PreAggregatedJoin => "pre-aggregated-join",
        }
    }
}

/// A generated application: its statements in submission order and the warnings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Application {
    /// Source tables, model views (dependency order), sink tables, then the statement set
    /// (absent when no model declares a sink).
    pub statements: Vec<Statement>,
    /// Things that run but deserve attention (nullable keys, docs/concepts.md, models nothing runs).
    pub warnings: Vec<Finding>,
    /// The options Flink must plan the statement set with (docs/flink-backend.md, "Planner
    /// options"): apply passes them with the statement set and with its compilation, and the
    /// script sets them before it. Empty for most applications.
    pub config: BTreeMap<String, String>,
    /// The oldest Flink version that runs the application as the simulator does, when an
    /// older one would run it differently; apply refuses a cluster older than that.
    pub requires: Option<Requirement>,
}

/// A Flink version an application needs, and why (docs/running-on-flink.md).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    /// (major, minor).
    pub version: (u32, u32),
    /// What needs it, one sentence naming the model.
    pub why: String,
}

/// What in `plans` runs differently on Flink 2.0: a deduplication keeping the first row by
/// event time, which Flink 2.2 inserts once the watermark passes it and Flink 2.0 emits at
/// once and replaces as earlier rows arrive (docs/ranking.md).
fn requirement(plans: &[ModelPlan]) -> Option<Requirement> {
    plans.iter().find_map(|plan| {
        plan.nodes.iter().find_map(|n| match &n.op {
            Operator::Rank { ranking, .. }
                if ranking.strategy == streamform_ir::RankStrategy::Deduplicate
                    && ranking.order.first().is_some_and(|k| !k.descending) =>
            {
                Some(Requirement {
                    version: (2, 2),
                    why: format!(
                        "model `{}` keeps the first row of each partition by event time, which Flink 2.2 inserts once the watermark passes it (as the simulator does) and Flink 2.0 emits at once and replaces as earlier rows arrive",
                        plan.name
                    ),
                })
            }
            _ => None,
        })
    })
}

impl Application {
    /// The script `build` writes: every statement, separated by blank lines, ending with a
    /// newline; the [`Application::config`] options are `SET`, each a statement of its own,
    /// just before the statement set.
    pub fn script(&self) -> String {
        let mut out = String::new();
        for (i, s) in self.statements.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            if s.kind == StatementKind::StatementSet {
                for (k, v) in &self.config {
                    let _ = writeln!(out, "SET {} = {};\n", string_literal(k), string_literal(v));
                }
            }
            out.push_str(&s.sql);
            out.push('\n');
        }
        out
    }

    /// Whether any model declares a sink, i.e. whether there is a statement set to run.
    pub fn has_sinks(&self) -> bool {
        self.statements
            .iter()
            .any(|s| s.kind == StatementKind::StatementSet)
    }
}

/// Generates the Flink SQL application for `plans` (every model, in dependency order).
///
/// `kafka` must be `Some` when [`uses_kafka`] holds; a Kafka table generated without it is a
/// capability error.
///
/// # Errors
/// Every capability error: what Flink cannot run faithfully (ORDER BY, a file sink on an
/// upsert model, an upsert sink without a key).
pub fn generate(
    plans: &[ModelPlan],
    kafka: Option<&KafkaSettings>,
) -> Result<Application, Vec<Finding>> {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for plan in plans {
        errors.extend(capability_errors(plan));
    }
    errors.extend(name_collisions(plans));
    if kafka.is_none() && uses_kafka(plans) {
        errors.push(Finding {
            kind: FindingKind::NoKafkaTarget,
            model: None,
            subject: Subject::Application,
            message: "the application reads or writes Kafka but no target gives Kafka's address"
                .into(),
            help: "declare a target with `kafka: {bootstrap_servers: ...}` in streamform.yml"
                .into(),
        });
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let kafka = kafka.cloned().unwrap_or(KafkaSettings {
        bootstrap_servers: String::new(),
        startup: "earliest".into(),
    });

    let mut statements = Vec::new();
    let mut config = BTreeMap::new();
    let mut created = BTreeSet::new();
    // Every view's query with the views it reads written out, down to tables: a window
    // table function over a temporary view fails in Flink's planner ("belongs to a different
    // planner", found on Flink 2.0 through the SQL Gateway), so a model with a window reads
    // its input this way (docs/windows.md).
    let mut inlined: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for first in plans.iter().flat_map(|p| &p.nodes) {
        if let Operator::Source {
            name,
            connector,
            format,
            event_time,
        } = &first.op
            && created.insert(name.clone())
        {
            let drops = drops_late(event_time.as_ref());
            let table = created_table_name(name, event_time.as_ref());
            if matches!(first.changelog, Changelog::Upsert(_)) {
                config.insert(CDC_EVENTS_DUPLICATE.to_string(), "true".to_string());
            }
            statements.push(Statement {
                kind: StatementKind::Source(name.clone()),
                sql: source_table(
                    &table,
                    (connector, format, &first.changelog),
                    &first.schema,
                    event_time.as_ref(),
                    &kafka,
                ),
            });
            if let (true, Some(t)) = (drops, event_time) {
                statements.push(Statement {
                    kind: StatementKind::OnTime(name.clone()),
                    sql: on_time_view(name, &t.column),
                });
                inlined.insert(name.clone(), on_time_query(name, &t.column));
            }
        }
    }
    for plan in plans {
        let written_out = |name: &str| {
            inlined
                .get(name)
                .map(|q| format!("({q}) AS {}", ident(name)))
        };
        let expanded = view_query(plan, plans, &written_out);
        let written = plan.nodes.iter().any(|n| {
            matches!(
                n.id.kind,
                streamform_ir::NodeKind::Window
                    | streamform_ir::NodeKind::WindowTable
                    | streamform_ir::NodeKind::Union
                    | streamform_ir::NodeKind::Join
                    | streamform_ir::NodeKind::IntervalJoin
                    | streamform_ir::NodeKind::TemporalJoin
            )
        });
        let query = if written {
            expanded.clone()
        } else {
            view_query(plan, plans, &|_| None)
        };
        inlined.insert(plan.name.clone(), expanded);
        statements.push(Statement {
            kind: StatementKind::Model(plan.name.clone()),
            sql: format!("CREATE TEMPORARY VIEW {} AS\n{query};", ident(&plan.name),),
        });
    }
    if crate::compiled::state_reaches_several_sinks(plans) {
        config.insert(REUSE_BLOCKS.to_string(), "true".to_string());
        warnings.extend(plans.iter().filter_map(pre_aggregated_join));
    }
    let mut inserts = Vec::new();
    for plan in plans {
        if let Some(sql) = sink_table(plan, &kafka) {
            statements.push(Statement {
                kind: StatementKind::Sink(plan.name.clone()),
                sql,
            });
            inserts.push(format!(
                "  INSERT INTO {} SELECT * FROM {};",
                ident(&sink_table_name(&plan.name)),
                ident(&plan.name)
            ));
        }
    }
    if inserts.is_empty() {
        warnings.push(Finding {
            kind: FindingKind::NoSink,
            model: None,
            subject: Subject::Application,
            message: "nothing to apply: no model declares a sink".into(),
            help: "add a `sink:` block to a model in streamform.yml to give the application a job"
                .into(),
        });
    } else {
        statements.push(Statement {
            kind: StatementKind::StatementSet,
            sql: format!("EXECUTE STATEMENT SET\nBEGIN\n{}\nEND;", inserts.join("\n")),
        });
        warnings.extend(unused_models(plans));
    }
    for plan in plans {
        warnings.extend(nullable_key_warnings(plan));
        warnings.extend(retention_warning(plan));
    }
    if kafka.startup == "latest" {
        warnings.extend(upsert_startup_warnings(plans));
    }
    Ok(Application {
        statements,
        warnings,
        config,
        requires: requirement(plans),
    })
}

/// A sink table `sink_<model>` whose name is already a source's table or a model's view:
/// Flink would refuse the second CREATE, or the INSERT would write into the wrong object.
fn name_collisions(plans: &[ModelPlan]) -> Vec<Finding> {
    let mut taken: BTreeSet<(&str, &str)> = BTreeSet::new();
    let mut raw_tables: BTreeSet<(String, &str)> = BTreeSet::new();
    for plan in plans {
        taken.insert((plan.name.as_str(), "model"));
        for node in &plan.nodes {
            let Operator::Source {
                name, event_time, ..
            } = &node.op
            else {
                continue;
            };
            taken.insert((name.as_str(), "source"));
            if event_time
                .as_ref()
                .is_some_and(|t| t.late == LateEvents::Drop)
            {
                raw_tables.insert((raw_table_name(name), name.as_str()));
            }
        }
    }
    // The raw table of a source that drops late events is named after it: no model or
    // other source may have that name.
    let raw_clashes: Vec<Finding> = raw_tables
        .iter()
        .filter_map(|(table, source)| {
            let (_, what) = taken.iter().find(|(n, _)| n == table)?;
            Some(Finding {
                kind: FindingKind::TableNameClash,
                model: None,
                subject: Subject::Application,
                message: format!(
                    "source `{source}` drops late events through a table named `{table}`, which is already the name of a {what}"
                ),
                help: format!("rename the {what} `{table}`; Flink needs one name per table or view"),
            })
        })
        .collect();
    plans
        .iter()
        .filter(|p| sink_target(p).is_some())
        .filter_map(|p| {
            let table = sink_table_name(&p.name);
            let (_, what) = taken.iter().find(|(n, _)| *n == table)?;
            Some(Finding {
                kind: FindingKind::TableNameClash,
                model: Some(p.name.clone()),
                subject: Subject::Sink,
                message: format!(
                    "model `{}`: its sink table would be named `{table}`, which is already the name of a {what}",
                    p.name
                ),
                help: format!("rename the {what} `{table}`; Flink needs one name per table or view"),
            })
        })
        .chain(raw_clashes)
        .collect()
}

/// The warning every model with a retention gets: Flink's state TTL counts processing time
/// (and keeping the last row per key takes no TTL hint at all).
/// Each upsert source, once, when the target reads Kafka from its latest offset: Flink's
/// upsert-kafka takes no startup mode and reads its topic from the beginning, the table's
/// every row (docs/changing-tables.md).
fn upsert_startup_warnings(plans: &[ModelPlan]) -> Vec<Finding> {
    let upsert: std::collections::BTreeSet<&str> = plans
        .iter()
        .flat_map(|p| &p.nodes)
        .filter_map(|n| match &n.op {
            Operator::Source { name, .. } if n.changelog.is_updating() => Some(name.as_str()),
            _ => None,
        })
        .collect();
    upsert
        .into_iter()
        .map(|name| Finding {
            kind: FindingKind::UpsertSourceStartup,
            model: None,
            subject: Subject::Application,
            message: format!(
                "source `{name}` is an upsert source, which reads its topic from the beginning: the target's `kafka.startup: latest` does not apply to it"
            ),
            help: "an upsert topic is a table, rebuilt from its first record; `startup: latest` applies to the append sources only, so leave it for them or remove it".into(),
        })
        .collect()
}

fn retention_warning(plan: &ModelPlan) -> Option<Finding> {
    let retention = plan.nodes.iter().find_map(|n| match &n.state {
        State::Keyed(k) if k.retention != Retention::Unbounded => Some((n, k.retention)),
        _ => None,
    });
    let (node, retention) = retention?;
    let dedup = matches!(node.op, Operator::Deduplicate { .. });
    let (message, help) = if dedup {
        (
            format!(
                "model `{}`: retention {retention} is not enforced on Flink, which takes no state TTL for keeping the last row per key",
                plan.name
            ),
            "the simulator expires a key's last row in event time; on Flink every key's last row is kept for as long as the job runs",
        )
    } else {
        (
            format!(
                "model `{}`: retention {retention} is enforced on Flink in processing time, not event time: approximate, and wrong under replay",
                plan.name
            ),
            "the simulator expires state in event time; on Flink a replay of old events expires nothing while it runs, so a backfill can keep state a fresh run would have dropped",
        )
    };
    Some(Finding {
        kind: FindingKind::ApproximateRetention,
        model: Some(plan.name.clone()),
        subject: Subject::Retention,
        message,
        help: help.into(),
    })
}

/// Whether a source drops late events, and so is created as its raw table.
fn drops_late(event_time: Option<&EventTime>) -> bool {
    event_time.is_some_and(|t| t.late == LateEvents::Drop)
}

/// The table a source is created as: its raw table when it drops late events, else its name.
fn created_table_name(name: &str, event_time: Option<&EventTime>) -> String {
    if drops_late(event_time) {
        raw_table_name(name)
    } else {
        name.to_string()
    }
}

/// The table an event-time source with `late_events: drop` is created as: `<source>_raw`,
/// read through the view named after the source.
pub fn raw_table_name(source: &str) -> String {
    format!("{source}_raw")
}

/// The view that keeps a source's rows at or after the watermark (an event exactly at the
/// watermark is on time), as the simulator drops only the events strictly behind it.
fn on_time_view(source: &str, column: &str) -> String {
    format!(
        "CREATE TEMPORARY VIEW {} AS {};",
        ident(source),
        on_time_query(source, column)
    )
}

/// The query of [`on_time_view`].
fn on_time_query(source: &str, column: &str) -> String {
    let c = ident(column);
    format!(
        "SELECT * FROM {} WHERE CURRENT_WATERMARK({c}) IS NULL OR {c} >= CURRENT_WATERMARK({c})",
        ident(&raw_table_name(source))
    )
}

/// A watermark delay as an INTERVAL Flink computes: the largest whole unit (`'5' MINUTE`,
/// `'1.500' SECOND`), with a leading precision when the number has three digits; a number
/// of four digits or more in every unit (Flink's code generation takes a leading precision
/// of at most 3) as the DAY TO SECOND range. The check keeps delays under 1000 days.
fn delay_interval(ms: u64) -> String {
    if ms == 0 {
        return "INTERVAL '0' SECOND".into();
    }
    match streamform_ir::expr::largest_unit(ms) {
        Some((size, name)) if ms / size < 100 => format!("INTERVAL '{}' {name}", ms / size),
        Some((size, name)) if ms / size < 1000 => format!("INTERVAL '{}' {name}(3)", ms / size),
        None if ms < 100_000 => format!("INTERVAL '{}.{:03}' SECOND", ms / 1000, ms % 1000),
        _ => {
            let (days, rest) = (ms / 86_400_000, ms % 86_400_000);
            format!(
                "INTERVAL '{days} {:02}:{:02}:{:02}.{:03}' DAY(3) TO SECOND(3)",
                rest / 3_600_000,
                rest % 3_600_000 / 60_000,
                rest % 60_000 / 1000,
                rest % 1000
            )
        }
    }
}

/// `sink_<model>`.
pub fn sink_table_name(model: &str) -> String {
    format!("sink_{model}")
}

/// The tables of the application that a compiled plan's sources read and sinks write, with
/// the operator identity each stands for ([`crate::compiled`]): a source's table (its raw
/// table when late events are dropped) for the source, a sink's table for its model's Sink
/// node.
pub fn operator_tables(plans: &[ModelPlan]) -> std::collections::BTreeMap<String, String> {
    let mut tables = std::collections::BTreeMap::new();
    for first in plans.iter().flat_map(|p| &p.nodes) {
        if let Operator::Source {
            name, event_time, ..
        } = &first.op
        {
            tables.insert(
                created_table_name(name, event_time.as_ref()),
                crate::compiled::source_identity(name),
            );
        }
    }
    for plan in plans {
        let sink = plan.sink();
        if let Operator::Sink {
            target: Some(_), ..
        } = &sink.op
        {
            tables.insert(sink_table_name(&plan.name), sink.id.to_string());
        }
    }
    tables
}

/// Whether `e` takes a remainder of float64 values, which Flink's MOD does not accept.
fn float_modulo(e: &Expr) -> bool {
    match e {
        Expr::Binary {
            op: BinaryOp::Arith(ArithOp::Mod),
            ty: DataType::Float64,
            ..
        } => true,
        Expr::Binary { left, right, .. } => float_modulo(left) || float_modulo(right),
        Expr::Not(inner)
        | Expr::Negative(inner)
        | Expr::IsNull { expr: inner, .. }
        | Expr::PlusInterval { expr: inner, .. }
        | Expr::Cast { expr: inner, .. }
        | Expr::TryCast { expr: inner, .. } => float_modulo(inner),
        Expr::Case {
            branches,
            otherwise,
            ..
        } => {
            branches
                .iter()
                .any(|(c, r)| float_modulo(c) || float_modulo(r))
                || otherwise.as_deref().is_some_and(float_modulo)
        }
        Expr::Call { args, .. } => args.iter().any(float_modulo),
        Expr::Column { .. } | Expr::Literal { .. } => false,
    }
}

fn capability_errors(plan: &ModelPlan) -> Vec<Finding> {
    let mut out = Vec::new();
    for node in &plan.nodes {
        let exprs: Vec<&Expr> = match &node.op {
            Operator::Filter { predicate } => vec![predicate],
            Operator::Project { items } => items.iter().map(|i| &i.expr).collect(),
            _ => Vec::new(),
        };
        if exprs.into_iter().any(float_modulo) {
            out.push(Finding {
                kind: FindingKind::FloatModulo,
                model: Some(plan.name.clone()),
                subject: Subject::Operator(node.id.clone()),
                message: format!(
                    "model `{}`: `%` over float64 cannot run on Flink, whose MOD takes only exact numbers",
                    plan.name
                ),
                help: "cast the operands to an integer or decimal type first".into(),
            });
        }
        match &node.op {
            Operator::Sort { .. } => out.push(Finding {
                kind: FindingKind::StreamingSort,
                model: Some(plan.name.clone()),
                subject: Subject::Operator(node.id.clone()),
                message: format!(
                    "model `{}`: ORDER BY cannot run on Flink: its streaming mode sorts only on a time attribute",
                    plan.name
                ),
                help: "remove the ORDER BY (the simulator can still test it), or sort where the sink's output is read".into(),
            }),
            Operator::Sink {
                materialized: Materialized::Upsert { key },
                target: Some(target),
                ..
            } => match &target.connector {
                Connector::File { path } => out.push(Finding {
                    kind: FindingKind::UpsertFileSink,
                    model: Some(plan.name.clone()),
                    subject: Subject::Sink,
                    message: format!(
                        "model `{}`: a file sink cannot carry an upsert changelog (sink path {path})",
                        plan.name
                    ),
                    help: "write an upsert model to a kafka sink, or make the model `materialized: append`".into(),
                }),
                Connector::Kafka { .. } if key.is_empty() => out.push(Finding {
                    kind: FindingKind::UpsertWithoutKey,
                    model: Some(plan.name.clone()),
                    subject: Subject::Sink,
                    message: format!(
                        "model `{}`: an upsert sink needs a key, and this model declares none",
                        plan.name
                    ),
                    help: if plan.nodes.iter().any(|n| n.id.kind == streamform_ir::NodeKind::Rank) {
                        "Flink's upsert-kafka sink writes each row under its key: select the rank's row number and declare it as `key:`, or partition the rank and declare the partition columns (docs/ranking.md)".into()
                    } else {
                        "Flink's upsert-kafka sink writes each row under its key: add GROUP BY columns and declare them as `key:`".into()
                    },
                }),
                Connector::Kafka { .. } => {}
            },
            _ => {}
        }
    }
    out
}

/// Models nothing runs: a model runs when it has a sink or a model that runs reads it, so a
/// model read only by models without a sink is planned but never executed either.
fn unused_models(plans: &[ModelPlan]) -> Vec<Finding> {
    let mut runs: BTreeSet<&str> = BTreeSet::new();
    // Readers come after what they read in dependency order, so walk it backwards.
    for plan in plans.iter().rev() {
        let read_by_running = plans.iter().any(|reader| {
            runs.contains(reader.name.as_str()) && reader.models_read().any(|m| m == plan.name)
        });
        if sink_target(plan).is_some() || read_by_running {
            runs.insert(&plan.name);
        }
    }
    plans
        .iter()
        .filter(|p| !runs.contains(p.name.as_str()))
        .map(|p| Finding {
            kind: FindingKind::UnusedModel,
            model: Some(p.name.clone()),
            subject: Subject::Model,
            message: format!(
                "model `{}` has neither a sink nor a reader that runs: it is planned, but nothing runs it",
                p.name
            ),
            help: format!(
                "declare a `sink:` for it in streamform.yml, or read it with ref('{}') from a model that has one",
                p.name
            ),
        })
        .collect()
}

/// docs/concepts.md: Flink's upsert-kafka declares its key columns NOT NULL and fails the job on a null.
fn nullable_key_warnings(plan: &ModelPlan) -> Vec<Finding> {
    let (Materialized::Upsert { key }, Some(_)) = (plan.materialized(), sink_target(plan)) else {
        return Vec::new();
    };
    let schema = &plan.sink().schema;
    key.iter()
        .filter(|k| schema.iter().any(|f| &f.name == *k && f.nullable))
        .map(|k| Finding {
            kind: FindingKind::NullableKey,
            model: Some(plan.name.clone()),
            subject: Subject::Sink,
            message: format!(
                "model `{}`: key column `{k}` may be null, and Flink's upsert-kafka sink fails the job when a null key reaches it",
                plan.name
            ),
            help: format!("filter it out upstream: WHERE {k} IS NOT NULL"),
        })
        .collect()
}

/// An aggregate over an inner join, which Flink 2.2 splits in two when it plans with
/// [`REUSE_BLOCKS`]: a first aggregate of one side per join key below the join, the
/// aggregate itself above it. Each change of the other side then moves a whole group at
/// once, so the updates come in fewer steps than the simulator's, to the same rows
/// (docs/joins.md, "Tables that change").
fn pre_aggregated_join(plan: &ModelPlan) -> Option<Finding> {
    let join = plan.nodes.iter().position(|n| {
        matches!(
            n.op,
            Operator::Join {
                kind: streamform_ir::JoinKind::Inner,
                ..
            }
        )
    })?;
    let aggregate = plan.nodes[join..]
        .iter()
        .find(|n| n.id.kind == streamform_ir::NodeKind::Aggregate)?;
    Some(Finding {
        kind: FindingKind::PreAggregatedJoin,
        model: Some(plan.name.clone()),
        subject: Subject::Operator(aggregate.id.clone()),
        message: format!(
            "model `{}`: Flink 2.2 may split this aggregate over an inner join in two (a first aggregate below the join), because the application's state reaches several sinks; its updates then come in fewer steps than the simulator's, ending at the same rows",
            plan.name
        ),
        help: "on Flink 2.2 this model then skips some of the updates its fixtures state; to keep them alike, let only one model with a sink read each upsert source and each aggregate's model, so that no state reaches two sinks and the application needs no such option (docs/joins.md, \"Tables that change\")".into(),
    })
}

fn sink_target(plan: &ModelPlan) -> Option<&SinkTarget> {
    match &plan.sink().op {
        Operator::Sink { target, .. } => target.as_ref(),
        _ => None,
    }
}

fn columns(schema: &[Field]) -> Vec<String> {
    schema
        .iter()
        .map(|f| format!("  {} {}", ident(&f.name), data_type(f.ty)))
        .collect()
}

fn with_options(options: &[(String, String)]) -> String {
    let lines: Vec<String> = options
        .iter()
        .map(|(k, v)| format!("  {} = {}", string_literal(k), string_literal(v)))
        .collect();
    format!("WITH (\n{}\n)", lines.join(",\n"))
}

fn opt(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

/// Format options beyond `format` itself, with `prefix` (`""`, `"key."`, `"value."`).
fn format_options(
    format: &str,
    schema: &[Field],
    prefix: &str,
    writes: bool,
) -> Vec<(String, String)> {
    let has = |pred: fn(DataType) -> bool| schema.iter().any(|f| pred(f.ty));
    let mut out = Vec::new();
    match format {
        "json" => {
            if has(|t| t == DataType::Timestamp) {
                out.push(opt(
                    &format!("{prefix}json.timestamp-format.standard"),
                    "ISO-8601",
                ));
            }
            if writes {
                out.push(opt(
                    &format!("{prefix}json.encode.decimal-as-plain-number"),
                    "true",
                ));
            }
        }
        "csv" if writes && has(|t| matches!(t, DataType::Decimal { .. })) => {
            out.push(opt(
                &format!("{prefix}csv.write-bigdecimal-in-scientific-notation"),
                "false",
            ));
        }
        _ => {}
    }
    out
}

/// Keeps Flink's normalization of an upsert source (per key the last row: an insert, then
/// updates, a delete with the stored row, nothing for a repeat or for the delete of an absent
/// key). Flink 2.2 drops it where no operator downstream asks for updates' old rows, and
/// then passes repeats and the deletes of absent keys on; with this option every supported
/// version keeps it, which is what the simulator computes (docs/flink-backend.md, "Planner
/// options").
pub const CDC_EVENTS_DUPLICATE: &str = "table.exec.source.cdc-events-duplicate";

/// Has Flink plan the part of the statement set that several sinks share once. Without it,
/// Flink 2.2 plans a stateful operator once per sink it reaches (each copy keeping only the
/// columns its sink needs), where 2.0 plans it once: two operators holding the same state,
/// which a compiled plan cannot pin apart. Flink 2.0's planner fails with it on an
/// application whose source several models read (docs/flink-backend.md, "Planner options").
pub const REUSE_BLOCKS: &str = "table.optimizer.reuse-optimize-block-with-digest-enabled";

/// The options an application is planned with on a Flink of version `version` (major,
/// minor; `None` when the gateway does not say): [`REUSE_BLOCKS`] only from 2.2, since
/// Flink 2.0's planner fails with it where several models read one source and plans what
/// several sinks share once without it.
pub fn planner_options(
    config: &BTreeMap<String, String>,
    version: Option<(u32, u32)>,
) -> BTreeMap<String, String> {
    let mut options = config.clone();
    if version.is_some_and(|v| v < (2, 2)) {
        options.remove(REUSE_BLOCKS);
    }
    options
}

fn source_table(
    name: &str,
    (connector, format, changelog): (&Connector, &str, &Changelog),
    schema: &[Field],
    event_time: Option<&EventTime>,
    kafka: &KafkaSettings,
) -> String {
    let mut cols = columns(schema);
    let options = match (connector, changelog) {
        // upsert-kafka always reads from the earliest offset: it takes no startup mode.
        (Connector::Kafka { topic }, Changelog::Upsert(key)) => {
            cols.push(primary_key(key));
            upsert_kafka_options(topic, format, schema, key, kafka, false)
        }
        (Connector::Kafka { topic }, _) => {
            let mut o = vec![
                opt("connector", "kafka"),
                opt("topic", topic),
                opt("properties.bootstrap.servers", &kafka.bootstrap_servers),
                opt("format", format),
                opt(
                    "scan.startup.mode",
                    if kafka.startup == "latest" {
                        "latest-offset"
                    } else {
                        "earliest-offset"
                    },
                ),
            ];
            o.extend(format_options(format, schema, "", false));
            o
        }
        (Connector::File { path }, _) => {
            let mut o = vec![
                opt("connector", "filesystem"),
                opt("path", path),
                opt("format", format),
            ];
            o.extend(format_options(format, schema, "", false));
            o
        }
    };
    if let Some(t) = event_time {
        let c = ident(&t.column);
        cols.push(format!(
            "  WATERMARK FOR {c} AS {c} - {}",
            delay_interval(t.watermark)
        ));
    }
    format!(
        "CREATE TABLE {} (\n{}\n) {};",
        ident(name),
        cols.join(",\n"),
        with_options(&options)
    )
}

/// `PRIMARY KEY (...) NOT ENFORCED`, the column line of an upsert-kafka table's key.
fn primary_key(key: &[String]) -> String {
    let keys: Vec<String> = key.iter().map(|k| ident(k)).collect();
    format!("  PRIMARY KEY ({}) NOT ENFORCED", keys.join(", "))
}

/// The options of an upsert-kafka table, source or sink (`writes`): the key and the value in
/// `format`, the value carrying every column (upsert-kafka's default), and the format options
/// of each, prefixed with `key.` and `value.`.
fn upsert_kafka_options(
    topic: &str,
    format: &str,
    schema: &[Field],
    key: &[String],
    kafka: &KafkaSettings,
    writes: bool,
) -> Vec<(String, String)> {
    let key_schema: Vec<Field> = schema
        .iter()
        .filter(|f| key.contains(&f.name))
        .cloned()
        .collect();
    let mut o = vec![
        opt("connector", "upsert-kafka"),
        opt("topic", topic),
        opt("properties.bootstrap.servers", &kafka.bootstrap_servers),
        opt("key.format", format),
        opt("value.format", format),
    ];
    let key_opts = format_options(format, &key_schema, "key.", writes);
    let value_opts = format_options(format, schema, "value.", writes);
    // Group like options together: key.x then value.x, as the reference prints them.
    for v in value_opts {
        let suffix = v.0.trim_start_matches("value.");
        if let Some(k) = key_opts
            .iter()
            .find(|k| k.0.trim_start_matches("key.") == suffix)
        {
            o.push(k.clone());
        }
        o.push(v);
    }
    o
}

fn sink_table(plan: &ModelPlan, kafka: &KafkaSettings) -> Option<String> {
    let target = sink_target(plan)?;
    let schema = &plan.sink().schema;
    let mut cols = columns(schema);
    let options = match (plan.materialized(), &target.connector) {
        (Materialized::Upsert { key }, Connector::Kafka { topic }) => {
            cols.push(primary_key(key));
            upsert_kafka_options(topic, &target.format, schema, key, kafka, true)
        }
        (_, Connector::Kafka { topic }) => {
            let mut o = vec![
                opt("connector", "kafka"),
                opt("topic", topic),
                opt("properties.bootstrap.servers", &kafka.bootstrap_servers),
                opt("format", &target.format),
            ];
            o.extend(format_options(&target.format, schema, "", true));
            o
        }
        (_, Connector::File { path }) => {
            let mut o = vec![
                opt("connector", "filesystem"),
                opt("path", path),
                opt("format", &target.format),
            ];
            o.extend(format_options(&target.format, schema, "", true));
            o
        }
    };
    Some(format!(
        "CREATE TABLE {} (\n{}\n) {};",
        ident(&sink_table_name(&plan.name)),
        cols.join(",\n"),
        with_options(&options)
    ))
}

/// The model's nodes as one query of nested subqueries, each node's query reading its
/// inputs': a Source's table or an upstream model's view by name (or, where `written_out`
/// gives one, that relation's own query as a subquery under its name), another node as a
/// subquery aliased `t<index>`. A Union is its inputs' queries joined by UNION ALL.
fn view_query(
    plan: &ModelPlan,
    plans: &[ModelPlan],
    written_out: &dyn Fn(&str) -> Option<String>,
) -> String {
    // The query of each node rendered so far, by node id, with its index.
    let mut rendered: Rendered<'_> = std::collections::HashMap::new();
    for (i, node) in plan.nodes.iter().enumerate() {
        if matches!(node.op, Operator::Source { .. } | Operator::Sink { .. }) {
            continue;
        }
        let inputs: Vec<Relation> = node
            .inputs
            .iter()
            .map(|id| relation(plan, plans, &rendered, written_out, id))
            .collect();
        let Some(input) = inputs.first() else {
            continue;
        };
        let from = &input.from;
        let q = match &node.op {
            Operator::Source { .. } | Operator::Sink { .. } => continue,
            Operator::Filter { predicate } => {
                format!("SELECT * FROM {from} WHERE {}", expr(predicate))
            }
            Operator::Project { items } => {
                // The event-time column the projection keeps as its time attribute (under
                // `node.time`); a second plain copy of it would be a second time attribute
                // on Flink, which refuses to write two to a table, so it is cast to a plain
                // timestamp, as the plan reads it.
                let time_column = items
                    .iter()
                    .find(|i| node.time.as_ref() == Some(&i.name))
                    .and_then(|i| match &i.expr {
                        Expr::Column { name, .. } => Some(name),
                        _ => None,
                    });
                let cols: Vec<String> = items
                    .iter()
                    .map(|item| {
                        let e = match &item.expr {
                            Expr::Column { name, .. }
                                if Some(name) == time_column
                                    && node.time.as_ref() != Some(&item.name) =>
                            {
                                format!("CAST({} AS TIMESTAMP(3))", expr(&item.expr))
                            }
                            _ => expr(&item.expr),
                        };
                        if e == ident(&item.name) {
                            e
                        } else {
                            format!("{e} AS {}", ident(&item.name))
                        }
                    })
                    .collect();
                format!("SELECT {} FROM {from}", cols.join(", "))
            }
            Operator::Aggregate { group_by, calls } => {
                let keys: Vec<String> = group_by.iter().map(|k| ident(k)).collect();
                let mut cols = keys.clone();
                let input_schema = &input.schema;
                cols.extend(calls.iter().map(|c| {
                    format!(
                        "{} AS {}",
                        aggregate_call(c, input_schema),
                        ident(&tagged(c, &node.id))
                    )
                }));
                // Retention as Flink's state TTL on the aggregate, keyed by the name of what
                // it reads (the table, the view, or the subquery's alias).
                let hint = match &node.state {
                    State::Keyed(k) if k.retention != Retention::Unbounded => {
                        format!(
                            "/*+ STATE_TTL({} = {}) */ ",
                            string_literal(&input.name),
                            string_literal(&k.retention.to_string())
                        )
                    }
                    _ => String::new(),
                };
                let mut q = format!("SELECT {hint}{} FROM {from}", cols.join(", "));
                if !keys.is_empty() {
                    let _ = write!(q, " GROUP BY {}", keys.join(", "));
                }
                untagged(&q, group_by, calls, &node.id, i)
            }
            Operator::Window {
                window,
                group_by,
                calls,
            } => {
                let input_schema = &input.schema;
                let q = window_query(&input.data, window, group_by, calls, input_schema, &node.id);
                untagged(&q, group_by, calls, &node.id, i)
            }
            Operator::WindowTable { window } => {
                let cols: Vec<String> = node.schema.iter().map(|f| ident(&f.name)).collect();
                format!(
                    "SELECT {} FROM TABLE({})",
                    cols.join(", "),
                    window_tvf(&input.data, window, &[])
                )
            }
            Operator::Deduplicate { key } => keep_last_row(from, key, &node.schema, i),
            Operator::Rank {
                partition_by,
                ranking,
                number,
            } => {
                // Over a window table, the column the windows are measured on stays a time
                // attribute on Flink beside window_time: it leaves the rank as a plain one.
                let plain = plan
                    .nodes
                    .iter()
                    .find(|n| node.inputs.first() == Some(&n.id))
                    .and_then(|n| match &n.op {
                        Operator::WindowTable { window } => Some(window.time.as_str()),
                        _ => None,
                    });
                rank::rank(
                    from,
                    &input.schema,
                    partition_by,
                    (ranking, plain),
                    number.as_deref(),
                    i,
                )
            }
            Operator::Over {
                partition_by,
                frame,
                calls,
            } => over::over(from, &input.schema, partition_by, frame, calls),
            Operator::Union => union_all(node, &inputs),
            Operator::Join { kind, on, filter } => {
                regular_join(node, (*kind, on, filter.as_ref()), &inputs, i)
            }
            Operator::IntervalJoin {
                kind,
                on,
                bounds,
                filter,
            } => interval_join(node, (*kind, on, bounds, filter.as_ref()), &inputs, i),
            Operator::TemporalJoin {
                kind,
                on,
                left_time,
                right_time,
            } => temporal_join(node, (*kind, on, left_time, right_time), &inputs, i),
            Operator::Sort { .. } => unreachable!("ORDER BY is refused before generation"),
        };
        rendered.insert(&node.id, (i, q));
    }
    let sink = plan.sink();
    match sink.inputs.first().and_then(|id| rendered.get(id)) {
        Some((_, q)) => q.clone(),
        None => {
            let input = sink
                .inputs
                .first()
                .map(|id| relation(plan, plans, &rendered, written_out, id).from)
                .unwrap_or_default();
            format!("SELECT * FROM {input}")
        }
    }
}

/// The query of each node of a model rendered so far, by id, with the node's index.
type Rendered<'p> = std::collections::HashMap<&'p NodeId, (usize, String)>;

/// A relation a node reads, as the node's query writes it.
struct Relation {
    /// The FROM item: a table or view name, or a subquery with its alias.
    from: String,
    /// The name the FROM item goes by, which a state TTL hint names.
    name: String,
    /// A query of the relation in parentheses, which a window table function reads.
    data: String,
    /// Its columns.
    schema: Vec<Field>,
}

/// What reading node `id` takes in `plan`'s query: a node rendered already as a subquery,
/// a Source's table, or an upstream model's view (each written out where `written_out`
/// says).
fn relation(
    plan: &ModelPlan,
    plans: &[ModelPlan],
    rendered: &Rendered<'_>,
    written_out: &dyn Fn(&str) -> Option<String>,
    id: &NodeId,
) -> Relation {
    let own = plan.nodes.iter().find(|n| &n.id == id);
    if let (Some((inner, q)), Some(node)) = (rendered.get(id), own) {
        return Relation {
            from: format!("({q}) AS t{inner}"),
            name: format!("t{inner}"),
            data: format!("({q})"),
            schema: node.schema.clone(),
        };
    }
    let (name, schema) = match own {
        Some(Node {
            op: Operator::Source { name, .. },
            schema,
            ..
        }) => (name.clone(), schema.clone()),
        _ => (
            id.model.clone(),
            plans
                .iter()
                .find(|p| p.name == id.model)
                .map(|p| p.sink().schema.clone())
                .unwrap_or_default(),
        ),
    };
    let from = written_out(&name).unwrap_or_else(|| ident(&name));
    Relation {
        data: format!("(SELECT * FROM {from})"),
        from,
        name: name.to_string(),
        schema,
    }
}

/// A regular join of the two inputs (docs/joins.md): each side as a subquery whose columns
/// carry the join's output names (a right column renamed where the left has its name), so
/// that ON and the filter name every column unqualified; an event-time column is cast to a
/// plain TIMESTAMP(3), since a regular join ends event time and Flink refuses to write two
/// time attributes to one table.
fn regular_join(
    node: &Node,
    (kind, on, filter): (streamform_ir::JoinKind, &[(String, String)], Option<&Expr>),
    inputs: &[Relation],
    i: usize,
) -> String {
    let (l, r, mut condition) = join_sides(node, on, inputs, i, &[]);
    if let Some(f) = filter {
        condition.push(expr(f));
    }
    let join = join_keyword(kind);
    // Retention as Flink's state TTL on both sides, keyed by their aliases.
    let hint = match &node.state {
        State::Keyed(k) if k.retention != Retention::Unbounded => {
            let ttl = string_literal(&k.retention.to_string());
            format!(
                "/*+ STATE_TTL({} = {ttl}, {} = {ttl}) */ ",
                string_literal(&format!("l{i}")),
                string_literal(&format!("r{i}"))
            )
        }
        _ => String::new(),
    };
    format!(
        "SELECT {hint}* FROM ({l}) AS {} {join} ({r}) AS {} ON {}",
        ident(&format!("l{i}")),
        ident(&format!("r{i}")),
        condition.join(" AND ")
    )
}

/// `JOIN`, `LEFT JOIN`, `RIGHT JOIN` or `FULL JOIN`.
fn join_keyword(kind: streamform_ir::JoinKind) -> &'static str {
    match kind {
        streamform_ir::JoinKind::Inner => "JOIN",
        streamform_ir::JoinKind::Left => "LEFT JOIN",
        streamform_ir::JoinKind::Right => "RIGHT JOIN",
        streamform_ir::JoinKind::Full => "FULL JOIN",
    }
}

/// An interval join of the two inputs (docs/joins.md, "Joins in time"): each side as a
/// regular join's, but for its time attribute, which Flink must see to plan an interval
/// join; the time condition as `BETWEEN`, which Flink reads as its two bounds. Flink keeps
/// both time attributes after the join and refuses to write two to one table, so the one
/// the plan does not keep (`node.time`) is cast to a plain TIMESTAMP(3).
fn interval_join(
    node: &Node,
    (kind, on, bounds, filter): (
        streamform_ir::JoinKind,
        &[(String, String)],
        &streamform_ir::TimeBounds,
        Option<&Expr>,
    ),
    inputs: &[Relation],
    i: usize,
) -> String {
    let times = [bounds.left_time.clone(), bounds.right_time.clone()];
    let (l, r, mut condition) = join_sides(node, on, inputs, i, &times);
    let at = |ms: i64| {
        let right = format!("{}.{}", ident(&format!("r{i}")), ident(&bounds.right_time));
        match ms {
            0 => right,
            ms if ms < 0 => format!("{right} - {}", delay_interval(ms.unsigned_abs())),
            ms => format!("{right} + {}", delay_interval(ms.unsigned_abs())),
        }
    };
    condition.push(format!(
        "{}.{} BETWEEN {} AND {}",
        ident(&format!("l{i}")),
        ident(&bounds.left_time),
        at(bounds.lower),
        at(bounds.upper)
    ));
    if let Some(f) = filter {
        condition.push(expr(f));
    }
    let cols: Vec<String> = node
        .schema
        .iter()
        .map(|f| {
            if times.contains(&f.name) && node.time.as_ref() != Some(&f.name) {
                format!(
                    "CAST({} AS TIMESTAMP(3)) AS {}",
                    ident(&f.name),
                    ident(&f.name)
                )
            } else {
                ident(&f.name)
            }
        })
        .collect();
    format!(
        "SELECT {} FROM ({l}) AS {} {} ({r}) AS {} ON {}",
        cols.join(", "),
        ident(&format!("l{i}")),
        join_keyword(kind),
        ident(&format!("r{i}")),
        condition.join(" AND ")
    )
}

/// An event-time temporal join (docs/joins.md, "Joins in time"): the probe side as a
/// regular join's left subquery with its time attribute kept, the versioned side as the
/// upsert source's table itself (Flink reads `FOR SYSTEM_TIME AS OF` only on a table with a
/// primary key and a watermark), its columns named in the SELECT as the join names them,
/// its time cast to a plain TIMESTAMP(3) so that the rows keep one time attribute.
fn temporal_join(
    node: &Node,
    (kind, on, left_time, right_time): (streamform_ir::JoinKind, &[(String, String)], &str, &str),
    inputs: &[Relation],
    i: usize,
) -> String {
    let [_, right] = inputs else {
        unreachable!("a join reads two inputs")
    };
    let (l, _, _) = join_sides(node, on, inputs, i, &[left_time.to_string()]);
    let (la, ra) = (ident(&format!("l{i}")), ident(&format!("r{i}")));
    let width = node.schema.len() - right.schema.len();
    let cols: Vec<String> = node
        .schema
        .iter()
        .enumerate()
        .map(|(at, f)| match at.checked_sub(width) {
            None => format!("{la}.{}", ident(&f.name)),
            Some(r) => {
                let column = format!("{ra}.{}", ident(&right.schema[r].name));
                if f.name == right_time {
                    format!("CAST({column} AS TIMESTAMP(3)) AS {}", ident(&f.name))
                } else if right.schema[r].name == f.name {
                    column
                } else {
                    format!("{column} AS {}", ident(&f.name))
                }
            }
        })
        .collect();
    let condition: Vec<String> = on
        .iter()
        .map(|(lc, rc)| format!("{la}.{} = {ra}.{}", ident(lc), ident(rc)))
        .collect();
    format!(
        "SELECT {} FROM ({l}) AS {la} {} {} FOR SYSTEM_TIME AS OF {la}.{} AS {ra} ON {}",
        cols.join(", "),
        join_keyword(kind),
        right.from,
        ident(left_time),
        condition.join(" AND ")
    )
}

/// The two sides of a join as subqueries whose columns carry the join's output names (a
/// right column renamed where the left has its name), so that ON and the filter name every
/// column unqualified, and the equalities of `on` between them. An event-time column is
/// cast to a plain TIMESTAMP(3) (a regular join ends event time, and Flink refuses to write
/// two time attributes to one table), but for the `kept` ones, by their output names.
fn join_sides(
    node: &Node,
    on: &[(String, String)],
    inputs: &[Relation],
    i: usize,
    kept: &[String],
) -> (String, String, Vec<String>) {
    let [left, right] = inputs else {
        unreachable!("a join reads two inputs")
    };
    let mut names = node.schema.iter().map(|f| f.name.as_str());
    let mut side = |input: &Relation| -> (String, Vec<String>) {
        let mut out_names = Vec::new();
        let cols: Vec<String> = input
            .schema
            .iter()
            .map(|f| {
                let out = names.next().unwrap_or(&f.name).to_string();
                let e = if f.ty == streamform_ir::DataType::Timestamp && !kept.contains(&out) {
                    format!("CAST({} AS TIMESTAMP(3))", ident(&f.name))
                } else {
                    ident(&f.name)
                };
                let col = if e == ident(&out) {
                    e
                } else {
                    format!("{e} AS {}", ident(&out))
                };
                out_names.push(out);
                col
            })
            .collect();
        (
            format!("SELECT {} FROM {}", cols.join(", "), input.from),
            out_names,
        )
    };
    let (l, l_names) = side(left);
    let (r, r_names) = side(right);
    let renamed = |names: &[String], schema: &[Field], column: &str| {
        schema
            .iter()
            .position(|f| f.name == column)
            .map_or_else(|| column.to_string(), |p| names[p].clone())
    };
    let condition: Vec<String> = on
        .iter()
        .map(|(lc, rc)| {
            format!(
                "{}.{} = {}.{}",
                ident(&format!("l{i}")),
                ident(&renamed(&l_names, &left.schema, lc)),
                ident(&format!("r{i}")),
                ident(&renamed(&r_names, &right.schema, rc))
            )
        })
        .collect();
    (l, r, condition)
}

/// UNION ALL of the inputs' rows, each as `SELECT <columns> FROM <input>`, the columns under
/// the union's names (docs/sql.md, "Several inputs"). Every column but the time attribute
/// the union keeps is cast to its type: Flink would unify `'web'` (a CHAR(3)) with
/// `'mobile'` (a CHAR(6)) by padding the shorter with spaces, and a time attribute only with
/// another, so an input's event-time column the union does not keep becomes a plain
/// TIMESTAMP(3).
fn union_all(node: &Node, inputs: &[Relation]) -> String {
    let branches: Vec<String> = inputs
        .iter()
        .map(|input| {
            let cols: Vec<String> = input
                .schema
                .iter()
                .zip(&node.schema)
                .map(|(f, out)| {
                    let keeps_time = node.time.as_ref() == Some(&out.name);
                    let e = if keeps_time {
                        ident(&f.name)
                    } else {
                        format!("CAST({} AS {})", ident(&f.name), data_type(out.ty))
                    };
                    if e == ident(&out.name) {
                        e
                    } else {
                        format!("{e} AS {}", ident(&out.name))
                    }
                })
                .collect();
            format!("SELECT {} FROM {}", cols.join(", "), input.from)
        })
        .collect();
    branches.join(" UNION ALL ")
}

/// A window aggregation as Flink's window table-valued function (docs/windows.md): the
/// TVF reads its input as a subquery (Flink takes a subquery without `TABLE`) that names
/// no temporary view (see `generate`), grouped by the window's columns
/// and the key; a SESSION is partitioned by that key. Only the TVF form, with no offset: Flink 2.0 to 2.2 lose whole windows with
/// one (docs/windows.md, "What Flink does").
fn window_query(
    data: &str,
    window: &streamform_ir::Window,
    group_by: &[String],
    calls: &[AggCall],
    input: &[Field],
    id: &NodeId,
) -> String {
    // Sessions are kept per aggregation key: Flink plans a window aggregate only when the
    // PARTITION BY is the key it groups by (docs/windows.md).
    let key: Vec<&String> = group_by
        .iter()
        .filter(|g| !streamform_ir::WINDOW_COLUMNS.contains(&g.as_str()))
        .collect();
    let tvf = window_tvf(data, window, &key);
    let keys: Vec<String> = group_by.iter().map(|k| ident(k)).collect();
    let mut cols = keys.clone();
    cols.extend(
        calls
            .iter()
            .map(|c| format!("{} AS {}", aggregate_call(c, input), ident(&tagged(c, id)))),
    );
    format!(
        "SELECT {} FROM TABLE({tvf}) GROUP BY {}",
        cols.join(", "),
        keys.join(", ")
    )
}

/// The window table-valued function call over `data` (a query in parentheses): TUMBLE,
/// HOP, CUMULATE, or a SESSION partitioned by `session_key`.
fn window_tvf(data: &str, window: &streamform_ir::Window, session_key: &[&String]) -> String {
    use streamform_ir::WindowKind;
    let time = format!("DESCRIPTOR({})", ident(&window.time));
    match window.kind {
        WindowKind::Tumble { size } => format!("TUMBLE({data}, {time}, {})", delay_interval(size)),
        WindowKind::Hop { slide, size } => format!(
            "HOP({data}, {time}, {}, {})",
            delay_interval(slide),
            delay_interval(size)
        ),
        WindowKind::Cumulate { step, size } => format!(
            "CUMULATE({data}, {time}, {}, {})",
            delay_interval(step),
            delay_interval(size)
        ),
        WindowKind::Session { gap } => {
            let key: Vec<String> = session_key.iter().map(|g| ident(g)).collect();
            let partition = match key.len() {
                0 => String::new(),
                _ => format!(" PARTITION BY ({})", key.join(", ")),
            };
            format!(
                "SESSION({data}{partition}, {time}, {})",
                delay_interval(gap)
            )
        }
    }
}

/// The name an aggregate call's result gets inside the aggregating query: the call's name
/// followed by its node's id in brackets. Flink keeps it as the call's name in the compiled
/// plan, which is how a stateful operator there is told to be this node (docs/deployment.md,
/// "Which changes keep their state"); the query around it gives the columns their plain names.
pub fn tagged(call: &AggCall, node: &NodeId) -> String {
    format!("{} [{node}]", call.name())
}

/// `q`, an aggregating query whose call results carry their [`tagged`] names, wrapped in a
/// query that names them as the plan does.
fn untagged(q: &str, group_by: &[String], calls: &[AggCall], id: &NodeId, i: usize) -> String {
    let mut cols: Vec<String> = group_by.iter().map(|k| ident(k)).collect();
    cols.extend(
        calls
            .iter()
            .map(|c| format!("{} AS {}", ident(&tagged(c, id)), ident(&c.name()))),
    );
    format!(
        "SELECT {} FROM ({q}) AS {}",
        cols.join(", "),
        ident(&format!("calls{i}"))
    )
}

/// The last row per key of `from` (docs/sql.md), in the form Flink's planner turns into its
/// keep-last-row deduplication: ROW_NUMBER over the key, newest first by processing time,
/// keeping row 1. The helper columns get names no column of the row has.
fn keep_last_row(from: &str, key: &[String], schema: &[Field], i: usize) -> String {
    let fresh = |base: &str| {
        let mut name = base.to_string();
        while schema.iter().any(|f| f.name == name) {
            name.push('_');
        }
        name
    };
    let (time, row) = (ident(&fresh("sf_arrival")), ident(&fresh("sf_row")));
    let cols: Vec<String> = schema.iter().map(|f| ident(&f.name)).collect();
    let cols = cols.join(", ");
    let keys: Vec<String> = key.iter().map(|k| ident(k)).collect();
    format!(
        "SELECT {cols} FROM (SELECT {cols}, ROW_NUMBER() OVER (PARTITION BY {} ORDER BY {time} DESC) AS {row} FROM (SELECT {cols}, PROCTIME() AS {time} FROM {from}) AS {}) AS {} WHERE {row} = 1",
        keys.join(", "),
        ident(&format!("arrived{i}")),
        ident(&format!("latest{i}")),
    )
}

/// An aggregate call computing the accumulator type of docs/sql.md in Flink: SUM over int32 is generated
/// over a CAST to BIGINT (Flink would otherwise sum in INT); AVG's types are Flink's own.
fn aggregate_call(call: &AggCall, input: &[Field]) -> String {
    let Some(arg) = &call.arg else {
        return "COUNT(*)".into();
    };
    if let AggFunc::Lag(n) = call.func {
        return match n {
            1 => format!("LAG({})", ident(arg)),
            n => format!("LAG({}, {n})", ident(arg)),
        };
    }
    let arg_ty = input.iter().find(|f| &f.name == arg).map(|f| f.ty);
    let arg_sql = match (call.func, arg_ty) {
        (AggFunc::Sum, Some(DataType::Int32)) => format!("CAST({} AS BIGINT)", ident(arg)),
        (AggFunc::CountDistinct, _) => format!("DISTINCT {}", ident(arg)),
        _ => ident(arg),
    };
    format!("{}({arg_sql})", call.func.name().to_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reuse_option_goes_only_to_flink_2_2_and_later() {
        let config: BTreeMap<String, String> = [CDC_EVENTS_DUPLICATE, REUSE_BLOCKS]
            .iter()
            .map(|k| (k.to_string(), "true".to_string()))
            .collect();
        let on = |v| planner_options(&config, v).contains_key(REUSE_BLOCKS);
        assert!(!on(Some((2, 0))));
        assert!(!on(Some((2, 1))));
        assert!(on(Some((2, 2))));
        assert!(on(Some((3, 0))));
        assert!(
            on(None),
            "a gateway that does not say is taken as a current one"
        );
        assert!(planner_options(&config, Some((2, 0))).contains_key(CDC_EVENTS_DUPLICATE));
    }
}
