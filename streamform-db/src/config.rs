//! `streamform.yml` and `sources.yml`: strict parsing and validation into plain data.
//!
//! See docs/project-format.md ("streamform.yml", "sources.yml", and the strict reading and
//! format version it states) and docs/concepts.md, "Project"; the event-time fields are
//! explained in docs/event-time.md, "Declaring it".

use std::collections::BTreeMap;
use std::ops::Range;

use serde::Deserialize;
use streamform_ir::time::parse_duration;
use streamform_ir::{
    Connector, DataType, EventTime, LateEvents, Materialized, NodeKind, SinkTarget,
};

use crate::diagnostic::{Code, Diagnostic, did_you_mean};
use crate::yaml::{self, Spanned, span_of};

/// The project format version this build reads.
pub const FORMAT_VERSION: i64 = 1;

// The raw file shapes. Each also gives its file's JSON Schema (`streamform schema project`,
// `sources`): a spanned value's schema is its value's.

/// streamform.yml: the project's name and format version, its models' declarations, and
/// the targets it can be applied to.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Project")]
struct RawProject {
    /// The project's name.
    #[schemars(with = "String")]
    name: Spanned<String>,
    /// The format version: 1.
    #[schemars(with = "i64")]
    version: Spanned<i64>,
    /// What each model is declared as, by model name.
    #[serde(default)]
    #[schemars(with = "Option<BTreeMap<String, RawModel>>")]
    models: Option<BTreeMap<String, Spanned<RawModel>>>,
    /// Where the application can be applied, by target name.
    #[serde(default)]
    #[schemars(with = "Option<BTreeMap<String, RawTarget>>")]
    targets: Option<BTreeMap<String, Spanned<RawTarget>>>,
}

/// One model's declaration.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Model")]
struct RawModel {
    /// `append` (the default) or `upsert`.
    #[schemars(with = "Option<String>")]
    materialized: Option<Spanned<String>>,
    /// An upsert model's key columns.
    #[schemars(with = "Option<Vec<String>>")]
    key: Option<Spanned<Vec<Spanned<String>>>>,
    /// Where the model's changelog goes outside the application.
    #[schemars(with = "Option<RawSink>")]
    sink: Option<Spanned<RawSink>>,
    /// The model's previous name, for plan comparisons.
    #[schemars(with = "Option<String>")]
    renamed_from: Option<Spanned<String>>,
    /// Hints matching single nodes with running ones: `<kind>.<ordinal>` → `was`.
    #[schemars(with = "Option<BTreeMap<String, RawNodeHint>>")]
    nodes: Option<BTreeMap<String, Spanned<RawNodeHint>>>,
    /// How long a key's state lives after its latest event time (`30d`).
    #[schemars(with = "Option<String>")]
    retention: Option<Spanned<String>>,
}

/// A model's sink.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Sink")]
struct RawSink {
    /// `kafka` or `file`.
    #[schemars(with = "String")]
    connector: Spanned<String>,
    /// The Kafka topic (with `kafka`).
    #[schemars(with = "Option<String>")]
    topic: Option<Spanned<String>>,
    /// The file's path (with `file`).
    #[schemars(with = "Option<String>")]
    path: Option<Spanned<String>>,
    /// `json` or `csv`.
    #[schemars(with = "String")]
    format: Spanned<String>,
}

/// `nodes.<kind>.<ordinal>`: the running node this node was.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "NodeHint")]
struct RawNodeHint {
    /// The running node's id, `<model>::<kind>::<ordinal>`.
    #[schemars(with = "String")]
    was: Spanned<String>,
}

/// A target: a backend and how to reach it.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Target")]
struct RawTarget {
    /// `flink`.
    #[schemars(with = "String")]
    backend: Spanned<String>,
    /// The Flink cluster.
    flink: Option<RawFlink>,
    /// Kafka, as Flink sees it.
    kafka: Option<RawKafka>,
}

/// How to reach a Flink cluster.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Flink")]
struct RawFlink {
    /// The SQL Gateway's REST endpoint, `http://host:port`.
    #[schemars(with = "String")]
    gateway: Spanned<String>,
    /// The JobManager's REST endpoint; the gateway's host on port 8081 by default.
    #[schemars(with = "Option<String>")]
    jobmanager: Option<Spanned<String>>,
    /// Where savepoints go, as a URI the cluster can write.
    #[schemars(with = "Option<String>")]
    savepoints: Option<Spanned<String>>,
    /// Where apply keeps compiled plans: a folder this machine and the SQL Gateway both
    /// reach, as a `file://` URI.
    #[schemars(with = "Option<String>")]
    plans: Option<Spanned<String>>,
    /// A PEM file of CA certificates to trust, relative to the project.
    #[schemars(with = "Option<String>")]
    ca_file: Option<Spanned<String>>,
    /// `{bearer: VAR}` or `{basic: VAR}`: the environment variable holding the credential.
    /// Read as a plain YAML value and checked by hand: a serde error would quote the
    /// line, and a token pasted here by mistake must not be printed.
    #[schemars(with = "Option<AuthShape>")]
    auth: Option<Spanned<yaml::Raw>>,
}

/// The shape of `flink.auth`, for the schema only (the file's value is checked by hand, so
/// that a secret pasted there is never printed).
#[derive(schemars::JsonSchema)]
#[schemars(rename = "Auth")]
#[allow(dead_code)]
enum AuthShape {
    /// `Authorization: Bearer $VAR`.
    #[serde(rename = "bearer")]
    Bearer(String),
    /// `$VAR` holds `user:password`.
    #[serde(rename = "basic")]
    Basic(String),
}

/// Kafka as Flink sees it.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Kafka")]
struct RawKafka {
    /// The bootstrap servers, `host:port[,host:port]`.
    #[schemars(with = "String")]
    bootstrap_servers: Spanned<String>,
    /// `earliest` (the default) or `latest`.
    #[schemars(with = "Option<String>")]
    startup: Option<Spanned<String>>,
}

/// sources.yml: the sources the models read.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Sources")]
struct RawSources {
    /// Each source, by name.
    #[schemars(with = "Option<BTreeMap<String, RawSource>>")]
    sources: Option<BTreeMap<String, Spanned<RawSource>>>,
}

/// One source.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Source")]
struct RawSource {
    /// `kafka` (never ends) or `file` (ends).
    #[schemars(with = "String")]
    connector: Spanned<String>,
    /// The Kafka topic (with `kafka`).
    #[schemars(with = "Option<String>")]
    topic: Option<Spanned<String>>,
    /// The file's path (with `file`).
    #[schemars(with = "Option<String>")]
    path: Option<Spanned<String>>,
    /// `json` or `csv`.
    #[schemars(with = "String")]
    format: Spanned<String>,
    /// Each column's type, by column name: int32, int64, float64, decimal, decimal(p,s),
    /// string, boolean, timestamp or date.
    #[schemars(with = "BTreeMap<String, String>")]
    schema: Spanned<BTreeMap<String, Spanned<String>>>,
    /// The timestamp column saying when each event happened.
    #[schemars(with = "Option<String>")]
    event_time: Option<Spanned<String>>,
    /// How far out of order events may arrive (`5m`); `0s` by default.
    #[schemars(with = "Option<String>")]
    watermark: Option<Spanned<String>>,
    /// `drop` (the default) or `keep`.
    #[schemars(with = "Option<String>")]
    late_events: Option<Spanned<String>>,
    /// `append` (the default: every record a new fact) or `upsert` (the topic is a table
    /// that changes: a record is its key's new row, a tombstone deletes the key).
    #[schemars(with = "Option<String>")]
    changelog: Option<Spanned<String>>,
    /// An upsert source's key columns: the Kafka record's key.
    #[schemars(with = "Option<Vec<String>>")]
    key: Option<Spanned<Vec<Spanned<String>>>>,
}

