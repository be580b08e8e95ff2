//! The plan manifest: the versioned JSON document that records the identity of every node
//! of an application (ids, canonical definitions, schemas with digests, changelog contracts
//! and state digests), plus an application digest over all of it.
//!
//! See docs/plan-identity.md, "The plan manifest", and the rules of docs/protocol.md: the
//! version field comes first, a reader refuses another version and any field it does not
//! know.
//!
//! The manifest is derived from [`ModelPlan`]s and never turned back into one; `plan`
//! compares two manifests.

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::identity::{node_digests, sha256_hex};
use crate::plan::{Changelog, Materialized, ModelPlan, Node, Operator, State};
use crate::types::DataType;

/// The `manifest_version` this build writes and reads.
pub const MANIFEST_VERSION: u32 = 1;

/// The whole application's manifest (`inspect-plan --json`, `build/plan.json`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeEntry {
    /// `<model>::<kind>::<ordinal>`.
    pub id: String,
    /// The model the node belongs to.
    pub model: String,
    /// The operator kind, lowercase, as node ids write it.
    // The schema lists the kinds from the IR's own list, `NodeKind::ALL`.
    #[schemars(schema_with = "operator_kinds")]
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

/// The schema of a node's operator: one of the kinds the IR has, so the published schema
/// cannot fall behind the IR.
fn operator_kinds(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let kinds: Vec<&str> = crate::plan::NodeKind::ALL
        .iter()
        .map(|k| k.id_name())
        .collect();
    schemars::json_schema!({
        "description": "The operator kind, lowercase, as node ids write it.",
        "type": "string",
        "enum": kinds,
    })
}

/// One output column.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Column {
    /// The column name.
    pub name: String,
    /// The canonical type, as in sources.yml: `int64`, `decimal(38,9)`.
    #[serde(rename = "type")]
    pub ty: String,
}

/// A changelog contract: `{"mode": "append"}`, `{"mode": "upsert", "key": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
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
    crate::plan::NodeKind::from_id_name(operator).map_or(operator, |k| k.title())
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
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
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
        /// A window node's window, `tumble(size=1m) on viewed_at`; omitted for every other
        /// node.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<String>,
        /// Whether the accumulators take changes back (an aggregate over an updating
        /// input); omitted when they do not.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        retracting: bool,
        /// An interval join's time condition, `ordered_at between shipped_at - 4h and
        /// shipped_at`; omitted for every other node.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bounds: Option<String>,
        /// A rank's ordering, top and rank operator, `order=[revenue desc] top=3
        /// strategy=retract`; omitted for every other node.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ranking: Option<String>,
        /// An over aggregation's frame, `rows 2 preceding on ordered_at`; omitted for every
        /// other node.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        frame: Option<String>,
        /// SHA-256 of the state fingerprint, 64 lowercase hex characters.
        digest: String,
    },
}

impl StateEntry {
    /// The digest of the state fingerprint the keyed fields beside it describe, for a node
    /// of `kind`; `None` when stateless. A manifest whose `digest` differs was edited.
    pub fn derived_digest(&self, kind: crate::plan::NodeKind) -> Option<String> {
        let StateEntry::Keyed {
            keys,
            accumulators,
            retention,
            window,
            retracting,
            bounds,
            ranking,
            frame,
            ..
        } = self
        else {
            return None;
        };
        Some(sha256_hex(&crate::identity::fingerprint_text(
            kind,
            keys,
            &crate::identity::Shape {
                window: window.as_deref(),
                bounds: bounds.as_deref(),
                ranking: ranking.as_deref(),
                frame: frame.as_deref(),
            },
            *retracting,
            &render_columns(accumulators),
            retention,
        )))
    }
}

/// Which versioned document a reader expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// The plan manifest (`manifest_version`).
    Manifest,
    /// The applied record (`record_version`), as this build writes it.
    Record,
    /// An applied record of `record_version` 1, written before deployments were tracked.
    RecordV1,
}

