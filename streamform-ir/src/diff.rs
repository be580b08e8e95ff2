//! The plan diff: two plan manifests compared node by node, and every change classified by
//! what it costs the state of the running application.
//!
//! See docs/plan-diff.md, whose rule tables ("The rules") this module implements, and
//! docs/upgrading.md:
//!
//! - nodes are matched by id, or through the hints (`renamed_from`, `nodes.<kind>.<ordinal>.was`);
//! - a keyed node compares its grouping key (columns, order, types), accumulators and
//!   retention, and is raised by any change upstream of it or of its own input
//!   (propagation, across model boundaries), whatever happened to its own state;
//! - a stateless node is COMPATIBLE whatever changed, except a sink with a destination,
//!   where a changed key or materialization, a changed destination, and a lost or retyped
//!   column need a backfill; and so does a change to which rows reach an upsert sink below
//!   the nearest keyed node (a predicate, what a predicate reads, a new upstream model: our
//!   rule);
//! - added and removed nodes, and whole models, are classified as their nodes; an added
//!   sink writing where a removed one wrote needs a backfill.
//!
//! Everything here is plain data over two [`Manifest`]s: no files, no backend. The result
//! is `Eq` and `Hash` so the query database can memoize it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use serde::Serialize;

use crate::manifest::{
    ChangelogEntry, Column, Manifest, ModelEntry, NodeEntry, StateEntry, render_columns as columns,
};
use crate::types::DataType;

/// What a change costs the running state, least severe first (docs/plan-diff.md). The derived order is
/// the severity order: the most severe classification wins.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, schemars::JsonSchema,
)]
pub enum Classification {
    /// Nothing that state or readers depend on changed.
    #[serde(rename = "SAFE")]
    Safe,
    /// Changed, but existing state and written rows stay valid.
    #[serde(rename = "COMPATIBLE")]
    Compatible,
    /// Stored values stay valid, but how they are kept changes.
    #[serde(rename = "STATE MIGRATION REQUIRED")]
    StateMigrationRequired,
    /// State could be loaded but would not equal what a fresh run produces.
    #[serde(rename = "BACKFILL REQUIRED")]
    BackfillRequired,
    /// Existing state cannot be reused at all.
    #[serde(rename = "STATE INCOMPATIBLE")]
    StateIncompatible,
}

impl Classification {
    /// Every classification, least severe first.
    pub const ALL: [Classification; 5] = [
        Classification::Safe,
        Classification::Compatible,
        Classification::StateMigrationRequired,
        Classification::BackfillRequired,
        Classification::StateIncompatible,
    ];

    /// `SAFE`, `COMPATIBLE`, `STATE MIGRATION REQUIRED`, `BACKFILL REQUIRED`,
    /// `STATE INCOMPATIBLE`.
    pub fn label(self) -> &'static str {
        match self {
            Classification::Safe => "SAFE",
            Classification::Compatible => "COMPATIBLE",
            Classification::StateMigrationRequired => "STATE MIGRATION REQUIRED",
            Classification::BackfillRequired => "BACKFILL REQUIRED",
            Classification::StateIncompatible => "STATE INCOMPATIBLE",
        }
    }

    /// What a model with this verdict needs, as its verdict line says it.
    pub fn model_action(self) -> &'static str {
        match self {
            Classification::Safe => "nothing changed",
            Classification::Compatible => "redeploy; existing state continues",
            Classification::StateMigrationRequired => "migrate state before continuing",
            Classification::BackfillRequired => "replay history through the new plan",
            Classification::StateIncompatible => "rebuild required",
        }
    }

    /// Whether the application can continue from its existing state (SAFE or COMPATIBLE):
    /// `plan` exits 0 exactly then.
    pub fn continues(self) -> bool {
        self <= Classification::Compatible
    }
}

impl fmt::Display for Classification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The identity hints of the desired project: which running node a desired node was.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Hints {
    /// Desired model name → the model's name in the running plan (`renamed_from`).
    pub renamed_from: BTreeMap<String, String>,
    /// Desired node id → the running node id it was (`nodes.<kind>.<ordinal>.was`).
    pub nodes: BTreeMap<String, String>,
}

/// A hint that names no running node: the rename it describes has been applied (or never
/// happened), and the hint can be deleted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum UnusedHint {
    /// `renamed_from: old` on `model`, and nothing running belongs to `old`.
    RenamedFrom {
        /// The desired model carrying the hint.
        model: String,
        /// The name it says the model had.
        old: String,
    },
    /// `nodes.<kind>.<ordinal>.was` on the desired node `node`, naming no running node.
    Node {
        /// The desired node carrying the hint.
        node: String,
        /// The running node id it names.
        was: String,
    },
    /// `nodes.<kind>.<ordinal>.was` on the desired node `node`, when the running plan
    /// already has the model's new node ids: the restructure it describes has been applied,
    /// and following it would pair nodes that are now simply the same. It is not followed.
    Applied {
        /// The desired node carrying the hint.
        node: String,
        /// The running node id it names.
        was: String,
    },
}

/// The node hints that still describe a change: a hint on a model whose running nodes
/// already have exactly the desired ids is applied (the record was written after the
/// restructure) and left out.
fn live_hints(running: &Side, desired: &Side, hints: &Hints) -> (Hints, Vec<UnusedHint>) {
    let ids = |side: &Side, model: &str| -> HashSet<String> {
        side.of_model(model).iter().map(|n| n.id.clone()).collect()
    };
    let mut live = hints.clone();
    let mut applied = Vec::new();
    for (node, was) in &hints.nodes {
        let Some(d) = desired.nodes.get(node.as_str()) else {
            continue;
        };
        let restructured = ids(running, &d.model) != ids(desired, &d.model);
        if !restructured && running.nodes.contains_key(was.as_str()) {
            live.nodes.remove(node);
            applied.push(UnusedHint::Applied {
                node: node.clone(),
                was: was.clone(),
            });
        }
    }
    (live, applied)
}

