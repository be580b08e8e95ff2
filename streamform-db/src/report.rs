//! The documents `check --json`, `test --json` and `graph --json` print, and the JSON
//! Schema of every document the binary reads or writes (the protocol: each document
//! carries its version first, is refused when it has a field this build does not know, and
//! has a schema generated from the type that owns it).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use streamform_ir::{Connector, Field, Input, Value};

use crate::db::{
    Database, Db, FixtureRun, Project, dependency_graph, file_text, fixture_def, model_files,
    model_reads, project_config, source_defs,
};
use crate::diagnostic::{Diagnostic, Severity};
use crate::fixture::Expected;

/// A document this build reads or writes: its name, the version it speaks, and where it
/// appears.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Document {
    /// The name `streamform schema` takes: `check-report`.
    pub name: &'static str,
    /// The version this build reads and writes.
    pub version: u32,
    /// Where the document appears.
    pub appears: &'static str,
}

/// Every document with a schema, in the order `schema --list` prints them.
pub const DOCUMENTS: [Document; 11] = [
    Document {
        name: "project",
        version: 1,
        appears: "streamform.yml",
    },
    Document {
        name: "sources",
        version: 1,
        appears: "sources.yml",
    },
    Document {
        name: "fixture",
        version: 1,
        appears: "tests/*.yml",
    },
    Document {
        name: "plan-manifest",
        version: 1,
        appears: "inspect-plan --json, build/plan.json",
    },
    Document {
        name: "plan-manifest-slice",
        version: 1,
        appears: "explain MODEL --json, inspect-plan MODEL --json",
    },
    Document {
        name: "applied-record",
        version: streamform_ir::record::RECORD_VERSION,
        appears: ".streamform/applied/<target>.json",
    },
    Document {
        name: "diff",
        version: 1,
        appears: "plan --json",
    },
    Document {
        name: "status",
        version: 1,
        appears: "status --json",
    },
    Document {
        name: "check-report",
        version: 1,
        appears: "check --json",
    },
    Document {
        name: "test-report",
        version: 1,
        appears: "test --json",
    },
    Document {
        name: "graph",
        version: 1,
        appears: "graph --json",
    },
];

/// The JSON Schema (draft 2020-12) of the document `name`, generated from the type that
/// owns it, with its `$id` (`urn:streamform:spec:<name>:v<N>`) and its version field pinned
/// to the version this build speaks. `None` for a name that is no document.
pub fn schema(name: &str) -> Option<serde_json::Value> {
    let doc = DOCUMENTS.iter().find(|d| d.name == name)?;
    let (schema, version_field) = match name {
        "project" => (crate::config::project_schema(), "version"),
        "sources" => (crate::config::sources_schema(), ""),
        "fixture" => (crate::fixture::fixture_schema(), ""),
        "plan-manifest" => (
            schemars::schema_for!(streamform_ir::manifest::Manifest),
            "manifest_version",
        ),
        "plan-manifest-slice" => (
            schemars::schema_for!(streamform_ir::manifest::ModelSlice),
            "manifest_version",
        ),
        "applied-record" => (
            schemars::schema_for!(streamform_ir::record::AppliedRecord),
            "record_version",
        ),
        "diff" => (
            schemars::schema_for!(streamform_ir::diff_document::DiffDocument),
            "diff_version",
        ),
        "status" => (
            schemars::schema_for!(streamform_flink::deploy::StatusDocument),
            "status_version",
        ),
        "check-report" => (schemars::schema_for!(CheckReport), "check_version"),
        "test-report" => (schemars::schema_for!(TestReport), "report_version"),
        "graph" => (schemars::schema_for!(Graph), "graph_version"),
        _ => return None,
    };
    let mut value = serde_json::to_value(schema).ok()?;
    let object = value.as_object_mut()?;
    object.insert(
        "$id".into(),
        format!("urn:streamform:spec:{}:v{}", doc.name, doc.version).into(),
    );
    if let Some(field) = object
        .get_mut("properties")
        .and_then(|p| p.get_mut(version_field))
        .and_then(|f| f.as_object_mut())
    {
        field.insert("const".into(), doc.version.into());
    }
    Some(value)
}

/// Why a document read back is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