impl Document {
    fn name(self) -> &'static str {
        match self {
            Document::Manifest => "plan manifest",
            Document::Record | Document::RecordV1 => "applied record",
        }
    }

    fn version_field(self) -> &'static str {
        match self {
            Document::Manifest => "manifest_version",
            Document::Record | Document::RecordV1 => "record_version",
        }
    }

    fn version(self) -> u32 {
        match self {
            Document::Manifest => MANIFEST_VERSION,
            Document::Record => crate::record::RECORD_VERSION,
            Document::RecordV1 => 1,
        }
    }

    /// The versions this build reads.
    fn reads(self) -> &'static [u32] {
        match self {
            Document::Manifest => &[MANIFEST_VERSION],
            Document::Record | Document::RecordV1 => &[1, 2, crate::record::RECORD_VERSION],
        }
    }

    /// `manifest_version 1`, `record_version 2 (and reads record_version 1)`.
    fn speaks(self) -> String {
        let field = self.version_field();
        let current = self.version();
        let older: Vec<String> = self
            .reads()
            .iter()
            .filter(|v| **v != current)
            .map(ToString::to_string)
            .collect();
        if older.is_empty() {
            format!("{field} {current}")
        } else {
            format!("{field} {current} (and reads {field} {})", older.join(", "))
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
    /// The manifest has the right shape but does not hold together: a digest that is not
    /// one, a node id twice, an input that names no node, an application digest that does
    /// not match the content.
    Inconsistent(String),
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
                "the {} has {} {found}; this build speaks {}",
                document.name(),
                document.version_field(),
                document.speaks()
            ),
            ManifestError::Shape { document, message } => write!(
                f,
                "the {} does not have the shape of {} {}: {message}",
                document.name(),
                document.version_field(),
                document.version()
            ),
            ManifestError::Inconsistent(message) => {
                write!(f, "the plan manifest is not consistent: {message}")
            }
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
        Some(v)
            if v.as_u64()
                .is_some_and(|v| document.reads().iter().any(|r| u64::from(*r) == v)) =>
        {
            Ok(())
        }
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
        let manifest: Manifest = serde_json::from_str(text).map_err(|e| ManifestError::Shape {
            document: Document::Manifest,
            message: e.to_string(),
        })?;
        manifest.check().map_err(ManifestError::Inconsistent)?;
        Ok(manifest)
    }

    /// Checks that the manifest holds together, as one this build writes does: every digest
    /// is 64 lowercase hex characters and the application digest matches the content; node
    /// ids are well formed, unique, of a declared model and of their operator; every input
    /// and every model's output names a node, and inputs form no cycle; types, boundedness
    /// and materializations are spelled canonically.
    ///
    /// # Errors
    /// What does not hold, naming the node or model (with control characters escaped).
    pub fn check(&self) -> Result<(), String> {
        let quote = |text: &str| crate::printable(text).into_owned();
        if !is_digest(&self.application_digest) {
            return Err(format!(
                "application_digest `{}` is not a SHA-256 digest (64 lowercase hex characters)",
                quote(&self.application_digest)
            ));
        }
        let mut models = HashSet::new();
        for m in &self.models {
            if !models.insert(m.name.as_str()) {
                return Err(format!("model `{}` is listed twice", quote(&m.name)));
            }
            if m.materialized != "append" && m.materialized != "upsert" {
                return Err(format!(
                    "model `{}` has materialized `{}`; it is append or upsert",
                    quote(&m.name),
                    quote(&m.materialized)
                ));
            }
        }
        let mut ids = HashMap::new();
        for n in &self.nodes {
            let id = quote(&n.id);
            let Some(parsed) = crate::plan::NodeId::parse(&n.id) else {
                return Err(format!("node id `{id}` is not <model>::<kind>::<ordinal>"));
            };
            if parsed.model != n.model || parsed.kind.id_name() != n.operator {
                return Err(format!(
                    "node `{id}` says model `{}` and operator `{}`",
                    quote(&n.model),
                    quote(&n.operator)
                ));
            }
            if !models.contains(n.model.as_str()) {
                return Err(format!(
                    "node `{id}` belongs to model `{}`, which the manifest does not list",
                    quote(&n.model)
                ));
            }
            if ids.insert(n.id.as_str(), n).is_some() {
                return Err(format!("node `{id}` is listed twice"));
            }
            if !is_digest(&n.schema_digest) {
                return Err(format!(
                    "node `{id}` has a schema_digest that is not a SHA-256 digest"
                ));
            }
            if n.boundedness != "bounded" && n.boundedness != "unbounded" {
                return Err(format!(
                    "node `{id}` has boundedness `{}`",
                    quote(&n.boundedness)
                ));
            }
            let mut types: Vec<&Column> = n.schema.iter().collect();
            if let StateEntry::Keyed {
                accumulators,
                digest,
                ..
            } = &n.state
            {
                if !is_digest(digest) {
                    return Err(format!(
                        "node `{id}` has a state digest that is not a SHA-256 digest"
                    ));
                }
                types.extend(accumulators);
            }
            let mut names = HashSet::new();
            if let Some(twice) = n.schema.iter().find(|c| !names.insert(c.name.as_str())) {
                return Err(format!(
                    "node `{id}` has two columns named `{}`",
                    quote(&twice.name)
                ));
            }
            if let StateEntry::Keyed { accumulators, .. } = &n.state {
                let mut names = HashSet::new();
                if let Some(twice) = accumulators.iter().find(|a| !names.insert(a.name.as_str())) {
                    return Err(format!(
                        "node `{id}` has two accumulators named `{}`",
                        quote(&twice.name)
                    ));
                }
            }
            for c in types {
                if DataType::parse(&c.ty).map(|t| t.to_string()).as_deref() != Ok(c.ty.as_str()) {
                    return Err(format!(
                        "node `{id}`: column `{}` has type `{}`, which is not a type in canonical spelling",
                        quote(&c.name),
                        quote(&c.ty)
                    ));
                }
            }
            // The digests are derived from the fields beside them; a file where they
            // disagree was edited, and which of the two is right cannot be known.
            if n.schema_digest != sha256_hex(&render_columns(&n.schema)) {
                return Err(format!(
                    "node `{id}` has a schema_digest that is not the digest of its schema"
                ));
            }
            if let StateEntry::Keyed { digest, .. } = &n.state
                && Some(digest) != n.state.derived_digest(parsed.kind).as_ref()
            {
                return Err(format!(
                    "node `{id}` has a state digest that is not the digest of its state"
                ));
            }
        }
        for n in &self.nodes {
            if let Some(missing) = n.inputs.iter().find(|i| !ids.contains_key(i.as_str())) {
                return Err(format!(
                    "node `{}` reads `{}`, which is not a node of the manifest",
                    quote(&n.id),
                    quote(missing)
                ));
            }
        }
        for m in &self.models {
            if ids.get(m.output.as_str()).is_none_or(|n| n.model != m.name) {
                return Err(format!(
                    "model `{}` has output `{}`, which is not one of its nodes",
                    quote(&m.name),
                    quote(&m.output)
                ));
            }
        }
        let ordered: HashSet<&str> = inputs_first(&self.nodes, &ids)
            .into_iter()
            .map(|n| n.id.as_str())
            .collect();
        if let Some(n) = self.nodes.iter().find(|n| !ordered.contains(n.id.as_str())) {
            return Err(format!("node `{}` is on a cycle of inputs", quote(&n.id)));
        }
        if self.application_digest != self.compute_digest() {
            return Err(
                "its application_digest does not match its content (was it edited by hand?)".into(),
            );
        }
        Ok(())
    }
}