/// The JSON Schema of streamform.yml.
pub fn project_schema() -> schemars::Schema {
    schemars::schema_for!(RawProject)
}

/// The JSON Schema of sources.yml.
pub fn sources_schema() -> schemars::Schema {
    schemars::schema_for!(RawSources)
}

/// A `nodes.<kind>.<ordinal>.was` hint: this desired node was that running node.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeHint {
    /// The kind part of the hint's key (`aggregate` in `aggregate.0`).
    pub kind: NodeKind,
    /// The ordinal part of the hint's key (`0` in `aggregate.0`).
    pub ordinal: u32,
    /// The running node's id, `<model>::<kind>::<ordinal>`.
    pub was: String,
    /// Byte range of the hint in streamform.yml.
    pub span: Range<usize>,
}

/// One entry under `models:`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelConfig {
    /// `materialized:` with its `key:`; `Append` when not written.
    pub materialized: Materialized,
    /// The `sink:` destination, when declared and valid.
    pub sink: Option<SinkTarget>,
    /// `renamed_from:`, the model's previous name, with its byte range in streamform.yml.
    pub renamed_from: Option<(String, Range<usize>)>,
    /// The valid `nodes:` hints, sorted by their `<kind>.<ordinal>` key.
    pub nodes: Vec<NodeHint>,
    /// Where the entry is in streamform.yml.
    pub span: Range<usize>,
    /// Where `key:` is, when written.
    pub key_span: Option<Range<usize>>,
    /// Where each column of `key:` is, in its order.
    pub key_columns: Vec<Range<usize>>,
    /// `retention:` in milliseconds, with where it is in streamform.yml.
    pub retention: Option<(u64, Range<usize>)>,
    /// Whether the entry itself has errors (its model is then not compiled, to avoid
    /// follow-on errors).
    pub invalid: bool,
}

/// Kafka settings of a target.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KafkaTarget {
    /// `kafka.bootstrap_servers`: Kafka's address as Flink sees it, e.g. `localhost:9092`.
    pub bootstrap_servers: String,
    /// `earliest` (default) or `latest`.
    pub startup: String,
}

/// One entry under `targets:`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    /// The execution backend; always `flink` today.
    pub backend: String,
    /// `flink.gateway`: the SQL Gateway's REST endpoint, e.g. `http://localhost:8083`.
    pub gateway: Option<String>,
    /// The `kafka:` section; always present on a valid flink target.
    pub kafka: Option<KafkaTarget>,
    /// How to reach and control the Flink cluster; always present on a valid flink target.
    pub flink: Option<FlinkTarget>,
}

/// The `flink:` section of a target: where the cluster's two REST services are and how to
/// talk to them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FlinkTarget {
    /// `flink.gateway`: the SQL Gateway, `http://` or `https://`.
    pub gateway: String,
    /// `flink.jobmanager`: the JobManager's REST API; by default the gateway's scheme and
    /// host with port 8081.
    pub jobmanager: String,
    /// `flink.savepoints`: where savepoints go (a URI the cluster can write, such as
    /// `file:///data/savepoints` or `s3://bucket/savepoints`); the cluster's
    /// `execution.checkpointing.savepoint-dir` when absent.
    pub savepoints: Option<String>,
    /// `flink.plans`: the folder of compiled plans, a `file://` URI of a folder this machine
    /// and the SQL Gateway both reach; `.streamform/plans/<target>` in the project when the
    /// gateway runs on this machine, and none otherwise (docs/deployment.md).
    pub plans: Option<String>,
    /// `flink.ca_file`: a PEM file of CA certificates to trust for HTTPS, relative to the
    /// project; the system's trust store when absent.
    pub ca_file: Option<String>,
    /// `flink.auth`: the environment variable holding the credential.
    pub auth: Option<Auth>,
}

/// How a target authenticates: the name of the environment variable that holds the
/// credential, never the credential itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Auth {
    /// `auth: {bearer: VAR}`: `Authorization: Bearer $VAR`.
    Bearer(String),
    /// `auth: {basic: VAR}`: `$VAR` holds `user:password`.
    Basic(String),
}

impl Auth {
    /// The environment variable's name.
    pub fn variable(&self) -> &str {
        match self {
            Auth::Bearer(v) | Auth::Basic(v) => v,
        }
    }
}

/// The typed `streamform.yml`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProjectConfig {
    /// `name:`, the project's name.
    pub name: String,
    /// The entries under `models:`, by model name.
    pub models: BTreeMap<String, ModelConfig>,
    /// The valid entries under `targets:`, by target name.
    pub targets: BTreeMap<String, Target>,
}

/// What a model is declared as: its entry's materialization and sink, or, with no entry
/// (or no readable configuration), append with no sink: the one place that default lives.
pub fn declaration(
    config: Option<&ProjectConfig>,
    model: &str,
) -> (Materialized, Option<SinkTarget>) {
    match config.and_then(|c| c.models.get(model)) {
        Some(m) => (m.materialized.clone(), m.sink.clone()),
        None => (Materialized::Append, None),
    }
}

/// One source of `sources.yml`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourceDef {
    /// The source's name, an SQL identifier.
    pub name: String,
    /// Where its records come from, which fixes its boundedness.
    pub connector: Connector,
    /// `json` or `csv`.
    pub format: String,
    /// Columns sorted by name, as the plan orders them.
    pub schema: Vec<(String, DataType)>,
    /// Byte range of the source's name in sources.yml.
    pub span: Range<usize>,
    /// `event_time:` with `watermark:` and `late_events:`; `None` on processing time.
    pub event_time: Option<EventTime>,
    /// An upsert source's key columns (`changelog: upsert`); `None` for an append source.
    pub key: Option<Vec<String>>,
}

/// The span of the mapping key `name` that owns the value at `value` (serde-saphyr gives
/// positions of values; a diagnostic about an entry reads best at its key). Falls back to
/// the value's span.
pub fn key_span(text: &str, name: &str, value: Range<usize>) -> Range<usize> {
    // The parser places an empty value at its key's `:`.
    let end = value.start.min(text.len());
    let end = if text[end..].starts_with(':') {
        end + 1
    } else {
        end
    };
    let before = &text[..end];
    for (needle_end, _) in before.rmatch_indices(':') {
        let head = &before[..needle_end];
        let start = head.trim_end().len();
        // The key as written: plain, or quoted (`"count(x)": 2`).
        for quote in ["", "\"", "'"] {
            let written = format!("{quote}{name}{quote}");
            let key_start = start.saturating_sub(written.len());
            if head[..start].ends_with(&written)
                && head[..key_start]
                    .chars()
                    .last()
                    .is_none_or(|c| c.is_whitespace() || c == '{' || c == ',')
            {
                return key_start..start;
            }
        }
    }
    value
}

