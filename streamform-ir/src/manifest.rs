//! The plan manifest: the versioned JSON document that records the identity of every node
//! of an application (ids, canonical definitions, schemas with digests, changelog contracts
//! and state digests), plus an application digest over all of it.
//!
//! Spec: plan identity reference, "The plan manifest" (streamform-docs lines 1395-1437) and
//! the protocol rules (1719-1745): the version field comes first, a reader refuses another
//! version and any field it does not know.
//!
//! The manifest is derived from [`ModelPlan`]s and never turned back into one; `plan`
//! compares two manifests.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::identity::{node_digests, sha256_hex};
use crate::plan::{Changelog, Input, Materialized, ModelPlan, Node, Operator, State};

/// The `manifest_version` this build writes and reads.
pub const MANIFEST_VERSION: u32 = 1;

/// The whole application's manifest (`inspect-plan --json`, `build/plan.json`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Always [`MANIFEST_VERSION`] when written by this build.
    pub manifest_version: u32,
    /// SHA-256 (64 lowercase hex characters) of the compact JSON of this document with this
    /// field set to the empty string.
    pub application_digest: String,
    /// One entry per model, in dependency order.
    pub models: Vec<ModelEntry>,
    /// Every node of every model: models in dependency order, each model's nodes in plan order.
    pub nodes: Vec<NodeEntry>,
}

/// One model's slice (`explain --json MODEL`, `inspect-plan --json MODEL`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSlice {
    /// Always [`MANIFEST_VERSION`] when written by this build.
    pub manifest_version: u32,
    /// The model's entry, as in [`Manifest::models`].
    pub model: ModelEntry,
    /// The model's nodes, in plan order.
    pub nodes: Vec<NodeEntry>,
}

/// What a model declares and which node is its output.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelEntry {
    /// The model's name.
    pub name: String,
    /// `append` or `upsert`.
    pub materialized: String,
    /// The declared key columns; empty for an append model (and a keyless upsert).
    pub key: Vec<String>,
    /// The id of the model's Sink node, its contract with readers.
    pub output: String,
}

/// One node's identity.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeEntry {
    /// `<model>::<kind>::<ordinal>`.
    pub id: String,
    /// The model the node belongs to.
    pub model: String,
    /// The operator kind, lowercase: `source`, `filter`, `project`, `aggregate`, `sort`, `sink`.
    pub operator: String,
    /// Ids of the nodes this node reads: the previous node of the chain, or the upstream
    /// model's Sink for the first operator of a model that reads `ref()`; empty for a Source.
    pub inputs: Vec<String>,
    /// The canonical definition, see [`definition`].
    pub definition: String,
    /// The output columns by name and canonical type, in order.
    pub schema: Vec<Column>,
    /// SHA-256 of the schema fingerprint, 64 lowercase hex characters.
    pub schema_digest: String,
    /// `bounded` or `unbounded`.
    pub boundedness: String,
    /// The changelog contract.
    pub changelog: ChangelogEntry,
    /// What the node stores.
    pub state: StateEntry,
    /// The event-time column the node carries; omitted when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
}

/// One output column.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Column {
    /// The column name.
    pub name: String,
    /// The canonical type, as in sources.yml: `int64`, `decimal(38,9)`.
    #[serde(rename = "type")]
    pub ty: String,
}

/// A changelog contract: `{"mode": "append"}`, `{"mode": "upsert", "key": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase", deny_unknown_fields)]
pub enum ChangelogEntry {
    /// Every record is an insert.
    Append,
    /// Records upsert the row with this key.
    Upsert {
        /// The key columns.
        key: Vec<String>,
    },
    /// Delete-then-insert pairs.
    Retract,
}

impl fmt::Display for ChangelogEntry {
    /// `append`, `upsert(customer_id)`, `retract`, as inspect-plan and plan print it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChangelogEntry::Append => f.write_str("append"),
            ChangelogEntry::Upsert { key } => write!(f, "upsert({})", key.join(", ")),
            ChangelogEntry::Retract => f.write_str("retract"),
        }
    }
}

