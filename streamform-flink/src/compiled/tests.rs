//! Pinning on small plans shaped as Flink writes them; `streamform/tests/compiled.rs`
//! pins the plans Flink compiled for the example projects.

use super::*;

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
        input,
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
        ("stream-exec-rank_1", &[]),
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
            "stream-exec-rank (node 11)".into(),
            "stream-exec-group-aggregate (node 12)".into(),
            "stream-exec-sink (node 13)".into(),
        ])
    );
    assert!(err.to_string().contains("stream-exec-rank (node 11)"));
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
    two[2].input = Input::Model("other".into());
    assert_eq!(
        pin(&compiled, &two, &tables(), str::to_string),
        Err(PinError::Unidentified(vec![
            "stream-exec-deduplicate (node 11)".into()
        ]))
    );
}