/// Whether `name` is an SQL identifier: a letter or `_`, then letters, digits or `_`.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `name` is a legal Kafka topic name: 1 to 249 characters from `[A-Za-z0-9._-]`,
/// and not `.` or `..`.
pub fn is_topic_name(name: &str) -> bool {
    (1..=249).contains(&name.len())
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Whether `name` may name a target: it becomes the file `.streamform/applied/<name>.json`,
/// so letters, digits, `_` and `-`, starting with a letter or digit.
pub fn is_target_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
}

/// The parts of `scheme://[userinfo@]host[:port][/path]`: scheme, whether a userinfo is
/// there, host (brackets kept for IPv6), port. `None` unless the scheme is http or https
/// and there is a host.
fn split_address(address: &str) -> Option<(&str, bool, &str, Option<&str>)> {
    if address
        .chars()
        .any(|c| c.is_whitespace() || streamform_ir::is_hostile(c))
    {
        return None;
    }
    let (scheme, rest) = address.split_once("://")?;
    if scheme != "http" && scheme != "https" {
        return None;
    }
    // A password may hold `/`, `?` or `#`, which end the authority: an `@` anywhere marks
    // a credential.
    if let Some((_, after)) = rest.rsplit_once('@') {
        let hostport = after.split(['/', '?', '#']).next().unwrap_or("");
        return Some((scheme, true, hostport, None));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let (userinfo, hostport) = (false, authority);
    let (host, port) = if let Some(end) = hostport.strip_prefix('[').and_then(|h| h.find(']')) {
        let host = &hostport[..end + 2];
        (host, hostport[end + 2..].strip_prefix(':'))
    } else {
        match hostport.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    if host.is_empty() || port.is_some_and(|p| p.parse::<u16>().is_err()) {
        return None;
    }
    Some((scheme, userinfo, host, port))
}

/// `address` with any `user:password@` replaced by `***@`, for messages.
fn without_userinfo(address: &str) -> String {
    match address.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((_, after)) => format!("{scheme}://***@{after}"),
            None => address.to_string(),
        },
        None if address.contains('@') => "***".into(),
        None => address.to_string(),
    }
}

/// `diagnostic` without the line it points at when `value` may hold a credential.
fn secret_free(value: &str, diagnostic: Diagnostic) -> Diagnostic {
    if value.contains('@') {
        diagnostic.without_excerpt()
    } else {
        diagnostic
    }
}

/// The JobManager's REST address when a target names none: the gateway's scheme and host,
/// port 8081.
pub fn default_jobmanager(gateway: &str) -> Option<String> {
    let (scheme, _, host, _) = split_address(gateway)?;
    Some(format!("{scheme}://{host}:8081"))
}

/// Whether `name` may name an environment variable: letters, digits and `_`, not starting
/// with a digit.
fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

const FORMATS: &[&str] = &["json", "csv"];

fn connector(
    text: &str,
    what: &str,
    raw_connector: &Spanned<String>,
    topic: Option<&Spanned<String>>,
    location: Option<&Spanned<String>>,
    diags: &mut Vec<Diagnostic>,
) -> Option<Connector> {
    let span = Some(span_of(raw_connector, text));
    // Where a topic or path is wrong, the value itself.
    let at = |v: &Spanned<String>| Some(span_of(v, text));
    match raw_connector.value.as_str() {
        "kafka" => {
            if location.is_some() {
                diags.push(
                    Diagnostic::error(
                        Code::ConnectorOptions,
                        format!("{what} uses connector kafka, which takes `topic`, not `path`"),
                    )
                    .with_span(span.clone())
                    .with_help("replace `path:` with `topic:`"),
                );
            }
            match topic {
                Some(t) if !is_topic_name(&t.value) && !t.value.trim().is_empty() => {
                    diags.push(
                        Diagnostic::error(
                            Code::InvalidTopic,
                            format!(
                                "{what}: `{}` is not a Kafka topic name",
                                streamform_ir::printable(&t.value)
                            ),
                        )
                        .with_span(at(t))
                        .with_help(
                            "a topic name is 1 to 249 characters from letters, digits, `.`, `_` and `-`",
                        ),
                    );
                    None
                }
                Some(t) if !t.value.trim().is_empty() => Some(Connector::Kafka {
                    topic: t.value.clone(),
                }),
                _ => {
                    diags.push(
                        Diagnostic::error(
                            Code::ConnectorOptions,
                            format!("{what} uses connector kafka but has no `topic`"),
                        )
                        .with_span(span)
                        .with_help("add `topic: <kafka topic>`"),
                    );
                    None
                }
            }
        }
        "file" => {
            if topic.is_some() {
                diags.push(
                    Diagnostic::error(
                        Code::ConnectorOptions,
                        format!("{what} uses connector file, which takes `path`, not `topic`"),
                    )
                    .with_span(span.clone())
                    .with_help("replace `topic:` with `path:`"),
                );
            }
            match location {
                Some(p) if p.value.chars().any(streamform_ir::is_hostile) => {
                    diags.push(
                        Diagnostic::error(
                            Code::ConnectorOptions,
                            format!(
                                "{what}: the path `{}` holds a control character",
                                streamform_ir::printable(&p.value)
                            ),
                        )
                        .with_span(at(p))
                        .with_help("write the file's path as it is named on disk, on one line"),
                    );
                    None
                }
                Some(p) if !p.value.trim().is_empty() => Some(Connector::File {
                    path: p.value.clone(),
                }),
                _ => {
                    diags.push(
                        Diagnostic::error(
                            Code::ConnectorOptions,
                            format!("{what} uses connector file but has no `path`"),
                        )
                        .with_span(span)
                        .with_help("add `path: <file path>`"),
                    );
                    None
                }
            }
        }
        other => {
            let mut d = Diagnostic::error(
                Code::UnknownConnector,
                format!("{what} has unknown connector `{other}`"),
            )
            .with_span(span);
            d = match did_you_mean(other, ["kafka", "file"]) {
                Some(s) => d.with_help(format!("did you mean `{s}`?")),
                None => d.with_help("the connectors are kafka (unbounded) and file (bounded)"),
            };
            diags.push(d);
            None
        }
    }
}

fn format_of(
    text: &str,
    what: &str,
    raw: &Spanned<String>,
    diags: &mut Vec<Diagnostic>,
) -> Option<String> {
    if FORMATS.contains(&raw.value.as_str()) {
        return Some(raw.value.clone());
    }
    diags.push(
        Diagnostic::error(
            Code::UnknownFormat,
            format!("{what} has unknown format `{}`", raw.value),
        )
        .with_span(Some(span_of(raw, text)))
        .with_help(crate::diagnostic::suggest(
            &raw.value,
            FORMATS,
            "the formats are",
        )),
    );
    None
}

