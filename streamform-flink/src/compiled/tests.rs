//! Pinning on small plans shaped as Flink writes them; `streamform/tests/compiled.rs`
//! pins the plans Flink compiled for the example projects.

use super::*;
use streamform_ir::Input;

/// A compiled plan of `nodes` (type, table or call names) joined in a line.
fn plan(nodes: &[(&str, &[&str])]) -> String {
    let nodes: Vec<Json> = nodes
        .iter()
        .enumerate()
        .map(|(i, (ty, extra))| {
            let mut n = serde_json::json!({"id": i + 10, "type": ty, "configuration": {}});
            if ty.starts_with("stream-exec-table-source-scan") {
                n["scanTableSource"] =
                    serde_json::json!({"table": {"identifier": format!("`c`.`d`.`{}`", extra[0])}});
            } else if ty.starts_with("stream-exec-sink") {
                n["dynamicTableSink"] =
                    serde_json::json!({"table": {"identifier": format!("`c`.`d`.`{}`", extra[0])}});
            } else if !extra.is_empty() {
                n["aggCalls"] = extra
                    .iter()
                    .map(|c| serde_json::json!({"name": c}))
                    .collect();
            }
            n
        })
        .collect();
    let edges: Vec<Json> = (0..nodes.len().saturating_sub(1))
        .map(|i| serde_json::json!({"source": i + 10, "target": i + 11}))
        .collect();
    serde_json::json!({"flinkVersion": "2.0", "nodes": nodes, "edges": edges}).to_string()
}

/// A model reading `input` whose nodes are `kinds` (their operators do not matter here),
/// ending in a Sink that declares a sink when `sink`.
fn model(name: &str, input: Input, kinds: &[NodeKind], sink: bool) -> ModelPlan {
    use streamform_ir::{
        Boundedness, Changelog, Connector, Materialized, Node, NodeId, SinkTarget, State,
    };
    let node = |kind: NodeKind, op: Operator| Node {
        inputs: Vec::new(),
        id: NodeId {
            model: name.into(),
            kind,
            ordinal: 0,
        },
        op,
        schema: Vec::new(),
        boundedness: Boundedness::Unbounded,
        changelog: Changelog::Append,
        state: State::Stateless,
        time: None,
    };
    let mut nodes: Vec<Node> = kinds
        .iter()
        .map(|k| node(*k, Operator::Deduplicate { key: Vec::new() }))
        .collect();
    nodes.push(node(
        NodeKind::Sink,
        Operator::Sink {
            model: name.into(),
            materialized: Materialized::Append,
            target: sink.then(|| SinkTarget {
                connector: Connector::Kafka { topic: name.into() },
                format: "json".into(),
            }),
        },
    ));
    ModelPlan {
        name: name.into(),
        inputs: vec![input],
        nodes,
    }
}

fn plans() -> Vec<ModelPlan> {
    vec![
        model(
            "totals",
            Input::Source("orders".into()),
            &[NodeKind::Aggregate],
            true,
        ),
        model(
            "w",
            Input::Source("orders".into()),
            &[NodeKind::Window],
            false,
        ),
    ]
}