/// One field of a node that differs between the sides.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    /// The operator kind (only differs when a hint pairs nodes of different kinds).
    Operator,
    /// The canonical definition.
    Definition,
    /// The nodes it reads, mapped through the matching.
    Inputs,
    /// The output columns.
    Schema,
    /// Bounded or unbounded.
    Boundedness,
    /// The changelog contract.
    Changelog,
    /// The grouping key of a keyed node, the declared key of a sink.
    Key,
    /// The event-time column carried.
    Time,
    /// Stateless or keyed.
    State,
    /// The accumulators of keyed state.
    Accumulators,
    /// The retention of keyed state.
    Retention,
    /// The window a window node keeps its state per.
    Window,
    /// The time condition that bounds an interval join's state.
    Bounds,
    /// A rank's ordering, top and rank operator.
    Ranking,
    /// An over aggregation's frame.
    Frame,
    /// The state digest.
    StateDigest,
}

impl Field {
    /// The field's name in the text rendering (`state digest`).
    pub fn label(self) -> &'static str {
        match self {
            Field::Operator => "operator",
            Field::Definition => "definition",
            Field::Inputs => "inputs",
            Field::Schema => "schema",
            Field::Boundedness => "boundedness",
            Field::Changelog => "changelog",
            Field::Key => "key",
            Field::Time => "time",
            Field::State => "state",
            Field::Accumulators => "accumulators",
            Field::Retention => "retention",
            Field::Window => "window",
            Field::Bounds => "time bounds",
            Field::Ranking => "ranking",
            Field::Frame => "frame",
            Field::StateDigest => "state digest",
        }
    }
}

/// A field's old and new values, rendered canonically (digests in full).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct FieldChange {
    /// Which field.
    pub field: Field,
    /// Its value in the running plan.
    pub old: String,
    /// Its value in the desired plan.
    pub new: String,
}

/// One classification of a node and why.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Reason {
    /// The classification this reason gives.
    pub classification: Classification,
    /// Why, one line.
    pub reason: String,
}

/// How a node differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(deny_unknown_fields)]
pub enum NodeChange {
    /// Only in the desired plan.
    Added,
    /// Only in the running plan.
    Removed,
    /// On both sides, and changed or raised by a change elsewhere.
    Changed,
}

/// A node that is not SAFE.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct NodeDiff {
    /// The node's id: the desired id, or the running id of a removed node.
    pub id: String,
    /// The running node it was compared with, when a hint paired it with another id.
    pub was: Option<String>,
    /// The operator kind, lowercase (`aggregate`).
    pub operator: String,
    /// Added, removed or changed.
    pub change: NodeChange,
    /// The most severe of the reasons' classifications.
    pub classification: Classification,
    /// Every reason, in rule order.
    pub reasons: Vec<Reason>,
    /// The fields that differ, in manifest order; empty for added and removed nodes and for
    /// a node raised by a change elsewhere.
    pub fields: Vec<FieldChange>,
}

/// How a model differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(deny_unknown_fields)]
pub enum ModelChange {
    /// Nothing runs yet: every model is new.
    New,
    /// Present on both sides, nothing changed.
    Unchanged,
    /// Present on both sides, something changed.
    Changed,
    /// Only in the desired plan.
    Added,
    /// Only in the running plan.
    Removed,
}

/// One model's part of the diff.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ModelDiff {
    /// The model's name: the desired name, or the running name of a removed model.
    pub name: String,
    /// The running name, when `renamed_from` matched the model to it.
    pub renamed_from: Option<String>,
    /// New, unchanged, changed, added or removed.
    pub change: ModelChange,
    /// The most severe classification of its nodes; SAFE when none changed.
    pub verdict: Classification,
    /// Its nodes that are not SAFE, in plan order (removed ones where they stood).
    pub nodes: Vec<NodeDiff>,
}

/// The comparison of a running plan with a desired plan.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlanDiff {
    /// The most severe model verdict; SAFE when there is none.
    pub verdict: Classification,
    /// Desired models in dependency order, then the removed ones in running order.
    pub models: Vec<ModelDiff>,
    /// Hints that name no running node.
    pub unused_hints: Vec<UnusedHint>,
    /// Each desired node that continues a running node, with that node's id (its own id,
    /// or the one a hint paired it with): what a deployment carries each node's state from.
    pub continues: BTreeMap<String, String>,
}

impl PlanDiff {
    /// The diff when nothing runs: every model is new and the verdict is SAFE.
    pub fn fresh(desired: &Manifest) -> PlanDiff {
        PlanDiff {
            verdict: Classification::Safe,
            models: desired
                .models
                .iter()
                .map(|m| ModelDiff {
                    name: m.name.clone(),
                    renamed_from: None,
                    change: ModelChange::New,
                    verdict: Classification::Safe,
                    nodes: Vec::new(),
                })
                .collect(),
            unused_hints: Vec::new(),
            continues: BTreeMap::new(),
        }
    }
}

/// How many models need what, most severe first: `1 model to backfill, 1 model changed`.
/// Empty when every model is SAFE.
pub fn verdict_counts(models: &[ModelDiff]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    let mut add = |word: &'static str| match counts.iter_mut().find(|(w, _)| *w == word) {
        Some((_, n)) => *n += 1,
        None => counts.push((word, 1)),
    };
    let order = |m: &ModelDiff| {
        let change_rank = match m.change {
            ModelChange::Added => 1,
            ModelChange::Removed => 2,
            _ => 0,
        };
        (std::cmp::Reverse(m.verdict), change_rank)
    };
    let mut models: Vec<&ModelDiff> = models.iter().collect();
    models.sort_by_key(|m| order(m));
    for m in models {
        add(match (m.verdict, m.change) {
            (Classification::Safe, _) => continue,
            (Classification::StateIncompatible, _) => "to rebuild",
            (Classification::BackfillRequired, _) => "to backfill",
            (Classification::StateMigrationRequired, _) => "to migrate",
            (Classification::Compatible, ModelChange::Added) => "added",
            (Classification::Compatible, ModelChange::Removed) => "removed",
            (Classification::Compatible, _) => "changed",
        });
    }
    counts
        .iter()
        .map(|(word, n)| format!("{n} model{} {word}", if *n == 1 { "" } else { "s" }))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Compares the running manifest with the desired one, using the desired project's hints.
