//! Pinning the plans Flink compiled for the example projects (`COMPILE PLAN ... FOR
//! STATEMENT SET` of what `build` generates, through the SQL Gateway of each proven Flink
//! version; the files are under `tests/data/compiled/<version>/`): every operator that may
//! hold state is told to be its Streamform node, and every stateful node that reaches a sink
//! is found (docs/deployment.md).
//!
//! The files must be compiled again when the generated SQL of a stateful node changes: a
//! changed call name or sink table makes these tests fail, which is the point.

mod common;

use std::collections::BTreeSet;

use common::repo_root;
use streamform_db::Database;
use streamform_db::db::application_plans;
use streamform_db::load::load_project;
use streamform_flink::compiled::{PinError, pin};
use streamform_flink::generate::operator_tables;
use streamform_ir::{Changelog, ModelPlan, NodeKind, Operator};

const VERSIONS: [&str; 2] = ["2.0", "2.2"];

fn plans(example: &str) -> Vec<ModelPlan> {
    let db = Database::default();
    let project = load_project(&db, &repo_root().join("examples").join(example)).unwrap();
    application_plans(&db, project)
        .clone()
        .expect("the example compiles")
}

fn compiled(version: &str, example: &str) -> String {
    let path = repo_root()
        .join("streamform/tests/data/compiled")
        .join(version)
        .join(format!("{example}.json"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The identities a pinned plan should hold: each source read (and an upsert source's
/// normalization), each model's sink, and each stateful node of a model whose rows reach a
/// sink (Flink plans nothing else).
fn expected(plans: &[ModelPlan], reaching: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for plan in plans.iter().filter(|p| reaching.contains(&p.name)) {
        for node in &plan.nodes {
            match (&node.op, node.id.kind) {
                (Operator::Source { name, .. }, _) => {
                    out.insert(streamform_flink::compiled::source_identity(name));
                    if matches!(node.changelog, Changelog::Upsert(_)) {
                        out.insert(streamform_flink::compiled::normalize_identity(name));
                    }
                }
                (
                    Operator::Sink {
                        target: Some(_), ..
                    },
                    _,
                ) => {
                    out.insert(node.id.to_string());
                }
                (
                    _,
                    NodeKind::Aggregate
                    | NodeKind::Window
                    | NodeKind::Deduplicate
                    | NodeKind::Join
                    | NodeKind::IntervalJoin
                    | NodeKind::Rank
                    | NodeKind::Over,
                ) => {
                    out.insert(node.id.to_string());
                }
                _ => {}
            }
        }
    }
    out
}

/// The models whose rows reach a sink: those with one and those they read.
fn reaching(plans: &[ModelPlan]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for plan in plans.iter().rev() {
        let sinks = matches!(
            plan.sink().op,
            Operator::Sink {
                target: Some(_),
                ..
            }
        );
        if sinks || out.contains(&plan.name) {
            out.insert(plan.name.clone());
            out.extend(plan.models_read().map(str::to_string));
        }
    }
    out
}

fn pins_every_stateful_node(example: &str) {
    pins_every_stateful_node_on(example, &VERSIONS);
}

fn pins_every_stateful_node_on(example: &str, versions: &[&str]) {
    let plans = plans(example);
    let tables = operator_tables(&plans);
    for &version in versions {
        let pinned = pin(&compiled(version, example), &plans, &tables, |id| {
            format!("sf/{id}")
        })
        .unwrap_or_else(|e| panic!("{example} on Flink {version}: {e}"));
        let got: BTreeSet<String> = pinned.operators.keys().cloned().collect();
        assert_eq!(
            got,
            expected(&plans, &reaching(&plans)),
            "{example} on {version}"
        );
        for (identity, uid) in &pinned.operators {
            assert_eq!(uid, &format!("sf/{identity}"));
            assert!(
                pinned
                    .plan
                    .contains(&format!("\"sf/{identity}_<transformation>\"")),
                "{identity} is pinned in the plan"
            );
        }
    }
}

/// The operator identities the example's plan compiled on `version` is pinned with.
fn identities(version: &str, example: &str) -> Vec<String> {
    let plans = plans(example);
    let pinned = pin(
        &compiled(version, example),
        &plans,
        &operator_tables(&plans),
        str::to_string,
    )
    .unwrap();
    pinned.operators.into_keys().collect()
}

#[test]
fn order_pipeline_pins_its_source_aggregate_and_sink() {
    pins_every_stateful_node("order-pipeline");
    assert_eq!(
        identities("2.0", "order-pipeline"),
        [
            "big_customers::sink::0",
            "customer_metrics::aggregate::0",
            "source:orders"
        ]
    );
}

#[test]
fn window_metrics_pins_every_window_both_halves_and_the_session() {
    pins_every_stateful_node("window-metrics");
    // The top per window is Flink's window rank, pinned as the Rank it stands for.
    for version in VERSIONS {
        assert!(
            compiled(version, "window-metrics").contains(r#""type":"stream-exec-window-rank_1""#),
            "on {version}"
        );
        assert!(
            identities(version, "window-metrics").contains(&"top_pages::rank::0".to_string()),
            "on {version}"
        );
    }
}

#[test]
fn coverage_pins_aggregates_and_the_last_row_deduplication_by_the_sinks_it_feeds() {
    pins_every_stateful_node("coverage");
}

/// An upsert source's scan and its changelog normalization are two identities; the
/// normalization every model reads and the aggregate two sinks share are each planned once
/// (the application has Flink 2.2 find the shared part, docs/flink-backend.md "Planner
/// options"). Flink 2.0 compiles no plan for this application: with that option its planner
/// fails ("belongs to a different planner"), and without it it plans the normalization
/// twice, which cannot be pinned.
#[test]
fn order_status_pins_its_upsert_source_normalization_apart_from_the_scan() {
    pins_every_stateful_node_on("order-status", &["2.2"]);
    assert_eq!(
        identities("2.2", "order-status"),
        [
            "big_orders::sink::0",
            "busy_statuses::sink::0",
            "latest_orders::sink::0",
            "normalize:orders",
            "source:orders",
            "status_counts::aggregate::0",
            "status_counts::sink::0"
        ]
    );
}

/// A UNION ALL is stateless: every source's scan, the aggregate and the window over the
/// union, each join (by the sinks it feeds), the upsert source's normalization and the sinks
/// are pinned.
#[test]
fn order_enrichment_pins_its_sources_and_joins() {
    pins_every_stateful_node_on("order-enrichment", &VERSIONS);
    for version in VERSIONS {
        assert_eq!(
            identities(version, "order-enrichment"),
            [
                "all_orders::sink::0",
                "channel_totals::aggregate::0",
                "channel_totals::sink::0",
                "enriched_orders::join::0",
                "enriched_orders::sink::0",
                "normalize:customer_tiers",
                "order_payments::aggregate::0",
                "order_payments::join::0",
                "order_payments::sink::0",
                "orders_per_minute::sink::0",
                "orders_per_minute::window::0",
                "source:app_orders",
                "source:customer_tiers",
                "source:customers",
                "source:payments",
                "source:web_orders",
                "tier_revenue::aggregate::0",
                "tier_revenue::join::0",
                "tier_revenue::sink::0"
            ],
            "{version}"
        );
    }
}

#[test]
fn a_plan_of_another_application_is_not_pinned_from_this_one() {
    // The order pipeline's compiled plan against the window example's plans: nothing in it
    // is a table or node of theirs.
    let plans = plans("window-metrics");
    let err = pin(
        &compiled("2.0", "order-pipeline"),
        &plans,
        &operator_tables(&plans),
        str::to_string,
    )
    .unwrap_err();
    let PinError::Unidentified(nodes) = err else {
        panic!("{err:?}")
    };
    assert_eq!(
        nodes
            .iter()
            .map(|n| n.split(" (").next().unwrap())
            .collect::<Vec<_>>(),
        [
            "stream-exec-table-source-scan",
            "stream-exec-group-aggregate",
            "stream-exec-sink"
        ]
    );
}

/// An interval join is pinned by the sinks it feeds, and so is the temporal join (whose
/// versioned side Flink reads through a changelog normalization that emits no old rows).
/// Flink 2.0 plans the join a window
/// model reads again in that model's query, and the copy is pinned towards the window's
/// sink alone; Flink 2.2 plans it once (the application reuses common parts).
#[test]
fn order_fulfilment_pins_its_interval_joins_and_the_copy_a_window_reads() {
    let shared = |shipped: &[&str]| -> Vec<String> {
        let mut all: Vec<String> = [
            "eur_revenue::aggregate::0",
            "eur_revenue::sink::0",
            "eur_revenue::temporal_join::0",
            "fulfilment_log::interval_join::0",
            "fulfilment_log::sink::0",
            "late_shipments::interval_join::0",
            "late_shipments::sink::0",
            "normalize:rates",
            "priced_orders::sink::0",
            "priced_orders::temporal_join::0",
            "shipments_per_hour::sink::0",
            "shipments_per_hour::window::0",
            "shipped_orders::sink::0",
            "source:orders",
            "source:rates",
            "source:shipments",
            "unordered_shipments::interval_join::0",
            "unordered_shipments::sink::0",
        ]
        .iter()
        .chain(shipped)
        .map(|s| s.to_string())
        .collect();
        all.sort();
        all
    };
    assert_eq!(
        identities("2.0", "order-fulfilment"),
        shared(&[
            "shipped_orders::interval_join::0@shipments_per_hour::sink::0",
            "shipped_orders::interval_join::0@shipped_orders::sink::0"
        ])
    );
    assert_eq!(
        identities("2.2", "order-fulfilment"),
        shared(&["shipped_orders::interval_join::0"])
    );
}

/// Each rank of top-products is pinned by the sinks it feeds, over an aggregate (two ranks
/// read one aggregate) and over the source.
#[test]
fn top_products_pins_its_ranks() {
    pins_every_stateful_node("top-products");
    for version in VERSIONS {
        let ranks: Vec<String> = identities(version, "top-products")
            .into_iter()
            .filter(|id| id.contains("::rank::"))
            .collect();
        assert_eq!(
            ranks,
            [
                "best_sellers::rank::0",
                "biggest_sale::rank::0",
                "largest_sales::rank::0",
                "top_product_ids::rank::0",
                "top_products::rank::0",
            ],
            "on {version}"
        );
        // The three ranks over the aggregate run Flink's retracting rank, which the
        // simulator follows, although each orders by a sum of positive amounts or a count
        // (docs/flink-backend.md, "Ranking").
        let plan = compiled(version, "top-products");
        assert_eq!(
            plan.matches(r#""rankStrategy":{"type":"Retract"}"#).count(),
            3,
            "on {version}"
        );
        assert!(!plan.contains("UpdateFast"), "on {version}");
    }
}

/// A deduplication keeping the first row by event time is Flink's deduplication operator,
/// pinned as the Rank it stands for. Only Flink 2.2 runs the application (docs/ranking.md).
/// Each OVER aggregation of running-totals is pinned by the sinks it feeds, one exec node
/// of Flink's per Over node.
#[test]
fn running_totals_pins_its_over_aggregations() {
    pins_every_stateful_node("running-totals");
    for version in VERSIONS {
        let plan = compiled(version, "running-totals");
        assert_eq!(
            plan.matches(r#""type":"stream-exec-over-aggregate_1""#)
                .count(),
            4,
            "on {version}"
        );
        let overs: Vec<String> = identities(version, "running-totals")
            .into_iter()
            .filter(|id| id.contains("::over::"))
            .collect();
        assert_eq!(
            overs,
            [
                "hourly_spend::over::0",
                "moving_average::over::0",
                "order_gaps::over::0",
                "running_totals::over::0"
            ],
            "on {version}"
        );
    }
}

#[test]
fn first_orders_pins_its_deduplication_as_its_rank() {
    pins_every_stateful_node_on("first-orders", &["2.2"]);
    let plan = compiled("2.2", "first-orders");
    assert!(plan.contains(r#""type":"stream-exec-deduplicate_1""#));
    assert!(plan.contains(r#""keepLastRow":false"#));
    assert_eq!(
        identities("2.2", "first-orders")
            .into_iter()
            .filter(|id| id.contains("::rank::"))
            .collect::<Vec<_>>(),
        ["first_orders::rank::0"]
    );
}
