//! Compiled plans: Flink's JSON form of an application (`COMPILE PLAN ... FOR STATEMENT
//! SET`), with each stateful operator's id pinned from the Streamform node it runs, so that
//! a later plan finds the state of every node it keeps (docs/deployment.md, "Which changes
//! keep their state").
//!
//! Flink names a compiled plan's operators after its own exec node ids, which count up in
//! the gateway's process and so differ between compilations. Each exec node may instead
//! carry `table.exec.uid.format` in its `configuration`; [`pin`] sets it to a uid Streamform
//! chose for the node's identity, so the same node gets the same operator ids in every
//! plan. What identifies an exec node:
//! - a source scan: the table it reads, which names the source (`orders_raw`: `orders`);
//! - the changelog normalization behind an upsert source's scan: the source whose scan it
//!   reads, under an identity of its own ([`normalize_identity`]);
//! - a sink: its table, `sink_<model>`: the model's Sink node;
//! - an aggregation (grouped or windowed, and the local and global halves Flink splits one
//!   into): its calls, which the generated SQL names after their node
//!   ([`crate::generate::tagged`]);
//! - any other stateful node (the keep-last-row deduplication), or an aggregation without
//!   calls: the one Streamform node of its kind that feeds exactly the same sinks.
//!
//! An exec node Streamform knows to hold no state (a projection, a filter, an exchange, a
//! watermark) keeps Flink's own id. One that may hold state and cannot be identified, or two
//! of one kind that stand for the same node (Flink planned it once per sink), make the plan
//! unpinnable: [`pin`] says which, and a change to it cannot carry state.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;
use streamform_ir::{Changelog, ModelPlan, NodeKind, Operator};

/// Where each stateful operator's state goes: an operator identity (a source's
/// `source:<name>`, or a node id) and the uid prefix its operators get.
pub type OperatorIds = BTreeMap<String, String>;

/// The identity of a source's scan in [`OperatorIds`].
pub fn source_identity(source: &str) -> String {
    format!("source:{source}")
}

/// The identity of the changelog normalization of an upsert source in [`OperatorIds`]: the
/// last row per key, state of its own beside the scan's offsets.
pub fn normalize_identity(source: &str) -> String {
    format!("normalize:{source}")
}

/// A compiled plan with its stateful operators pinned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    /// The plan, as JSON text for `EXECUTE PLAN`.
    pub plan: String,
    /// The identity of every pinned operator and the uid prefix it got.
    pub operators: OperatorIds,
}

/// Why a compiled plan cannot be pinned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinError {
    /// The file is not a compiled plan Streamform can read.
    Unreadable(String),
    /// Exec nodes that may hold state and that no Streamform node could be found for.
    Unidentified(Vec<String>),
}

impl std::fmt::Display for PinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PinError::Unreadable(why) => write!(f, "the compiled plan cannot be read: {why}"),
            PinError::Unidentified(nodes) => write!(
                f,
                "Flink's compiled plan has operators that may hold state and that Streamform cannot tell the node of: {}",
                nodes.join(", ")
            ),
        }
    }
}

/// What an exec node is, by its type without the version suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Source,
    Sink,
    /// Grouped or windowed aggregation: identified by its calls' tags.
    Aggregation,
    /// The keep-last-row deduplication.
    Deduplicate,
    /// A regular join: identified, as the deduplication is, by the sinks it feeds.
    Join,
    /// An interval join: identified as a regular join is.
    IntervalJoin,
    /// An event-time temporal join: identified as a regular join is.
    TemporalJoin,
    /// A Top-N: identified as a regular join is.
    Rank,
    /// An OVER aggregation: identified as a regular join is.
    Over,
    /// The changelog normalization of an upsert source: identified by the scan it reads.
    Normalize,
    /// Holds no state.
    Stateless,
    /// Not one Streamform generates: it may hold state.
    Unknown,
}