/// Parses and validates `streamform.yml`. Returns the config when it is usable (possibly
/// with diagnostics about parts of it) and every diagnostic found.
pub fn parse_project(path: &str, text: &str) -> (Option<ProjectConfig>, Vec<Diagnostic>) {
    let raw: RawProject = match yaml::parse(path, text) {
        Ok(r) => r,
        Err(d) => return (None, vec![d]),
    };
    let mut diags = Vec::new();
    if raw.version.value != FORMAT_VERSION {
        diags.push(
            Diagnostic::error(Code::UnsupportedVersion, format!("unsupported project format version {}; this build reads version {FORMAT_VERSION}", raw.version.value))
                .with_span(Some(span_of(&raw.version, text)))
                .with_help("set `version: 1`"),
        );
        return (None, diags);
    }
    if raw.name.value.trim().is_empty() {
        diags.push(
            Diagnostic::error(Code::EmptyName, "the project name is empty")
                .with_span(Some(span_of(&raw.name, text)))
                .with_help("give the project a name, e.g. `name: order-pipeline`"),
        );
    } else if raw.name.value.chars().any(streamform_ir::is_hostile) {
        diags.push(
            Diagnostic::error(
                Code::InvalidName,
                format!(
                    "the project name `{}` holds a control character",
                    streamform_ir::printable(&raw.name.value)
                ),
            )
            .with_span(Some(span_of(&raw.name, text)))
            .with_help("the name goes into job names and applied records; use letters, digits and punctuation, e.g. `name: order-pipeline`"),
        );
    }
    let mut models = BTreeMap::new();
    for (name, m) in raw.models.unwrap_or_default() {
        let before = diags.len();
        let span = key_span(text, &name, span_of(&m, text));
        let what = format!("model `{name}`");
        let key: Vec<String> = m
            .value
            .key
            .as_ref()
            .map(|k| k.value.iter().map(|c| c.value.clone()).collect())
            .unwrap_or_default();
        if let Some(k) = &m.value.key
            && let Some((twice, at)) = key
                .iter()
                .zip(&k.value)
                .enumerate()
                .find_map(|(i, (c, at))| key[..i].contains(c).then_some((c, at)))
        {
            diags.push(
                Diagnostic::error(
                    Code::RepeatedKeyColumn,
                    format!(
                        "{what} lists `{}` twice in its key",
                        streamform_ir::printable(twice)
                    ),
                )
                .with_span(Some(span_of(at, text)))
                .with_help(
                    "name each key column once; Flink refuses a primary key that repeats a column",
                ),
            );
        }
        let materialized = match m.value.materialized.as_ref().map(|s| s.value.as_str()) {
            None | Some("append") => {
                if let Some(k) = &m.value.key {
                    diags.push(
                        Diagnostic::error(
                            Code::KeyOnAppend,
                            format!("{what} declares a key but is materialized as append"),
                        )
                        .with_span(Some(span_of(k, text)))
                        .with_help(
                            "declare `materialized: upsert` to key the model, or remove `key:`",
                        ),
                    );
                }
                Materialized::Append
            }
            Some("upsert") => Materialized::Upsert { key: key.clone() },
            Some(other) => {
                let s = m.value.materialized.as_ref().expect("matched Some");
                let mut d = Diagnostic::error(
                    Code::UnknownMaterialization,
                    format!("{what} has unknown materialization `{other}`"),
                )
                .with_span(Some(span_of(s, text)));
                d = match did_you_mean(other, ["append", "upsert"]) {
                    Some(x) => d.with_help(format!("did you mean `{x}`?")),
                    None => d.with_help("materialized is append or upsert"),
                };
                diags.push(d);
                Materialized::Append
            }
        };
        let sink = m.value.sink.as_ref().and_then(|s| {
            let sw = format!("the sink of {what}");
            let c = connector(
                text,
                &sw,
                &s.value.connector,
                s.value.topic.as_ref(),
                s.value.path.as_ref(),
                &mut diags,
            );
            let f = format_of(text, &sw, &s.value.format, &mut diags);
            Some(SinkTarget {
                connector: c?,
                format: f?,
            })
        });
        let renamed_from = m.value.renamed_from.as_ref().and_then(|r| {
            let s = span_of(r, text);
            if !is_identifier(&r.value) {
                diags.push(
                    Diagnostic::error(
                        Code::InvalidName,
                        format!("{what}: renamed_from `{}` is not a model name", r.value),
                    )
                    .with_span(Some(s))
                    .with_help("renamed_from names the model this one was called before"),
                );
                return None;
            }
            if r.value == name {
                diags.push(
                    Diagnostic::error(
                        Code::InvalidRename,
                        format!("{what} is renamed_from itself"),
                    )
                    .with_span(Some(s))
                    .with_help("remove renamed_from, or name the model's previous name"),
                );
                return None;
            }
            Some((r.value.clone(), s))
        });
        let retention = m.value.retention.as_ref().and_then(|r| {
            let at = key_span(text, "retention", span_of(r, text));
            match parse_duration(&r.value) {
                Some(ms) if ms > 0 => Some((ms, at)),
                Some(_) => {
                    diags.push(
                        Diagnostic::error(Code::EventTime, format!("{what}: retention 0 would drop every key's state as soon as it is written"))
                            .with_span(Some(span_of(r, text)))
                            .with_help("give a retention longer than 0, or remove `retention:` to keep state for ever"),
                    );
                    None
                }
                None => {
                    diags.push(
                        Diagnostic::error(
                            Code::EventTime,
                            format!("{what}: retention `{}` is {}", r.value, not_a_duration(&r.value)),
                        )
                        .with_span(Some(span_of(r, text)))
                        .with_help("write a whole number and a unit: ms, s, m, h or d (e.g. 90m, 12h, 30d)"),
                    );
                    None
                }
            }
        });
        let mut nodes = Vec::new();
        for (reference, hint) in m.value.nodes.unwrap_or_default() {
            let s = span_of(&hint, text);
            let parsed = reference
                .split_once('.')
                .and_then(|(k, o)| Some((NodeKind::from_id_name(k)?, ordinal(o)?)));
            let Some((kind, ordinal)) = parsed else {
                diags.push(Diagnostic::error(Code::InvalidHint, format!("{what}: node hint `{reference}` is not of the form <kind>.<ordinal>")).with_span(Some(s)).with_help("write e.g. `aggregate.0`; kinds are source, filter, project, aggregate, sort, sink"));
                continue;
            };
            let was = &hint.value.was.value;
            let Some((_, was_kind, _)) = parse_node_id(was) else {
                diags.push(Diagnostic::error(Code::InvalidHint, format!("{what}: `was: {was}` is not a node id")).with_span(Some(span_of(&hint.value.was, text))).with_help("a node id is <model>::<kind>::<ordinal>, e.g. customer_metrics::aggregate::0"));
                continue;
            };
            if was_kind != kind {
                diags.push(
                    Diagnostic::error(
                        Code::InvalidHint,
                        format!(
                            "{what}: the hint for {reference} names {was}, a node of another kind",
                        ),
                    )
                    .with_span(Some(span_of(&hint.value.was, text)))
                    .with_help(format!(
                        "a node keeps its kind across versions; name the running {} node it was (streamform inspect-plan lists the node ids)",
                        kind.id_name()
                    )),
                );
                continue;
            }
            nodes.push(NodeHint {
                kind,
                ordinal,
                was: was.clone(),
                span: s,
            });
        }
        models.insert(
            name,
            ModelConfig {
                materialized,
                sink,
                renamed_from,
                nodes,
                span,
                key_span: m
                    .value
                    .key
                    .as_ref()
                    .map(|k| key_span(text, "key", span_of(k, text))),
                key_columns: m
                    .value
                    .key
                    .as_ref()
                    .map(|k| k.value.iter().map(|c| span_of(c, text)).collect())
                    .unwrap_or_default(),
                retention,
                invalid: diags.len() > before,
            },
        );
    }
    let mut targets = BTreeMap::new();
    for (name, t) in raw.targets.unwrap_or_default() {
        let span = Some(span_of(&t, text));
        if !is_target_name(&name) {
            diags.push(
                Diagnostic::error(Code::InvalidName, format!("`{name}` is not a valid target name"))
                    .with_span(span.map(|s| key_span(text, &name, s)))
                    .with_help("a target name is letters, digits, `_` and `-`, starting with a letter or digit; it names the file .streamform/applied/<target>.json"),
            );
            continue;
        }
        if t.value.backend.value != "flink" {
            diags.push(
                Diagnostic::error(
                    Code::UnknownBackend,
                    format!(
                        "target `{name}` has unknown backend `{}`",
                        t.value.backend.value
                    ),
                )
                .with_span(Some(span_of(&t.value.backend, text)))
                .with_help("the only backend is flink"),
            );
            continue;
        }
        let Some(flink) = &t.value.flink else {
            diags.push(
                Diagnostic::error(
                    Code::IncompleteTarget,
                    format!("target `{name}` uses backend flink but has no `flink:` section"),
                )
                .with_span(span)
                .with_help(
                    "add `flink: {gateway: http://localhost:8083}` with your SQL Gateway's address",
                ),
            );
            continue;
        };
        let Some(kafka) = &t.value.kafka else {
            diags.push(Diagnostic::error(Code::IncompleteTarget, format!("target `{name}` uses backend flink but has no `kafka:` section")).with_span(span).with_help("add `kafka: {bootstrap_servers: localhost:9092}` with Kafka's address as Flink sees it"));
            continue;
        };
        let before = diags.len();
        let credential_help = "credentials never go in streamform.yml: name the environment variable that holds them under `flink.auth` (`bearer: VAR` for a token, `basic: VAR` for user:password)";
        for (field, address, what) in [
            (
                "gateway",
                Some(&flink.gateway),
                "the SQL Gateway listens on port 8083 by default",
            ),
            (
                "jobmanager",
                flink.jobmanager.as_ref(),
                "the JobManager's REST API listens on port 8081 by default",
            ),
        ] {
            let Some(address) = address else { continue };
            let at = Some(span_of(address, text));
            match split_address(&address.value) {
                Some((_, true, _, _)) => diags.push(
                    Diagnostic::error(
                        Code::CredentialInConfig,
                        format!(
                            "target `{name}`: flink.{field} `{}` carries a credential",
                            without_userinfo(&address.value)
                        ),
                    )
                    .with_span(at)
                    .without_excerpt()
                    .with_help(credential_help),
                ),
                Some(_) => {}
                None => diags.push(secret_free(
                    &address.value,
                    Diagnostic::error(
                        Code::InvalidAddress,
                        format!(
                            "target `{name}`: flink.{field} `{}` is not an http:// or https:// address",
                            streamform_ir::printable(&without_userinfo(&address.value))
                        ),
                    )
                    .with_span(at)
                    .with_help(format!("write it as http://host:port or https://host:port; {what}")),
                )),
            }
        }
        let servers = &kafka.bootstrap_servers.value;
        if servers.trim().is_empty()
            || servers
                .chars()
                .any(|c| c.is_whitespace() || streamform_ir::is_hostile(c))
        {
            diags.push(
                Diagnostic::error(
                    Code::InvalidAddress,
                    format!(
                        "target `{name}`: kafka.bootstrap_servers `{}` is not a list of host:port",
                        streamform_ir::printable(servers)
                    ),
                )
                .with_span(Some(span_of(&kafka.bootstrap_servers, text)))
                .with_help("write host:port, or several separated by commas without spaces: kafka-1:9092,kafka-2:9092"),
            );
        }
        if let Some(savepoints) = &flink.savepoints
            && (savepoints.value.trim().is_empty() || !savepoints.value.contains(':'))
        {
            diags.push(
                Diagnostic::error(
                    Code::InvalidAddress,
                    format!("target `{name}`: flink.savepoints `{}` is not a URI", streamform_ir::printable(&savepoints.value)),
                )
                .with_span(Some(span_of(savepoints, text)))
                .with_help("name a directory every Flink process can write, as a URI: file:///data/savepoints, s3://bucket/savepoints"),
            );
        }
        if let Some(plans) = &flink.plans
            && plans
                .value
                .strip_prefix("file:///")
                .is_none_or(|rest| rest.trim().is_empty())
        {
            diags.push(
                Diagnostic::error(
                    Code::InvalidAddress,
                    format!("target `{name}`: flink.plans `{}` is not a file:// URI of a folder", streamform_ir::printable(&plans.value)),
                )
                .with_span(Some(span_of(plans, text)))
                .with_help("name a folder this machine and the SQL Gateway both reach (a shared mount), with its absolute path: file:///mnt/flink/plans"),
            );
        }
        let auth = match &flink.auth {
            None => None,
            Some(auth) => {
                let at = Some(span_of(auth, text));
                let shape_help = "write `auth: {bearer: VAR}` for a token, or `auth: {basic: VAR}` where $VAR holds user:password";
                let auth = yaml::node(auth, text);
                let entries: Vec<(&String, &yaml::Node)> = match &auth.value {
                    yaml::YamlValue::Map(map) => map.iter().collect(),
                    _ => Vec::new(),
                };
                let (scheme, value) = match entries.as_slice() {
                    [(scheme, value)] if *scheme == "bearer" || *scheme == "basic" => {
                        (scheme.as_str(), &value.value)
                    }
                    _ => {
                        // Not echoed: what is there may be the secret itself.
                        diags.push(
                            Diagnostic::error(
                                Code::InvalidAuth,
                                format!("target `{name}`: flink.auth needs exactly one of `bearer` and `basic`, naming an environment variable"),
                            )
                            .with_span(at)
                            .without_excerpt()
                            .with_help(shape_help),
                        );
                        continue;
                    }
                };
                match value {
                    yaml::YamlValue::String(var) if is_variable_name(var) => {
                        Some(if scheme == "bearer" {
                            Auth::Bearer(var.clone())
                        } else {
                            Auth::Basic(var.clone())
                        })
                    }
                    _ => {
                        diags.push(
                            Diagnostic::error(
                                Code::InvalidAuth,
                                format!("target `{name}`: flink.auth holds something other than an environment variable's name (letters, digits and `_`)"),
                            )
                            .with_span(at)
                            .without_excerpt()
                            .with_help(format!("flink.auth takes the name of the variable that holds the credential, not the credential; {credential_help}")),
                        );
                        continue;
                    }
                }
            }
        };
        if diags.len() > before {
            continue;
        }
        let startup = match kafka.startup.as_ref().map(|s| s.value.as_str()) {
            None | Some("earliest") => "earliest".to_string(),
            Some("latest") => "latest".to_string(),
            Some(other) => {
                diags.push(
                    Diagnostic::error(
                        Code::UnknownStartup,
                        format!("target `{name}`: unknown kafka.startup `{other}`"),
                    )
                    .with_span(kafka.startup.as_ref().map(|s| span_of(s, text)))
                    .with_help(crate::diagnostic::suggest(
                        other,
                        &["earliest", "latest"],
                        "kafka.startup is one of",
                    )),
                );
                continue;
            }
        };
        targets.insert(
            name,
            Target {
                backend: "flink".into(),
                gateway: Some(flink.gateway.value.clone()),
                kafka: Some(KafkaTarget {
                    bootstrap_servers: kafka.bootstrap_servers.value.clone(),
                    startup,
                }),
                flink: Some(FlinkTarget {
                    gateway: flink.gateway.value.clone(),
                    jobmanager: match &flink.jobmanager {
                        Some(j) => j.value.clone(),
                        None => default_jobmanager(&flink.gateway.value).unwrap_or_default(),
                    },
                    savepoints: flink.savepoints.as_ref().map(|s| s.value.clone()),
                    plans: flink.plans.as_ref().map(|s| s.value.clone()),
                    ca_file: flink.ca_file.as_ref().map(|c| c.value.clone()),
                    auth,
                }),
            },
        );
    }
    (
        Some(ProjectConfig {
            name: raw.name.value,
            models,
            targets,
        }),
        diags,
    )
}

