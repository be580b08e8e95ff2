//! Builds model plans by hand, the way the frontend lowers SQL: ids by `assign_id`, schemas,
//! changelogs, boundedness and keyed state set as the spec describes. Shared by the tests and
//! the benchmark (which includes this file by path).

#![allow(dead_code)]

use streamform_ir::types::arithmetic_type;
use streamform_ir::value::F64;
use streamform_ir::{
    Accumulator, AggCall, AggFunc, BinaryOp, Changelog, Connector, DataType, Decimal, EventTime,
    Expr, Field, Input, KeyedState, LateEvents, Materialized, ModelPlan, Node, NodeKind, Operator,
    ProjectItem, RankStrategy, Ranking, Retention, SortKey, State, Value, assign_id,
};
use streamform_sim::{Change, Op};

/// An insert of `row`, as the changelog holds it.
pub fn ins(row: Vec<Value>) -> Change {
    Change {
        op: Op::Insert,
        row,
        before: None,
    }
}

/// An update from `before` to `after`.
pub fn upd(before: Vec<Value>, after: Vec<Value>) -> Change {
    Change {
        op: Op::Update,
        row: after,
        before: Some(before),
    }
}

/// A delete of `row`.
pub fn del(row: Vec<Value>) -> Change {
    Change {
        op: Op::Delete,
        row,
        before: None,
    }
}

/// The changelog of the last plan of `chain` over `events`, every event processed.
pub fn changes(chain: &[ModelPlan], events: &[Vec<Value>]) -> Vec<Change> {
    let out = streamform_sim::run(chain, events).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.events_processed, events.len());
    out.changes.to_vec()
}

/// decimal(38,9), what `decimal` means in sources.yml.
pub const DEC: DataType = DataType::DEFAULT_DECIMAL;

pub fn dec_ty(precision: u8, scale: u8) -> DataType {
    DataType::Decimal { precision, scale }
}

pub fn kafka(topic: &str) -> Connector {
    Connector::Kafka {
        topic: topic.into(),
    }
}

pub fn file(path: &str) -> Connector {
    Connector::File { path: path.into() }
}

/// A model under construction: its nodes so far and what the next node reads.
pub struct Model {
    name: String,
    inputs: Vec<Input>,
    nodes: Vec<Node>,
    /// The upstream model's Sink, for a model reading `ref()` (until it has its own nodes).
    upstream: Option<Node>,
}

/// A model reading `source('source')` with these columns (all nullable, as sources are).
pub fn from_source(
    model: &str,
    source: &str,
    columns: &[(&str, DataType)],
    connector: Connector,
) -> Model {
    let schema = columns
        .iter()
        .map(|(n, t)| Field {
            name: n.to_string(),
            ty: *t,
            nullable: true,
        })
        .collect();
    let boundedness = connector.boundedness();
    let node = Node {
        inputs: Vec::new(),
        id: assign_id(model, &[], NodeKind::Source),
        op: Operator::Source {
            name: source.into(),
            connector,
            format: "json".into(),
            event_time: None,
        },
        schema,
        boundedness,
        changelog: Changelog::Append,
        state: State::Stateless,
        time: None,
    };
    Model {
        name: model.into(),
        inputs: vec![Input::Source(source.into())],
        nodes: vec![node],
        upstream: None,
    }
}

/// A model reading `ref('upstream')`: its first operator reads the upstream Sink.
pub fn from_model(model: &str, upstream: &ModelPlan) -> Model {
    Model {
        name: model.into(),
        inputs: vec![Input::Model(upstream.name.clone())],
        nodes: Vec::new(),
        upstream: Some(upstream.sink().clone()),
    }
}

impl Model {
    /// Puts the Source on event time: `column`, a watermark delay in milliseconds, and what
    /// a late event becomes.
    pub fn event_time(mut self, column: &str, watermark: u64, late: LateEvents) -> Model {
        let source = self.nodes.first_mut().expect("a model from a source");
        if let Operator::Source { event_time, .. } = &mut source.op {
            *event_time = Some(EventTime {
                column: column.into(),
                watermark,
                late,
            });
        }
        source.time = Some(column.into());
        self
    }