/// `Source`, `Aggregate`, ... for an operator's lowercase name as the manifest writes it.
pub fn operator_title(operator: &str) -> &str {
    match operator {
        "source" => "Source",
        "filter" => "Filter",
        "project" => "Project",
        "aggregate" => "Aggregate",
        "sort" => "Sort",
        "sink" => "Sink",
        other => other,
    }
}

/// Columns as inspect-plan and plan print them: `[customer_id: int64, total_spend: decimal(38,9)]`.
pub fn render_columns(cols: &[Column]) -> String {
    let parts: Vec<String> = cols
        .iter()
        .map(|c| format!("{}: {}", c.name, c.ty))
        .collect();
    format!("[{}]", parts.join(", "))
}

/// A node's state: `{"kind": "stateless"}` or the keyed state with its digest.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum StateEntry {
    /// Keeps nothing between records.
    Stateless,
    /// Keyed state.
    Keyed {
        /// The key columns, in order.
        keys: Vec<String>,
        /// The accumulators, in call order, by Streamform's name and type.
        accumulators: Vec<Column>,
        /// `unbounded`, or the declared retention rendered canonically.
        retention: String,
        /// SHA-256 of the state fingerprint, 64 lowercase hex characters.
        digest: String,
    },
}

/// Which versioned document a reader expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// The plan manifest (`manifest_version`).
    Manifest,
    /// The applied record (`record_version`).
    Record,
}

impl Document {
    fn name(self) -> &'static str {
        match self {
            Document::Manifest => "plan manifest",
            Document::Record => "applied record",
        }
    }

    fn version_field(self) -> &'static str {
        match self {
            Document::Manifest => "manifest_version",
            Document::Record => "record_version",
        }
    }

    fn version(self) -> u32 {
        match self {
            Document::Manifest => MANIFEST_VERSION,
            Document::Record => crate::record::RECORD_VERSION,
        }
    }
}

/// Why a plan manifest or an applied record was refused. The messages name what was found
/// and what this build speaks; they do not name the file, which the caller knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManifestError {
    /// The text is empty (or only whitespace).
    Empty,
    /// The text is not JSON; serde's message, with its line and column.
    Malformed(String),
    /// Valid JSON, but neither a manifest nor a record: what was found instead.
    Neither(String),
    /// The version field is missing or not this build's.
    Version {
        /// What was expected.
        document: Document,
        /// The value found, or `(missing)`.
        found: String,
    },
    /// The document has a field this build does not know, or lacks one it needs.
    Shape {
        /// What was expected.
        document: Document,
        /// serde's message, with its line and column.
        message: String,
    },
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManifestError::Empty => f.write_str("the file is empty"),
            ManifestError::Malformed(m) => write!(f, "the file is not valid JSON: {m}"),
            ManifestError::Neither(found) => write!(
                f,
                "the file is neither a plan manifest nor an applied record: it holds {found}, with no manifest_version or record_version"
            ),
            ManifestError::Version { document, found } => write!(
                f,
                "the {} has {} {found}; this build speaks {} {}",
                document.name(),
                document.version_field(),
                document.version_field(),
                document.version()
            ),
            ManifestError::Shape { document, message } => write!(
                f,
                "the {} does not have the shape of {} {}: {message}",
                document.name(),
                document.version_field(),
                document.version()
            ),
        }
    }
}

impl std::error::Error for ManifestError {}

/// Checks the version field of a JSON object for `document`.
pub(crate) fn check_version(
    object: &serde_json::Map<String, serde_json::Value>,
    document: Document,
) -> Result<(), ManifestError> {
    match object.get(document.version_field()) {
        Some(v) if v.as_u64() == Some(u64::from(document.version())) => Ok(()),
        found => Err(ManifestError::Version {
            document,
            found: found.map_or("(missing)".to_string(), ToString::to_string),
        }),
    }
}