fn tables() -> BTreeMap<String, String> {
    [
        ("orders_raw", "source:orders"),
        ("sink_totals", "totals::sink::0"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect()
}

fn uid_formats(pinned: &Pinned) -> Vec<Option<String>> {
    let plan: Json = serde_json::from_str(&pinned.plan).unwrap();
    plan["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            n["configuration"]["table.exec.uid.format"]
                .as_str()
                .map(str::to_string)
        })
        .collect()
}

#[test]
fn sources_sinks_and_tagged_aggregations_are_pinned_and_stateless_nodes_left_alone() {
    let compiled = plan(&[
        ("stream-exec-table-source-scan_1", &["orders_raw"]),
        ("stream-exec-calc_1", &[]),
        ("stream-exec-exchange_1", &[]),
        (
            "stream-exec-group-aggregate_1",
            &[
                "sum(amount) [totals::aggregate::0]",
                "count(*) [totals::aggregate::0]",
            ],
        ),
        ("stream-exec-sink_1", &["sink_totals"]),
    ]);
    let pinned = pin(&compiled, &plans(), &tables(), |id| format!("uid-{id}")).unwrap();
    assert_eq!(
        uid_formats(&pinned),
        [
            Some("uid-source:orders_<transformation>".to_string()),
            None,
            None,
            Some("uid-totals::aggregate::0_<transformation>".to_string()),
            Some("uid-totals::sink::0_<transformation>".to_string()),
        ]
    );
    assert_eq!(
        pinned.operators.keys().collect::<Vec<_>>(),
        ["source:orders", "totals::aggregate::0", "totals::sink::0"]
    );
}

#[test]
fn the_local_and_global_halves_of_a_window_share_its_identity() {
    let calls: &[&str] = &["count(*) [w::window::0]"];
    let compiled = plan(&[
        ("stream-exec-table-source-scan_1", &["orders_raw"]),
        ("stream-exec-local-window-aggregate_1", calls),
        ("stream-exec-exchange_1", &[]),
        ("stream-exec-global-window-aggregate_1", calls),
        ("stream-exec-sink_1", &["sink_totals"]),
    ]);
    let pinned = pin(&compiled, &plans(), &tables(), str::to_string).unwrap();
    let formats = uid_formats(&pinned);
    assert_eq!(formats[1], formats[3]);
    assert_eq!(formats[1].as_deref(), Some("w::window::0_<transformation>"));
}

#[test]
fn a_stateful_node_streamform_cannot_identify_is_named() {
    // A node type Streamform does not generate, a sink table it did not create, and an
    // aggregation whose calls name two nodes.
    let compiled = plan(&[
        ("stream-exec-table-source-scan_1", &["orders_raw"]),
        ("stream-exec-match_1", &[]),
        (
            "stream-exec-group-aggregate_1",
            &["sum(a) [x::aggregate::0]", "sum(b) [y::aggregate::0]"],
        ),
        ("stream-exec-sink_1", &["sink_elsewhere"]),
    ]);
    let err = pin(&compiled, &plans(), &tables(), str::to_string).unwrap_err();
    assert_eq!(
        err,
        PinError::Unidentified(vec![
            "stream-exec-match (node 11)".into(),
            "stream-exec-group-aggregate (node 12)".into(),
            "stream-exec-sink (node 13)".into(),
        ])
    );
    assert!(err.to_string().contains("stream-exec-match (node 11)"));
}

#[test]
fn what_is_not_a_compiled_plan_is_unreadable() {
    for text in ["", "[]", r#"{"nodes": [{"type": "x"}], "edges": []}"#] {
        assert!(
            matches!(
                pin(text, &plans(), &tables(), str::to_string),
                Err(PinError::Unreadable(_))
            ),
            "{text}"
        );
    }
    let dangling = r#"{"nodes": [], "edges": [{"source": 1, "target": 2}]}"#;
    assert!(matches!(
        pin(dangling, &plans(), &tables(), str::to_string),
        Err(PinError::Unreadable(_))
    ));
}

#[test]
fn a_tag_is_the_bracketed_node_id_at_the_end_of_a_call_name() {
    assert_eq!(
        call_tag("sum(amount) [m::aggregate::0]"),
        Some("m::aggregate::0")
    );
    assert_eq!(call_tag("max(a[1]) [m::window::0]"), Some("m::window::0"));
    assert_eq!(call_tag("sum(amount)"), None);
    assert_eq!(
        table_name("`default_catalog`.`default_database`.`sink_m`"),
        "sink_m"
    );
}

#[test]
fn an_untagged_stateful_node_is_the_one_node_of_its_kind_feeding_the_same_sinks() {
    let compiled = plan(&[
        ("stream-exec-table-source-scan_1", &["orders_raw"]),
        ("stream-exec-deduplicate_1", &[]),
        ("stream-exec-sink_1", &["sink_totals"]),
    ]);
    let deduplicating = vec![
        model(
            "latest",
            Input::Source("orders".into()),
            &[NodeKind::Deduplicate],
            false,
        ),
        model("totals", Input::Model("latest".into()), &[], true),
    ];
    let pinned = pin(&compiled, &deduplicating, &tables(), str::to_string).unwrap();
    assert_eq!(
        uid_formats(&pinned)[1].as_deref(),
        Some("latest::deduplicate::0_<transformation>")
    );
    // Two deduplications that feed the same sink: which is which cannot be told.
    let mut two = deduplicating.clone();
    two.insert(
        1,
        model(
            "other",
            Input::Model("latest".into()),
            &[NodeKind::Deduplicate],
            false,
        ),
    );
    two[2].inputs = vec![Input::Model("other".into())];
    assert_eq!(
        pin(&compiled, &two, &tables(), str::to_string),
        Err(PinError::Unidentified(vec![
            "stream-exec-deduplicate (node 11)".into()
        ]))
    );
}

/// A model reading the upsert source `orders` (keyed by `order_id`), its first node the
/// Source, then `kinds`, ending in a Sink that declares a sink.
fn upsert_reader(name: &str, kinds: &[NodeKind]) -> ModelPlan {
    use streamform_ir::{Changelog, Connector, KeyedState, State};
    let mut m = model(name, Input::Source("orders".into()), kinds, true);
    let mut source = m.nodes[0].clone();
    source.id.kind = NodeKind::Source;
    source.op = Operator::Source {
        name: "orders".into(),
        connector: Connector::Kafka {
            topic: "orders".into(),
        },
        format: "json".into(),
        event_time: None,
    };
    let key = vec!["order_id".to_string()];
    source.state = State::Keyed(KeyedState::last_row(&key, &source.schema));
    source.changelog = Changelog::Upsert(key);
    m.nodes.insert(0, source);
    m
}

/// An upsert source's scan, the changelog normalization behind it and a grouped aggregate,
/// shaped as Flink 2.2 compiles them (fields trimmed to what pinning reads and a few of the
/// rest).
const NORMALIZED: &str = r#"{
  "flinkVersion": "2.2",
  "nodes": [
    {"id": 1, "type": "stream-exec-table-source-scan_1",
     "scanTableSource": {"table": {"identifier": "`default_catalog`.`default_database`.`orders`",
       "resolvedTable": {"options": {"connector": "upsert-kafka", "topic": "orders"}}}},
     "outputType": "ROW<`amount` DECIMAL(10, 2), `order_id` BIGINT NOT NULL, `status` VARCHAR(2147483647)>"},
    {"id": 2, "type": "stream-exec-exchange_1",
     "inputProperties": [{"requiredDistribution": {"type": "HASH", "keys": [1]}}]},
    {"id": 3, "type": "stream-exec-changelog-normalize_1",
     "configuration": {"table.exec.mini-batch.enabled": "false", "table.exec.mini-batch.size": "-1"},
     "uniqueKeys": [1], "generateUpdateBefore": true,
     "state": [{"index": 0, "ttl": "0 ms", "name": "changelogNormalizeState"}]},
    {"id": 4, "type": "stream-exec-calc_1"},
    {"id": 5, "type": "stream-exec-exchange_1"},
    {"id": 6, "type": "stream-exec-group-aggregate_1", "configuration": {},
     "aggCalls": [{"name": "count(*) [status_counts::aggregate::0]"}],
     "needRetraction": true},
    {"id": 7, "type": "stream-exec-sink_1", "configuration": {},
     "dynamicTableSink": {"table": {"identifier": "`default_catalog`.`default_database`.`sink_status_counts`"}}}
  ],
  "edges": [
    {"source": 1, "target": 2, "shuffle": {"type": "FORWARD"}, "shuffleMode": "PIPELINED"},
    {"source": 2, "target": 3, "shuffle": {"type": "FORWARD"}, "shuffleMode": "PIPELINED"},
    {"source": 3, "target": 4, "shuffle": {"type": "FORWARD"}, "shuffleMode": "PIPELINED"},
    {"source": 4, "target": 5, "shuffle": {"type": "FORWARD"}, "shuffleMode": "PIPELINED"},
    {"source": 5, "target": 6, "shuffle": {"type": "FORWARD"}, "shuffleMode": "PIPELINED"},
    {"source": 6, "target": 7, "shuffle": {"type": "FORWARD"}, "shuffleMode": "PIPELINED"}
  ]
}"#;