    /// Makes the Source an upsert source keyed by `key`: a table that changes, normalized
    /// to the last row per key.
    pub fn upsert(mut self, key: &[&str]) -> Model {
        let source = self.nodes.first_mut().expect("a model from a source");
        let key: Vec<String> = key.iter().map(|k| k.to_string()).collect();
        source.state = State::Keyed(KeyedState::last_row(&key, &source.schema));
        source.changelog = Changelog::Upsert(key);
        self
    }

    /// Gives the last (keyed) node a retention in milliseconds.
    pub fn retention(mut self, ms: u64) -> Model {
        let node = self.nodes.last_mut().expect("a node");
        match &mut node.state {
            State::Keyed(k) => k.retention = Retention::After(ms),
            State::Stateless => panic!("retention on a stateless node"),
        }
        self
    }

    fn last(&self) -> &Node {
        self.nodes
            .last()
            .or(self.upstream.as_ref())
            .expect("a model reads something")
    }

    fn schema(&self) -> Vec<Field> {
        self.last().schema.clone()
    }

    /// A column of what the next node reads, typed from its schema.
    pub fn col(&self, name: &str) -> Expr {
        let f = self
            .last()
            .schema
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no column `{name}`"));
        Expr::Column {
            name: name.into(),
            ty: f.ty,
        }
    }

    fn push(
        mut self,
        kind: NodeKind,
        op: Operator,
        schema: Vec<Field>,
        changelog: Changelog,
        state: State,
    ) -> Model {
        let node = Node {
            inputs: vec![self.last().id.clone()],
            id: assign_id(&self.name, &self.nodes, kind),
            op,
            schema,
            boundedness: self.last().boundedness,
            changelog,
            state,
            time: None,
        };
        self.nodes.push(node);
        self
    }

    pub fn filter(self, predicate: impl FnOnce(&Model) -> Expr) -> Model {
        let predicate = predicate(&self);
        let (schema, changelog) = (self.schema(), self.last().changelog.clone());
        self.push(
            NodeKind::Filter,
            Operator::Filter { predicate },
            schema,
            changelog,
            State::Stateless,
        )
    }