/// Splits `<model>::<kind>::<ordinal>` into its parts (the IR's reading of a node id, with
/// the model an SQL identifier).
pub fn parse_node_id(id: &str) -> Option<(String, NodeKind, u32)> {
    let id = streamform_ir::NodeId::parse(id)?;
    is_identifier(&id.model).then_some((id.model, id.kind, id.ordinal))
}

/// An ordinal as ids write it: digits without a leading zero (`0`, `12`, not `00`).
fn ordinal(text: &str) -> Option<u32> {
    text.parse::<u32>().ok().filter(|o| o.to_string() == text)
}

/// The typed `sources.yml`: the valid sources, the diagnostics, and the names of declared
/// sources that have errors (models reading them are not compiled, to avoid follow-on
/// errors). `readable` is false when the file as a whole could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ParsedSources {
    /// The sources without errors, in name order.
    pub sources: Vec<SourceDef>,
    /// Every problem found in the file.
    pub diagnostics: Vec<Diagnostic>,
    /// Names of declared sources that have errors.
    pub broken: std::collections::BTreeSet<String>,
    /// Whether the file parsed at all.
    pub readable: bool,
}

/// Why a duration does not read: `too large` for whole digits and a unit past what a
/// duration holds, `not a duration` otherwise.
fn not_a_duration(text: &str) -> &'static str {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let unit = &text[digits..];
    if digits > 0
        && streamform_ir::time::DURATION_UNITS
            .iter()
            .any(|(u, _)| *u == unit)
    {
        "too large a duration"
    } else {
        "not a duration"
    }
}