pub fn diff(running: &Manifest, desired: &Manifest, hints: &Hints) -> PlanDiff {
    // Each manifest is indexed once; matching and the comparison share the indexes.
    let (running_side, desired_side) = (Side::new(running), Side::new(desired));
    let (hints, applied) = live_hints(&running_side, &desired_side, hints);
    let hints = &hints;
    let matching = Matching::new(&running_side, desired, hints);
    let cx = Context::new(running_side, desired_side, &matching);
    let mut models = Vec::new();
    for entry in &desired.models {
        models.push(cx.desired_model(entry, hints));
    }
    // Running models no desired model continues.
    let continued: HashSet<&str> = desired
        .models
        .iter()
        .map(|m| {
            hints
                .renamed_from
                .get(&m.name)
                .map_or(m.name.as_str(), String::as_str)
        })
        .chain(desired.models.iter().map(|m| m.name.as_str()))
        .collect();
    for entry in &running.models {
        if continued.contains(entry.name.as_str()) {
            continue;
        }
        let nodes: Vec<NodeDiff> = cx
            .running
            .of_model(&entry.name)
            .iter()
            .filter(|r| !matching.running_matched(&r.id))
            .map(|r| cx.removed(r))
            .collect();
        if nodes.is_empty() {
            continue;
        }
        models.push(ModelDiff {
            name: entry.name.clone(),
            renamed_from: None,
            change: ModelChange::Removed,
            verdict: max_of(nodes.iter().map(|n| n.classification)),
            nodes,
        });
    }
    let mut unused_hints = Vec::new();
    for (model, old) in &hints.renamed_from {
        if cx.desired.models.contains_key(model.as_str()) && cx.running.of_model(old).is_empty() {
            unused_hints.push(UnusedHint::RenamedFrom {
                model: model.clone(),
                old: old.clone(),
            });
        }
    }
    for (node, was) in &hints.nodes {
        if cx.desired.nodes.contains_key(node.as_str())
            && !cx.running.nodes.contains_key(was.as_str())
        {
            unused_hints.push(UnusedHint::Node {
                node: node.clone(),
                was: was.clone(),
            });
        }
    }
    unused_hints.extend(applied);
    PlanDiff {
        verdict: max_of(models.iter().map(|m| m.verdict)),
        models,
        unused_hints,
        continues: matching
            .desired_to_running
            .iter()
            .map(|(d, r)| (d.clone(), r.clone()))
            .collect(),
    }
}

fn max_of(it: impl Iterator<Item = Classification>) -> Classification {
    it.max().unwrap_or(Classification::Safe)
}

/// How a desired node finds its running counterpart, in order of precedence.
#[derive(Clone, Copy)]
enum Pass {
    /// `nodes.<kind>.<ordinal>.was`.
    NodeHint,
    /// `renamed_from`: the same kind and ordinal under the old model name.
    Renamed,
    /// The same id.
    SameId,
}

/// Which running node each desired node is compared with.
struct Matching {
    desired_to_running: HashMap<String, String>,
    running_to_desired: HashMap<String, String>,
}

impl Matching {
    /// Node hints first (they take precedence), then `renamed_from` prefixes, then ids.
    fn new(running: &Side, desired: &Manifest, hints: &Hints) -> Matching {
        let mut m = Matching {
            desired_to_running: HashMap::new(),
            running_to_desired: HashMap::new(),
        };
        for pass in [Pass::NodeHint, Pass::Renamed, Pass::SameId] {
            for d in &desired.nodes {
                if m.desired_to_running.contains_key(&d.id) {
                    continue;
                }
                let candidate = match pass {
                    Pass::NodeHint => hints.nodes.get(&d.id).cloned(),
                    Pass::Renamed => hints.renamed_from.get(&d.model).and_then(|old| {
                        let rest = d.id.strip_prefix(&format!("{}::", d.model))?;
                        Some(format!("{old}::{rest}"))
                    }),
                    Pass::SameId => Some(d.id.clone()),
                };
                if let Some(r) = candidate
                    && running.nodes.contains_key(r.as_str())
                    && !m.running_to_desired.contains_key(&r)
                {
                    m.desired_to_running.insert(d.id.clone(), r.clone());
                    m.running_to_desired.insert(r, d.id.clone());
                }
            }
        }
        m
    }

    fn counterpart(&self, desired: &str) -> Option<&str> {
        self.desired_to_running.get(desired).map(String::as_str)
    }

    fn running_matched(&self, running: &str) -> bool {
        self.running_to_desired.contains_key(running)
    }
}

/// The reasons found for one node, in rule order.
#[derive(Default)]
struct Reasons(Vec<Reason>);

impl Reasons {
    fn add(&mut self, classification: Classification, reason: impl Into<String>) {
        self.0.push(Reason {
            classification,
            reason: reason.into(),
        });
    }
}

/// One manifest, indexed.
struct Side<'a> {
    nodes: HashMap<&'a str, &'a NodeEntry>,
    order: HashMap<&'a str, usize>,
    models: HashMap<&'a str, &'a ModelEntry>,
    /// Each model's nodes, in plan order.
    by_model: HashMap<&'a str, Vec<&'a NodeEntry>>,
    /// Every node, in manifest order.
    list: &'a [NodeEntry],
}

impl<'a> Side<'a> {
    fn new(manifest: &'a Manifest) -> Side<'a> {
        Side {
            nodes: manifest.nodes.iter().map(|n| (n.id.as_str(), n)).collect(),
            order: manifest
                .nodes
                .iter()
                .enumerate()
                .map(|(i, n)| (n.id.as_str(), i))
                .collect(),
            models: manifest
                .models
                .iter()
                .map(|m| (m.name.as_str(), m))
                .collect(),
            by_model: manifest.nodes.iter().fold(HashMap::new(), |mut map, n| {
                map.entry(n.model.as_str()).or_insert_with(Vec::new).push(n);
                map
            }),
            list: &manifest.nodes,
        }
    }

    /// The nodes of `model`, in plan order.
    fn of_model(&self, model: &str) -> &[&'a NodeEntry] {
        self.by_model.get(model).map_or(&[], Vec::as_slice)
    }
}

struct Context<'a> {
    running: Side<'a>,
    desired: Side<'a>,
    matching: &'a Matching,
    /// Desired node → the fields that differ from its counterpart (matched nodes only).
    fields: HashMap<&'a str, Vec<FieldChange>>,
    /// Desired node → the nearest desired node upstream that was added or changed what it
    /// passes on.
    changed_above: HashMap<&'a str, Option<String>>,
    /// Running node → the nearest running node upstream that was removed.
    removed_above: HashMap<&'a str, Option<String>>,
}

