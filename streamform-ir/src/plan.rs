//! The Streaming IR: a model is a chain of typed nodes, each with an id, an operator, an
//! output schema, boundedness, changelog mode and state requirement.
//!
//! Spec: streamform-docs "The streaming plan" (lines 314-505) and the plan identity
//! reference (1321-1437); DECISIONS.md D5.

use std::fmt;

use crate::expr::Expr;
use crate::types::DataType;

/// One output column. Nullability is inferred by the frontend and is not part of any
/// fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    pub name: String,
    pub ty: DataType,
    pub nullable: bool,
}

/// Whether a node's output ever ends (spec: "Boundedness").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Boundedness {
    Bounded,
    Unbounded,
}

impl Boundedness {
    /// `Bounded` / `Unbounded`, as explain prints it.
    pub fn title(self) -> &'static str {
        match self {
            Boundedness::Bounded => "Bounded",
            Boundedness::Unbounded => "Unbounded",
        }
    }
}

/// How a node's output changes over time (spec: "Changelogs"; D5).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Changelog {
    /// Every record is an insert of a new fact.
    Append,
    /// Insert, update or delete of the row with this key (possibly empty: one row).
    Upsert(Vec<String>),
    /// Delete-then-insert pairs. Nothing produces it yet.
    Retract,
}

impl Changelog {
    pub fn is_updating(&self) -> bool {
        !matches!(self, Changelog::Append)
    }

    /// `Append`, `Upsert(customer_id)`, as explain prints it.
    pub fn title(&self) -> String {
        match self {
            Changelog::Append => "Append".into(),
            Changelog::Upsert(key) => format!("Upsert({})", key.join(", ")),
            Changelog::Retract => "Retract".into(),
        }
    }
}

/// How long a key's state is kept. Only `Unbounded` exists until event time lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Retention {
    Unbounded,
}

impl fmt::Display for Retention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unbounded")
    }
}

/// One accumulator of keyed state: Streamform's name for the call and the stored type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Accumulator {
    /// `sum(amount)`, `count(*)`.
    pub name: String,
    pub ty: DataType,
}

/// Exactly what a keyed node stores per key (spec: "State").
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyedState {
    pub key: Vec<String>,
    pub accumulators: Vec<Accumulator>,
    pub retention: Retention,
}

/// A node's state requirement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum State {
    Stateless,
    Keyed(KeyedState),
}

/// Where a source's records come from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Connector {
    /// Unbounded.
    Kafka { topic: String },
    /// Bounded.
    File { path: String },
}

impl Connector {
    pub fn name(&self) -> &'static str {
        match self {
            Connector::Kafka { .. } => "kafka",
            Connector::File { .. } => "file",
        }
    }

    /// The topic or path.
    pub fn location(&self) -> &str {
        match self {
            Connector::Kafka { topic } => topic,
            Connector::File { path } => path,
        }
    }

    pub fn boundedness(&self) -> Boundedness {
        match self {
            Connector::Kafka { .. } => Boundedness::Unbounded,
            Connector::File { .. } => Boundedness::Bounded,
        }
    }
}

/// An aggregate function (D4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AggFunc {
    Sum,
    Count,
    Min,
    Max,
}

impl AggFunc {
    pub fn name(self) -> &'static str {
        match self {
            AggFunc::Sum => "sum",
            AggFunc::Count => "count",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
        }
    }
}

/// One aggregate call: `sum(amount)`, `count(*)` (`arg: None`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AggCall {
    pub func: AggFunc,
    /// The input column; `None` for `count(*)`.
    pub arg: Option<String>,
    /// The accumulator (and output) type, by D4's rule.
    pub ty: DataType,
}

impl AggCall {
    /// Streamform's name for the call, used for the accumulator and the output column.
    pub fn name(&self) -> String {
        format!(
            "{}({})",
            self.func.name(),
            self.arg.as_deref().unwrap_or("*")
        )
    }
}

/// One output column of a projection.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProjectItem {
    pub expr: Expr,
    /// The output column name.
    pub name: String,
}

impl fmt::Display for ProjectItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.expr.to_string();
        if e == self.name {
            f.write_str(&e)
        } else {
            write!(f, "{e} AS {}", self.name)
        }
    }
}

/// One sort key of ORDER BY.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SortKey {
    pub column: String,
    pub descending: bool,
}