/// The help for a duration that does not read.
const DURATION_HELP: &str =
    "write a whole number and a unit: ms, s, m, h or d (e.g. 5m, 30s, 30d, 0s)";

/// A source's event-time declaration (`event_time:`, `watermark:`, `late_events:`), checked
/// against its schema; `None` on processing time or when it has an error (pushed).
fn event_time(
    text: &str,
    what: &str,
    raw: &RawSource,
    schema: &[(String, DataType)],
    diags: &mut Vec<Diagnostic>,
) -> Option<EventTime> {
    let at = |s: &Spanned<String>| Some(span_of(s, text));
    let Some(column) = &raw.event_time else {
        for (field, value) in [
            ("watermark", &raw.watermark),
            ("late_events", &raw.late_events),
        ] {
            if let Some(v) = value {
                diags.push(
                    Diagnostic::error(
                        Code::EventTime,
                        format!("{what} declares `{field}` but no `event_time`"),
                    )
                    .with_span(Some(key_span(text, field, span_of(v, text))))
                    .with_help(format!(
                        "`{field}` belongs to a source on event time: add `event_time: <timestamp column>`, or remove `{field}`"
                    )),
                );
            }
        }
        return None;
    };
    let before = diags.len();
    match schema.iter().find(|(c, _)| *c == column.value) {
        Some((_, DataType::Timestamp)) => {}
        Some((_, ty)) => diags.push(
            Diagnostic::error(
                Code::EventTime,
                format!(
                    "{what}: event_time `{}` is {ty}, not a timestamp",
                    column.value
                ),
            )
            .with_span(at(column))
            .with_help("event_time names a timestamp column of the schema"),
        ),
        // Declared with a type that was refused, which is reported already.
        None if raw.schema.value.contains_key(&column.value) => return None,
        None => {
            let names: Vec<&str> = schema.iter().map(|(c, _)| c.as_str()).collect();
            diags.push(
                Diagnostic::error(
                    Code::EventTime,
                    format!(
                        "{what}: event_time `{}` is not a column of its schema",
                        column.value
                    ),
                )
                .with_span(at(column))
                .with_help(crate::diagnostic::suggest(
                    &column.value,
                    &names,
                    "its columns are",
                )),
            );
        }
    }
    let watermark = match &raw.watermark {
        None => Some(0),
        Some(w) => match parse_duration(&w.value) {
            // Flink writes the delay in its watermark with at most three digits of days.
            Some(ms) if ms >= 1000 * 86_400_000 => {
                diags.push(
                    Diagnostic::error(
                        Code::EventTime,
                        format!("{what}: watermark `{}` is 1000 days or more", w.value),
                    )
                    .with_span(at(w))
                    .with_help("a watermark delay is how far out of order events may arrive; keep it under 1000d"),
                );
                None
            }
            Some(ms) => Some(ms),
            None => {
                diags.push(
                    Diagnostic::error(
                        Code::EventTime,
                        format!(
                            "{what}: watermark `{}` is {}",
                            w.value,
                            not_a_duration(&w.value)
                        ),
                    )
                    .with_span(at(w))
                    .with_help(DURATION_HELP),
                );
                None
            }
        },
    };
    let late = match raw.late_events.as_ref().map(|l| l.value.as_str()) {
        None | Some("drop") => Some(LateEvents::Drop),
        Some("keep") => Some(LateEvents::Keep),
        Some(other) => {
            let l = raw.late_events.as_ref().expect("matched Some");
            let mut d = Diagnostic::error(
                Code::EventTime,
                format!("{what}: unknown late_events `{other}`"),
            )
            .with_span(at(l));
            d = match did_you_mean(other, ["drop", "keep"]) {
                Some(x) => d.with_help(format!("did you mean `{x}`?")),
                None => d.with_help("late_events is drop (the default) or keep"),
            };
            diags.push(d);
            None
        }
    };
    if diags.len() > before {
        return None;
    }
    Some(EventTime {
        column: column.value.clone(),
        watermark: watermark?,
        late: late?,
    })
}