/// For every node, the id of the nearest node above it (following inputs, across models)
/// for which `hit` holds. Linear: nodes are visited inputs first (a manifest lists them so,
/// but a hand-written one need not).
fn nearest_above<'a>(
    side: &Side<'a>,
    hit: impl Fn(&'a NodeEntry) -> bool,
) -> HashMap<&'a str, Option<String>> {
    let mut out: HashMap<&'a str, Option<String>> = HashMap::new();
    for n in crate::manifest::inputs_first(side.list, &side.nodes) {
        let found = n.inputs.iter().find_map(|input| {
            let up = side.nodes.get(input.as_str())?;
            if hit(up) {
                Some(up.id.clone())
            } else {
                out.get(up.id.as_str()).cloned().flatten()
            }
        });
        out.insert(n.id.as_str(), found);
    }
    out
}

/// The nodes of other models that `n`'s model reads above `n` (following every input up to
/// the model's edge), sorted by id: empty when it reads only sources of its own.
fn entered_from<'a>(side: &Side<'a>, n: &NodeEntry) -> Vec<&'a NodeEntry> {
    let mut found: Vec<&'a NodeEntry> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut stack: Vec<&'a NodeEntry> =
        side.nodes.get(n.id.as_str()).copied().into_iter().collect();
    while let Some(current) = stack.pop() {
        for input in &current.inputs {
            let Some(up) = side.nodes.get(input.as_str()).copied() else {
                continue;
            };
            if !seen.insert(up.id.as_str()) {
                continue;
            }
            if up.model != n.model {
                found.push(up);
            } else {
                stack.push(up);
            }
        }
    }
    found.sort_by(|a, b| a.id.cmp(&b.id));
    found
}

/// The nodes above `n` up to (not including) the nearest keyed node on each path, across
/// models, each once, nearest first along the first inputs.
fn below_keyed<'a>(side: &Side<'a>, n: &'a NodeEntry) -> Vec<&'a NodeEntry> {
    let mut out: Vec<&'a NodeEntry> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut stack: Vec<&'a NodeEntry> = vec![n];
    while let Some(current) = stack.pop() {
        // Reversed, so that the first input is walked first.
        for input in current.inputs.iter().rev() {
            if let Some(up) = side.nodes.get(input.as_str()).copied()
                && !is_keyed(up)
                && seen.insert(up.id.as_str())
            {
                stack.push(up);
            }
        }
        if !std::ptr::eq(current, n) {
            out.push(current);
        }
    }
    out
}

/// The first node of `n`'s chain: following first inputs up to a node that reads nothing.
fn top_of<'a>(side: &Side<'a>, n: &'a NodeEntry) -> &'a NodeEntry {
    let mut current = n;
    for _ in 0..side.nodes.len() {
        match current
            .inputs
            .first()
            .and_then(|i| side.nodes.get(i.as_str()))
        {
            Some(up) => current = up,
            None => break,
        }
    }
    current
}

fn is_keyed(n: &NodeEntry) -> bool {
    matches!(n.state, StateEntry::Keyed { .. })
}

fn list(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}

/// A sink's definition split into materialization and destination (`kafka customer-metrics`),
/// following [`crate::manifest::definition`]: `upsert kafka customer-metrics`, or `upsert`.
fn sink_destination(definition: &str) -> Option<(&str, &str)> {
    let (_, destination) = definition.split_once(' ')?;
    let (_, location) = destination.split_once(' ').unwrap_or((destination, ""));
    Some((destination, location))
}

/// Whether every value of `old` fits `new` exactly: int32 → int64, or a decimal that keeps
/// at least as many integral and fractional digits.
fn widens_losslessly(old: &str, new: &str) -> bool {
    match (DataType::parse(old), DataType::parse(new)) {
        (Ok(DataType::Int32), Ok(DataType::Int64)) => true,
        (
            Ok(DataType::Decimal {
                precision: p1,
                scale: s1,
            }),
            Ok(DataType::Decimal {
                precision: p2,
                scale: s2,
            }),
        ) => (p1, s1) != (p2, s2) && s2 >= s1 && p2 - s2 >= p1 - s1,
        _ => false,
    }
}