/// The nodes ordered so that every node comes after the nodes it reads (Kahn's algorithm);
/// nodes on an input cycle are left out.
pub(crate) fn inputs_first<'a>(
    nodes: &'a [NodeEntry],
    by_id: &HashMap<&str, &'a NodeEntry>,
) -> Vec<&'a NodeEntry> {
    let mut waiting: HashMap<&str, usize> = HashMap::new();
    let mut readers: HashMap<&str, Vec<&'a NodeEntry>> = HashMap::new();
    let mut ready: Vec<&'a NodeEntry> = Vec::new();
    for n in nodes {
        let known: Vec<&str> = n
            .inputs
            .iter()
            .map(String::as_str)
            .filter(|i| by_id.contains_key(i))
            .collect();
        for i in &known {
            readers.entry(i).or_default().push(n);
        }
        waiting.insert(n.id.as_str(), known.len());
        if known.is_empty() {
            ready.push(n);
        }
    }
    let mut order = Vec::with_capacity(nodes.len());
    while let Some(n) = ready.pop() {
        order.push(n);
        for reader in readers.get(n.id.as_str()).into_iter().flatten() {
            let left = waiting
                .get_mut(reader.id.as_str())
                .expect("every node waits");
            *left -= 1;
            if *left == 0 {
                ready.push(reader);
            }
        }
    }
    order
}

/// Whether `text` is a SHA-256 digest as documents carry it: 64 lowercase hex characters.
pub fn is_digest(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
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
    plan.nodes
        .iter()
        .map(|node| node_entry(node, node.inputs.iter().map(ToString::to_string).collect()))
        .collect()
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
                window: k.window.as_ref().map(ToString::to_string),
                retracting: k.retracting,
                bounds: k.bounds.as_ref().map(ToString::to_string),
                ranking: k.ranking.as_ref().map(ToString::to_string),
                frame: k.frame.as_ref().map(ToString::to_string),
                digest: digests.state_digest.unwrap_or_default(),
            },
        },
        time: node.time.clone(),
    }
}