/// Parses JSON text into a value, refusing empty text and anything but an object.
pub(crate) fn parse_object(
    text: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, ManifestError> {
    if text.trim().is_empty() {
        return Err(ManifestError::Empty);
    }
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| ManifestError::Malformed(e.to_string()))?;
    match value {
        serde_json::Value::Object(map) => Ok(map),
        other => Err(ManifestError::Neither(describe_json(&other))),
    }
}

/// What a JSON value is, for messages: `a JSON array`, `an object with the fields a, b`.
pub(crate) fn describe_json(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => "null".into(),
        serde_json::Value::Bool(_) => "a boolean".into(),
        serde_json::Value::Number(_) => "a number".into(),
        serde_json::Value::String(_) => "a string".into(),
        serde_json::Value::Array(_) => "a JSON array".into(),
        serde_json::Value::Object(map) if map.is_empty() => "an empty object".into(),
        serde_json::Value::Object(map) => {
            let mut keys: Vec<&str> = map.keys().map(String::as_str).take(6).collect();
            if map.len() > 6 {
                keys.push("…");
            }
            format!("an object with the fields {}", keys.join(", "))
        }
    }
}

impl Manifest {
    /// Builds the manifest of an application from its model plans, in dependency order, and
    /// computes its application digest.
    pub fn from_plans<'a>(plans: impl IntoIterator<Item = &'a ModelPlan>) -> Manifest {
        let mut manifest = Manifest {
            manifest_version: MANIFEST_VERSION,
            application_digest: String::new(),
            models: Vec::new(),
            nodes: Vec::new(),
        };
        for plan in plans {
            manifest.models.push(model_entry(plan));
            manifest.nodes.extend(node_entries(plan));
        }
        manifest.application_digest = manifest.compute_digest();
        manifest
    }

    /// SHA-256 of the compact JSON of this manifest with `application_digest` empty.
    pub fn compute_digest(&self) -> String {
        let blank = Manifest {
            application_digest: String::new(),
            ..self.clone()
        };
        sha256_hex(&serde_json::to_string(&blank).expect("a manifest always serializes"))
    }

    /// The manifest as pretty-printed JSON (two-space indent), ending with a newline.
    pub fn to_json_pretty(&self) -> String {
        pretty(self)
    }

    /// Reads a manifest strictly: the version must be [`MANIFEST_VERSION`] and every field
    /// must be one this build knows.
    ///
    /// # Errors
    /// [`ManifestError`] naming what was found and what this build speaks.
    pub fn from_json(text: &str) -> Result<Manifest, ManifestError> {
        let object = parse_object(text)?;
        check_version(&object, Document::Manifest)?;
        // From the text, not the value, so serde's message carries the line and column.
        serde_json::from_str(text).map_err(|e| ManifestError::Shape {
            document: Document::Manifest,
            message: e.to_string(),
        })
    }
}

impl ModelSlice {
    /// One model's slice of the manifest.
    pub fn from_plan(plan: &ModelPlan) -> ModelSlice {
        ModelSlice {
            manifest_version: MANIFEST_VERSION,
            model: model_entry(plan),
            nodes: node_entries(plan),
        }
    }

    /// The slice as pretty-printed JSON (two-space indent), ending with a newline.
    pub fn to_json_pretty(&self) -> String {
        pretty(self)
    }
}

fn pretty<T: Serialize>(doc: &T) -> String {
    let mut text = serde_json::to_string_pretty(doc).expect("a manifest always serializes");
    text.push('\n');
    text
}

fn model_entry(plan: &ModelPlan) -> ModelEntry {
    let materialized = plan.materialized();
    ModelEntry {
        name: plan.name.clone(),
        materialized: materialized.name().to_string(),
        key: match materialized {
            Materialized::Append => Vec::new(),
            Materialized::Upsert { key } => key.clone(),
        },
        output: plan.sink().id.to_string(),
    }
}