/// An upsert source's key (`changelog: upsert` with `key:`), checked against its schema and
/// the rest of its declaration; `None` for an append source or when it has an error
/// (pushed). See docs/changing-tables.md.
fn source_key(
    text: &str,
    what: &str,
    raw: &RawSource,
    schema: &[(String, DataType)],
    diags: &mut Vec<Diagnostic>,
) -> Option<Vec<String>> {
    let err = |message: String, at: Range<usize>, help: &str| {
        Diagnostic::error(Code::SourceChangelog, message)
            .with_span(Some(at))
            .with_help(help.to_string())
    };
    let upsert = match &raw.changelog {
        None => false,
        Some(c) if c.value == "append" => false,
        Some(c) if c.value == "upsert" => true,
        Some(c) => {
            let help = match did_you_mean(&c.value, ["append", "upsert"]) {
                Some(x) => format!("did you mean `{x}`?"),
                None => "a source's changelog is append (the default: every record a new fact) or upsert (a record is its key's new row)".into(),
            };
            diags.push(err(
                format!("{what}: unknown changelog `{}`", c.value),
                span_of(c, text),
                &help,
            ));
            return None;
        }
    };
    let Some(key) = &raw.key else {
        if upsert {
            let c = raw.changelog.as_ref().expect("upsert was written");
            diags.push(err(
                format!("{what} is an upsert source but declares no `key`"),
                key_span(text, "changelog", span_of(c, text)),
                "name the columns of the Kafka record's key: `key: [order_id]`",
            ));
        }
        return None;
    };
    let key_at = key_span(text, "key", span_of(key, text));
    if !upsert {
        diags.push(
            Diagnostic::error(
                Code::KeyOnAppend,
                format!("{what} declares a key but is an append source"),
            )
            .with_span(Some(key_at))
            .with_help(
                "declare `changelog: upsert` if each record is its key's new row, or remove `key:`",
            ),
        );
        return None;
    }
    let before = diags.len();
    if key.value.is_empty() {
        diags.push(err(
            format!("{what} declares an empty key"),
            key_at.clone(),
            "name the columns of the Kafka record's key: `key: [order_id]`",
        ));
    }
    let mut columns = Vec::new();
    for k in &key.value {
        if columns.contains(&k.value) {
            diags.push(
                Diagnostic::error(
                    Code::RepeatedKeyColumn,
                    format!("{what} lists `{}` twice in its key", k.value),
                )
                .with_span(Some(span_of(k, text)))
                .with_help(
                    "name each key column once; Flink refuses a primary key that repeats a column",
                ),
            );
            continue;
        }
        if !schema.iter().any(|(c, _)| *c == k.value) {
            let names: Vec<&str> = schema.iter().map(|(c, _)| c.as_str()).collect();
            diags.push(
                err(
                    format!(
                        "{what}: key column `{}` is not a column of its schema",
                        k.value
                    ),
                    span_of(k, text),
                    "",
                )
                .with_help(crate::diagnostic::suggest(
                    &k.value,
                    &names,
                    "its columns are",
                )),
            );
        }
        columns.push(k.value.clone());
    }
    if raw.connector.value != "kafka" {
        diags.push(err(
            format!("{what} is an upsert source on `{}`", raw.connector.value),
            key_span(text, "connector", span_of(&raw.connector, text)),
            "an upsert source reads a Kafka topic as a table (Flink's upsert-kafka); a file has no keys or tombstones, so read it as an append source",
        ));
    }
    if raw.format.value != "json" {
        diags.push(err(
            format!("{what} is an upsert source in `{}`", raw.format.value),
            key_span(text, "format", span_of(&raw.format, text)),
            "an upsert source reads its key and its value as json; write the topic in json",
        ));
    }
    // An upsert source on event time is a versioned table (a temporal join reads it,
    // docs/joins.md): Flink keeps every version, late or not.
    if let Some(t) = &raw.event_time
        && raw.late_events.as_ref().map(|l| l.value.as_str()) != Some("keep")
    {
        let at = match &raw.late_events {
            Some(l) => key_span(text, "late_events", span_of(l, text)),
            None => key_span(text, "event_time", span_of(t, text)),
        };
        diags.push(err(
            format!("{what} is an upsert source on event time that drops late events"),
            at,
            "an upsert source on event time is read as a versioned table, which keeps every version, late or not, as Flink does: write `late_events: keep`",
        ));
    }
    (diags.len() == before).then_some(columns)
}