impl<'a> Context<'a> {
    fn new(running: Side<'a>, desired: Side<'a>, matching: &'a Matching) -> Context<'a> {
        let mut cx = Context {
            running,
            desired,
            matching,
            fields: HashMap::new(),
            changed_above: HashMap::new(),
            removed_above: HashMap::new(),
        };
        cx.fields = cx
            .desired
            .list
            .iter()
            .filter_map(|d| Some((d.id.as_str(), cx.field_changes(cx.counterpart(d)?, d))))
            .collect();
        cx.changed_above = nearest_above(&cx.desired, |u| cx.passes_on_changed(u));
        cx.removed_above = nearest_above(&cx.running, |u| !matching.running_matched(&u.id));
        cx
    }

    /// The key a node is keyed by: a keyed node's grouping key, a sink's declared key.
    fn key(&self, side: &Side<'a>, n: &NodeEntry) -> Option<Vec<String>> {
        match &n.state {
            StateEntry::Keyed { keys, .. } => Some(keys.clone()),
            StateEntry::Stateless if n.operator == "sink" => {
                side.models.get(n.model.as_str()).map(|m| m.key.clone())
            }
            StateEntry::Stateless => None,
        }
    }

    /// The fields that differ between a running node and its desired counterpart.
    fn field_changes(&self, r: &NodeEntry, d: &NodeEntry) -> Vec<FieldChange> {
        let mut out = Vec::new();
        // Values are compared as they are, and rendered only when they differ.
        let mut add = |field: Field, differs: bool, values: &dyn Fn() -> (String, String)| {
            if differs {
                let (old, new) = values();
                out.push(FieldChange { field, old, new });
            }
        };
        add(Field::Operator, r.operator != d.operator, &|| {
            (r.operator.clone(), d.operator.clone())
        });
        add(Field::Definition, r.definition != d.definition, &|| {
            (r.definition.clone(), d.definition.clone())
        });
        let inputs_moved = d.inputs.len() != r.inputs.len()
            || d.inputs
                .iter()
                .zip(&r.inputs)
                .any(|(i, old)| self.matching.counterpart(i).unwrap_or(i) != old.as_str());
        add(Field::Inputs, inputs_moved, &|| {
            // An id alone can mislead when the node it names was paired with another one:
            // say which running node each input is, or that it is new.
            let new: Vec<String> = d
                .inputs
                .iter()
                .map(|i| match self.matching.counterpart(i) {
                    Some(c) if c == i => i.clone(),
                    Some(c) => format!("{i} (was {c})"),
                    None => format!("{i} (new)"),
                })
                .collect();
            (list(&r.inputs), list(&new))
        });
        add(Field::Schema, r.schema != d.schema, &|| {
            (columns(&r.schema), columns(&d.schema))
        });
        add(Field::Boundedness, r.boundedness != d.boundedness, &|| {
            (r.boundedness.clone(), d.boundedness.clone())
        });
        add(Field::Changelog, r.changelog != d.changelog, &|| {
            (r.changelog.to_string(), d.changelog.to_string())
        });
        if let (Some(old), Some(new)) = (self.key(&self.running, r), self.key(&self.desired, d)) {
            add(Field::Key, old != new, &|| (list(&old), list(&new)));
        }
        let time = |t: &Option<String>| t.clone().unwrap_or_else(|| "none".into());
        add(Field::Time, r.time != d.time, &|| {
            (time(&r.time), time(&d.time))
        });
        match (&r.state, &d.state) {
            (
                StateEntry::Keyed {
                    accumulators: a1,
                    retention: t1,
                    window: w1,
                    bounds: b1,
                    ranking: n1,
                    frame: f1,
                    digest: g1,
                    ..
                },
                StateEntry::Keyed {
                    accumulators: a2,
                    retention: t2,
                    window: w2,
                    bounds: b2,
                    ranking: n2,
                    frame: f2,
                    digest: g2,
                    ..
                },
            ) => {
                let window = |w: &Option<String>| w.clone().unwrap_or_else(|| "none".into());
                add(Field::Window, w1 != w2, &|| (window(w1), window(w2)));
                add(Field::Bounds, b1 != b2, &|| (window(b1), window(b2)));
                add(Field::Ranking, n1 != n2, &|| (window(n1), window(n2)));
                add(Field::Frame, f1 != f2, &|| (window(f1), window(f2)));
                add(Field::Accumulators, a1 != a2, &|| {
                    (columns(a1), columns(a2))
                });
                add(Field::Retention, t1 != t2, &|| (t1.clone(), t2.clone()));
                add(Field::StateDigest, g1 != g2, &|| (g1.clone(), g2.clone()));
            }
            (StateEntry::Stateless, StateEntry::Stateless) => {}
            (a, b) => add(Field::State, true, &|| (state_kind(a), state_kind(b))),
        }
        out
    }

    /// The nearest node upstream of the desired node `d` (counterpart `r`) that was added,
    /// removed or changed in what it passes on.
    fn upstream_change(&self, r: &NodeEntry, d: &NodeEntry) -> Option<String> {
        let above = |map: &HashMap<&str, Option<String>>, id: &str| map.get(id).cloned().flatten();
        above(&self.changed_above, &d.id)
            .or_else(|| above(&self.removed_above, &r.id))
            .or_else(|| self.reads_another_model(r, d))
            // Its own input is another node than before: a WHERE removed while a HAVING
            // took over its ordinal, a node paired by a hint that reads something else.
            .or_else(|| {
                self.inputs_moved(d)
                    .then(|| r.inputs.first().cloned().unwrap_or_else(|| d.id.clone()))
            })
    }

    /// When the desired node (counterpart `r`) now gets its rows from another model than it
    /// did, or from another model instead of a source or the other way round: the node of
    /// the other model it reads now (or the node itself).
    fn reads_another_model(&self, r: &NodeEntry, d: &NodeEntry) -> Option<String> {
        let now = entered_from(&self.desired, d);
        let before = entered_from(&self.running, r);
        let mut now_was: Vec<Option<&str>> = now
            .iter()
            .map(|n| self.matching.counterpart(&n.id))
            .collect();
        now_was.sort();
        let before: Vec<Option<&str>> = before.iter().map(|n| Some(n.id.as_str())).collect();
        (now_was != before).then(|| {
            // The first model it reads that it did not read before, or its own top.
            now.iter()
                .find(|n| {
                    let was = self.matching.counterpart(&n.id);
                    !before.contains(&was)
                })
                .map_or_else(|| top_of(&self.desired, d).id.clone(), |n| n.id.clone())
        })
    }

    /// Whether a matched node's inputs are other nodes than its counterpart's.
    fn inputs_moved(&self, d: &NodeEntry) -> bool {
        self.fields
            .get(d.id.as_str())
            .is_some_and(|f| f.iter().any(|f| f.field == Field::Inputs))
    }

    /// Whether `n` reads a node of another model (on its side): it is the first node of a
    /// model that reads `ref()`.
    fn crosses_models(side: &Side, n: &NodeEntry) -> bool {
        n.inputs
            .iter()
            .filter_map(|i| side.nodes.get(i.as_str()))
            .any(|up| up.model != n.model)
    }

    /// Our own rule for an upsert sink (docs/plan-diff.md, "A stateless node on both
    /// sides", under "Which rows reach an upsert sink"): what changed which rows reach it
    /// between the nearest keyed node above it and itself. A predicate (WHERE or HAVING)
    /// changed, added or removed; a change in the values a predicate there reads; or a
    /// node there that now reads another model.
    fn selection_change(&self, r: &'a NodeEntry, d: &'a NodeEntry) -> Option<String> {
        if (Self::crosses_models(&self.desired, d) || Self::crosses_models(&self.running, r))
            && let Some(input) = self.reads_another_model(r, d)
        {
            return Some(input);
        }
        let mut below_a_filter = false;
        for up in below_keyed(&self.desired, d) {
            let is_filter = up.operator == "filter";
            let changed = match self.counterpart(up) {
                None => is_filter || below_a_filter,
                Some(ru) => {
                    (is_filter && (ru.definition != up.definition || ru.operator != up.operator))
                        || (below_a_filter && self.passes_on_changed(up))
                }
            };
            if changed {
                return Some(up.id.clone());
            }
            if let Some(ru) = self.counterpart(up)
                && (Self::crosses_models(&self.desired, up)
                    || Self::crosses_models(&self.running, ru))
                && let Some(input) = self.reads_another_model(ru, up)
            {
                return Some(input);
            }
            below_a_filter |= is_filter;
        }
        let mut below_a_filter = false;
        for up in below_keyed(&self.running, r) {
            let is_filter = up.operator == "filter";
            if !self.matching.running_matched(&up.id) && (is_filter || below_a_filter) {
                return Some(up.id.clone());
            }
            below_a_filter |= is_filter;
        }
        None
    }

    /// The running counterpart of a desired node.
    fn counterpart(&self, d: &NodeEntry) -> Option<&'a NodeEntry> {
        self.matching
            .counterpart(&d.id)
            .and_then(|c| self.running.nodes.get(c).copied())
    }