fn node_entries(plan: &ModelPlan) -> Vec<NodeEntry> {
    let mut out: Vec<NodeEntry> = Vec::with_capacity(plan.nodes.len());
    for (i, node) in plan.nodes.iter().enumerate() {
        let inputs = match (i, &plan.input) {
            (0, Input::Model(upstream)) => vec![format!("{upstream}::sink::0")],
            (0, Input::Source(_)) => Vec::new(),
            _ => vec![plan.nodes[i - 1].id.to_string()],
        };
        out.push(node_entry(node, inputs));
    }
    out
}

fn node_entry(node: &Node, inputs: Vec<String>) -> NodeEntry {
    let digests = node_digests(node);
    NodeEntry {
        id: node.id.to_string(),
        model: node.id.model.clone(),
        operator: node.id.kind.id_name().to_string(),
        inputs,
        definition: definition(&node.op),
        schema: node
            .schema
            .iter()
            .map(|f| Column {
                name: f.name.clone(),
                ty: f.ty.to_string(),
            })
            .collect(),
        schema_digest: digests.schema_digest,
        boundedness: node.boundedness.title().to_lowercase(),
        changelog: match &node.changelog {
            Changelog::Append => ChangelogEntry::Append,
            Changelog::Upsert(key) => ChangelogEntry::Upsert { key: key.clone() },
            Changelog::Retract => ChangelogEntry::Retract,
        },
        state: match &node.state {
            State::Stateless => StateEntry::Stateless,
            State::Keyed(k) => StateEntry::Keyed {
                keys: k.key.clone(),
                accumulators: k
                    .accumulators
                    .iter()
                    .map(|a| Column {
                        name: a.name.clone(),
                        ty: a.ty.to_string(),
                    })
                    .collect(),
                retention: k.retention.to_string(),
                digest: digests.state_digest.unwrap_or_default(),
            },
        },
        time: None,
    }
}