fn role(kind: &str) -> Role {
    match kind {
        "stream-exec-table-source-scan" => Role::Source,
        "stream-exec-sink" => Role::Sink,
        "stream-exec-group-aggregate"
        | "stream-exec-local-group-aggregate"
        | "stream-exec-global-group-aggregate"
        | "stream-exec-incremental-group-aggregate"
        | "stream-exec-window-aggregate"
        | "stream-exec-local-window-aggregate"
        | "stream-exec-global-window-aggregate" => Role::Aggregation,
        "stream-exec-deduplicate" => Role::Deduplicate,
        "stream-exec-join" => Role::Join,
        "stream-exec-interval-join" => Role::IntervalJoin,
        "stream-exec-temporal-join" => Role::TemporalJoin,
        // A window deduplication is a Rank in the plan (docs/ranking.md).
        "stream-exec-rank" | "stream-exec-window-rank" | "stream-exec-window-deduplicate" => {
            Role::Rank
        }
        "stream-exec-over-aggregate" => Role::Over,
        "stream-exec-changelog-normalize" => Role::Normalize,
        "stream-exec-calc"
        | "stream-exec-exchange"
        | "stream-exec-watermark-assigner"
        | "stream-exec-drop-update-before"
        | "stream-exec-mini-batch-assigner"
        | "stream-exec-window-table-function"
        | "stream-exec-union" => Role::Stateless,
        _ => Role::Unknown,
    }
}

/// The tag [`crate::generate::tagged`] puts after a call's name: its node's id.
fn call_tag(name: &str) -> Option<&str> {
    let (_, tag) = name.rsplit_once(" [")?;
    tag.strip_suffix(']')
}

/// The last part of a table identifier: `` `default_catalog`.`default_database`.`orders` ``
/// is `orders`.
fn table_name(identifier: &str) -> &str {
    identifier
        .rsplit('.')
        .next()
        .unwrap_or(identifier)
        .trim_matches('`')
}