    /// Whether a matched node changed what it passes on to its readers: any field but a
    /// sink's destination and declared key, which readers of the model do not see.
    fn passes_on_changed(&self, d: &NodeEntry) -> bool {
        self.fields.get(d.id.as_str()).is_none_or(|changes| {
            changes.iter().any(|f| {
                !(d.operator == "sink" && matches!(f.field, Field::Definition | Field::Key))
            })
        })
    }

    /// The reasons for a node present on both sides.
    fn reasons(&self, r: &'a NodeEntry, d: &'a NodeEntry, fields: &[FieldChange]) -> Vec<Reason> {
        use Classification::*;
        let mut out = Reasons::default();
        match (&r.state, &d.state) {
            (
                StateEntry::Keyed {
                    keys: k1,
                    accumulators: a1,
                    retention: t1,
                    window: w1,
                    retracting: r1,
                    bounds: b1,
                    ranking: n1,
                    frame: f1,
                    digest: g1,
                },
                StateEntry::Keyed {
                    keys: k2,
                    accumulators: a2,
                    retention: t2,
                    window: w2,
                    retracting: r2,
                    bounds: b2,
                    ranking: n2,
                    frame: f2,
                    digest: g2,
                },
            ) => {
                // A join keeps each side's rows in a layout Flink picks by the join's kind,
                // key and the sides' columns (docs/joins.md): any change to it is a state
                // of another shape. A changed condition keeps the rows, but what was
                // emitted was matched under the old one.
                let joins = ["join", "interval_join", "temporal_join"];
                let join =
                    joins.contains(&d.operator.as_str()) || joins.contains(&r.operator.as_str());
                // An interval join whose time condition alone changed keeps its rows in the
                // same layout; what changes is how long they are kept and what matched.
                let only_bounds = b1 != b2
                    && d.operator == r.operator
                    && (k1, a1, t1, w1, r1) == (k2, a2, t2, w2, r2);
                if only_bounds {
                    out.add(
                        BackfillRequired,
                        format!(
                            "the join's time condition changes from [{}] to [{}]: a row kept under the old one expires at another time, a row already expired cannot match under a wider one, and the rows already emitted were matched under the old one",
                            b1.as_deref().unwrap_or("none"),
                            b2.as_deref().unwrap_or("none")
                        ),
                    );
                } else if join && g1 != g2 && r1 != r2 {
                    out.add(
                        StateIncompatible,
                        "the join's stored rows change shape: a side now updates or no longer does, and Flink keeps an updating side's rows by their key, an appending side's as counted rows (docs/joins.md, \"Tables that change\")",
                    );
                } else if join && g1 != g2 {
                    out.add(
                        StateIncompatible,
                        "the join's stored rows change shape (its kind, its key or a side's columns); Flink keeps each side's rows in a layout of their own, which a savepoint cannot carry across",
                    );
                }
                if join && g1 == g2 && r.definition != d.definition {
                    // A definition starts with the join's kind (`left on=[…]`).
                    let kind = |d: &str| d.split(' ').next().unwrap_or_default().to_string();
                    let (k1, k2) = (kind(&r.definition), kind(&d.definition));
                    if k1 != k2 {
                        out.add(
                            BackfillRequired,
                            format!("the join's kind changes from {k1} to {k2}: its stored rows keep their layout, but the rows it already emitted (or padded) were matched as a {k1} join"),
                        );
                    } else {
                        out.add(
                            BackfillRequired,
                            "the join's condition changed; the rows it already emitted were matched under the previous one",
                        );
                    }
                }
                // An aggregate over an append input keeps results only; over an updating
                // one, Flink's retracting accumulators keep counts beside them, a state of
                // another shape that a savepoint cannot carry across.
                // A rank keeps its rows for one ordering and one top (docs/ranking.md): under
                // another, the rows it kept are not the ones it needs, and the rows it
                // emitted were ranked under the old one.
                let rank = d.operator == "rank" || r.operator == "rank";
                if rank && n1 != n2 {
                    let n = |n: &Option<String>| n.clone().unwrap_or_else(|| "none".into());
                    out.add(
                        StateIncompatible,
                        format!(
                            "the ranking changes from [{}] to [{}]: the rows the rank kept were chosen under the old one (over an append input, rows pushed out of the old top are gone), and the rows it emitted were ranked under it",
                            n(n1),
                            n(n2)
                        ),
                    );
                }
                // An over aggregation keeps, per partition, the accumulators of one frame
                // and the rows still in it (docs/over.md): under another frame the rows it
                // needs to take back were never kept, or the accumulators hold rows the new
                // frame would not.
                let over = d.operator == "over" || r.operator == "over";
                if over && f1 != f2 {
                    let f = |f: &Option<String>| f.clone().unwrap_or_else(|| "none".into());
                    out.add(
                        StateIncompatible,
                        format!(
                            "the OVER frame changes from [{}] to [{}]: the stored accumulators and rows were kept for the old frame, and the rows already emitted were aggregated over it",
                            f(f1),
                            f(f2)
                        ),
                    );
                }
                if !join && !rank && !over && r1 != r2 {
                    let why = if *r2 {
                        "its input now updates, so it needs retracting accumulators (counts beside each result) that the stored state does not have"
                    } else {
                        "its input no longer updates, so it keeps plain accumulators, not the retracting ones stored"
                    };
                    out.add(
                        StateIncompatible,
                        format!("the aggregate's state changes shape: {why}"),
                    );
                }
                // Flink keeps a window's state under its end alone, so it restores state of
                // another window without complaint and fires wrong windows (docs/windows.md).
                // A session's state is its open sessions, merged by the gap.
                if w1 != w2 {
                    let w = |w: &Option<String>| w.clone().unwrap_or_else(|| "none".into());
                    let session = |w: &Option<String>| {
                        w.as_deref().is_some_and(|w| w.starts_with("session("))
                    };
                    let why = if session(w1) && session(w2) {
                        "Flink keeps each key's open sessions and merges new rows into them by the gap, so it would restore these sessions under the new gap without complaint and emit wrong results"
                    } else {
                        "Flink keeps a window's state under its end alone, so it would restore this state into the new windows without complaint and emit wrong results"
                    };
                    out.add(
                        StateIncompatible,
                        format!("the window changes from {} to {}; {why}", w(w1), w(w2)),
                    );
                }
                if join {
                } else if k1 != k2 {
                    out.add(
                        StateIncompatible,
                        "the grouping key changed; existing state cannot be reused",
                    );
                } else {
                    let type_of = |n: &NodeEntry, column: &str| {
                        n.schema
                            .iter()
                            .find(|c| c.name == column)
                            .map(|c| c.ty.clone())
                    };
                    for key in k2 {
                        if let (Some(old), Some(new)) = (type_of(r, key), type_of(d, key))
                            && old != new
                        {
                            out.add(
                                StateIncompatible,
                                format!("grouping column `{key}` changes from {old} to {new}; stored keys cannot be found under the new type"),
                            );
                        }
                    }
                    for acc in a2.iter().filter(|a| !a1.iter().any(|o| o.name == a.name)) {
                        out.add(
                            BackfillRequired,
                            format!(
                                "accumulator `{}` added; it starts empty for every existing key, replay history to fill it",
                                acc.name
                            ),
                        );
                    }
                    for acc in a1.iter().filter(|a| !a2.iter().any(|n| n.name == a.name)) {
                        out.add(
                            StateMigrationRequired,
                            format!(
                                "accumulator `{}` removed; its stored values are dropped, the others continue",
                                acc.name
                            ),
                        );
                    }
                    for old in a1 {
                        let Some(new) = a2.iter().find(|n| n.name == old.name) else {
                            continue;
                        };
                        if old.ty == new.ty {
                        } else if widens_losslessly(&old.ty, &new.ty) {
                            out.add(
                                StateMigrationRequired,
                                format!(
                                    "accumulator `{}` widens from {} to {}",
                                    old.name, old.ty, new.ty
                                ),
                            );
                        } else {
                            out.add(
                                StateIncompatible,
                                format!(
                                    "accumulator `{}` changes from {} to {}; stored values cannot be converted",
                                    old.name, old.ty, new.ty
                                ),
                            );
                        }
                    }
                    let common = |from: &[Column], other: &[Column]| -> Vec<String> {
                        from.iter()
                            .filter(|a| other.iter().any(|o| o.name == a.name))
                            .map(|a| a.name.clone())
                            .collect()
                    };
                    if common(a1, a2) != common(a2, a1) {
                        out.add(
                            StateMigrationRequired,
                            "accumulators reordered; stored values are kept under the new layout",
                        );
                    }
                }
                if t1 != t2 {
                    out.add(
                        StateMigrationRequired,
                        format!(
                            "retention changes from {t1} to {t2}; timers change, stored values do not"
                        ),
                    );
                }
                if g1 != g2 && out.0.is_empty() {
                    // Only a hand-written manifest gets here: the digest covers exactly the
                    // fields compared above.
                    out.add(
                        StateIncompatible,
                        format!(
                            "the state digest changes from {} to {}; existing state cannot be reused",
                            crate::identity::short(g1),
                            crate::identity::short(g2)
                        ),
                    );
                }
                // Whatever happened to the state itself, values accumulated from an input
                // that changed are not what the new plan would accumulate.
                if let Some(at) = self.upstream_change(r, d) {
                    out.add(
                        BackfillRequired,
                        format!(
                            "input definition changed upstream at `{at}`; existing state was accumulated under the previous definition"
                        ),
                    );
                }
                if out.0.is_empty() && !fields.is_empty() {
                    out.add(Compatible, "its state is unchanged");
                }
            }
            (StateEntry::Keyed { .. }, StateEntry::Stateless) => out.add(
                Compatible,
                "its keyed state is discarded when the old job stops",
            ),
            (StateEntry::Stateless, StateEntry::Keyed { .. }) => out.add(
                BackfillRequired,
                "its keyed state starts empty; replay history to fill it",
            ),
            (StateEntry::Stateless, StateEntry::Stateless) if d.operator == "sink" => {
                self.sink_reasons(r, d, fields, &mut out);
            }
            (StateEntry::Stateless, StateEntry::Stateless) => {
                if !fields.is_empty() {
                    out.add(Compatible, "stateless; no stored value is affected");
                }
            }
        }
        out.0
    }