/// A node's canonical definition, built from Streamform's own renderings only:
///
/// | operator | definition |
/// |---|---|
/// | Source | `orders (kafka orders)` |
/// | Filter | the predicate, `(total_spend > 100)` |
/// | Project | `customer_id, sum(amount) AS total_spend` |
/// | Aggregate | `key=[customer_id] aggregates=[sum(amount)]` |
/// | Sort | `order=[reading DESC, sensor ASC]` |
/// | Sink | `upsert kafka customer-metrics`, or `upsert` without a `sink:` |
pub fn definition(op: &Operator) -> String {
    match op {
        Operator::Source {
            name, connector, ..
        } => format!("{name} ({} {})", connector.name(), connector.location()),
        Operator::Filter { predicate } => predicate.to_string(),
        Operator::Project { items } => items
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        Operator::Aggregate { group_by, calls } => format!(
            "key=[{}] aggregates=[{}]",
            group_by.join(", "),
            calls
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Operator::Sort { keys } => format!(
            "order=[{}]",
            keys.iter()
                .map(|k| format!("{} {}", k.column, if k.descending { "DESC" } else { "ASC" }))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Operator::Sink {
            materialized,
            target,
            ..
        } => match target {
            Some(t) => format!(
                "{} {} {}",
                materialized.name(),
                t.connector.name(),
                t.connector.location()
            ),
            None => materialized.name().to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference's example manifest (streamform-docs "The plan manifest"), with its
    /// elided digests filled in.
    const REFERENCE: &str = r#"{
  "manifest_version": 1,
  "application_digest": "DIGEST",
  "models": [
    { "name": "customer_metrics", "materialized": "upsert", "key": ["customer_id"], "output": "customer_metrics::sink::0" }
  ],
  "nodes": [
    {
      "id": "customer_metrics::aggregate::0",
      "model": "customer_metrics",
      "operator": "aggregate",
      "inputs": ["customer_metrics::source::0"],
      "definition": "key=[customer_id] aggregates=[sum(amount)]",
      "schema": [
        { "name": "customer_id", "type": "int64" },
        { "name": "sum(amount)", "type": "decimal(38,9)" }
      ],
      "schema_digest": "322eb3aa5330",
      "boundedness": "unbounded",
      "changelog": { "mode": "upsert", "key": ["customer_id"] },
      "state": {
        "kind": "keyed",
        "keys": ["customer_id"],
        "accumulators": [ { "name": "sum(amount)", "type": "decimal(38,9)" } ],
        "retention": "unbounded",
        "digest": "4aead023aa01"
      }
    }
  ]
}"#;

    #[test]
    fn reads_the_reference_shape_and_writes_it_back_with_the_same_fields() {
        let manifest = Manifest::from_json(REFERENCE).expect("the reference shape is accepted");
        assert_eq!(
            manifest.nodes[0].state,
            StateEntry::Keyed {
                keys: vec!["customer_id".into()],
                accumulators: vec![Column {
                    name: "sum(amount)".into(),
                    ty: "decimal(38,9)".into()
                }],
                retention: "unbounded".into(),
                digest: "4aead023aa01".into(),
            }
        );
        let written: serde_json::Value = serde_json::from_str(&manifest.to_json_pretty()).unwrap();
        let reference: serde_json::Value = serde_json::from_str(REFERENCE).unwrap();
        assert_eq!(written, reference);
    }

    #[test]
    fn the_application_digest_covers_everything_but_itself() {
        let mut manifest = Manifest::from_json(REFERENCE).unwrap();
        let digest = manifest.compute_digest();
        assert_eq!(digest.len(), 64);
        manifest.application_digest = "anything".into();
        assert_eq!(manifest.compute_digest(), digest);
        manifest.nodes[0].definition = "key=[amount] aggregates=[sum(amount)]".into();
        assert_ne!(manifest.compute_digest(), digest);
    }

    #[test]
    fn refuses_another_version() {
        let text = REFERENCE.replace("\"manifest_version\": 1", "\"manifest_version\": 2");
        let err = Manifest::from_json(&text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the plan manifest has manifest_version 2; this build speaks manifest_version 1"
        );
        let text = REFERENCE.replace("\"manifest_version\": 1,", "");
        assert_eq!(
            Manifest::from_json(&text).unwrap_err().to_string(),
            "the plan manifest has manifest_version (missing); this build speaks manifest_version 1"
        );
    }

    #[test]
    fn refuses_unknown_fields_at_every_level() {
        for (from, to) in [
            ("\"models\": [", "\"extra\": true,\n  \"models\": ["),
            ("\"output\":", "\"sink\": \"x\", \"output\":"),
            ("\"operator\":", "\"parallelism\": 2, \"operator\":"),
            ("\"mode\": \"upsert\",", "\"mode\": \"upsert\", \"ttl\": 1,"),
            ("\"retention\":", "\"ttl\": \"1d\", \"retention\":"),
            (
                "{ \"name\": \"customer_id\", \"type\": \"int64\" }",
                "{ \"name\": \"customer_id\", \"type\": \"int64\", \"nullable\": true }",
            ),
        ] {
            let text = REFERENCE.replacen(from, to, 1);
            assert_ne!(text, REFERENCE, "{from}");
            let err = Manifest::from_json(&text).unwrap_err();
            assert!(matches!(err, ManifestError::Shape { .. }), "{from}: {err}");
            assert!(err.to_string().contains("unknown field"), "{from}: {err}");
        }
    }

    #[test]
    fn refuses_text_that_is_not_a_manifest() {
        assert_eq!(
            Manifest::from_json("[1, 2]").unwrap_err(),
            ManifestError::Neither("a JSON array".into())
        );
        assert_eq!(
            Manifest::from_json(" \n").unwrap_err(),
            ManifestError::Empty
        );
        assert!(matches!(
            Manifest::from_json("{\"manifest_version\": 1,").unwrap_err(),
            ManifestError::Malformed(_)
        ));
    }
}