/// Reads a report printed by this build (`T` one of the report types), strictly: another
/// version is refused naming both, and so is a field this build does not know.
///
/// # Errors
/// What is wrong with the text.
pub fn read<T: serde::de::DeserializeOwned>(
    text: &str,
    version_field: &str,
    version: u32,
) -> Result<T, Refused> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| Refused(format!("not JSON: {e}")))?;
    match value.get(version_field).and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(version) => {}
        Some(v) => {
            return Err(Refused(format!(
                "{version_field} {v}: this build reads version {version}"
            )));
        }
        None => return Err(Refused(format!("no {version_field}"))),
    }
    serde_json::from_value(value).map_err(|e| Refused(e.to_string()))
}

/// One problem, as the check report lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticEntry {
    /// `error` or `warning`.
    pub severity: String,
    /// The diagnostic's stable code, such as `unknown-column`.
    pub code: String,
    /// The file, relative to the project; `null` for the application as a whole.
    pub path: Option<String>,
    /// 1-based line of the position, when there is one.
    pub line: Option<u32>,
    /// 1-based column (in characters) of the position, when there is one.
    pub column: Option<u32>,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub help: Option<String>,
}

impl DiagnosticEntry {
    /// The entry for `d`, positioned in its file.
    pub fn of(db: &dyn Db, d: &Diagnostic) -> DiagnosticEntry {
        let path = d.file.map(|f| f.path(db).clone());
        let position = d
            .file
            .filter(|f| file_text(db, *f).is_some())
            .zip(d.span.as_ref())
            .map(|(file, span)| crate::db::position(db, file, span.start));
        DiagnosticEntry {
            severity: match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            }
            .into(),
            code: d.code.name().into(),
            path,
            line: position.and_then(|(l, _)| u32::try_from(l).ok()),
            column: position.and_then(|(_, c)| u32::try_from(c).ok()),
            message: d.message.clone(),
            help: d.help.clone(),
        }
    }
}

/// A model, as the check report lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelEntry {
    /// The model's name.
    pub name: String,
    /// `append` or `upsert`.
    pub materialized: String,
    /// The declared key (empty for append).
    pub key: Vec<String>,
    /// Its SQL file, relative to the project.
    pub path: String,
}

/// A source, as the check report lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceEntry {
    /// The source's name.
    pub name: String,
    /// `kafka` or `file`.
    pub connector: String,
    /// The topic or the path.
    pub location: String,
    /// `json` or `csv`.
    pub format: String,
    /// The number of columns of its schema.
    pub columns: u32,
    /// The event-time column, when the source runs on event time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_time: Option<String>,
}

/// A fixture, as the check report lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixtureEntry {
    /// The model it tests; `null` when the file does not name a model that exists.
    pub model: Option<String>,
    /// The file, relative to the project.
    pub path: String,
    /// The number of events in `given`.
    pub given: u32,
    /// The number of records in `expect`.
    pub expect: u32,
}

/// What `check --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckReport {
    /// The version of this document: 1.
    pub check_version: u32,
    /// Whether the project loaded (its streamform.yml could be read).
    pub loaded: bool,
    /// Whether check found nothing wrong (warnings count with `strict`).
    pub passed: bool,
    /// Whether warnings counted as errors.
    pub strict: bool,
    /// The project's name; `null` when it did not load.
    pub project: Option<String>,
    /// Every model, by name.
    pub models: Vec<ModelEntry>,
    /// Every valid source, by name.
    pub sources: Vec<SourceEntry>,
    /// Every fixture file, by path.
    pub fixtures: Vec<FixtureEntry>,
    /// Every problem, in file order.
    pub diagnostics: Vec<DiagnosticEntry>,
}