    /// The sink exceptions (docs/plan-diff.md): a sink's destination holds rows its readers keep.
    fn sink_reasons(
        &self,
        r: &'a NodeEntry,
        d: &'a NodeEntry,
        fields: &[FieldChange],
        out: &mut Reasons,
    ) {
        use Classification::*;
        let old_dest = sink_destination(&r.definition);
        let new_dest = sink_destination(&d.definition);
        let mut raised = false;
        match (old_dest, new_dest) {
            (Some((old, _)), Some((new, location))) if old != new => {
                out.add(
                    BackfillRequired,
                    format!(
                        "the new destination `{location}` starts empty; replay history to fill it"
                    ),
                );
                raised = true;
            }
            (None, Some((_, location))) => {
                out.add(
                    BackfillRequired,
                    format!(
                        "the new destination `{location}` starts empty; replay history to fill it"
                    ),
                );
                raised = true;
            }
            (Some((_, location)), Some(_)) => {
                let old_model = self.running.models.get(r.model.as_str());
                let new_model = self.desired.models.get(d.model.as_str());
                let declaration =
                    |m: Option<&&ModelEntry>| m.map(|m| (m.materialized.clone(), m.key.clone()));
                if declaration(old_model) != declaration(new_model) {
                    out.add(
                        BackfillRequired,
                        format!(
                            "rows already written to `{location}` are keyed the old way; rebuild the sink"
                        ),
                    );
                    raised = true;
                }
                for old in &r.schema {
                    match d.schema.iter().find(|c| c.name == old.name) {
                        None => {
                            out.add(
                                BackfillRequired,
                                format!(
                                    "column `{}` is removed; readers of `{location}` see old rows and new rows in different shapes",
                                    old.name
                                ),
                            );
                            raised = true;
                        }
                        Some(new) if new.ty != old.ty => {
                            out.add(
                                BackfillRequired,
                                format!(
                                    "column `{}` changes from {} to {}; readers of `{location}` see old rows and new rows in different shapes",
                                    old.name, old.ty, new.ty
                                ),
                            );
                            raised = true;
                        }
                        Some(_) => {}
                    }
                }
                if matches!(d.changelog, ChangelogEntry::Upsert { .. })
                    && let Some(at) = self.selection_change(r, d)
                {
                    out.add(
                        BackfillRequired,
                        format!(
                            "rows already written to `{location}` were selected under the previous definition at `{at}`; nothing rewrites or deletes them for the change, rebuild the sink"
                        ),
                    );
                    raised = true;
                }
                if !raised && fields.iter().any(|f| f.field == Field::Schema) {
                    let gained = d
                        .schema
                        .iter()
                        .any(|c| !r.schema.iter().any(|o| o.name == c.name));
                    out.add(
                        Compatible,
                        if gained {
                            format!("readers of `{location}` see the new columns; rows already written keep the old shape")
                        } else {
                            format!("readers of `{location}` see the columns in another order; rows already written keep the old order")
                        },
                    );
                    raised = true;
                }
            }
            (Some((_, location)), None) => {
                out.add(
                    Compatible,
                    format!("no longer writes to `{location}`; the rows already there stay"),
                );
                raised = true;
            }
            (None, None) => {}
        }
        if !raised && !fields.is_empty() {
            out.add(Compatible, "stateless; no stored value is affected");
        }
    }