/// `key=[customer_id] aggregates=[sum(amount)]`: an aggregate's or a window's grouping.
fn grouping(group_by: &[String], calls: &[crate::plan::AggCall]) -> String {
    let calls: Vec<String> = calls.iter().map(|c| c.name()).collect();
    format!(
        "key=[{}] aggregates=[{}]",
        group_by.join(", "),
        calls.join(", ")
    )
}

/// A node's canonical definition, built from Streamform's own renderings only:
///
/// | operator | definition |
/// |---|---|
/// | Source | `orders (kafka orders)`, on event time `orders (kafka orders) event_time=ordered_at watermark=5m late=drop` |
/// | Filter | the predicate, `(total_spend > 100)` |
/// | Project | `customer_id, sum(amount) AS total_spend` |
/// | Aggregate | `key=[customer_id] aggregates=[sum(amount)]` |
/// | Window | `tumble(size=1m) on viewed_at key=[page, window_start, window_end] aggregates=[count(*)]` |
/// | WindowTable | `tumble(size=1m) on viewed_at` |
/// | Deduplicate | `key=[payment_id] keep=last` |
/// | Union | `all` (its inputs are the node's `inputs`) |
/// | Join | `left on=[customer_id=customer_id]`, with the rest of ON: `inner on=[k=k] where (amount > limit)` |
/// | TemporalJoin | `left on=[currency=currency] as_of=ordered_at version=updated_at` |
/// | IntervalJoin | `left on=[order_id=order_id] time=[shipped_at between ordered_at and ordered_at + 4h]`, and `where …` as a Join's |
/// | Rank | `partition=[category] order=[revenue desc] top=3`, and ` number=rn` when the row number is read |
/// | Over | `partition=[customer_id] frame=[rows 2 preceding on ordered_at] aggregates=[sum(amount)]` |
/// | Sort | `order=[reading DESC, sensor ASC]` |
/// | Sink | `upsert kafka customer-metrics`, or `upsert` without a `sink:` |
pub fn definition(op: &Operator) -> String {
    match op {
        Operator::Source {
            name,
            connector,
            event_time,
            ..
        } => {
            let base = format!("{name} ({} {})", connector.name(), connector.location());
            match event_time {
                None => base,
                Some(t) => format!(
                    "{base} event_time={} watermark={} late={}",
                    t.column,
                    crate::time::format_duration(t.watermark),
                    t.late.name()
                ),
            }
        }
        Operator::Filter { predicate } => predicate.to_string(),
        Operator::Project { items } => items
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        Operator::Aggregate { group_by, calls } => grouping(group_by, calls),
        Operator::Window {
            window,
            group_by,
            calls,
        } => format!("{window} {}", grouping(group_by, calls)),
        Operator::WindowTable { window } => window.to_string(),
        Operator::Deduplicate { key } => format!("key=[{}] keep=last", key.join(", ")),
        Operator::Union => "all".to_string(),
        Operator::Join { kind, on, filter } => {
            let on: Vec<String> = on.iter().map(|(l, r)| format!("{l}={r}")).collect();
            match filter {
                Some(f) => format!("{} on=[{}] where {f}", kind.name(), on.join(", ")),
                None => format!("{} on=[{}]", kind.name(), on.join(", ")),
            }
        }
        Operator::TemporalJoin {
            kind,
            on,
            left_time,
            right_time,
        } => {
            let on: Vec<String> = on.iter().map(|(l, r)| format!("{l}={r}")).collect();
            format!(
                "{} on=[{}] as_of={left_time} version={right_time}",
                kind.name(),
                on.join(", ")
            )
        }
        Operator::IntervalJoin {
            kind,
            on,
            bounds,
            filter,
        } => {
            let on: Vec<String> = on.iter().map(|(l, r)| format!("{l}={r}")).collect();
            let base = format!("{} on=[{}] time=[{bounds}]", kind.name(), on.join(", "));
            match filter {
                Some(f) => format!("{base} where {f}"),
                None => base,
            }
        }
        Operator::Rank {
            partition_by,
            ranking,
            number,
        } => {
            let order: Vec<String> = ranking.order.iter().map(ToString::to_string).collect();
            let base = format!(
                "partition=[{}] order=[{}] top={}",
                partition_by.join(", "),
                order.join(", "),
                ranking.top
            );
            match number {
                Some(n) => format!("{base} number={n}"),
                None => base,
            }
        }
        Operator::Over {
            partition_by,
            frame,
            calls,
        } => {
            let calls: Vec<String> = calls.iter().map(crate::plan::AggCall::name).collect();
            format!(
                "partition=[{}] frame=[{frame}] aggregates=[{}]",
                partition_by.join(", "),
                calls.join(", ")
            )
        }
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

    /// The example manifest of docs/plan-identity.md, "The plan manifest", completed so
    /// that it holds together: the Source its aggregate reads, the Sink its model names as
    /// output, and real digests in place of the elided ones (filled in by [`reference`]).
    const REFERENCE: &str = r#"{
  "manifest_version": 1,
  "application_digest": "APPLICATION",
  "models": [
    { "name": "customer_metrics", "materialized": "upsert", "key": ["customer_id"], "output": "customer_metrics::sink::0" }
  ],
  "nodes": [
    {
      "id": "customer_metrics::source::0",
      "model": "customer_metrics",
      "operator": "source",
      "inputs": [],
      "definition": "orders (kafka orders)",
      "schema": [
        { "name": "amount", "type": "decimal(38,9)" },
        { "name": "customer_id", "type": "int64" }
      ],
      "schema_digest": "SOURCE",
      "boundedness": "unbounded",
      "changelog": { "mode": "append" },
      "state": { "kind": "stateless" }
    },
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
      "schema_digest": "AGGREGATE",
      "boundedness": "unbounded",
      "changelog": { "mode": "upsert", "key": ["customer_id"] },
      "state": {
        "kind": "keyed",
        "keys": ["customer_id"],
        "accumulators": [ { "name": "sum(amount)", "type": "decimal(38,9)" } ],
        "retention": "unbounded",
        "digest": "STATE"
      }
    },
    {
      "id": "customer_metrics::sink::0",
      "model": "customer_metrics",
      "operator": "sink",
      "inputs": ["customer_metrics::aggregate::0"],
      "definition": "upsert kafka customer-metrics",
      "schema": [
        { "name": "customer_id", "type": "int64" },
        { "name": "sum(amount)", "type": "decimal(38,9)" }
      ],
      "schema_digest": "AGGREGATE",
      "boundedness": "unbounded",
      "changelog": { "mode": "upsert", "key": ["customer_id"] },
      "state": { "kind": "stateless" }
    }
  ]
}"#;

    /// The state digest docs/plan-identity.md shows ("The plan manifest"), in full.
    const STATE_4AEAD: &str = "4aead023aa01440bcb26dd8f6d004bd6e44ba5ce846b4c1c78aa3076b36803bb";

    /// [`REFERENCE`] with its digests filled in: the application digest computed over it.
    fn reference() -> String {
        let text = REFERENCE
            .replace(
                "SOURCE",
                &sha256_hex("[amount: decimal(38,9), customer_id: int64]"),
            )
            .replace(
                "AGGREGATE",
                &sha256_hex("[customer_id: int64, sum(amount): decimal(38,9)]"),
            )
            .replace("STATE", STATE_4AEAD);
        let parsed: Manifest = serde_json::from_str(&text).unwrap();
        text.replace("APPLICATION", &parsed.compute_digest())
    }

    #[test]
    fn reads_the_reference_shape_and_writes_it_back_with_the_same_fields() {
        let text = reference();
        let manifest = Manifest::from_json(&text).expect("the reference shape is accepted");
        assert_eq!(
            manifest.nodes[1].state,
            StateEntry::Keyed {
                keys: vec!["customer_id".into()],
                accumulators: vec![Column {
                    name: "sum(amount)".into(),
                    ty: "decimal(38,9)".into()
                }],
                retention: "unbounded".into(),
                window: None,
                retracting: false,
                bounds: None,
                ranking: None,
                frame: None,
                digest: STATE_4AEAD.into(),
            }
        );
        let written: serde_json::Value = serde_json::from_str(&manifest.to_json_pretty()).unwrap();
        let reference: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(written, reference);
    }

    #[test]
    fn the_application_digest_covers_everything_but_itself() {
        let mut manifest = Manifest::from_json(&reference()).unwrap();
        let digest = manifest.compute_digest();
        assert_eq!(digest, manifest.application_digest);
        manifest.application_digest = "anything".into();
        assert_eq!(manifest.compute_digest(), digest);
        manifest.nodes[1].definition = "key=[amount] aggregates=[sum(amount)]".into();
        assert_ne!(manifest.compute_digest(), digest);
    }

    #[test]
    fn refuses_a_manifest_that_does_not_hold_together() {
        type Edit = fn(&mut Manifest);
        let cases: [(&str, Edit); 15] = [
            (
                "node `customer_metrics::source::0` has a schema_digest that is not the digest of its schema",
                |m| m.nodes[0].schema[0].name = "price".into(),
            ),
            (
                "node `customer_metrics::aggregate::0` has a state digest that is not the digest of its state",
                |m| {
                    if let StateEntry::Keyed { retention, .. } = &mut m.nodes[1].state {
                        *retention = "30d".into();
                    }
                },
            ),
            (
                "node `customer_metrics::aggregate::0` has two accumulators named `sum(amount)`",
                |m| {
                    if let StateEntry::Keyed { accumulators, .. } = &mut m.nodes[1].state {
                        accumulators.push(accumulators[0].clone());
                    }
                },
            ),
            (
                "its application_digest does not match its content (was it edited by hand?)",
                |m| m.nodes[0].definition = "orders (kafka orders-v2)".into(),
            ),
            (
                "node `customer_metrics::aggregate::0` has a state digest that is not a SHA-256 digest",
                |m| {
                    if let StateEntry::Keyed { digest, .. } = &mut m.nodes[1].state {
                        *digest = "4aead023aa01".into();
                    }
                },
            ),
            (
                "node `customer_metrics::source::0` has a schema_digest that is not a SHA-256 digest",
                |m| m.nodes[0].schema_digest = "é".repeat(32),
            ),
            (
                "node `customer_metrics::aggregate::0` is listed twice",
                |m| {
                    let copy = m.nodes[1].clone();
                    m.nodes.push(copy);
                },
            ),
            (
                "node `customer_metrics::aggregate::0` reads `customer_metrics::filter::0`, which is not a node of the manifest",
                |m| m.nodes[1].inputs = vec!["customer_metrics::filter::0".into()],
            ),
            (
                "node `customer_metrics::source::0` is on a cycle of inputs",
                |m| m.nodes[0].inputs = vec!["customer_metrics::sink::0".into()],
            ),
            (
                "node id `customer_metrics::aggregate::00` is not <model>::<kind>::<ordinal>",
                |m| m.nodes[1].id = "customer_metrics::aggregate::00".into(),
            ),
            (
                "node `other::sink::0` says model `customer_metrics` and operator `sink`",
                |m| m.nodes[2].id = "other::sink::0".into(),
            ),
            (
                "node `other::sink::0` belongs to model `other`, which the manifest does not list",
                |m| {
                    m.nodes[2].id = "other::sink::0".into();
                    m.nodes[2].model = "other".into();
                },
            ),
            (
                "model `customer_metrics` has output `customer_metrics::sink::1`, which is not one of its nodes",
                |m| m.models[0].output = "customer_metrics::sink::1".into(),
            ),
            (
                "node `customer_metrics::aggregate::0`: column `sum(amount)` has type `decimal(38, 9)`, which is not a type in canonical spelling",
                |m| m.nodes[1].schema[1].ty = "decimal(38, 9)".into(),
            ),
            (
                "node `customer_metrics\\u{1b}[2J::source::0` says model `customer_metrics` and operator `source`",
                |m| m.nodes[0].id = "customer_metrics\u{1b}[2J::source::0".into(),
            ),
        ];
        for (message, edit) in cases {
            let mut manifest: Manifest = serde_json::from_str(&reference()).unwrap();
            edit(&mut manifest);
            if !message.starts_with("its application_digest") {
                manifest.application_digest = manifest.compute_digest();
            }
            let err = Manifest::from_json(&manifest.to_json_pretty()).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("the plan manifest is not consistent: {message}")
            );
        }
    }

    #[test]
    fn refuses_another_version() {
        let text = reference().replace("\"manifest_version\": 1", "\"manifest_version\": 2");
        let err = Manifest::from_json(&text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the plan manifest has manifest_version 2; this build speaks manifest_version 1"
        );
        let text = reference().replace("\"manifest_version\": 1,", "");
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
            let text = reference().replacen(from, to, 1);
            assert_ne!(text, reference(), "{from}");
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