impl CheckReport {
    /// The report of a project that loaded, with its diagnostics.
    pub fn new(
        db: &dyn Db,
        project: Project,
        diagnostics: &[Diagnostic],
        strict: bool,
    ) -> CheckReport {
        let config = project_config(db, project).config.as_ref();
        let models = model_files(db, project)
            .iter()
            .map(|(name, file)| {
                let (materialized, _) = crate::config::declaration(config, name);
                ModelEntry {
                    name: name.clone(),
                    materialized: materialized.name().into(),
                    key: match &materialized {
                        streamform_ir::Materialized::Upsert { key } => key.clone(),
                        streamform_ir::Materialized::Append => Vec::new(),
                    },
                    path: file.path(db).clone(),
                }
            })
            .collect();
        let sources = source_defs(db, project)
            .sources
            .iter()
            .map(|s| SourceEntry {
                name: s.name.clone(),
                connector: s.connector.name().into(),
                location: s.connector.location().into(),
                format: s.format.clone(),
                columns: u32::try_from(s.schema.len()).unwrap_or(u32::MAX),
                event_time: s.event_time.as_ref().map(|t| t.column.clone()),
            })
            .collect();
        let fixtures = project
            .fixtures(db)
            .iter()
            .map(|f| {
                let def = fixture_def(db, project, *f);
                FixtureEntry {
                    model: def.model.clone(),
                    path: def.path.clone(),
                    given: u32::try_from(def.given).unwrap_or(u32::MAX),
                    expect: u32::try_from(def.expect_count).unwrap_or(u32::MAX),
                }
            })
            .collect();
        let failed = diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error || (strict && d.severity == Severity::Warning));
        CheckReport {
            check_version: 1,
            loaded: true,
            passed: !failed,
            strict,
            project: config.map(|c| c.name.clone()),
            models,
            sources,
            fixtures,
            diagnostics: diagnostics
                .iter()
                .map(|d| DiagnosticEntry::of(db, d))
                .collect(),
        }
    }

    /// The report of a project that did not load: its one diagnostic says why.
    pub fn not_loaded(strict: bool, reason: DiagnosticEntry) -> CheckReport {
        CheckReport {
            check_version: 1,
            loaded: false,
            passed: false,
            strict,
            project: None,
            models: Vec::new(),
            sources: Vec::new(),
            fixtures: Vec::new(),
            diagnostics: vec![reason],
        }
    }
}

/// A record of a changelog as the test report shows it: the operation and the row, each
/// value rendered after typing (decimals as exact strings, trailing zeros trimmed;
/// timestamps RFC 3339; numbers and booleans as themselves).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// `insert`, `update` or `delete`.
    pub op: String,
    /// The row, column by column.
    pub row: BTreeMap<String, serde_json::Value>,
    /// An update's row as it was, when the simulator emitted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<BTreeMap<String, serde_json::Value>>,
}

/// One position of a fixture's comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// The expected record; `null` past the end of `expect`.
    pub expected: Option<Record>,
    /// The emitted record; `null` when the model emitted fewer.
    pub actual: Option<Record>,
    /// `null` when the two match; otherwise the first difference. The authority on
    /// whether the row passed.
    pub problem: Option<String>,
}

/// One position of the `late:` list against the events dropped as late.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LateRow {
    /// The event listed; `null` past the end of `late:`.
    pub listed: Option<BTreeMap<String, serde_json::Value>>,
    /// The event dropped; `null` when fewer were dropped.
    pub dropped: Option<BTreeMap<String, serde_json::Value>>,
    /// The window node that dropped it, every window it belongs to having fired; omitted
    /// when the source dropped it as behind the watermark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_window: Option<String>,
    /// The interval join that dropped it, reached after its last chance to match with no
    /// kept row to meet (docs/joins.md, "Joins in time"); omitted otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_join: Option<String>,
    /// The deduplication that dropped it, keeping the first row by time, as behind the
    /// watermark (docs/ranking.md); omitted otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_rank: Option<String>,
    /// The OVER aggregation that dropped it, at or behind the watermark, or at or before
    /// the last time its partition emitted (docs/over.md); omitted otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_over: Option<String>,
    /// `null` when the two are the same event.
    pub problem: Option<String>,
}

/// The windows of one window node still open when a fixture ended: they emitted nothing.
/// For an interval join (in `waiting_rows`), its unmatched rows still kept, the first
/// padded when the watermark reaches `first_fires_at`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenWindows {
    /// The window node's id.
    pub node: String,
    /// Its (key, window) pairs that hold a row and have not fired.
    pub count: u64,
    /// The watermark at which the first of them fires, RFC 3339.
    pub first_fires_at: String,
    /// The sources upstream of the node that sent no event and no watermark, holding its
    /// event time back; omitted when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_back_by: Vec<String>,
    /// When no source is silent: the sources whose watermark (less the hold-back of the
    /// interval joins on the way) is the node's, short of `first_fires_at`; omitted when
    /// none is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub behind: Vec<Behind>,
}

/// A source whose watermark holds a node's back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Behind {
    /// The source's name.
    pub source: String,
    /// Its watermark, RFC 3339.
    pub watermark: String,
    /// How far the interval joins between it and the node hold its watermark back there
    /// (`4h`); omitted when none does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<String>,
}

/// Why the simulator refused a fixture's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunFailure {
    /// The model, column and event, and what went wrong.
    pub message: String,
    /// What to do about it.
    pub help: String,
}