    /// `items`: (expression, output name).
    pub fn project(self, items: impl FnOnce(&Model) -> Vec<(Expr, &'static str)>) -> Model {
        let items: Vec<ProjectItem> = items(&self)
            .into_iter()
            .map(|(expr, name)| ProjectItem {
                expr,
                name: name.into(),
            })
            .collect();
        let schema = items
            .iter()
            .map(|i| Field {
                name: i.name.clone(),
                ty: i.expr.data_type(),
                nullable: true,
            })
            .collect();
        let changelog = match &self.last().changelog {
            Changelog::Upsert(key) => Changelog::Upsert(
                key.iter()
                    .filter_map(|k| {
                        items.iter().find_map(|i| match &i.expr {
                            Expr::Column { name, .. } if name == k => Some(i.name.clone()),
                            _ => None,
                        })
                    })
                    .collect(),
            ),
            other => other.clone(),
        };
        self.push(
            NodeKind::Project,
            Operator::Project { items },
            schema,
            changelog,
            State::Stateless,
        )
    }

    /// GROUP BY `group_by` with `calls` (function, argument; `None` for count(*)), typed as docs/sql.md says.
    pub fn aggregate(self, group_by: &[&str], calls: &[(AggFunc, Option<&str>)]) -> Model {
        let (key, calls, schema, state) = self.grouping(group_by, calls, None);
        let op = Operator::Aggregate {
            group_by: key.clone(),
            calls,
        };
        self.push(
            NodeKind::Aggregate,
            op,
            schema,
            Changelog::Upsert(key),
            state,
        )
    }

    /// A window aggregation over the time attribute: `group_by` names input columns and
    /// the window's own (`window_start`, `window_end`, `window_time`), typed as docs/sql.md says.
    pub fn window(
        self,
        kind: streamform_ir::WindowKind,
        group_by: &[&str],
        calls: &[(AggFunc, Option<&str>)],
    ) -> Model {
        let time = self
            .last()
            .time
            .clone()
            .expect("a window needs a time attribute");
        let window = streamform_ir::Window { kind, time };
        let (key, calls, schema, state) = self.grouping(group_by, calls, Some(window.clone()));
        let carries_time = key.iter().any(|k| k == streamform_ir::WINDOW_TIME);
        let op = Operator::Window {
            window,
            group_by: key,
            calls,
        };
        let mut m = self.push(NodeKind::Window, op, schema, Changelog::Append, state);
        if let Some(n) = m.nodes.last_mut() {
            n.time = carries_time.then(|| streamform_ir::WINDOW_TIME.to_string());
        }
        m
    }

    /// A window table a rank reads (docs/ranking.md, "A top per window"): the input's
    /// columns, then the window's three; `window_time` is the time attribute from here on.
    pub fn window_table(self, kind: streamform_ir::WindowKind) -> Model {
        let time = self
            .last()
            .time
            .clone()
            .expect("a window table needs a time attribute");
        let mut schema = self.schema();
        for name in streamform_ir::WINDOW_COLUMNS {
            schema.push(Field {
                name: name.to_string(),
                ty: DataType::Timestamp,
                nullable: false,
            });
        }
        let op = Operator::WindowTable {
            window: streamform_ir::Window { kind, time },
        };
        let mut m = self.push(
            NodeKind::WindowTable,
            op,
            schema,
            Changelog::Append,
            State::Stateless,
        );
        if let Some(n) = m.nodes.last_mut() {
            n.time = Some(streamform_ir::WINDOW_TIME.to_string());
        }
        m
    }

    /// Window deduplication over a window table (docs/ranking.md): per `partition` (besides
    /// the window's bounds) and window, the first row by `time`, or the last when
    /// `descending`, inserted when the window fires.
    pub fn window_deduplicate(self, partition: &[&str], time: &str, descending: bool) -> Model {
        let input = self.schema();
        let Some(Operator::WindowTable { window }) = self.nodes.last().map(|n| n.op.clone()) else {
            panic!("a window deduplication reads a window table");
        };
        let ranking = Ranking {
            order: vec![SortKey {
                column: time.to_string(),
                descending,
            }],
            top: 1,
            strategy: RankStrategy::WindowDeduplicate,
            window_end: Some(streamform_ir::WINDOW_END.to_string()),
        };
        let mut partition_by = vec![
            streamform_ir::WINDOW_START.to_string(),
            streamform_ir::WINDOW_END.to_string(),
        ];
        partition_by.extend(partition.iter().map(|k| k.to_string()));
        let mut state = KeyedState::rank(&partition_by, &ranking, &input);
        state.window = Some(window);
        let op = Operator::Rank {
            partition_by,
            ranking,
            number: None,
        };
        self.push(
            NodeKind::Rank,
            op,
            input,
            Changelog::Append,
            State::Keyed(state),
        )
    }

    /// The key, typed calls, output schema and keyed state of a grouping node.
    fn grouping(
        &self,
        group_by: &[&str],
        calls: &[(AggFunc, Option<&str>)],
        window: Option<streamform_ir::Window>,
    ) -> (Vec<String>, Vec<AggCall>, Vec<Field>, State) {
        let input = self.schema();
        let ty_of = |c: &str| {
            if window.is_some() && streamform_ir::WINDOW_COLUMNS.contains(&c) {
                return DataType::Timestamp;
            }
            input
                .iter()
                .find(|f| f.name == c)
                .unwrap_or_else(|| panic!("no column `{c}`"))
                .ty
        };
        let calls: Vec<AggCall> = calls
            .iter()
            .map(|(func, arg)| {
                let ty = func
                    .accumulator_type(arg.map(ty_of))
                    .unwrap_or_else(|| panic!("{} is not defined over {arg:?}", func.name()));
                AggCall {
                    func: *func,
                    arg: arg.map(String::from),
                    ty,
                }
            })
            .collect();
        let mut schema: Vec<Field> = group_by
            .iter()
            .map(|g| Field {
                name: g.to_string(),
                ty: ty_of(g),
                nullable: true,
            })
            .collect();
        schema.extend(calls.iter().map(|c| Field {
            name: c.name(),
            ty: c.ty,
            nullable: true,
        }));
        let key: Vec<String> = group_by.iter().map(|g| g.to_string()).collect();
        let state = State::Keyed(KeyedState {
            key: key.clone(),
            accumulators: Accumulator::of_calls(&calls),
            retention: Retention::Unbounded,
            retracting: window.is_none() && self.last().changelog.is_updating(),
            window,
            bounds: None,
            ranking: None,
            frame: None,
        });
        (key, calls, schema, state)
    }

    /// Adds the nodes of `other`, a branch built for the same model, renumbered after this
    /// model's as lowering numbers a second branch, and what it reads; returns the node the
    /// branch ends in.
    fn graft(&mut self, other: Model) -> Node {
        assert_eq!(self.name, other.name, "a branch of the same model");
        let mut renamed = std::collections::HashMap::new();
        for mut n in other.nodes.iter().cloned() {
            let id = assign_id(&self.name, &self.nodes, n.id.kind);
            renamed.insert(n.id.clone(), id.clone());
            n.inputs = n
                .inputs
                .iter()
                .map(|i| renamed.get(i).cloned().unwrap_or_else(|| i.clone()))
                .collect();
            n.id = id;
            self.nodes.push(n);
        }
        for i in other.inputs {
            if !self.inputs.contains(&i) {
                self.inputs.push(i);
            }
        }
        match other.nodes.is_empty() {
            false => self.nodes.last().expect("just added").clone(),
            true => other.upstream.expect("a branch reads something"),
        }
    }

    /// UNION ALL of what this model has built so far and `other`, a branch built for the
    /// same model (from its own source or model): the branch's nodes are renumbered after
    /// this model's, as lowering numbers a second branch, and a Union reads both. Its
    /// changelog is append over append inputs, retracting otherwise; its time attribute
    /// is kept only when both sides carry it under the same name.
    pub fn union_with(mut self, other: Model) -> Model {
        let left = self.last().clone();
        let right = self.graft(other);
        let schema: Vec<Field> = left
            .schema
            .iter()
            .zip(&right.schema)
            .map(|(l, r)| Field {
                nullable: l.nullable || r.nullable,
                ..l.clone()
            })
            .collect();
        let changelog = if left.changelog.is_updating() || right.changelog.is_updating() {
            Changelog::Retract
        } else {
            Changelog::Append
        };
        let time = left.time.clone().filter(|t| right.time.as_ref() == Some(t));
        let boundedness = if left.boundedness == right.boundedness {
            left.boundedness
        } else {
            streamform_ir::Boundedness::Unbounded
        };
        let node = Node {
            inputs: vec![left.id.clone(), right.id.clone()],
            id: assign_id(&self.name, &self.nodes, NodeKind::Union),
            op: Operator::Union,
            schema,
            boundedness,
            changelog,
            state: State::Stateless,
            time,
        };
        self.nodes.push(node);
        self
    }

    /// A regular join of what this model has built so far (left) and `other` (right), a
    /// branch built for the same model, on `on`'s equal columns: the branch's nodes are
    /// renumbered after this model's, as lowering numbers them.
    pub fn join_with(
        mut self,
        other: Model,
        kind: streamform_ir::JoinKind,
        on: &[(&str, &str)],
    ) -> Model {
        let left = self.last().clone();
        let right = self.graft(other);
        let on: Vec<(String, String)> = on
            .iter()
            .map(|(l, r)| (l.to_string(), r.to_string()))
            .collect();
        let schema = streamform_ir::join_schema(kind, &left.schema, &right.schema);
        let state = State::Keyed(KeyedState::join(kind, &on, &left.schema, &right.schema));
        let changelog = if kind == streamform_ir::JoinKind::Inner {
            Changelog::Append
        } else {
            Changelog::Retract
        };
        let node = Node {
            inputs: vec![left.id.clone(), right.id.clone()],
            id: assign_id(&self.name, &self.nodes, NodeKind::Join),
            op: Operator::Join {
                kind,
                on,
                filter: None,
            },
            schema,
            boundedness: left.boundedness,
            changelog,
            state,
            time: None,
        };
        self.nodes.push(node);
        self
    }

    /// An interval join of what this model has built so far (left) and `other` (right), on
    /// `on`'s equal columns and `right_time + lower <= left_time <= right_time + upper`
    /// (docs/joins.md, "Joins in time"); its time attribute is the left's.
    pub fn interval_join_with(
        mut self,
        other: Model,
        kind: streamform_ir::JoinKind,
        on: &[(&str, &str)],
        (left_time, right_time, lower, upper): (&str, &str, i64, i64),
    ) -> Model {
        let left = self.last().clone();
        let right = self.graft(other);
        let on: Vec<(String, String)> = on
            .iter()
            .map(|(l, r)| (l.to_string(), r.to_string()))
            .collect();
        let schema = streamform_ir::join_schema(kind, &left.schema, &right.schema);
        let bounds = streamform_ir::TimeBounds {
            left_time: left_time.into(),
            right_time: right_time.into(),
            lower,
            upper,
        };
        let state = State::Keyed(KeyedState::interval_join(
            &on,
            &left.schema,
            &right.schema,
            &bounds,
        ));
        let node = Node {
            inputs: vec![left.id.clone(), right.id.clone()],
            id: assign_id(&self.name, &self.nodes, NodeKind::IntervalJoin),
            op: Operator::IntervalJoin {
                kind,
                on,
                bounds,
                filter: None,
            },
            schema,
            boundedness: left.boundedness,
            changelog: Changelog::Append,
            state,
            time: Some(left_time.into()),
        };
        self.nodes.push(node);
        self
    }

    /// An event-time temporal join of what this model has built so far (the probe side)
    /// with `other` (an upsert source on event time, read as a versioned table) on `on`,
    /// `AS OF` the probe side's `left_time`; `right_time` is the versioned side's time by
    /// its name in the join.
    pub fn temporal_join_with(
        mut self,
        other: Model,
        kind: streamform_ir::JoinKind,
        on: &[(&str, &str)],
        (left_time, right_time): (&str, &str),
    ) -> Model {
        let left = self.last().clone();
        let right = self.graft(other);
        let on: Vec<(String, String)> = on
            .iter()
            .map(|(l, r)| (l.to_string(), r.to_string()))
            .collect();
        let schema = streamform_ir::join_schema(kind, &left.schema, &right.schema);
        let state = State::Keyed(KeyedState::temporal_join(&on, &left.schema, &right.schema));
        let node = Node {
            inputs: vec![left.id.clone(), right.id.clone()],
            id: assign_id(&self.name, &self.nodes, NodeKind::TemporalJoin),
            op: Operator::TemporalJoin {
                kind,
                on,
                left_time: left_time.into(),
                right_time: right_time.into(),
            },
            schema,
            boundedness: left.boundedness,
            changelog: Changelog::Append,
            state,
            time: Some(left_time.into()),
        };
        self.nodes.push(node);
        self
    }

    /// Says that the last node's changelog is upserted by `key`, as lowering derives it for
    /// a join of two tables on the key they share (docs/joins.md).
    pub fn keyed_by(mut self, key: &[&str]) -> Model {
        let last = self.nodes.last_mut().expect("a node");
        last.changelog = Changelog::Upsert(key.iter().map(|k| k.to_string()).collect());
        self
    }

    /// The last row per key (docs/sql.md), as lowering plans an upsert model over an append input.
    pub fn deduplicate(self, key: &[&str]) -> Model {
        let schema = self.schema();
        let key: Vec<String> = key.iter().map(|k| k.to_string()).collect();
        let state = State::Keyed(KeyedState::last_row(&key, &schema));
        self.push(
            NodeKind::Deduplicate,
            Operator::Deduplicate { key: key.clone() },
            schema,
            Changelog::Upsert(key),
            state,
        )
    }

    /// `ROW_NUMBER() OVER (PARTITION BY partition ORDER BY order) … <= top`, as lowering
    /// plans it (docs/ranking.md): the strategy by whether the input updates, the row number
    /// `rn` appended when `number`. The changelog: upserted by the partition for a top of
    /// one over an append input, by the partition and `rn` with the number, by the input's
    /// key over an updating input, retracting otherwise.
    pub fn rank(self, partition: &[&str], order: &[(&str, bool)], top: u64, number: bool) -> Model {
        let input = self.schema();
        let updating = self.last().changelog.is_updating();
        // Partitioned by both of a window's bounds: a window Top-N (docs/ranking.md).
        let per_window = [streamform_ir::WINDOW_START, streamform_ir::WINDOW_END]
            .iter()
            .all(|b| partition.contains(b));
        let ranking = Ranking {
            order: order
                .iter()
                .map(|(c, d)| SortKey {
                    column: c.to_string(),
                    descending: *d,
                })
                .collect(),
            top,
            strategy: if updating {
                RankStrategy::Retract
            } else if per_window {
                RankStrategy::Window
            } else {
                RankStrategy::Append
            },
            window_end: per_window.then(|| streamform_ir::WINDOW_END.to_string()),
        };
        let partition: Vec<String> = partition.iter().map(|k| k.to_string()).collect();
        let mut schema = input.clone();
        if number {
            schema.push(Field {
                name: "rn".into(),
                ty: DataType::Int64,
                nullable: false,
            });
        }
        let changelog = if per_window {
            Changelog::Append
        } else if number {
            let mut key = partition.clone();
            key.push("rn".into());
            Changelog::Upsert(key)
        } else if updating {
            self.last().changelog.clone()
        } else if top == 1 {
            Changelog::Upsert(partition.clone())
        } else {
            Changelog::Retract
        };
        let number = number.then(|| "rn".to_string());
        self.push_rank(partition, ranking, number, schema, changelog)
    }

    /// A Rank node over the last node's output.
    fn push_rank(
        self,
        partition_by: Vec<String>,
        ranking: Ranking,
        number: Option<String>,
        schema: Vec<Field>,
        changelog: Changelog,
    ) -> Model {
        let input = self.schema();
        let state = State::Keyed(KeyedState::rank(&partition_by, &ranking, &input));
        let op = Operator::Rank {
            partition_by,
            ranking,
            number,
        };
        self.push(NodeKind::Rank, op, schema, changelog, state)
    }

    /// `ROW_NUMBER() OVER (PARTITION BY partition ORDER BY time) = 1` over the time
    /// attribute `time`, the row number not read: Flink's deduplication, keeping the last
    /// row when `descending`, else the first (docs/ranking.md). Keeping the last upserts by
    /// the partition; keeping the first appends.
    pub fn deduplicate_by_time(self, partition: &[&str], time: &str, descending: bool) -> Model {
        let input = self.schema();
        let ranking = Ranking {
            order: vec![SortKey {
                column: time.to_string(),
                descending,
            }],
            top: 1,
            strategy: RankStrategy::Deduplicate,
            window_end: None,
        };
        let partition: Vec<String> = partition.iter().map(|k| k.to_string()).collect();
        let changelog = if descending {
            Changelog::Upsert(partition.clone())
        } else {
            Changelog::Append
        };
        self.push_rank(partition, ranking, None, input, changelog)
    }

    /// An OVER aggregation over the time attribute: `calls` over `frame` per `partition`,
    /// appended after the input's columns (docs/over.md).
    pub fn over(
        self,
        partition: &[&str],
        unit: streamform_ir::FrameUnit,
        preceding: Option<u64>,
        calls: &[(AggFunc, Option<&str>)],
    ) -> Model {
        let input = self.schema();
        let time = self
            .last()
            .time
            .clone()
            .expect("an OVER aggregation needs a time attribute");
        let calls: Vec<AggCall> = calls
            .iter()
            .map(|(func, arg)| {
                let ty = func
                    .accumulator_type(arg.map(|c| {
                        input
                            .iter()
                            .find(|f| f.name == c)
                            .unwrap_or_else(|| panic!("no column `{c}`"))
                            .ty
                    }))
                    .unwrap_or_else(|| panic!("{} is not defined over {arg:?}", func.name()));
                AggCall {
                    func: *func,
                    arg: arg.map(String::from),
                    ty,
                }
            })
            .collect();
        let frame = streamform_ir::OverFrame {
            time: time.clone(),
            unit,
            preceding,
        };
        let partition: Vec<String> = partition.iter().map(|k| k.to_string()).collect();
        let mut schema = input.clone();
        schema.extend(calls.iter().map(|c| Field {
            name: c.name(),
            ty: c.ty,
            nullable: true,
        }));
        let state = State::Keyed(KeyedState::over(&partition, &frame, &calls));
        let op = Operator::Over {
            partition_by: partition,
            frame,
            calls,
        };
        let mut m = self.push(NodeKind::Over, op, schema, Changelog::Append, state);
        if let Some(n) = m.nodes.last_mut() {
            n.time = Some(time);
        }
        m
    }

    /// ORDER BY (column, descending).
    pub fn sort(self, keys: &[(&str, bool)]) -> Model {
        let keys = keys
            .iter()
            .map(|(c, d)| SortKey {
                column: c.to_string(),
                descending: *d,
            })
            .collect();
        let (schema, changelog) = (self.schema(), self.last().changelog.clone());
        self.push(
            NodeKind::Sort,
            Operator::Sort { keys },
            schema,
            changelog,
            State::Stateless,
        )
    }

    /// Ends the model in its Sink: upsert on the changelog's key when it is updating.
    pub fn sink(self) -> ModelPlan {
        let changelog = self.last().changelog.clone();
        let materialized = match &changelog {
            Changelog::Upsert(key) => Materialized::Upsert { key: key.clone() },
            _ => Materialized::Append,
        };
        let op = Operator::Sink {
            model: self.name.clone(),
            materialized,
            target: None,
        };
        let schema = self.schema();
        let time = self.last().time.clone();
        let mut m = self.push(NodeKind::Sink, op, schema, changelog, State::Stateless);
        if let Some(sink) = m.nodes.last_mut() {
            sink.time = time;
        }
        ModelPlan {
            name: m.name,
            inputs: m.inputs,
            nodes: m.nodes,
        }
    }
}

/// `left op right`, typed as the frontend types it (docs/sql.md).
pub fn bin(op: BinaryOp, left: Expr, right: Expr) -> Expr {
    let ty = match op {
        BinaryOp::Arith(a) => {
            arithmetic_type(a, left.data_type(), right.data_type()).expect("numeric operands")
        }
        _ => DataType::Boolean,
    };
    Expr::Binary {
        op,
        left: Box::new(left),
        right: Box::new(right),
        ty,
    }
}

pub fn gt(l: Expr, r: Expr) -> Expr {
    bin(BinaryOp::Gt, l, r)
}

pub fn is_not_null(e: Expr) -> Expr {
    Expr::IsNull {
        expr: Box::new(e),
        negated: true,
    }
}

pub fn lit_i32(v: i32) -> Expr {
    Expr::Literal {
        value: Value::Int32(v),
        ty: DataType::Int32,
    }
}

pub fn lit_i64(v: i64) -> Expr {
    Expr::Literal {
        value: Value::Int64(v),
        ty: DataType::Int64,
    }
}

/// Value helpers.
pub fn i32v(v: i32) -> Value {
    Value::Int32(v)
}

pub fn i64v(v: i64) -> Value {
    Value::Int64(v)
}

pub fn f64v(v: f64) -> Value {
    Value::Float64(F64(v))
}

pub fn s(v: &str) -> Value {
    Value::String(v.into())
}

/// A decimal at `scale` from a plain literal: `d("28", 9)` is 28.000000000.
pub fn d(text: &str, scale: u8) -> Value {
    Value::Decimal(
        Decimal::parse(text)
            .and_then(|x| x.rescale(scale))
            .expect("decimal literal"),
    )
}

pub const NULL: Value = Value::Null;

/// The docs' customer_metrics: `SELECT customer_id, SUM(amount) AS total_spend FROM
/// source('orders') GROUP BY customer_id`, amount as `amount_ty`.
pub fn customer_metrics(amount_ty: DataType) -> ModelPlan {
    from_source(
        "customer_metrics",
        "orders",
        &[("customer_id", DataType::Int64), ("amount", amount_ty)],
        kafka("orders"),
    )
    .aggregate(&["customer_id"], &[(AggFunc::Sum, Some("amount"))])
    .project(|m| {
        vec![
            (m.col("customer_id"), "customer_id"),
            (m.col("sum(amount)"), "total_spend"),
        ]
    })
    .sink()
}