    fn removed(&self, r: &NodeEntry) -> NodeDiff {
        let reason = if is_keyed(r) {
            "its keyed state is discarded when the old job stops"
        } else {
            "stateless; nothing is lost"
        };
        NodeDiff {
            id: r.id.clone(),
            was: None,
            operator: r.operator.clone(),
            change: NodeChange::Removed,
            classification: Classification::Compatible,
            reasons: vec![Reason {
                classification: Classification::Compatible,
                reason: reason.into(),
            }],
            fields: Vec::new(),
        }
    }

    fn added(&self, d: &NodeEntry) -> NodeDiff {
        let reused = (d.operator == "sink")
            .then(|| sink_destination(&d.definition))
            .flatten()
            .and_then(|(destination, location)| {
                self.running
                    .nodes
                    .values()
                    .filter(|r| r.operator == "sink" && !self.matching.running_matched(&r.id))
                    .filter(|r| sink_destination(&r.definition).map(|x| x.0) == Some(destination))
                    .map(|r| (location, r.id.as_str()))
                    .min()
            });
        let (classification, reason) = if is_keyed(d) {
            (
                Classification::BackfillRequired,
                "new keyed state starts empty; history is in it only if the source replays it"
                    .to_string(),
            )
        } else if let Some((location, old)) = reused {
            (
                Classification::BackfillRequired,
                format!(
                    "`{location}` holds the rows `{old}` wrote, and this new sink writes among them; rebuild the sink, or if the model was only renamed, say so with renamed_from"
                ),
            )
        } else {
            (
                Classification::Compatible,
                "stateless; nothing to carry over".to_string(),
            )
        };
        NodeDiff {
            id: d.id.clone(),
            was: None,
            operator: d.operator.clone(),
            change: NodeChange::Added,
            classification,
            reasons: vec![Reason {
                classification,
                reason,
            }],
            fields: Vec::new(),
        }
    }

    fn changed(&self, r: &'a NodeEntry, d: &'a NodeEntry) -> Option<NodeDiff> {
        let fields = self.fields[d.id.as_str()].clone();
        let reasons = self.reasons(r, d, &fields);
        if reasons.is_empty() {
            return None;
        }
        Some(NodeDiff {
            id: d.id.clone(),
            was: (r.id != d.id).then(|| r.id.clone()),
            operator: d.operator.clone(),
            change: NodeChange::Changed,
            classification: max_of(reasons.iter().map(|r| r.classification)),
            reasons,
            fields,
        })
    }

    fn desired_model(&self, entry: &ModelEntry, hints: &Hints) -> ModelDiff {
        let renamed_from = hints
            .renamed_from
            .get(&entry.name)
            .filter(|old| !self.running.of_model(old).is_empty())
            .cloned();
        let running_name = renamed_from.as_deref().unwrap_or(&entry.name);
        // Running nodes of this model (under either name) nothing matched, in running order.
        let mut removed: Vec<&NodeEntry> = self.running.of_model(running_name).to_vec();
        if running_name != entry.name {
            removed.extend(self.running.of_model(&entry.name));
            removed.sort_by_key(|r| self.running.order[r.id.as_str()]);
        }
        removed.retain(|r| !self.matching.running_matched(&r.id));
        let mut nodes = Vec::new();
        let mut any_counterpart = false;
        for d in self.desired.of_model(&entry.name) {
            match self
                .matching
                .counterpart(&d.id)
                .and_then(|c| self.running.nodes.get(c))
            {
                Some(r) => {
                    any_counterpart = true;
                    let at = self.running.order[r.id.as_str()];
                    let (before, after): (Vec<&NodeEntry>, Vec<&NodeEntry>) = removed
                        .into_iter()
                        .partition(|x| self.running.order[x.id.as_str()] < at);
                    nodes.extend(before.into_iter().map(|x| self.removed(x)));
                    removed = after;
                    nodes.extend(self.changed(r, d));
                }
                None => nodes.push(self.added(d)),
            }
        }
        let had_running = any_counterpart || !removed.is_empty();
        nodes.extend(removed.into_iter().map(|x| self.removed(x)));
        let verdict = max_of(nodes.iter().map(|n| n.classification));
        let change = if !had_running {
            ModelChange::Added
        } else if nodes.is_empty() {
            ModelChange::Unchanged
        } else {
            ModelChange::Changed
        };
        ModelDiff {
            name: entry.name.clone(),
            renamed_from,
            change,
            verdict,
            nodes,
        }
    }
}

fn state_kind(s: &StateEntry) -> String {
    match s {
        StateEntry::Stateless => "stateless".into(),
        StateEntry::Keyed { .. } => "keyed".into(),
    }
}

#[cfg(test)]
mod tests;