/// Parses and validates `sources.yml`.
pub fn parse_sources(path: &str, text: &str) -> ParsedSources {
    let raw: RawSources = match yaml::parse(path, text) {
        Ok(r) => r,
        Err(d) => {
            return ParsedSources {
                diagnostics: vec![d],
                ..ParsedSources::default()
            };
        }
    };
    let mut diags = Vec::new();
    let mut out = Vec::new();
    let mut broken = std::collections::BTreeSet::new();
    for (name, s) in raw.sources.unwrap_or_default() {
        let before = diags.len();
        let span = key_span(text, &name, span_of(&s, text));
        let what = format!("source `{name}`");
        if !is_identifier(&name) {
            diags.push(
                Diagnostic::error(
                    Code::InvalidName,
                    format!("source name `{name}` is not an SQL identifier"),
                )
                .with_span(Some(span.clone()))
                .with_help("use letters, digits and underscores, starting with a letter"),
            );
            continue;
        }
        let c = connector(
            text,
            &what,
            &s.value.connector,
            s.value.topic.as_ref(),
            s.value.path.as_ref(),
            &mut diags,
        );
        let f = format_of(text, &what, &s.value.format, &mut diags);
        let mut schema = Vec::new();
        for (col, ty) in &s.value.schema.value {
            if col.trim().is_empty() || col.chars().any(char::is_control) {
                diags.push(
                    Diagnostic::error(
                        Code::InvalidName,
                        format!("{what} has a column named {col:?}, which no query can name"),
                    )
                    .with_span(Some(span_of(ty, text)))
                    .with_help("give the column a name of letters, digits and underscores"),
                );
                continue;
            }
            // A bare DECIMAL or TIMESTAMP in capitals is read as Flink reads it there:
            // DECIMAL(10, 0) and TIMESTAMP(6), not Streamform's decimal(38,9) and timestamp.
            let flink_meaning = match ty.value.trim() {
                "DECIMAL" => Some(
                    "Flink's DECIMAL is DECIMAL(10, 0) and Streamform's bare decimal is decimal(38,9): write decimal(p,s) with the precision and scale you mean",
                ),
                "TIMESTAMP" => Some(
                    "Flink's TIMESTAMP is TIMESTAMP(6), to the microsecond, Streamform's timestamp keeps milliseconds (Flink's TIMESTAMP(3)): write timestamp",
                ),
                _ => None,
            };
            if let Some(help) = flink_meaning {
                diags.push(
                    Diagnostic::error(
                        Code::UnknownType,
                        format!(
                            "{what}, column `{col}`: `{}` means another type in Flink SQL",
                            ty.value.trim()
                        ),
                    )
                    .with_span(Some(span_of(ty, text)))
                    .with_help(help),
                );
                continue;
            }
            match DataType::parse(&ty.value) {
                Ok(t) => schema.push((col.clone(), t)),
                Err(e) => {
                    let mut d = Diagnostic::error(
                        Code::UnknownType,
                        format!("{what}, column `{col}`: {e}"),
                    )
                    .with_span(Some(span_of(ty, text)));
                    d = match did_you_mean(&ty.value, DataType::NAMES.iter().copied()) {
                        _ if let Some(help) = DataType::flink_equivalent(&ty.value) => {
                            d.with_help(help)
                        }
                        Some(x) => d.with_help(format!("did you mean `{x}`?")),
                        None => d.with_help("types are int32, int64, float64, decimal, decimal(p,s), string, boolean, timestamp, date"),
                    };
                    diags.push(d);
                }
            }
        }
        let event_time = event_time(text, &what, &s.value, &schema, &mut diags);
        let key = source_key(text, &what, &s.value, &schema, &mut diags);
        if s.value.schema.value.is_empty() {
            diags.push(
                Diagnostic::error(Code::EmptySchema, format!("{what} declares no columns"))
                    .with_span(Some(span_of(&s.value.schema, text)))
                    .with_help("list each column under `schema:` as `name: type`"),
            );
        }
        // `SELECT *` would select them all, past what a model's select list may hold (the
        // planner's cost grows with the square of the columns).
        let columns = s.value.schema.value.len();
        if columns > crate::sql::MOST_OPERATORS {
            diags.push(
                Diagnostic::error(
                    Code::SchemaTooWide,
                    format!(
                        "{what} declares {columns} columns; a source may declare at most {}",
                        crate::sql::MOST_OPERATORS
                    ),
                )
                .with_span(Some(key_span(text, "schema", span_of(&s.value.schema, text))))
                .with_help("declare only the fields the models read (a JSON event's other fields are ignored when it is read)"),
            );
        }
        if diags.len() > before {
            broken.insert(name);
            continue;
        }
        if let (Some(connector), Some(format)) = (c, f) {
            out.push(SourceDef {
                name,
                connector,
                format,
                schema,
                span,
                event_time,
                key,
            });
        }
    }
    ParsedSources {
        sources: out,
        diagnostics: diags,
        broken,
        readable: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_jobmanager_defaults_to_the_gateways_scheme_and_host_on_port_8081() {
        for (gateway, jobmanager) in [
            ("http://localhost:8083", Some("http://localhost:8081")),
            (
                "https://flink.example.com:443/sql",
                Some("https://flink.example.com:8081"),
            ),
            ("http://[::1]:8083", Some("http://[::1]:8081")),
            ("http://gateway", Some("http://gateway:8081")),
            ("localhost:8083", None),
            ("http://:8083", None),
            ("http://host:80x", None),
            ("http://host:99999", None),
        ] {
            assert_eq!(
                default_jobmanager(gateway).as_deref(),
                jobmanager,
                "{gateway}"
            );
        }
    }

    #[test]
    fn an_address_with_a_credential_is_told_apart_and_shown_without_it() {
        assert_eq!(
            split_address("https://ops:s3cret@flink.example:8083/x").map(|a| a.1),
            Some(true)
        );
        assert_eq!(
            split_address("https://flink.example:8083").map(|a| a.1),
            Some(false)
        );
        assert_eq!(
            without_userinfo("https://ops:s3cret@flink.example:8083/x"),
            "https://***@flink.example:8083/x"
        );
        assert_eq!(without_userinfo("http://a:1"), "http://a:1");
        assert_eq!(
            without_userinfo("http://admin:s3cr/etPW@localhost:8083"),
            "http://***@localhost:8083"
        );
        assert_eq!(
            split_address("http://admin:s3cr/etPW@localhost:8083").map(|a| a.1),
            Some(true)
        );
    }

    #[test]
    fn reads_the_first_project() {
        let text = "name: customer-metrics\nversion: 1\n\nmodels:\n  customer_metrics:\n    materialized: upsert\n    key:\n      - customer_id\n";
        let (cfg, diags) = parse_project("streamform.yml", text);
        assert!(diags.is_empty(), "{diags:?}");
        let cfg = cfg.unwrap();
        assert_eq!(cfg.name, "customer-metrics");
        assert_eq!(
            cfg.models["customer_metrics"].materialized,
            Materialized::Upsert {
                key: vec!["customer_id".into()]
            }
        );
    }

    #[test]
    fn refuses_another_version() {
        let (cfg, diags) = parse_project("streamform.yml", "name: x\nversion: 2\n");
        assert!(cfg.is_none());
        assert_eq!(
            diags[0].message,
            "unsupported project format version 2; this build reads version 1"
        );
    }

    #[test]
    fn flink_target_needs_its_sections() {
        let (_, diags) = parse_project(
            "streamform.yml",
            "name: x\nversion: 1\ntargets:\n  local:\n    backend: flink\n",
        );
        assert_eq!(
            diags[0].message,
            "target `local` uses backend flink but has no `flink:` section"
        );
    }

    #[test]
    fn sources_are_sorted_and_typed() {
        let text = "sources:\n  orders:\n    connector: kafka\n    topic: orders\n    format: json\n    schema:\n      customer_id: int64\n      amount: decimal\n";
        let parsed = parse_sources("sources.yml", text);
        let (defs, diags) = (parsed.sources, parsed.diagnostics);
        assert!(diags.is_empty());
        assert_eq!(
            defs[0].schema,
            vec![
                ("amount".into(), DataType::DEFAULT_DECIMAL),
                ("customer_id".into(), DataType::Int64)
            ]
        );
    }

    #[test]
    fn bad_type_suggests() {
        let text = "sources:\n  o:\n    connector: kafka\n    topic: o\n    format: json\n    schema:\n      a: int46\n";
        let parsed = parse_sources("sources.yml", text);
        assert!(parsed.broken.contains("o"));
        let diags = parsed.diagnostics;
        assert_eq!(
            diags[0].message,
            "source `o`, column `a`: unknown type `int46`"
        );
        assert_eq!(diags[0].help.as_deref(), Some("did you mean `int64`?"));
    }
}