/// The declared materialization of a model.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Materialized {
    Append,
    Upsert { key: Vec<String> },
}

impl Materialized {
    pub fn name(&self) -> &'static str {
        match self {
            Materialized::Append => "append",
            Materialized::Upsert { .. } => "upsert",
        }
    }

    /// `append` or `upsert(customer_id)`.
    pub fn summary(&self) -> String {
        match self {
            Materialized::Append => "append".into(),
            Materialized::Upsert { key } => format!("upsert({})", key.join(", ")),
        }
    }
}

/// An external destination declared by a model's `sink:` block.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SinkTarget {
    pub connector: Connector,
    pub format: String,
}

/// What a node does.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Operator {
    Source {
        name: String,
        connector: Connector,
        format: String,
    },
    Filter {
        predicate: Expr,
    },
    Project {
        items: Vec<ProjectItem>,
    },
    Aggregate {
        group_by: Vec<String>,
        calls: Vec<AggCall>,
    },
    /// ORDER BY over a bounded input: emits the sorted rows when the input ends (D5).
    Sort {
        keys: Vec<SortKey>,
    },
    Sink {
        model: String,
        materialized: Materialized,
        target: Option<SinkTarget>,
    },
}

/// The kind part of a node id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeKind {
    Source,
    Filter,
    Project,
    Aggregate,
    Sort,
    Sink,
}

impl NodeKind {
    /// `source`, `aggregate`, ... as in node ids.
    pub fn id_name(self) -> &'static str {
        match self {
            NodeKind::Source => "source",
            NodeKind::Filter => "filter",
            NodeKind::Project => "project",
            NodeKind::Aggregate => "aggregate",
            NodeKind::Sort => "sort",
            NodeKind::Sink => "sink",
        }
    }

    /// `Source`, `Aggregate`, ... as explain prints it.
    pub fn title(self) -> &'static str {
        match self {
            NodeKind::Source => "Source",
            NodeKind::Filter => "Filter",
            NodeKind::Project => "Project",
            NodeKind::Aggregate => "Aggregate",
            NodeKind::Sort => "Sort",
            NodeKind::Sink => "Sink",
        }
    }
}

impl Operator {
    pub fn kind(&self) -> NodeKind {
        match self {
            Operator::Source { .. } => NodeKind::Source,
            Operator::Filter { .. } => NodeKind::Filter,
            Operator::Project { .. } => NodeKind::Project,
            Operator::Aggregate { .. } => NodeKind::Aggregate,
            Operator::Sort { .. } => NodeKind::Sort,
            Operator::Sink { .. } => NodeKind::Sink,
        }
    }
}

/// A stable node id, `<model>::<kind>::<ordinal>` (spec: "Node ids").
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId {
    pub model: String,
    pub kind: NodeKind,
    /// Counts operators of this kind within the model, in plan order.
    pub ordinal: u32,
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}::{}::{}",
            self.model,
            self.kind.id_name(),
            self.ordinal
        )
    }
}

/// One node of a model's chain.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Node {
    pub id: NodeId,
    pub op: Operator,
    pub schema: Vec<Field>,
    pub boundedness: Boundedness,
    pub changelog: Changelog,
    pub state: State,
}

/// What a model's first operator reads.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Input {
    /// `source('name')`: the chain starts with a Source node.
    Source(String),
    /// `ref('name')`: the first operator reads that model's Sink.
    Model(String),
}

/// One model's lowered plan: its nodes from first operator to Sink.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelPlan {
    pub name: String,
    pub input: Input,
    pub nodes: Vec<Node>,
}

impl ModelPlan {
    /// The Sink, whose schema and changelog are the model's contract with readers.
    pub fn sink(&self) -> &Node {
        self.nodes
            .last()
            .expect("a model plan always ends in a Sink")
    }

    pub fn materialized(&self) -> &Materialized {
        match &self.sink().op {
            Operator::Sink { materialized, .. } => materialized,
            _ => unreachable!("the last node of a model plan is a Sink"),
        }
    }
}

/// Assigns positional ids to a chain of operators: the ordinal counts earlier operators of
/// the same kind within the model.
pub fn assign_id(model: &str, earlier: &[Node], kind: NodeKind) -> NodeId {
    let ordinal = earlier.iter().filter(|n| n.id.kind == kind).count() as u32;
    NodeId {
        model: model.to_string(),
        kind,
        ordinal,
    }
}