/// One fixture's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixtureReport {
    /// The model under test.
    pub model: String,
    /// The fixture file, relative to the project.
    pub path: String,
    /// Whether every row matched and the run did not fail.
    pub passed: bool,
    /// The number of events delivered (late events dropped are not).
    pub events_processed: u64,
    /// The number of changelog records the model emitted.
    pub changes_emitted: u64,
    /// The number of late events dropped.
    #[serde(default)]
    pub late_dropped: u64,
    /// Expected against emitted, one entry per position; empty when the run failed.
    pub rows: Vec<Row>,
    /// The `late:` list against the events dropped; empty when both are.
    #[serde(default)]
    pub late: Vec<LateRow>,
    /// Why the simulator refused the run; then there are no rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RunFailure>,
    /// The windows still open at the end of the fixture; omitted when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open_windows: Vec<OpenWindows>,
    /// The interval joins still keeping unmatched rows at the end of the fixture, which
    /// they would pad later (docs/joins.md, "Joins in time"); omitted when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting_rows: Vec<OpenWindows>,
}

/// What `test --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestReport {
    /// The version of this document: 1.
    pub report_version: u32,
    /// Whether every fixture passed.
    pub passed: bool,
    /// One entry per fixture run, in path order.
    pub fixtures: Vec<FixtureReport>,
}

/// A value rendered after typing: decimals as exact strings (trailing zeros trimmed),
/// timestamps RFC 3339, dates `yyyy-MM-dd`, integers, floats and booleans as JSON numbers and booleans.
fn json_value(v: &Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Int32(i) => (*i).into(),
        Value::Int64(i) => (*i).into(),
        Value::Float64(f) => serde_json::Number::from_f64(f.0)
            .map_or_else(|| v.render().into(), serde_json::Value::Number),
        Value::Decimal(d) => d.to_trimmed_string().into(),
        Value::String(s) => s.clone().into(),
        Value::Boolean(b) => (*b).into(),
        Value::Timestamp(ms) => streamform_ir::time::format_rfc3339(*ms).into(),
        Value::Date(d) => streamform_ir::time::format_date(*d).into(),
    }
}

fn object(columns: &[Field], values: &[Value]) -> BTreeMap<String, serde_json::Value> {
    columns
        .iter()
        .zip(values)
        .map(|(f, v)| (f.name.clone(), json_value(v)))
        .collect()
}

fn record(schema: &[Field], r: &Expected, before: Option<&[Value]>) -> Record {
    Record {
        op: r.op.to_string(),
        row: object(schema, &r.values),
        before: before.map(|b| object(schema, b)),
    }
}

impl TestReport {
    /// The report of `runs`.
    pub fn new(runs: &[FixtureRun]) -> TestReport {
        let fixtures: Vec<FixtureReport> = runs
            .iter()
            .map(|run| FixtureReport {
                model: run.model.clone(),
                path: run.path.clone(),
                passed: run.passed,
                events_processed: run.events_processed as u64,
                changes_emitted: run.changes_emitted as u64,
                late_dropped: run.late_dropped as u64,
                rows: run
                    .rows
                    .iter()
                    .map(|r| Row {
                        expected: r.expected.as_ref().map(|e| record(&run.schema, e, None)),
                        actual: r
                            .actual
                            .as_ref()
                            .map(|a| record(&run.schema, a, r.before.as_deref())),
                        problem: r.problem.clone(),
                    })
                    .collect(),
                late: run
                    .late
                    .iter()
                    .map(|l| LateRow {
                        listed: l
                            .listed
                            .as_ref()
                            .map(|v| object(run.source_columns_of(l.listed_source), v)),
                        dropped: l
                            .dropped
                            .as_ref()
                            .map(|v| object(run.source_columns_of(l.dropped_source), v)),
                        by_window: l.by_window.clone(),
                        by_join: l.by_join.clone(),
                        by_rank: l.by_rank.clone(),
                        by_over: l.by_over.clone(),
                        problem: l.problem.clone(),
                    })
                    .collect(),
                error: run.error.as_ref().map(|e| RunFailure {
                    message: e.message.clone(),
                    help: e.help.to_string(),
                }),
                open_windows: pending(&run.open_windows),
                waiting_rows: pending(&run.waiting_rows),
            })
            .collect();
        TestReport {
            report_version: 1,
            passed: fixtures.iter().all(|f| f.passed),
            fixtures,
        }
    }
}

/// A sink, as the graph document names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SinkEntry {
    /// `kafka` or `file`.
    pub connector: String,
    /// The topic or the path.
    pub location: String,
    /// `json` or `csv`.
    pub format: String,
}