/// Pins the stateful operators of `compiled` (a compiled plan's JSON text) from the
/// application `plans` (every model, in dependency order) and `tables` (the name of each
/// table the application creates, with the identity it stands for: a source's
/// [`source_identity`], a sink table's Sink node id). `uid_of` gives the uid prefix of an
/// identity.
///
/// # Errors
/// [`PinError::Unreadable`] for text that is not a compiled plan; [`PinError::Unidentified`]
/// naming the exec nodes that may hold state and that no identity could be found for.
pub fn pin(
    compiled: &str,
    plans: &[ModelPlan],
    tables: &BTreeMap<String, String>,
    uid_of: impl Fn(&str) -> String,
) -> Result<Pinned, PinError> {
    let mut plan: Json =
        serde_json::from_str(compiled).map_err(|e| PinError::Unreadable(e.to_string()))?;
    let graph = Graph::read(&plan)?;
    let feeds = IrFeeds::of(plans);
    let upsert_sources: BTreeSet<&str> = plans
        .iter()
        .flat_map(|p| &p.nodes)
        .filter_map(|n| match (&n.op, &n.changelog) {
            (Operator::Source { name, .. }, Changelog::Upsert(_)) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let mut identities: BTreeMap<usize, String> = BTreeMap::new();
    let mut unidentified = Vec::new();
    let mut structural = Vec::new();
    for (at, node) in graph.nodes.iter().enumerate() {
        let identity = match node.role {
            Role::Stateless => continue,
            Role::Source | Role::Sink => node.table.as_ref().and_then(|t| tables.get(t)).cloned(),
            Role::Aggregation => {
                let tags: BTreeSet<&str> = node.calls.iter().filter_map(|c| call_tag(c)).collect();
                match (tags.len(), node.calls.len()) {
                    (1, n) if n > 0 && node.calls.iter().all(|c| call_tag(c).is_some()) => {
                        // The tag must name an aggregating node of this application.
                        tags.into_iter()
                            .next()
                            .filter(|tag| {
                                feeds.of_kind(NodeKind::Aggregate).any(|(id, _)| id == tag)
                            })
                            .map(str::to_string)
                    }
                    (0, 0) => {
                        structural.push(at);
                        continue;
                    }
                    _ => None,
                }
            }
            Role::Deduplicate
            | Role::Join
            | Role::IntervalJoin
            | Role::TemporalJoin
            | Role::Rank
            | Role::Over => {
                structural.push(at);
                continue;
            }
            Role::Normalize => graph.scan_above(at, tables).and_then(|scan| {
                upsert_sources
                    .iter()
                    .find(|source| source_identity(source) == *scan)
                    .map(|source| normalize_identity(source))
            }),
            Role::Unknown => None,
        };
        match identity {
            Some(identity) => {
                identities.insert(at, identity);
            }
            None => unidentified.push(node.label()),
        }
    }
    // Nodes without a tag: the one Streamform node of their kind that feeds the same sinks
    // and that no other exec node already stands for.
    for at in structural {
        let node = &graph.nodes[at];
        let kind = match node.role {
            Role::Deduplicate => NodeKind::Deduplicate,
            Role::Join => NodeKind::Join,
            Role::IntervalJoin => NodeKind::IntervalJoin,
            Role::TemporalJoin => NodeKind::TemporalJoin,
            Role::Rank => NodeKind::Rank,
            Role::Over => NodeKind::Over,
            _ => NodeKind::Aggregate,
        };
        let sinks = graph.sinks_below(at, tables);
        let taken: BTreeSet<&str> = identities.values().map(String::as_str).collect();
        let candidates: Vec<&String> = feeds
            .of_kind(kind)
            .filter(|(id, fed)| **fed == sinks && !taken.contains(id.as_str()))
            .map(|(id, _)| id)
            .collect();
        // A node Flink planned once per reader (a join a window model reads written out
        // again in its query): the copy feeding only some of its sinks stands for the node
        // towards those sinks, named after them.
        let part: Vec<&String> = feeds
            .of_kind(kind)
            .filter(|(_, fed)| !sinks.is_empty() && sinks.is_subset(fed) && **fed != sinks)
            .map(|(id, _)| id)
            .collect();
        match (candidates.as_slice(), part.as_slice()) {
            ([one], _) => {
                identities.insert(at, (*one).clone());
            }
            ([], [one]) => {
                let towards: Vec<&str> = sinks.iter().map(String::as_str).collect();
                identities.insert(at, format!("{one}@{}", towards.join("+")));
            }
            _ => unidentified.push(node.label()),
        }
    }
    // Two exec nodes of one kind standing for one node (Flink planned it once per sink):
    // one uid for both would be refused, and which state is whose could not be told.
    let mut copies: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (at, identity) in &identities {
        let kind = graph.nodes[*at].kind.as_str();
        copies.entry((identity, kind)).or_default().push(*at);
    }
    let copied: BTreeSet<usize> = copies
        .into_values()
        .filter(|ats| ats.len() > 1)
        .flatten()
        .collect();
    unidentified.extend(copied.into_iter().map(|at| graph.nodes[at].label()));
    if !unidentified.is_empty() {
        return Err(PinError::Unidentified(unidentified));
    }
    let mut operators = OperatorIds::new();
    let nodes = plan
        .get_mut("nodes")
        .and_then(Json::as_array_mut)
        .ok_or_else(|| PinError::Unreadable("it has no nodes".into()))?;
    for (at, identity) in &identities {
        let uid = operators
            .entry(identity.clone())
            .or_insert_with(|| uid_of(identity))
            .clone();
        let node = &mut nodes[*at];
        let config = node
            .as_object_mut()
            .ok_or_else(|| PinError::Unreadable("a node is not an object".into()))?
            .entry("configuration")
            .or_insert_with(|| Json::Object(serde_json::Map::new()));
        let Some(config) = config.as_object_mut() else {
            return Err(PinError::Unreadable(
                "a node's configuration is not an object".into(),
            ));
        };
        // One exec node may make several operators (a source and its watermarks, the local
        // and global halves of an aggregation): the transformation's name tells them apart.
        config.insert(
            "table.exec.uid.format".into(),
            Json::String(format!("{uid}_<transformation>")),
        );
    }
    let plan =
        serde_json::to_string_pretty(&plan).map_err(|e| PinError::Unreadable(e.to_string()))?;
    Ok(Pinned { plan, operators })
}

/// The exec nodes of a compiled plan and its edges, as far as pinning reads them.
struct Graph {
    nodes: Vec<ExecNode>,
    /// Per node (by position), the positions of the nodes it feeds.
    below: Vec<Vec<usize>>,
}

struct ExecNode {
    id: i64,
    kind: String,
    role: Role,
    /// A source's or sink's table name.
    table: Option<String>,
    /// An aggregation's call names.
    calls: Vec<String>,
}

impl ExecNode {
    fn label(&self) -> String {
        format!("{} (node {})", self.kind, self.id)
    }
}

impl Graph {
    fn read(plan: &Json) -> Result<Graph, PinError> {
        let unreadable = |what: &str| PinError::Unreadable(what.to_string());
        let nodes = plan
            .get("nodes")
            .and_then(Json::as_array)
            .ok_or_else(|| unreadable("it has no nodes"))?;
        let mut out = Vec::with_capacity(nodes.len());
        for node in nodes {
            let id = node
                .get("id")
                .and_then(Json::as_i64)
                .ok_or_else(|| unreadable("a node has no id"))?;
            let ty = node
                .get("type")
                .and_then(Json::as_str)
                .ok_or_else(|| unreadable("a node has no type"))?;
            // `stream-exec-group-aggregate_1`: the kind, then the exec node's version.
            let kind = ty.rsplit_once('_').map_or(ty, |(k, _)| k).to_string();
            let table = ["scanTableSource", "dynamicTableSink"]
                .iter()
                .find_map(|key| node.pointer(&format!("/{key}/table/identifier")))
                .and_then(Json::as_str)
                .map(|i| table_name(i).to_string());
            let calls = node
                .get("aggCalls")
                .and_then(Json::as_array)
                .map(|calls| {
                    calls
                        .iter()
                        .filter_map(|c| c.get("name").and_then(Json::as_str))
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            out.push(ExecNode {
                id,
                role: role(&kind),
                kind,
                table,
                calls,
            });
        }
        let position: BTreeMap<i64, usize> =
            out.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
        let mut below = vec![Vec::new(); out.len()];
        for edge in plan
            .get("edges")
            .and_then(Json::as_array)
            .ok_or_else(|| unreadable("it has no edges"))?
        {
            let end = |key: &str| {
                edge.get(key)
                    .and_then(Json::as_i64)
                    .and_then(|id| position.get(&id).copied())
            };
            let (Some(from), Some(to)) = (end("source"), end("target")) else {
                return Err(unreadable("an edge names a node the plan does not hold"));
            };
            below[from].push(to);
        }
        Ok(Graph { nodes: out, below })
    }

    /// Every node reached from `at` (itself included) by following `next` from each node
    /// reached.
    fn reach(&self, at: usize, next: impl Fn(usize) -> Vec<usize>) -> BTreeSet<usize> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![at];
        while let Some(n) = todo.pop() {
            if seen.insert(n) {
                todo.extend(next(n));
            }
        }
        seen
    }

    /// The identity of the source scan that feeds `at` through stateless nodes only (an
    /// exchange), by the scan's table; `None` unless exactly one scan of a table of the
    /// application does, and nothing else.
    fn scan_above<'t>(
        &self,
        at: usize,
        tables: &'t BTreeMap<String, String>,
    ) -> Option<&'t String> {
        let above = |n: usize| -> Vec<usize> {
            if n != at && self.nodes[n].role != Role::Stateless {
                return Vec::new();
            }
            (0..self.nodes.len())
                .filter(|&m| self.below[m].contains(&n))
                .collect()
        };
        let inputs: BTreeSet<Option<&String>> = self
            .reach(at, above)
            .into_iter()
            .filter(|&n| n != at && self.nodes[n].role != Role::Stateless)
            .map(|n| match self.nodes[n].role {
                Role::Source => self.nodes[n].table.as_ref().and_then(|t| tables.get(t)),
                _ => None,
            })
            .collect();
        match inputs.into_iter().collect::<Vec<_>>().as_slice() {
            [Some(one)] => Some(*one),
            _ => None,
        }
    }

    /// The identities of the sinks `at` feeds, directly or through other nodes.
    fn sinks_below(&self, at: usize, tables: &BTreeMap<String, String>) -> BTreeSet<String> {
        self.reach(at, |n| self.below[n].clone())
            .into_iter()
            .filter(|&n| self.nodes[n].role == Role::Sink)
            .filter_map(|n| self.nodes[n].table.as_ref().and_then(|t| tables.get(t)))
            .cloned()
            .collect()
    }
}

/// Whether a stateful Streamform node (an aggregation, a window, a deduplication, or an upsert
/// source's normalization) reaches two or more sinks. Flink 2.2 then plans it once per sink
/// unless told to find the shared part first, and the copies, one identity, could not be
/// pinned apart (see [`crate::generate::REUSE_BLOCKS`]).
pub(crate) fn state_reaches_several_sinks(plans: &[ModelPlan]) -> bool {
    // Every model reading an upsert source has its own Source node: one normalization.
    let mut reached: BTreeMap<&str, BTreeSet<&String>> = BTreeMap::new();
    let feeds = IrFeeds::of(plans);
    for (identity, _, sinks) in &feeds.feeds {
        reached.entry(identity).or_default().extend(sinks);
    }
    reached.values().any(|sinks| sinks.len() > 1)
}

/// Per stateful Streamform node, the Sink nodes it feeds (its own model's and those of
/// every model reading it, directly or not), as the compiled plan's edges show them; an
/// upsert source's Source node under its normalization's identity.
struct IrFeeds {
    feeds: Vec<(String, NodeKind, BTreeSet<String>)>,
}

impl IrFeeds {
    fn of(plans: &[ModelPlan]) -> IrFeeds {
        // Per model, the Sink nodes of the models at or below it that declare a sink.
        let mut below: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        for plan in plans.iter().rev() {
            let mut sinks: BTreeSet<String> =
                below.get(plan.name.as_str()).cloned().unwrap_or_default();
            let sink = plan.sink();
            if matches!(
                &sink.op,
                Operator::Sink {
                    target: Some(_),
                    ..
                }
            ) {
                sinks.insert(sink.id.to_string());
            }
            for upstream in plan.models_read() {
                below
                    .entry(upstream)
                    .or_default()
                    .extend(sinks.iter().cloned());
            }
            below.insert(plan.name.as_str(), sinks);
        }
        let feeds = plans
            .iter()
            .flat_map(|plan| {
                let sinks = below.get(plan.name.as_str()).cloned().unwrap_or_default();
                plan.nodes.iter().filter_map(move |n| {
                    let identity = match (&n.op, &n.changelog, n.id.kind) {
                        (Operator::Source { name, .. }, Changelog::Upsert(_), _) => {
                            normalize_identity(name)
                        }
                        (
                            _,
                            _,
                            NodeKind::Aggregate
                            | NodeKind::Window
                            | NodeKind::Deduplicate
                            | NodeKind::Join
                            | NodeKind::IntervalJoin
                            | NodeKind::TemporalJoin
                            | NodeKind::Rank
                            | NodeKind::Over,
                        ) => n.id.to_string(),
                        _ => return None,
                    };
                    // Flink plans a rank of one row by the time attribute as its
                    // deduplication (docs/ranking.md).
                    let kind = match &n.op {
                        Operator::Rank { ranking, .. }
                            if ranking.strategy == streamform_ir::RankStrategy::Deduplicate =>
                        {
                            NodeKind::Deduplicate
                        }
                        _ => n.id.kind,
                    };
                    Some((identity, kind, sinks.clone()))
                })
            })
            .collect();
        IrFeeds { feeds }
    }

    /// The stateful nodes of `kind` (a window counts as an aggregation) with the sinks each
    /// feeds.
    fn of_kind(&self, kind: NodeKind) -> impl Iterator<Item = (&String, &BTreeSet<String>)> {
        self.feeds
            .iter()
            .filter(move |(_, k, _)| {
                *k == kind || (kind == NodeKind::Aggregate && *k == NodeKind::Window)
            })
            .map(|(id, _, sinks)| (id, sinks))
    }
}

#[cfg(test)]
mod tests;