#[test]
fn the_changelog_normalization_of_an_upsert_source_is_pinned_apart_from_its_scan() {
    let plans = vec![upsert_reader("status_counts", &[NodeKind::Aggregate])];
    let tables: BTreeMap<String, String> = [
        ("orders", "source:orders"),
        ("sink_status_counts", "status_counts::sink::0"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    let pinned = pin(NORMALIZED, &plans, &tables, |id| format!("uid-{id}")).unwrap();
    assert_eq!(
        uid_formats(&pinned),
        [
            Some("uid-source:orders_<transformation>".to_string()),
            None,
            Some("uid-normalize:orders_<transformation>".to_string()),
            None,
            None,
            Some("uid-status_counts::aggregate::0_<transformation>".to_string()),
            Some("uid-status_counts::sink::0_<transformation>".to_string()),
        ]
    );
    assert_eq!(
        pinned.operators.keys().collect::<Vec<_>>(),
        [
            "normalize:orders",
            "source:orders",
            "status_counts::aggregate::0",
            "status_counts::sink::0"
        ]
    );
    // Flink's own options on the node are kept beside the uid.
    let plan: Json = serde_json::from_str(&pinned.plan).unwrap();
    assert_eq!(
        plan["nodes"][2]["configuration"]["table.exec.mini-batch.enabled"],
        "false"
    );

    // A normalization over a source the application reads as append, or over no scan of
    // the application's, is not one Streamform generates.
    let append = vec![model(
        "status_counts",
        Input::Source("orders".into()),
        &[NodeKind::Aggregate],
        true,
    )];
    assert_eq!(
        pin(NORMALIZED, &append, &tables, str::to_string),
        Err(PinError::Unidentified(vec![
            "stream-exec-changelog-normalize (node 3)".into()
        ]))
    );
    let mut elsewhere = tables.clone();
    elsewhere.remove("orders");
    assert_eq!(
        pin(NORMALIZED, &plans, &elsewhere, str::to_string),
        Err(PinError::Unidentified(vec![
            "stream-exec-table-source-scan (node 1)".into(),
            "stream-exec-changelog-normalize (node 3)".into()
        ]))
    );
}

#[test]
fn one_node_planned_twice_is_named_rather_than_pinned_to_one_uid() {
    // Flink 2.2 without the shared part found first: the aggregate once per sink, each copy
    // with the calls its sink needs. One uid for both is refused by Flink.
    let compiled = plan(&[
        ("stream-exec-table-source-scan_1", &["orders_raw"]),
        (
            "stream-exec-group-aggregate_1",
            &[
                "count(*) [totals::aggregate::0]",
                "sum(amount) [totals::aggregate::0]",
            ],
        ),
        (
            "stream-exec-group-aggregate_1",
            &["count(*) [totals::aggregate::0]"],
        ),
        ("stream-exec-sink_1", &["sink_totals"]),
    ]);
    assert_eq!(
        pin(&compiled, &plans(), &tables(), str::to_string),
        Err(PinError::Unidentified(vec![
            "stream-exec-group-aggregate (node 11)".into(),
            "stream-exec-group-aggregate (node 12)".into(),
        ]))
    );
}

#[test]
fn state_reaching_two_sinks_is_what_has_flink_find_the_shared_part() {
    // `totals` has a sink; a second model with a sink reading it makes its aggregate reach
    // two sinks.
    assert!(!state_reaches_several_sinks(&plans()));
    let mut two = plans();
    two.push(model("big", Input::Model("totals".into()), &[], true));
    assert!(state_reaches_several_sinks(&two));
    // Two models with sinks reading one upsert source share its normalization.
    let upsert = vec![
        upsert_reader("a", &[]),
        upsert_reader("b", &[NodeKind::Filter]),
    ];
    assert!(state_reaches_several_sinks(&upsert));
    assert!(!state_reaches_several_sinks(&upsert[..1]));
}