/// A source of the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphSource {
    /// The source's name.
    pub name: String,
    /// `kafka` or `file`.
    pub connector: String,
    /// The topic or the path.
    pub location: String,
}

/// A model of the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphModel {
    /// The model's name.
    pub name: String,
    /// `append` or `upsert`.
    pub materialized: String,
    /// The declared key (empty for append).
    pub key: Vec<String>,
    /// The declared sink, if any.
    pub sink: Option<SinkEntry>,
    /// The first relation it reads: `source:<name>` or `model:<name>`; `null` when its FROM
    /// does not read one. A model that reads several (a join, a UNION ALL) has an edge
    /// from each in `edges`.
    pub reads: Option<String>,
}

/// An edge of the graph: `from` (`source:<name>` or `model:<name>`) is read by `to`
/// (`model:<name>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Edge {
    /// What is read.
    pub from: String,
    /// The model reading it.
    pub to: String,
}

/// What `graph --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Graph {
    /// The version of this document: 1.
    pub graph_version: u32,
    /// The project's name.
    pub project: String,
    /// Every valid source, by name.
    pub sources: Vec<GraphSource>,
    /// Every model, by name.
    pub models: Vec<GraphModel>,
    /// Every read, from what is read to the model reading it.
    pub edges: Vec<Edge>,
    /// The models in dependency order (upstream first); the models of a cycle are left
    /// out.
    pub order: Vec<String>,
    /// Each reference cycle, as the models that form it.
    pub cycles: Vec<Vec<String>>,
}

fn input_name(i: &Input) -> String {
    match i {
        Input::Source(s) => format!("source:{s}"),
        Input::Model(m) => format!("model:{m}"),
    }
}

fn location(c: &Connector) -> String {
    c.location().to_string()
}

/// What a graph of the project would have to leave out, as the diagnostics that say why:
/// a file that cannot be read, and errors in sources.yml (a source with errors is not
/// declared, so it and its edges would go missing). Empty when the graph is whole.
pub fn graph_gaps(db: &Database, project: Project) -> Vec<Diagnostic> {
    let sources = *project.sources(db);
    crate::parallel::check(db, project)
        .into_iter()
        .filter(|d| {
            d.code.means_unreadable() || (d.severity == Severity::Error && d.file == Some(sources))
        })
        .collect()
}

impl Graph {
    /// The graph of the project.
    pub fn new(db: &dyn Db, project: Project) -> Graph {
        let config = project_config(db, project).config.as_ref();
        let mut models = Vec::new();
        let mut edges = Vec::new();
        for (name, file) in model_files(db, project) {
            let (materialized, sink) = crate::config::declaration(config, name);
            let reads = model_reads(db, *file).clone();
            for i in &reads {
                edges.push(Edge {
                    from: input_name(i),
                    to: format!("model:{name}"),
                });
            }
            models.push(GraphModel {
                name: name.clone(),
                materialized: materialized.name().into(),
                key: match &materialized {
                    streamform_ir::Materialized::Upsert { key } => key.clone(),
                    streamform_ir::Materialized::Append => Vec::new(),
                },
                sink: sink.map(|s| SinkEntry {
                    connector: s.connector.name().into(),
                    location: location(&s.connector),
                    format: s.format,
                }),
                reads: reads.first().map(input_name),
            });
        }
        let graph = dependency_graph(db, project);
        Graph {
            graph_version: 1,
            project: config.map_or_else(String::new, |c| c.name.clone()),
            sources: source_defs(db, project)
                .sources
                .iter()
                .map(|s| GraphSource {
                    name: s.name.clone(),
                    connector: s.connector.name().into(),
                    location: location(&s.connector),
                })
                .collect(),
            models,
            edges,
            order: graph.order.clone(),
            cycles: graph.cycles.clone(),
        }
    }
}

/// The windows still open, or the rows an interval join still keeps unmatched, as the
/// report lists them.
fn pending(list: &[crate::db::Pending]) -> Vec<OpenWindows> {
    list.iter()
        .map(|p| OpenWindows {
            node: p.node.clone(),
            count: p.count as u64,
            first_fires_at: streamform_ir::time::format_rfc3339(p.first_at),
            held_back_by: p.silent.clone(),
            behind: p
                .behind
                .iter()
                .map(|(source, watermark, delay)| Behind {
                    source: source.clone(),
                    watermark: streamform_ir::time::format_rfc3339(*watermark),
                    delay: (*delay > 0)
                        .then(|| streamform_ir::time::format_duration(delay.unsigned_abs())),
                })
                .collect(),
        })
        .collect()
}
