//! The simulator against hand-built plans: the docs' examples, the accumulator rules, null
//! keys, silent updates, errors naming model / column / event, Sort at the end of a
//! bounded input, the keyed store's shape, and determinism.

mod common;

use common::*;
use streamform_ir::types::ArithOp;
use streamform_ir::{
    AggFunc, BinaryOp, DataType, Expr, LateEvents, ModelPlan, NodeId, NodeKind, Value,
};
use streamform_sim::{Arrival, Change, Changelog, Failure, Op, Output, SimError, Simulator, run};

fn node(model: &str, kind: NodeKind, ordinal: u32) -> NodeId {
    NodeId {
        model: model.into(),
        kind,
        ordinal,
    }
}

/// The order-pipeline project of the docs: clean_orders → customer_metrics → big_customers.
fn order_pipeline() -> Vec<ModelPlan> {
    let clean = from_source(
        "clean_orders",
        "orders",
        &[
            ("order_id", DataType::Int64),
            ("customer_id", DataType::Int64),
            ("amount", DEC),
        ],
        kafka("orders"),
    )
    .filter(|m| is_not_null(m.col("customer_id")))
    .project(|m| {
        vec![
            (m.col("customer_id"), "customer_id"),
            (m.col("amount"), "amount"),
        ]
    })
    .sink();
    let metrics = from_model("customer_metrics", &clean)
        .aggregate(&["customer_id"], &[(AggFunc::Sum, Some("amount"))])
        .project(|m| {
            vec![
                (m.col("customer_id"), "customer_id"),
                (m.col("sum(amount)"), "total_spend"),
            ]
        })
        .sink();
    let big = from_model("big_customers", &metrics)
        .filter(|m| gt(m.col("total_spend"), lit_i32(100)))
        .sink();
    vec![clean, metrics, big]
}

fn order(id: i64, customer: Value, amount: &str) -> Vec<Value> {
    vec![i64v(id), customer, d(amount, 9)]
}

#[test]
fn customer_metrics_inserts_then_updates() {
    let out = changes(
        &[customer_metrics(DEC)],
        &[vec![i64v(42), d("10", 9)], vec![i64v(42), d("18", 9)]],
    );
    assert_eq!(
        out,
        vec![
            ins(vec![i64v(42), d("10", 9)]),
            upd(vec![i64v(42), d("10", 9)], vec![i64v(42), d("28", 9)]),
        ]
    );
    assert_eq!(out[1].row[1].render(), "28");
    let Value::Decimal(total) = &out[1].row[1] else {
        panic!("a decimal total")
    };
    assert_eq!(total.to_string(), "28.000000000");
}

#[test]
fn event_decimals_are_brought_to_the_column_scale() {
    // A decimal parsed at scale 0 is exactly the column's 10.000000000.
    let ten = Value::Decimal(streamform_ir::Decimal::parse("10").unwrap());
    let out = changes(&[customer_metrics(DEC)], &[vec![i64v(1), ten]]);
    assert_eq!(out, vec![ins(vec![i64v(1), d("10", 9)])]);
    // More fractional digits than the column holds is an error, never a rounding.
    let err = run(
        &[customer_metrics(dec_ty(12, 2))],
        &[vec![i64v(1), d("0.123", 3)]],
    )
    .unwrap_err();
    assert_eq!(err.column.as_deref(), Some("amount"));
    assert_eq!(err.event, 1);
    assert!(
        err.message.contains("does not fit decimal(12,2)"),
        "{}",
        err.message
    );
}

#[test]
fn ill_typed_and_short_events_are_refused() {
    let plan = [customer_metrics(DEC)];
    let err = run(&plan, &[vec![i64v(1), d("1", 9)], vec![s("x"), d("1", 9)]]).unwrap_err();
    assert_eq!(
        (err.model.as_str(), err.column.as_deref(), err.event),
        ("customer_metrics", Some("customer_id"), 2)
    );
    assert!(
        err.message.contains("expected int64, got \"x\""),
        "{}",
        err.message
    );
    let err = run(&plan, &[vec![i64v(1)]]).unwrap_err();
    assert_eq!(err.event, 1);
    assert_eq!(
        err.message,
        "the event has 1 values but source `orders` declares 2 columns"
    );
}

#[test]
fn filter_over_an_upsert_model_inserts_updates_and_deletes() {
    let chain = order_pipeline();
    let events = vec![
        order(1, i64v(42), "60"),
        order(2, NULL, "500"), // dropped by clean_orders
        order(3, i64v(42), "70"),
        order(4, i64v(7), "20"), // never above 100
        order(5, i64v(42), "10"),
        order(6, i64v(42), "-50"),
    ];
    assert_eq!(
        changes(&chain, &events),
        vec![
            ins(vec![i64v(42), d("130", 9)]),
            upd(vec![i64v(42), d("130", 9)], vec![i64v(42), d("140", 9)]),
            del(vec![i64v(42), d("140", 9)]),
        ]
    );
    // The model in between: every change of customer_metrics, the null customer excluded.
    assert_eq!(
        changes(&chain[..2], &events),
        vec![
            ins(vec![i64v(42), d("60", 9)]),
            upd(vec![i64v(42), d("60", 9)], vec![i64v(42), d("130", 9)]),
            ins(vec![i64v(7), d("20", 9)]),
            upd(vec![i64v(42), d("130", 9)], vec![i64v(42), d("140", 9)]),
            upd(vec![i64v(42), d("140", 9)], vec![i64v(42), d("90", 9)]),
        ]
    );
    // And the first model alone is append-only.
    let first = changes(&chain[..1], &events);
    assert_eq!(first.len(), 5);
    assert!(
        first
            .iter()
            .all(|c| c.op == Op::Insert && c.before.is_none())
    );
    assert_eq!(first[1], ins(vec![i64v(42), d("70", 9)]));
}

#[test]
fn a_row_reentering_the_filter_is_inserted_again() {
    let chain = order_pipeline();
    let events = vec![
        order(1, i64v(1), "150"),
        order(2, i64v(1), "-100"),
        order(3, i64v(1), "100"),
    ];
    assert_eq!(
        changes(&chain, &events),
        vec![
            ins(vec![i64v(1), d("150", 9)]),
            del(vec![i64v(1), d("150", 9)]),
            ins(vec![i64v(1), d("150", 9)]),
        ]
    );
}

#[test]
fn an_update_that_changes_nothing_is_not_emitted() {
    // docs/concepts.md: a SUM of 0 ...
    let out = changes(
        &[customer_metrics(DEC)],
        &[
            vec![i64v(42), d("10", 9)],
            vec![i64v(42), d("0", 9)],
            vec![i64v(42), NULL],
            vec![i64v(42), d("1", 9)],
        ],
    );
    assert_eq!(
        out,
        vec![
            ins(vec![i64v(42), d("10", 9)]),
            upd(vec![i64v(42), d("10", 9)], vec![i64v(42), d("11", 9)])
        ]
    );
    // ... a MIN above the minimum ...
    let plan = from_source(
        "m",
        "t",
        &[("k", DataType::Int64), ("v", DataType::Int32)],
        kafka("t"),
    )
    .aggregate(&["k"], &[(AggFunc::Min, Some("v"))])
    .sink();
    let out = changes(
        &[plan],
        &[
            vec![i64v(1), i32v(5)],
            vec![i64v(1), i32v(7)],
            vec![i64v(1), i32v(5)],
        ],
    );
    assert_eq!(out, vec![ins(vec![i64v(1), i32v(5)])]);
    // ... but a count(*) beside the SUM changes on every row.
    let plan = from_source("m", "t", &[("k", DataType::Int64), ("v", DEC)], kafka("t"))
        .aggregate(&["k"], &[(AggFunc::Sum, Some("v")), (AggFunc::Count, None)])
        .sink();
    let out = changes(
        &[plan],
        &[vec![i64v(1), d("3", 9)], vec![i64v(1), d("0", 9)]],
    );
    assert_eq!(
        out,
        vec![
            ins(vec![i64v(1), d("3", 9), i64v(1)]),
            upd(
                vec![i64v(1), d("3", 9), i64v(1)],
                vec![i64v(1), d("3", 9), i64v(2)]
            ),
        ]
    );
}

#[test]
fn a_project_passes_updates_on_even_when_the_images_are_equal() {
    let plan = from_source(
        "m",
        "t",
        &[("k", DataType::Int64), ("v", DataType::Int64)],
        kafka("t"),
    )
    .aggregate(&["k"], &[(AggFunc::Count, None)])
    .project(|m| vec![(m.col("k"), "k")])
    .sink();
    let out = changes(&[plan], &[vec![i64v(1), i64v(0)], vec![i64v(1), i64v(0)]]);
    assert_eq!(
        out,
        vec![ins(vec![i64v(1)]), upd(vec![i64v(1)], vec![i64v(1)])]
    );
}

#[test]
fn count_star_counts_rows_and_count_x_counts_non_null_values() {
    let plan = from_source(
        "m",
        "t",
        &[("k", DataType::Int64), ("v", DataType::String)],
        kafka("t"),
    )
    .aggregate(
        &["k"],
        &[(AggFunc::Count, None), (AggFunc::Count, Some("v"))],
    )
    .sink();
    let out = changes(
        &[plan],
        &[
            vec![i64v(1), NULL],
            vec![i64v(1), s("a")],
            vec![i64v(1), NULL],
        ],
    );
    assert_eq!(
        out,
        vec![
            ins(vec![i64v(1), i64v(1), i64v(0)]),
            upd(
                vec![i64v(1), i64v(1), i64v(0)],
                vec![i64v(1), i64v(2), i64v(1)]
            ),
            upd(
                vec![i64v(1), i64v(2), i64v(1)],
                vec![i64v(1), i64v(3), i64v(1)]
            ),
        ]
    );
}

#[test]
fn min_and_max_keep_the_argument_type() {
    let plan = from_source(
        "m",
        "t",
        &[
            ("k", DataType::Int64),
            ("v", DataType::Int32),
            ("name", DataType::String),
        ],
        kafka("t"),
    )
    .aggregate(
        &["k"],
        &[
            (AggFunc::Min, Some("v")),
            (AggFunc::Max, Some("v")),
            (AggFunc::Min, Some("name")),
            (AggFunc::Max, Some("name")),
        ],
    )
    .sink();
    let out = changes(
        &[plan],
        &[
            vec![i64v(1), i32v(5), s("m")],
            vec![i64v(1), i32v(3), NULL],
            vec![i64v(1), i32v(9), s("z")],
            vec![i64v(1), i32v(4), s("n")], // inside [3, 9] and [m, z]: nothing
            vec![i64v(1), NULL, s("a")],
        ],
    );
    assert_eq!(
        out,
        vec![
            ins(vec![i64v(1), i32v(5), i32v(5), s("m"), s("m")]),
            upd(
                vec![i64v(1), i32v(5), i32v(5), s("m"), s("m")],
                vec![i64v(1), i32v(3), i32v(5), s("m"), s("m")]
            ),
            upd(
                vec![i64v(1), i32v(3), i32v(5), s("m"), s("m")],
                vec![i64v(1), i32v(3), i32v(9), s("m"), s("z")]
            ),
            upd(
                vec![i64v(1), i32v(3), i32v(9), s("m"), s("z")],
                vec![i64v(1), i32v(3), i32v(9), s("a"), s("z")]
            ),
        ]
    );
}

#[test]
fn sum_over_only_nulls_is_null_and_int32_sums_as_int64() {
    let plan = from_source(
        "m",
        "t",
        &[
            ("k", DataType::Int64),
            ("v", DataType::Int32),
            ("f", DataType::Float64),
        ],
        kafka("t"),
    )
    .aggregate(
        &["k"],
        &[(AggFunc::Sum, Some("v")), (AggFunc::Sum, Some("f"))],
    )
    .sink();
    let out = changes(
        &[plan],
        &[
            vec![i64v(1), NULL, NULL],
            vec![i64v(1), NULL, NULL],
            vec![i64v(1), i32v(i32::MAX), f64v(1.5)],
            vec![i64v(1), i32v(i32::MAX), NULL],
        ],
    );
    let big = i64::from(i32::MAX);
    assert_eq!(
        out,
        vec![
            ins(vec![i64v(1), NULL, NULL]),
            upd(
                vec![i64v(1), NULL, NULL],
                vec![i64v(1), i64v(big), f64v(1.5)]
            ),
            upd(
                vec![i64v(1), i64v(big), f64v(1.5)],
                vec![i64v(1), i64v(2 * big), f64v(1.5)]
            ),
        ]
    );
}

#[test]
fn avg_follows_flinks_result_types_and_ignores_nulls() {
    let plan = from_source(
        "m",
        "t",
        &[
            ("k", DataType::Int64),
            ("i", DataType::Int32),
            ("b", DataType::Int64),
            ("f", DataType::Float64),
            ("d", dec_ty(10, 2)),
        ],
        kafka("t"),
    )
    .aggregate(
        &["k"],
        &[
            (AggFunc::Avg, Some("i")),
            (AggFunc::Avg, Some("b")),
            (AggFunc::Avg, Some("f")),
            (AggFunc::Avg, Some("d")),
        ],
    )
    .sink();
    let out = changes(
        &[plan],
        &[
            vec![i64v(1), NULL, NULL, NULL, NULL],
            vec![i64v(1), i32v(1), i64v(-1), f64v(1.0), d("1.25", 2)],
            vec![i64v(1), i32v(2), i64v(-2), f64v(2.5), d("2.5", 2)],
            vec![i64v(1), i32v(2), i64v(-2), f64v(0.5), d("1", 2)],
        ],
    );
    // Integers divide truncating toward zero (5/3 is 1, -5/3 is -1); a decimal(10,2)
    // averages at decimal(38,6), rounded half away from zero (4.75/3 = 1.583333).
    assert_eq!(
        out,
        vec![
            ins(vec![i64v(1), NULL, NULL, NULL, NULL]),
            upd(
                vec![i64v(1), NULL, NULL, NULL, NULL],
                vec![i64v(1), i32v(1), i64v(-1), f64v(1.0), d("1.25", 6)]
            ),
            upd(
                vec![i64v(1), i32v(1), i64v(-1), f64v(1.0), d("1.25", 6)],
                vec![i64v(1), i32v(1), i64v(-1), f64v(1.75), d("1.875", 6)]
            ),
            upd(
                vec![i64v(1), i32v(1), i64v(-1), f64v(1.75), d("1.875", 6)],
                vec![
                    i64v(1),
                    i32v(1),
                    i64v(-1),
                    f64v(4.0 / 3.0),
                    d("1.583333", 6)
                ]
            ),
        ]
    );
}

#[test]
fn an_avg_that_does_not_move_emits_nothing_though_its_sum_and_count_do() {
    let plan = from_source(
        "m",
        "t",
        &[("k", DataType::Int64), ("v", DataType::Int64)],
        kafka("t"),
    )
    .aggregate(&["k"], &[(AggFunc::Avg, Some("v"))])
    .sink();
    let events = [
        vec![i64v(1), i64v(2)],
        vec![i64v(1), i64v(2)],
        vec![i64v(1), i64v(3)],
        vec![i64v(1), i64v(5)],
    ];
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    for e in &events {
        sim.push(e).unwrap();
    }
    // The keyed state reads as the results; the sum and count behind them stay inside.
    assert_eq!(
        sim.keyed_state(&node("m", NodeKind::Aggregate, 0)).unwrap(),
        vec![(vec![i64v(1)], vec![i64v(3)])]
    );
    // 2, 2, 7/3 = 2: one insert; 12/4 = 3: one update.
    assert_eq!(
        sim.finish().unwrap().changes.to_vec(),
        vec![
            ins(vec![i64v(1), i64v(2)]),
            upd(vec![i64v(1), i64v(2)], vec![i64v(1), i64v(3)])
        ]
    );
}

#[test]
fn count_distinct_counts_each_non_null_value_once_per_key() {
    let plan = from_source(
        "m",
        "t",
        &[("k", DataType::Int64), ("v", DataType::String)],
        kafka("t"),
    )
    .aggregate(
        &["k"],
        &[(AggFunc::CountDistinct, Some("v")), (AggFunc::Count, None)],
    )
    .sink();
    let out = changes(
        std::slice::from_ref(&plan),
        &[
            vec![i64v(1), s("a")],
            vec![i64v(2), s("a")],
            vec![i64v(1), NULL],
            vec![i64v(1), s("a")],
            vec![i64v(1), s("b")],
        ],
    );
    assert_eq!(
        out,
        vec![
            ins(vec![i64v(1), i64v(1), i64v(1)]),
            ins(vec![i64v(2), i64v(1), i64v(1)]),
            upd(
                vec![i64v(1), i64v(1), i64v(1)],
                vec![i64v(1), i64v(1), i64v(2)]
            ),
            upd(
                vec![i64v(1), i64v(1), i64v(2)],
                vec![i64v(1), i64v(1), i64v(3)]
            ),
            upd(
                vec![i64v(1), i64v(1), i64v(3)],
                vec![i64v(1), i64v(2), i64v(4)]
            ),
        ]
    );
    // Alone, a count(distinct x) that meets a value again emits nothing.
    let plan = from_source(
        "m",
        "t",
        &[("k", DataType::Int64), ("v", DataType::String)],
        kafka("t"),
    )
    .aggregate(&["k"], &[(AggFunc::CountDistinct, Some("v"))])
    .sink();
    let out = changes(
        &[plan],
        &[
            vec![i64v(1), s("a")],
            vec![i64v(1), s("a")],
            vec![i64v(1), NULL],
        ],
    );
    assert_eq!(out, vec![ins(vec![i64v(1), i64v(1)])]);
    // As Flink's distinct keys (Double.equals): 0.0 and -0.0 are two values, NaN one.
    let plan = from_source(
        "m",
        "t",
        &[("k", DataType::Int64), ("f", DataType::Float64)],
        kafka("t"),
    )
    .aggregate(&["k"], &[(AggFunc::CountDistinct, Some("f"))])
    .sink();
    let out = changes(
        &[plan],
        &[
            vec![i64v(1), f64v(0.0)],
            vec![i64v(1), f64v(-0.0)],
            vec![i64v(1), f64v(f64::NAN)],
            vec![i64v(1), f64v(-f64::NAN)],
        ],
    );
    assert_eq!(
        out.last(),
        Some(&upd(vec![i64v(1), i64v(2)], vec![i64v(1), i64v(3)]))
    );
}

#[test]
fn an_interval_moves_a_timestamp_months_on_the_calendar_and_overflows_past_9999() {
    let at = |s: &str| Value::Timestamp(streamform_ir::time::parse_sql_timestamp(s).unwrap());
    let plan = from_source("m", "t", &[("ts", DataType::Timestamp)], kafka("t"))
        .project(|m| {
            let by = |months, millis| Expr::PlusInterval {
                expr: Box::new(m.col("ts")),
                interval: streamform_ir::Interval { months, millis },
            };
            vec![(by(1, 0), "next_month"), (by(0, -1_250), "earlier")]
        })
        .sink();
    let out = changes(
        std::slice::from_ref(&plan),
        &[vec![at("2024-01-31 10:00:00.5")], vec![NULL]],
    );
    assert_eq!(
        out,
        vec![
            ins(vec![
                at("2024-02-29 10:00:00.5"),
                at("2024-01-31 09:59:59.25")
            ]),
            ins(vec![NULL, NULL]),
        ]
    );
    let err = run(&[plan], &[vec![at("9999-12-31 00:00:00")]]).unwrap_err();
    assert_eq!(
        (err.failure, err.column.as_deref(), err.event),
        (Failure::TimeRange, Some("next_month"), 1)
    );
    assert_eq!(
        err.message,
        "the timestamp falls outside the years 1 to 9999"
    );
}

#[test]
fn a_window_that_would_end_after_the_year_9999_stops_the_run() {
    let at = |s: &str| Value::Timestamp(streamform_ir::time::parse_rfc3339(s).unwrap());
    for kind in [
        streamform_ir::WindowKind::Tumble { size: 86_400_000 },
        streamform_ir::WindowKind::Session { gap: 86_400_000 },
    ] {
        let plan = from_source(
            "w",
            "views",
            &[("k", DataType::String), ("ts", DataType::Timestamp)],
            kafka("views"),
        )
        .event_time("ts", 0, LateEvents::Drop)
        .window(
            kind,
            &["k", "window_start", "window_end"],
            &[(AggFunc::Count, None)],
        )
        .sink();
        let events = [
            vec![s("a"), at("9999-12-30T12:00:00Z")],
            vec![s("a"), at("9999-12-31T12:00:00Z")],
        ];
        let err = run(&[plan], &events).unwrap_err();
        assert_eq!(
            (err.failure, err.column.as_deref(), err.event),
            (Failure::TimeRange, Some("ts"), 2),
            "{kind}"
        );
        assert_eq!(
            err.message,
            "the event's window ends after the year 9999, which a timestamp cannot hold"
        );
    }
}

#[test]
fn null_grouping_values_form_their_own_group() {
    let plan = from_source(
        "m",
        "t",
        &[("k", DataType::String), ("v", DataType::Int64)],
        kafka("t"),
    )
    .aggregate(&["k"], &[(AggFunc::Sum, Some("v"))])
    .sink();
    let events = [
        vec![NULL, i64v(1)],
        vec![s("a"), i64v(2)],
        vec![NULL, i64v(3)],
    ];
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    for e in &events {
        sim.push(e).unwrap();
    }
    assert_eq!(
        sim.keyed_state(&node("m", NodeKind::Aggregate, 0)).unwrap(),
        vec![(vec![NULL], vec![i64v(4)]), (vec![s("a")], vec![i64v(2)])]
    );
    assert_eq!(
        sim.finish().unwrap().changes.to_vec(),
        vec![
            ins(vec![NULL, i64v(1)]),
            ins(vec![s("a"), i64v(2)]),
            upd(vec![NULL, i64v(1)], vec![NULL, i64v(4)])
        ]
    );
}

#[test]
fn a_decimal_sum_beyond_38_digits_is_an_overflow_naming_model_column_and_event() {
    let nines = "9".repeat(36) + ".99"; // 38 digits: the largest decimal(38,2)
    let plan = [customer_metrics(dec_ty(38, 2))];
    let events = [
        vec![i64v(1), d(&nines, 2)],
        vec![i64v(2), d("5", 2)],
        vec![i64v(1), d("0.01", 2)],
    ];
    let mut sim = Simulator::new(&plan).unwrap();
    sim.push(&events[0]).unwrap();
    sim.push(&events[1]).unwrap();
    let err = sim.push(&events[2]).unwrap_err();
    assert_eq!(
        err,
        SimError {
            failure: Failure::Overflow,
            model: "customer_metrics".into(),
            column: Some("sum(amount)".into()),
            event: 3,
            message: "arithmetic overflow".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        "model `customer_metrics`, column `sum(amount)`, event 3: arithmetic overflow"
    );
    // The run is over: later calls repeat the error.
    assert_eq!(sim.push(&events[1]).unwrap_err(), err);
    assert_eq!(sim.finish().unwrap_err(), err);
    // The largest value itself is fine, and so is a negative one of the same size.
    let ok = changes(
        &plan,
        &[
            vec![i64v(1), d(&nines, 2)],
            vec![i64v(1), d(&format!("-{nines}"), 2)],
        ],
    );
    assert_eq!(ok[1].row[1], d("0", 2));
}

#[test]
fn an_int64_sum_overflows_rather_than_wrapping() {
    let plan = from_source("m", "t", &[("v", DataType::Int64)], kafka("t"))
        .aggregate(&[], &[(AggFunc::Sum, Some("v"))])
        .sink();
    let err = run(&[plan], &[vec![i64v(i64::MAX)], vec![i64v(1)]]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "model `m`, column `sum(v)`, event 2: arithmetic overflow"
    );
}

#[test]
fn division_by_zero_in_a_projection_names_the_column() {
    let plan = from_source(
        "ratios",
        "t",
        &[("a", DataType::Int64), ("b", DataType::Int64)],
        kafka("t"),
    )
    .project(|m| {
        vec![
            (m.col("a"), "a"),
            (
                bin(BinaryOp::Arith(ArithOp::Div), m.col("a"), m.col("b")),
                "ratio",
            ),
        ]
    })
    .sink();
    let chain = [plan];
    assert_eq!(
        changes(&chain, &[vec![i64v(7), i64v(2)]]),
        vec![ins(vec![i64v(7), i64v(3)])]
    );
    let err = run(&chain, &[vec![i64v(7), i64v(2)], vec![i64v(1), i64v(0)]]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "model `ratios`, column `ratio`, event 2: division by zero"
    );
    // A null divisor is a null result, not an error.
    assert_eq!(
        changes(&chain, &[vec![i64v(1), NULL]]),
        vec![ins(vec![i64v(1), NULL])]
    );
}

#[test]
fn division_by_zero_in_a_filter_names_the_predicate() {
    let plan = from_source("f", "t", &[("amount", DataType::Int64)], kafka("t"))
        .filter(|m| {
            gt(
                bin(BinaryOp::Arith(ArithOp::Div), m.col("amount"), lit_i64(0)),
                lit_i64(1),
            )
        })
        .sink();
    let err = run(&[plan], &[vec![i64v(5)]]).unwrap_err();
    assert_eq!(err.column.as_deref(), Some("((amount / 0) > 1)"));
    assert_eq!(
        err.to_string(),
        "model `f`, column `((amount / 0) > 1)`, event 1: division by zero"
    );
}

#[test]
fn int32_arithmetic_overflows() {
    let plan = from_source("m", "t", &[("qty", DataType::Int32)], kafka("t"))
        .project(|m| {
            vec![(
                bin(BinaryOp::Arith(ArithOp::Add), m.col("qty"), lit_i32(1)),
                "next",
            )]
        })
        .sink();
    let chain = [plan];
    assert_eq!(
        changes(&chain, &[vec![i32v(41)]]),
        vec![ins(vec![i32v(42)])]
    );
    let err = run(&chain, &[vec![i32v(1)], vec![i32v(i32::MAX)]]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "model `m`, column `next`, event 2: arithmetic overflow"
    );
    // Negation of the smallest int32 overflows too.
    let plan = from_source("m", "t", &[("qty", DataType::Int32)], kafka("t"))
        .project(|m| vec![(Expr::Negative(Box::new(m.col("qty"))), "neg")])
        .sink();
    let err = run(&[plan], &[vec![i32v(i32::MIN)]]).unwrap_err();
    assert_eq!(
        (err.column.as_deref(), err.message.as_str()),
        (Some("neg"), "arithmetic overflow")
    );
}

#[test]
fn a_having_filter_turns_crossing_the_threshold_into_an_insert() {
    // SELECT customer_id, COUNT(*) AS orders, SUM(amount) AS total FROM source('orders')
    // GROUP BY customer_id HAVING COUNT(*) >= 2
    let plan = from_source(
        "repeat",
        "orders",
        &[("customer_id", DataType::Int64), ("amount", dec_ty(10, 2))],
        kafka("orders"),
    )
    .aggregate(
        &["customer_id"],
        &[(AggFunc::Count, None), (AggFunc::Sum, Some("amount"))],
    )
    .filter(|m| bin(BinaryOp::GtEq, m.col("count(*)"), lit_i32(2)))
    .project(|m| {
        vec![
            (m.col("customer_id"), "customer_id"),
            (m.col("count(*)"), "orders"),
            (m.col("sum(amount)"), "total"),
        ]
    })
    .sink();
    let out = changes(
        &[plan],
        &[
            vec![i64v(1), d("1.50", 2)],
            vec![i64v(2), d("4", 2)],
            vec![i64v(1), d("2.25", 2)],
            vec![i64v(1), NULL],
        ],
    );
    assert_eq!(
        out,
        vec![
            ins(vec![i64v(1), i64v(2), d("3.75", 2)]),
            upd(
                vec![i64v(1), i64v(2), d("3.75", 2)],
                vec![i64v(1), i64v(3), d("3.75", 2)]
            ),
        ]
    );
}

#[test]
fn a_global_aggregate_is_one_row_that_keeps_changing() {
    let plan = from_source(
        "totals",
        "orders",
        &[("amount", dec_ty(12, 2))],
        kafka("orders"),
    )
    .aggregate(
        &[],
        &[(AggFunc::Count, None), (AggFunc::Sum, Some("amount"))],
    )
    .sink();
    let chain = [plan];
    assert_eq!(
        changes(&chain, &[vec![d("1", 2)], vec![d("2.5", 2)]]),
        vec![
            ins(vec![i64v(1), d("1", 2)]),
            upd(vec![i64v(1), d("1", 2)], vec![i64v(2), d("3.5", 2)])
        ]
    );
    // Streaming Flink emits nothing for an empty input.
    assert_eq!(
        run(&chain, &[]).unwrap(),
        Output {
            changes: Changelog::default(),
            events_processed: 0,
            open_windows: Vec::new(),
            waiting_rows: Vec::new(),
            dropped_rows: Vec::new(),
            padded: Vec::new(),
        }
    );
}

#[test]
fn sort_over_a_bounded_source_emits_sorted_rows_when_the_input_ends() {
    let plan = from_source(
        "sorted",
        "orders",
        &[("id", DataType::Int64), ("amount", dec_ty(10, 2))],
        file("orders.json"),
    )
    .sort(&[("amount", true), ("id", false)])
    .sink();
    let chain = [plan];
    let events = [
        vec![i64v(1), d("5", 2)],
        vec![i64v(2), NULL],
        vec![i64v(3), d("7.5", 2)],
        vec![i64v(4), d("5", 2)],
        vec![i64v(0), d("5", 2)],
    ];
    let mut sim = Simulator::new(&chain).unwrap();
    for e in &events {
        sim.push(e).unwrap();
    }
    let out = sim.finish().unwrap();
    assert_eq!(out.events_processed, 5);
    let ids: Vec<Value> = out.changes.iter().map(|c| c.row[0].clone()).collect();
    // amount DESC (nulls last), then id ASC.
    assert_eq!(ids, vec![i64v(3), i64v(0), i64v(1), i64v(4), i64v(2)]);
    assert!(out.changes.iter().all(|c| c.op == Op::Insert));

    // Ascending puts nulls first; ties keep arrival order.
    let plan = from_source(
        "sorted",
        "orders",
        &[("id", DataType::Int64), ("amount", dec_ty(10, 2))],
        file("orders.json"),
    )
    .sort(&[("amount", false)])
    .sink();
    let out = changes(&[plan], &events);
    let ids: Vec<Value> = out.iter().map(|c| c.row[0].clone()).collect();
    assert_eq!(ids, vec![i64v(2), i64v(1), i64v(4), i64v(0), i64v(3)]);
}

#[test]
fn sort_rows_flow_through_the_rest_of_the_chain_at_the_end() {
    let sorted = from_source(
        "sorted",
        "orders",
        &[("id", DataType::Int64), ("amount", DataType::Int64)],
        file("o.json"),
    )
    .sort(&[("id", false)])
    .sink();
    let per_row = from_model("running", &sorted)
        .project(|m| {
            vec![
                (m.col("id"), "id"),
                (
                    bin(BinaryOp::Arith(ArithOp::Div), lit_i64(100), m.col("amount")),
                    "share",
                ),
            ]
        })
        .sink();
    let chain = [sorted, per_row];
    assert_eq!(
        changes(&chain, &[vec![i64v(2), i64v(50)], vec![i64v(1), i64v(10)]]),
        vec![ins(vec![i64v(1), i64v(10)]), ins(vec![i64v(2), i64v(2)])]
    );
    // An error while the sorted rows flow names the number of events delivered.
    let err = run(
        &chain,
        &[
            vec![i64v(2), i64v(0)],
            vec![i64v(1), i64v(10)],
            vec![i64v(3), i64v(1)],
        ],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "model `running`, column `share`, event 3: division by zero"
    );
}

#[test]
fn sort_over_an_unbounded_input_is_refused() {
    let plan = from_source(
        "sorted",
        "orders",
        &[("id", DataType::Int64)],
        kafka("orders"),
    )
    .sort(&[("id", false)])
    .sink();
    let err = Simulator::new(&[plan]).err().expect("refused");
    assert_eq!(err.event, 0);
    assert_eq!(err.model, "sorted");
    assert!(err.message.contains("unbounded"), "{}", err.message);
}

/// Whether `v` is a value of `ty` (or null).
fn has_type(v: &Value, ty: DataType) -> bool {
    match (v, ty) {
        (Value::Null, _) => true,
        (Value::Int32(_), DataType::Int32)
        | (Value::Int64(_), DataType::Int64)
        | (Value::Float64(_), DataType::Float64)
        | (Value::String(_), DataType::String)
        | (Value::Boolean(_), DataType::Boolean)
        | (Value::Timestamp(_), DataType::Timestamp) => true,
        (Value::Decimal(d), DataType::Decimal { precision, scale }) => {
            d.scale == scale && d.fit(precision, scale).is_ok()
        }
        _ => false,
    }
}

#[test]
fn the_keyed_store_is_shaped_exactly_like_the_fingerprint() {
    let plan = from_source(
        "shape",
        "orders",
        &[
            ("customer_id", DataType::Int64),
            ("amount", dec_ty(10, 2)),
            ("qty", DataType::Int32),
            ("rate", DataType::Float64),
        ],
        kafka("orders"),
    )
    .aggregate(
        &["customer_id"],
        &[
            (AggFunc::Sum, Some("amount")),
            (AggFunc::Count, None),
            (AggFunc::Count, Some("amount")),
            (AggFunc::Min, Some("amount")),
            (AggFunc::Max, Some("qty")),
            (AggFunc::Sum, Some("qty")),
            (AggFunc::Sum, Some("rate")),
        ],
    )
    .sink();
    let agg = plan.nodes[1].clone();
    let streamform_ir::State::Keyed(keyed) = &agg.state else {
        panic!("keyed")
    };
    assert_eq!(
        streamform_ir::identity::state_fingerprint(agg.id.kind, keyed),
        "aggregate key=[customer_id] accumulators=[sum(amount): decimal(38,2), count(*): int64, \
         count(amount): int64, min(amount): decimal(10,2), max(qty): int32, sum(qty): int64, \
         sum(rate): float64] retention=unbounded"
    );
    let mut sim = Simulator::new(&[plan]).unwrap();
    sim.push(&[i64v(7), d("12.5", 2), i32v(3), f64v(0.25)])
        .unwrap();
    sim.push(&[i64v(7), d("0.75", 2), i32v(4), f64v(0.5)])
        .unwrap();
    sim.push(&[i64v(3), NULL, NULL, NULL]).unwrap();
    let state = sim.keyed_state(&agg.id).expect("the aggregate is keyed");
    assert_eq!(
        state,
        vec![
            (
                vec![i64v(3)],
                vec![NULL, i64v(1), i64v(0), NULL, NULL, NULL, NULL]
            ),
            (
                vec![i64v(7)],
                vec![
                    d("13.25", 2),
                    i64v(2),
                    i64v(2),
                    d("0.75", 2),
                    i32v(4),
                    i64v(7),
                    f64v(0.75)
                ]
            ),
        ]
    );
    for (key, accs) in &state {
        assert!(has_type(&key[0], DataType::Int64));
        assert_eq!(accs.len(), keyed.accumulators.len());
        for (v, acc) in accs.iter().zip(&keyed.accumulators) {
            assert!(
                has_type(v, acc.ty),
                "{} holds {v:?}, not a {}",
                acc.name,
                acc.ty
            );
        }
    }
    let Value::Decimal(sum) = &state[1].1[0] else {
        panic!("sum(amount) is a decimal")
    };
    assert_eq!((sum.mantissa, sum.scale), (1325, 2));
    // Stateless nodes and unknown ids have no keyed state.
    assert_eq!(sim.keyed_state(&node("shape", NodeKind::Sink, 0)), None);
    assert_eq!(
        sim.keyed_state(&node("shape", NodeKind::Aggregate, 1)),
        None
    );
}

#[test]
fn three_valued_logic_in_filters() {
    // WHERE a > 1 OR b IS NULL, and WHERE a > 1 AND b > 1: null results reject the row.
    let cols = [("a", DataType::Int64), ("b", DataType::Int64)];
    let events = [
        vec![i64v(2), NULL],
        vec![NULL, NULL],
        vec![NULL, i64v(5)],
        vec![i64v(0), i64v(5)],
        vec![i64v(3), i64v(3)],
    ];
    let or = from_source("or", "t", &cols, kafka("t"))
        .filter(|m| {
            bin(
                BinaryOp::Or,
                gt(m.col("a"), lit_i64(1)),
                Expr::IsNull {
                    expr: Box::new(m.col("b")),
                    negated: false,
                },
            )
        })
        .sink();
    let a_of = |out: Vec<Change>| out.into_iter().map(|c| c.row).collect::<Vec<_>>();
    assert_eq!(
        a_of(changes(&[or], &events)),
        vec![events[0].clone(), events[1].clone(), events[4].clone()]
    );
    let and = from_source("and", "t", &cols, kafka("t"))
        .filter(|m| {
            bin(
                BinaryOp::And,
                gt(m.col("a"), lit_i64(1)),
                gt(m.col("b"), lit_i64(1)),
            )
        })
        .sink();
    assert_eq!(a_of(changes(&[and], &events)), vec![events[4].clone()]);
    // NOT of null is null: WHERE NOT (a > 1) keeps only a = 0.
    let not = from_source("not", "t", &cols, kafka("t"))
        .filter(|m| Expr::Not(Box::new(gt(m.col("a"), lit_i64(1)))))
        .sink();
    assert_eq!(a_of(changes(&[not], &events)), vec![events[3].clone()]);
}

/// `AND` stops at a false left side and `OR` at a true one, left to right, as Flink's
/// generated code does: the right side's division by zero is never computed; swapped, it is.
#[test]
fn and_and_or_stop_at_a_left_side_that_decides() {
    let cols = [("qty", DataType::Int64), ("big", DataType::Int64)];
    let div = |m: &Model| {
        gt(
            bin(BinaryOp::Arith(ArithOp::Div), m.col("big"), m.col("qty")),
            lit_i64(3),
        )
    };
    let zero = vec![i64v(0), i64v(7)];
    let events = [zero.clone(), vec![i64v(1), i64v(5)], vec![i64v(2), i64v(5)]];
    let rows = |out: Vec<Change>| out.into_iter().map(|c| c.row).collect::<Vec<_>>();
    let and = from_source("and", "t", &cols, kafka("t"))
        .filter(|m| {
            bin(
                BinaryOp::And,
                bin(BinaryOp::NotEq, m.col("qty"), lit_i64(0)),
                div(m),
            )
        })
        .sink();
    assert_eq!(rows(changes(&[and], &events)), vec![events[1].clone()]);
    let or = from_source("or", "t", &cols, kafka("t"))
        .filter(|m| {
            bin(
                BinaryOp::Or,
                bin(BinaryOp::Eq, m.col("qty"), lit_i64(0)),
                div(m),
            )
        })
        .sink();
    assert_eq!(
        rows(changes(&[or], &events)),
        vec![zero.clone(), events[1].clone()]
    );
    let swapped = from_source("swapped", "t", &cols, kafka("t"))
        .filter(|m| {
            bin(
                BinaryOp::And,
                div(m),
                bin(BinaryOp::NotEq, m.col("qty"), lit_i64(0)),
            )
        })
        .sink();
    assert_eq!(
        run(&[swapped], &[zero]).unwrap_err().to_string(),
        "model `swapped`, column `(((big / qty) > 3) AND (qty <> 0))`, event 1: division by zero"
    );
}

#[test]
fn casts_and_mixed_arithmetic_follow_the_plan_types() {
    let plan = from_source(
        "c",
        "t",
        &[("amount", dec_ty(10, 2)), ("qty", DataType::Int32)],
        kafka("t"),
    )
    .project(|m| {
        vec![
            (
                Expr::Cast {
                    expr: Box::new(m.col("amount")),
                    ty: DataType::Int64,
                },
                "whole",
            ),
            (
                bin(BinaryOp::Arith(ArithOp::Mul), m.col("amount"), m.col("qty")),
                "line",
            ),
        ]
    })
    .sink();
    // decimal(10,2) * int32 (decimal(10,0)) is decimal(21,2).
    assert_eq!(plan.nodes[1].schema[1].ty, dec_ty(21, 2));
    assert_eq!(
        changes(&[plan], &[vec![d("7.99", 2), i32v(3)]]),
        vec![ins(vec![i64v(7), d("23.97", 2)])]
    );
}

#[test]
fn malformed_chains_are_refused_with_event_zero() {
    let chain = order_pipeline();
    let err = Simulator::new(&[]).err().unwrap();
    assert_eq!((err.model.as_str(), err.event), ("", 0));
    // The first model must read a source.
    let err = Simulator::new(&chain[1..]).err().unwrap();
    assert_eq!(err.model, "customer_metrics");
    assert_eq!(err.event, 0);
    // Each model must come after the models it reads.
    let err = Simulator::new(&[chain[0].clone(), chain[2].clone()])
        .err()
        .unwrap();
    assert_eq!(err.model, "big_customers");
    assert!(
        err.message.contains("`customer_metrics`"),
        "{}",
        err.message
    );
    // A model must end in its Sink.
    let mut cut = chain[0].clone();
    cut.nodes.pop();
    let err = Simulator::new(&[cut]).err().unwrap();
    assert!(
        err.message.contains("must end in a Sink"),
        "{}",
        err.message
    );
    // An expression naming a column the input lacks.
    let mut bad = chain[0].clone();
    if let streamform_ir::Operator::Filter { predicate } = &mut bad.nodes[1].op {
        *predicate = is_not_null(Expr::Column {
            name: "customer".into(),
            ty: DataType::Int64,
        });
    }
    let err = Simulator::new(&[bad]).err().unwrap();
    assert_eq!(err.column.as_deref(), Some("(customer IS NOT NULL)"));
    assert!(
        err.message
            .contains("column `customer` is not in the input"),
        "{}",
        err.message
    );
    // An accumulator typed against docs/sql.md's rules.
    let mut bad = customer_metrics(DEC);
    if let streamform_ir::Operator::Aggregate { calls, .. } = &mut bad.nodes[1].op {
        calls[0].ty = DataType::Float64;
    }
    let err = Simulator::new(&[bad]).err().unwrap();
    assert_eq!(err.column.as_deref(), Some("sum(amount)"));
    assert!(
        err.message.contains("the typing rules give decimal(38,9)"),
        "{}",
        err.message
    );
}

#[test]
fn the_same_input_gives_the_same_output_every_time() {
    let chain = order_pipeline();
    let events: Vec<Vec<Value>> = (0..400i64)
        .map(|i| {
            let customer = if i % 17 == 0 {
                NULL
            } else {
                i64v((i * 7) % 23)
            };
            let amount = format!("{}.{:02}", (i * 37) % 90 - 30, (i * 13) % 100);
            vec![i64v(i), customer, d(&amount, 9)]
        })
        .collect();
    let first = run(&chain, &events).unwrap();
    assert!(
        first.changes.len() > 20,
        "the input should exercise the filter: {}",
        first.changes.len()
    );
    assert!(first.changes.iter().any(|c| c.op == Op::Delete));
    let state_of = || {
        let mut sim = Simulator::new(&chain).unwrap();
        for e in &events {
            sim.push(e).unwrap();
        }
        sim.keyed_state(&node("customer_metrics", NodeKind::Aggregate, 0))
            .unwrap()
    };
    let state = state_of();
    assert_eq!(state.len(), 23);
    for _ in 0..100 {
        assert_eq!(run(&chain, &events).unwrap(), first);
        assert_eq!(state_of(), state);
    }
}

#[test]
fn a_failed_row_leaves_its_key_state_as_it_was() {
    // count(*) is folded before sum(v) overflows; the count must not keep the failed row.
    let plan = from_source(
        "m",
        "t",
        &[("k", DataType::Int64), ("v", DataType::Int64)],
        kafka("t"),
    )
    .aggregate(&["k"], &[(AggFunc::Count, None), (AggFunc::Sum, Some("v"))])
    .sink();
    let mut sim = Simulator::new(&[plan]).unwrap();
    sim.push(&[i64v(1), i64v(i64::MAX)]).unwrap();
    let err = sim.push(&[i64v(1), i64v(1)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "model `m`, column `sum(v)`, event 2: arithmetic overflow"
    );
    assert_eq!(
        sim.keyed_state(&node("m", NodeKind::Aggregate, 0)).unwrap(),
        vec![(vec![i64v(1)], vec![i64v(1), i64v(i64::MAX)])]
    );
    assert_eq!(sim.events_processed(), 2);
}

/// docs/sql.md: the last row per key. A key's first row is an insert, every later row an update
/// whose before-image is the row it replaces, even an equal one (as Flink's keep-last-row
/// deduplication emits it); the keyed state holds each key's last row; a WHERE over it
/// deletes a key whose latest row stops matching.
#[test]
fn an_upsert_model_over_an_append_input_keeps_the_last_row_per_key() {
    let latest = from_source(
        "latest",
        "payments",
        &[("payment_id", DataType::Int64), ("amount", DataType::Int32)],
        kafka("payments"),
    )
    .deduplicate(&["payment_id"])
    .sink();
    let events = vec![
        vec![i64v(1), i32v(10)],
        vec![i64v(2), i32v(3)],
        vec![i64v(1), i32v(4)],
        vec![i64v(2), i32v(3)],
    ];
    assert_eq!(
        changes(std::slice::from_ref(&latest), &events),
        vec![
            ins(vec![i64v(1), i32v(10)]),
            ins(vec![i64v(2), i32v(3)]),
            upd(vec![i64v(1), i32v(10)], vec![i64v(1), i32v(4)]),
            upd(vec![i64v(2), i32v(3)], vec![i64v(2), i32v(3)]),
        ]
    );
    let mut sim = Simulator::new(std::slice::from_ref(&latest)).unwrap();
    for e in &events {
        sim.push(e).unwrap();
    }
    assert_eq!(
        sim.keyed_state(&node("latest", NodeKind::Deduplicate, 0))
            .unwrap(),
        vec![
            (vec![i64v(1)], vec![i64v(1), i32v(4)]),
            (vec![i64v(2)], vec![i64v(2), i32v(3)]),
        ]
    );
    let big = from_model("big", &latest)
        .filter(|m| gt(m.col("amount"), lit_i32(5)))
        .sink();
    assert_eq!(
        changes(&[latest, big], &events),
        vec![ins(vec![i64v(1), i32v(10)]), del(vec![i64v(1), i32v(10)])]
    );
}

/// docs/sql.md: CASE takes the first branch whose condition is true (a null condition is not),
/// evaluates only that result (the division by zero in the other branch never happens),
/// and is null without a match and without ELSE.
#[test]
fn case_takes_the_first_true_branch_and_computes_only_its_result() {
    let model = from_source("m", "o", &[("qty", DataType::Int32)], kafka("o"))
        .project(|m| {
            let per_unit = Expr::Case {
                branches: vec![(bin(BinaryOp::Eq, m.col("qty"), lit_i32(0)), lit_i32(0))],
                otherwise: Some(Box::new(bin(
                    BinaryOp::Arith(streamform_ir::types::ArithOp::Div),
                    lit_i32(100),
                    m.col("qty"),
                ))),
                ty: DataType::Int32,
            };
            let no_else = Expr::Case {
                branches: vec![(gt(m.col("qty"), lit_i32(5)), lit_i32(1))],
                otherwise: None,
                ty: DataType::Int32,
            };
            vec![(per_unit, "per_unit"), (no_else, "big")]
        })
        .sink();
    assert_eq!(
        changes(&[model], &[vec![i32v(0)], vec![i32v(7)], vec![NULL]]),
        vec![
            ins(vec![i32v(0), NULL]),
            ins(vec![i32v(14), i32v(1)]),
            ins(vec![NULL, NULL]),
        ]
    );
}

/// The canonical event-time source: orders(customer_id, amount, ordered_at) with a 5m
/// watermark, summed per customer.
fn orders_on_event_time(late: LateEvents, retention: Option<u64>) -> ModelPlan {
    let m = from_source(
        "customer_metrics",
        "orders",
        &[
            ("customer_id", DataType::Int64),
            ("amount", DataType::Int64),
            ("ordered_at", DataType::Timestamp),
        ],
        kafka("orders"),
    )
    .event_time("ordered_at", 300_000, late)
    .aggregate(&["customer_id"], &[(AggFunc::Sum, Some("amount"))]);
    match retention {
        Some(ms) => m.retention(ms).sink(),
        None => m.sink(),
    }
}

fn at(hh_mm: &str) -> i64 {
    streamform_ir::time::parse_rfc3339(&format!("2026-08-30T{hh_mm}:00Z")).unwrap()
}

fn timed(customer: i64, amount: i64, hh_mm: &str) -> Vec<Value> {
    vec![i64v(customer), i64v(amount), Value::Timestamp(at(hh_mm))]
}

#[test]
fn an_event_behind_the_watermark_is_dropped_or_kept() {
    let events = [
        timed(42, 10, "10:00"),
        timed(42, 20, "10:10"),
        timed(42, 5, "10:01"),
        timed(42, 1, "10:06"),
    ];
    let mut sim = Simulator::new(&[orders_on_event_time(LateEvents::Drop, None)]).unwrap();
    let arrivals: Vec<Arrival> = events.iter().map(|e| sim.push(e).unwrap()).collect();
    assert_eq!(
        arrivals,
        [
            Arrival::Delivered,
            Arrival::Delivered,
            Arrival::Dropped,
            Arrival::Delivered
        ]
    );
    assert_eq!(sim.watermark(), Some(at("10:05")));
    let out = sim.finish().unwrap();
    assert_eq!(out.events_processed, 3);
    assert_eq!(
        out.changes.to_vec(),
        vec![
            ins(vec![i64v(42), i64v(10)]),
            upd(vec![i64v(42), i64v(10)], vec![i64v(42), i64v(30)]),
            upd(vec![i64v(42), i64v(30)], vec![i64v(42), i64v(31)]),
        ]
    );
    // With keep, the late event is delivered as if on time: a third update, to 35.
    let out = run(&[orders_on_event_time(LateEvents::Keep, None)], &events).unwrap();
    assert_eq!(out.events_processed, 4);
    assert_eq!(
        out.changes.to_vec()[2..],
        [
            upd(vec![i64v(42), i64v(30)], vec![i64v(42), i64v(35)]),
            upd(vec![i64v(42), i64v(35)], vec![i64v(42), i64v(36)]),
        ]
    );
}

#[test]
fn the_watermark_advances_by_events_and_items_and_never_backwards() {
    let mut sim = Simulator::new(&[orders_on_event_time(LateEvents::Drop, None)]).unwrap();
    let mut dropped = Vec::new();
    let mut step = |sim: &mut Simulator, item: Result<Vec<Value>, &str>| match item {
        Ok(e) => {
            if sim.push(&e).unwrap() == Arrival::Dropped {
                dropped.push(e);
            }
        }
        Err(w) => sim.advance_watermark(at(w)).unwrap(),
    };
    for item in [
        Ok(timed(1, 1, "10:00")),
        Ok(timed(1, 1, "09:57")),
        Err("10:20"),
        Ok(timed(1, 1, "10:15")),
        Err("10:00"),
        Ok(timed(1, 1, "10:19")),
        Ok(timed(1, 1, "10:30")),
        Ok(timed(1, 1, "10:24")),
        Ok(timed(1, 1, "10:26")),
    ] {
        step(&mut sim, item);
    }
    assert_eq!(
        dropped,
        vec![
            timed(1, 1, "10:15"),
            timed(1, 1, "10:19"),
            timed(1, 1, "10:24")
        ]
    );
    assert_eq!(sim.watermark(), Some(at("10:25")));
    assert_eq!(sim.finish().unwrap().events_processed, 4);
}

#[test]
fn state_expires_after_its_retention_and_the_key_starts_over() {
    let plan = orders_on_event_time(LateEvents::Drop, Some(600_000));
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    sim.push(&timed(42, 10, "10:00")).unwrap();
    sim.push(&timed(7, 3, "10:08")).unwrap();
    sim.advance_watermark(at("10:10")).unwrap();
    // 42's state went silently at 10:10 (its last event plus 10 minutes, inclusive).
    assert_eq!(
        sim.keyed_state(&node("customer_metrics", NodeKind::Aggregate, 0))
            .unwrap(),
        vec![(vec![i64v(7)], vec![i64v(3)])]
    );
    sim.push(&timed(42, 5, "10:11")).unwrap();
    sim.push(&timed(7, 1, "10:12")).unwrap();
    assert_eq!(
        sim.finish().unwrap().changes.to_vec(),
        vec![
            ins(vec![i64v(42), i64v(10)]),
            ins(vec![i64v(7), i64v(3)]),
            ins(vec![i64v(42), i64v(5)]),
            upd(vec![i64v(7), i64v(3)], vec![i64v(7), i64v(4)]),
        ]
    );
}

#[test]
fn retention_counts_from_the_latest_event_time_not_the_last_arrival() {
    // 10:09 arrives after 10:00 for key 1, inside the 5m delay; 10:02 then arrives (on time,
    // the watermark being 10:04) and must not bring key 1's expiry back to 10:12.
    let plan = orders_on_event_time(LateEvents::Keep, Some(600_000));
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    sim.push(&timed(1, 1, "10:09")).unwrap();
    sim.push(&timed(1, 1, "10:02")).unwrap();
    sim.advance_watermark(at("10:15")).unwrap();
    assert_eq!(
        sim.keyed_state(&node("customer_metrics", NodeKind::Aggregate, 0))
            .unwrap(),
        vec![(vec![i64v(1)], vec![i64v(2)])]
    );
    sim.advance_watermark(at("10:19")).unwrap();
    assert_eq!(
        sim.keyed_state(&node("customer_metrics", NodeKind::Aggregate, 0))
            .unwrap(),
        vec![]
    );
}

#[test]
fn an_event_without_its_event_time_fails_naming_the_event() {
    let plan = orders_on_event_time(LateEvents::Drop, None);
    let err = run(
        &[plan],
        &[timed(42, 10, "10:00"), vec![i64v(42), i64v(1), NULL]],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "model `customer_metrics`, column `ordered_at`, event 2: event 2 has no `ordered_at`; source `orders` runs on event time, so every event needs one"
    );
    assert_eq!(err.failure, Failure::MissingEventTime);
}

#[test]
fn retention_without_an_event_time_source_is_refused() {
    let plan = from_source("m", "t", &[("k", DataType::Int64)], kafka("t"))
        .aggregate(&["k"], &[(AggFunc::Count, None)])
        .retention(1000)
        .sink();
    let err = Simulator::new(&[plan]).err().unwrap();
    assert_eq!(err.failure, Failure::Plan);
    assert!(
        err.message.contains("runs on processing time"),
        "{}",
        err.message
    );
}

// Windows (docs/windows.md). The vectors are the ones verified on Flink 2.0 and 2.2: key
// `a`, the watermark the largest time seen (no delay), seconds since the epoch.

fn views(late: LateEvents) -> Model {
    from_source(
        "w",
        "views",
        &[
            ("k", DataType::String),
            ("v", DataType::Int64),
            ("ts", DataType::Timestamp),
        ],
        kafka("views"),
    )
    .event_time("ts", 0, late)
}

fn view(v: i64, ms: i64) -> Vec<Value> {
    vec![s("a"), i64v(v), Value::Timestamp(ms)]
}

/// (window_start, window_end, count, sum) rows in seconds, for the window models below.
fn windows(out: &Output) -> Vec<(i64, i64, i64, i64)> {
    out.changes
        .iter()
        .map(|c| {
            assert_eq!(c.op, Op::Insert, "a window emits inserts only");
            let ms = |v: &Value| match v {
                Value::Timestamp(t) => *t,
                other => panic!("{other:?}"),
            };
            let int = |v: &Value| match v {
                Value::Int64(i) => *i,
                other => panic!("{other:?}"),
            };
            (
                ms(&c.row[1]) / 1000,
                ms(&c.row[2]) / 1000,
                int(&c.row[3]),
                int(&c.row[4]),
            )
        })
        .collect()
}

fn window_model(kind: streamform_ir::WindowKind, late: LateEvents) -> ModelPlan {
    views(late)
        .window(
            kind,
            &["k", "window_start", "window_end"],
            &[(AggFunc::Count, None), (AggFunc::Sum, Some("v"))],
        )
        .sink()
}

#[test]
fn a_tumbling_window_fires_at_its_end_minus_1_ms_and_drops_what_arrives_after() {
    // E1: 1@1s, 2@9.999s, 3@9.999s, 4@5s, 5@10s, 6@15s. The watermark reaches 9.999s with
    // event 2, which fires [0,10): event 3 (at the window's last millisecond, not behind
    // the watermark) and event 4 are dropped by the window.
    let plan = [window_model(
        streamform_ir::WindowKind::Tumble { size: 10_000 },
        LateEvents::Keep,
    )];
    let mut sim = Simulator::new(&plan).unwrap();
    let arrivals: Vec<Arrival> = [
        (1, 1000),
        (2, 9999),
        (3, 9999),
        (4, 5000),
        (5, 10_000),
        (6, 15_000),
    ]
    .iter()
    .map(|&(v, t)| sim.push(&view(v, t)).unwrap())
    .collect();
    let by_window = Arrival::DroppedBy(node("w", NodeKind::Window, 0));
    assert_eq!(
        arrivals,
        [
            Arrival::Delivered,
            Arrival::Delivered,
            by_window.clone(),
            by_window,
            Arrival::Delivered,
            Arrival::Delivered
        ]
    );
    let out = sim.finish().unwrap();
    // [10,20) is still open: the end of the input is not a watermark.
    assert_eq!(windows(&out), [(0, 10, 2, 3)]);
    assert_eq!(out.open_windows.len(), 1);
    assert_eq!(
        (
            out.open_windows[0].count,
            out.open_windows[0].first_fires_at
        ),
        (1, 19_999)
    );
    // A watermark at 19.999s fires it.
    let mut sim = Simulator::new(&plan).unwrap();
    for (v, t) in [(1, 1000), (2, 9999), (5, 10_000), (6, 15_000)] {
        sim.push(&view(v, t)).unwrap();
    }
    sim.advance_watermark(19_998).unwrap();
    assert!(
        sim.keyed_state(&node("w", NodeKind::Window, 0))
            .unwrap()
            .len()
            == 1
    );
    sim.advance_watermark(19_999).unwrap();
    assert_eq!(
        sim.keyed_state(&node("w", NodeKind::Window, 0)),
        Some(vec![])
    );
    let out = sim.finish().unwrap();
    assert_eq!(windows(&out), [(0, 10, 2, 3), (10, 20, 2, 11)]);
    assert!(out.open_windows.is_empty());
}

#[test]
fn a_hopping_window_emits_each_window_with_rows_and_counts_a_late_row_where_it_can() {
    // E2: HOP slide 5s size 10s; 1@1, 2@6, 3@3 (after the watermark reached 6: excluded
    // from [-5,5), counted in [0,10)), 4@12, 5@30, then a watermark past everything.
    let plan = [window_model(
        streamform_ir::WindowKind::Hop {
            slide: 5000,
            size: 10_000,
        },
        LateEvents::Keep,
    )];
    let mut sim = Simulator::new(&plan).unwrap();
    for (v, t) in [(1, 1000), (2, 6000), (3, 3000), (4, 12_000), (5, 30_000)] {
        assert_eq!(sim.push(&view(v, t)).unwrap(), Arrival::Delivered);
    }
    sim.advance_watermark(100_000).unwrap();
    let out = sim.finish().unwrap();
    assert_eq!(
        windows(&out),
        [
            (-5, 5, 1, 1),
            (0, 10, 3, 6),
            (5, 15, 2, 6),
            (10, 20, 1, 4),
            (25, 35, 1, 5),
            (30, 40, 1, 5)
        ]
    );
}

#[test]
fn a_cumulating_window_repeats_its_totals_at_every_step_after_the_first_row() {
    // E3: CUMULATE step 2s size 6s; 1@0.5, 2@5 (the watermark reaches 5s: [0,2) and [0,4)
    // fire, both with event 1 only), 3@1 (late for both, counted in [0,6)), 4@13, 5@15.
    let plan = [window_model(
        streamform_ir::WindowKind::Cumulate {
            step: 2000,
            size: 6000,
        },
        LateEvents::Keep,
    )];
    let mut sim = Simulator::new(&plan).unwrap();
    for (v, t) in [(1, 500), (2, 5000), (3, 1000), (4, 13_000), (5, 15_000)] {
        assert_eq!(sim.push(&view(v, t)).unwrap(), Arrival::Delivered);
    }
    sim.advance_watermark(100_000).unwrap();
    let out = sim.finish().unwrap();
    assert_eq!(
        windows(&out),
        [
            (0, 2, 1, 1),
            (0, 4, 1, 1),
            (0, 6, 3, 6),
            (12, 14, 1, 4),
            (12, 16, 2, 9),
            (12, 18, 2, 9)
        ]
    );
}

#[test]
fn rows_one_watermark_makes_final_come_out_by_window_end_then_key() {
    let plan = [views(LateEvents::Drop)
        .window(
            streamform_ir::WindowKind::Tumble { size: 10_000 },
            &["window_start", "window_end", "k"],
            &[(AggFunc::Count, None)],
        )
        .sink()];
    let row = |k: Value, t: i64| vec![k, i64v(0), Value::Timestamp(t)];
    let mut sim = Simulator::new(&plan).unwrap();
    for (k, t) in [
        (s("b"), 12_000),
        (s("b"), 1000),
        (NULL, 2000),
        (s("a"), 15_000),
        (s("a"), 3000),
    ] {
        sim.push(&row(k, t)).unwrap();
    }
    sim.advance_watermark(30_000).unwrap();
    let keys: Vec<(i64, Value)> = sim
        .finish()
        .unwrap()
        .changes
        .iter()
        .map(|c| match (&c.row[1], &c.row[2]) {
            (Value::Timestamp(end), k) => (end / 1000, k.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    // The rows behind the watermark of 15s were dropped at the source (late_events: drop).
    assert_eq!(keys, [(20, s("a")), (20, s("b"))]);
}

#[test]
fn a_window_frees_its_state_and_reuses_it_so_memory_follows_the_open_windows() {
    let plan = [window_model(
        streamform_ir::WindowKind::Tumble { size: 1000 },
        LateEvents::Drop,
    )];
    let node = node("w", NodeKind::Window, 0);
    let mut sim = Simulator::new(&plan).unwrap();
    for i in 0..10_000 {
        sim.push(&view(i, i * 100)).unwrap();
        // At most two windows are open at once: the one being filled and, for its last
        // millisecond, the one before.
        assert!(sim.keyed_state(&node).unwrap().len() <= 2);
    }
    let out = sim.finish().unwrap();
    assert_eq!(out.changes.len(), 999);
}

#[test]
fn a_file_source_ends_with_a_final_watermark_that_fires_every_open_window() {
    // Flink reads a file to its end and then sends the largest watermark: E1's last window
    // [10,20) is emitted at the end, which a Kafka source never does.
    let plan = [from_source(
        "w",
        "views",
        &[
            ("k", DataType::String),
            ("v", DataType::Int64),
            ("ts", DataType::Timestamp),
        ],
        common::file("views.json"),
    )
    .event_time("ts", 0, LateEvents::Drop)
    .window(
        streamform_ir::WindowKind::Tumble { size: 10_000 },
        &["k", "window_start", "window_end"],
        &[(AggFunc::Count, None), (AggFunc::Sum, Some("v"))],
    )
    .sink()];
    let events: Vec<Vec<Value>> = [(1, 1000), (2, 9999), (5, 10_000), (6, 15_000)]
        .iter()
        .map(|&(v, t)| view(v, t))
        .collect();
    let out = run(&plan, &events).unwrap();
    assert_eq!(windows(&out), [(0, 10, 2, 3), (10, 20, 2, 11)]);
    assert!(out.open_windows.is_empty());
}

#[test]
fn a_window_orders_its_keys_totally_even_with_nan() {
    // NaN sorts after every number (Java's Double.compare), so the order is total: 25 keys
    // with one NaN among them panicked the sort when NaN compared equal to everything.
    let plan = [from_source(
        "w",
        "views",
        &[("f", DataType::Float64), ("ts", DataType::Timestamp)],
        kafka("views"),
    )
    .event_time("ts", 0, LateEvents::Drop)
    .window(
        streamform_ir::WindowKind::Tumble { size: 10_000 },
        &["f", "window_start", "window_end"],
        &[(AggFunc::Count, None)],
    )
    .sink()];
    let mut sim = Simulator::new(&plan).unwrap();
    let mut keys: Vec<f64> = (0..24).map(|i| f64::from(i * 7 % 24) - 11.5).collect();
    keys.insert(9, f64::NAN);
    for k in &keys {
        sim.push(&[f64v(*k), Value::Timestamp(1000)]).unwrap();
    }
    sim.push(&[NULL, Value::Timestamp(1000)]).unwrap();
    sim.advance_watermark(20_000).unwrap();
    let out = sim.finish().unwrap();
    let got: Vec<Value> = out.changes.iter().map(|c| c.row[0].clone()).collect();
    let mut want: Vec<Value> = vec![NULL];
    let mut numbers: Vec<f64> = keys.iter().copied().filter(|k| !k.is_nan()).collect();
    numbers.sort_by(f64::total_cmp);
    want.extend(numbers.into_iter().map(f64v));
    want.push(f64v(f64::NAN));
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.sort_cmp(w), std::cmp::Ordering::Equal, "{got:?}");
    }
}

#[test]
fn zero_and_negative_zero_are_two_keys_as_flink_groups_them() {
    // Flink groups by a key's binary form: 0.0 and -0.0 are two groups (seen on Flink 2.0:
    // GROUP BY over a JSON file of -0.0, 0.0, 0.0, -0.0 gives two rows of count 2), and
    // every NaN is one. -0.0 sorts first, as Java's Double.compare orders it.
    let negative =
        |c: &Change| matches!(c.row[0], Value::Float64(f) if f.0 == 0.0 && f.0.is_sign_negative());
    let plan = [
        from_source("g", "xs", &[("x", DataType::Float64)], kafka("xs"))
            .aggregate(&["x"], &[(AggFunc::Count, None)])
            .sink(),
    ];
    let events: Vec<Vec<Value>> = [-0.0, 0.0, 0.0, -0.0, f64::NAN, -f64::NAN]
        .into_iter()
        .map(|x| vec![f64v(x)])
        .collect();
    let got = changes(&plan, &events);
    let counts: Vec<(bool, Value)> = got
        .iter()
        .map(|c| (negative(c), c.row[1].clone()))
        .collect();
    assert_eq!(
        counts,
        [
            (true, i64v(1)),
            (false, i64v(1)),
            (false, i64v(2)),
            (true, i64v(2)),
            (false, i64v(1)),
            (false, i64v(2)),
        ],
        "{got:?}"
    );

    let plan = [from_source(
        "w",
        "views",
        &[("x", DataType::Float64), ("ts", DataType::Timestamp)],
        kafka("views"),
    )
    .event_time("ts", 0, LateEvents::Drop)
    .window(
        streamform_ir::WindowKind::Tumble { size: 10_000 },
        &["x", "window_start", "window_end"],
        &[(AggFunc::Count, None), (AggFunc::CountDistinct, Some("x"))],
    )
    .sink()];
    let mut sim = Simulator::new(&plan).unwrap();
    for x in [0.0, -0.0, 0.0] {
        sim.push(&[f64v(x), Value::Timestamp(1000)]).unwrap();
    }
    sim.advance_watermark(20_000).unwrap();
    let out = sim.finish().unwrap();
    let rows: Vec<(bool, Value, Value)> = out
        .changes
        .iter()
        .map(|c| (negative(&c.to_change()), c.row[3].clone(), c.row[4].clone()))
        .collect();
    assert_eq!(
        rows,
        [(true, i64v(1), i64v(1)), (false, i64v(2), i64v(1))],
        "{:?}",
        out.changes
    );
}

fn keyed_view(k: &str, v: i64, ms: i64) -> Vec<Value> {
    vec![s(k), i64v(v), Value::Timestamp(ms)]
}

/// (key, window_start, window_end, count, sum) rows in seconds, for the session models.
fn sessions(out: &Output) -> Vec<(String, f64, f64, i64, i64)> {
    out.changes
        .iter()
        .map(|c| {
            assert_eq!(c.op, Op::Insert, "a window emits inserts only");
            let Value::String(k) = &c.row[0] else {
                panic!("{:?}", c.row[0])
            };
            let secs = |v: &Value| match v {
                Value::Timestamp(t) => *t as f64 / 1000.0,
                other => panic!("{other:?}"),
            };
            let int = |v: &Value| match v {
                Value::Int64(i) => *i,
                other => panic!("{other:?}"),
            };
            (
                k.to_string(),
                secs(&c.row[1]),
                secs(&c.row[2]),
                int(&c.row[3]),
                int(&c.row[4]),
            )
        })
        .collect()
}

fn session_model(late: LateEvents) -> ModelPlan {
    window_model(streamform_ir::WindowKind::Session { gap: 3000 }, late)
}

#[test]
fn sessions_merge_per_key_and_fire_at_their_end_minus_1_ms() {
    // E9 on Flink 2.0, gap 3s PARTITION BY k: a1@1, b5@2, a3@3, b2@4, c9@5, a7@11, b8@12,
    // then a late a2@6 (its own [6,9) ended before the watermark of 12, and it meets no
    // open session: dropped), and an event at 100 that closes the rest.
    let plan = [session_model(LateEvents::Keep)];
    let mut sim = Simulator::new(&plan).unwrap();
    for (k, v, t) in [
        ("a", 1, 1000),
        ("b", 5, 2000),
        ("a", 3, 3000),
        ("b", 2, 4000),
        ("c", 9, 5000),
        ("a", 7, 11_000),
        ("b", 8, 12_000),
    ] {
        assert_eq!(sim.push(&keyed_view(k, v, t)).unwrap(), Arrival::Delivered);
    }
    assert_eq!(
        sim.push(&keyed_view("a", 2, 6000)).unwrap(),
        Arrival::DroppedBy(node("w", NodeKind::Window, 0))
    );
    sim.push(&keyed_view("z", 0, 100_000)).unwrap();
    let out = sim.finish().unwrap();
    let row = |k: &str, s: f64, e: f64, c, v| (k.to_string(), s, e, c, v);
    assert_eq!(
        sessions(&out),
        [
            row("a", 1.0, 6.0, 2, 4),
            row("b", 2.0, 7.0, 2, 7),
            row("c", 5.0, 8.0, 1, 9),
            row("a", 11.0, 14.0, 1, 7),
            row("b", 12.0, 15.0, 1, 8),
        ]
    );
    assert_eq!(
        (
            out.open_windows[0].count,
            out.open_windows[0].first_fires_at
        ),
        (1, 102_999)
    );
}

#[test]
fn windows_that_touch_merge_and_a_late_row_joins_an_open_session() {
    // Verified on Flink 2.0: t@1 and t@4 with gap 3s touch at 4 and merge into [1,7);
    // u@1 and u@4.001 do not (u's [1,4) fires at the watermark of 4). With the watermark at 20, c@17's own [17,20) has ended, but
    // it meets c's open [19,22) and joins it: [17,22).
    let plan = [session_model(LateEvents::Keep)];
    let mut sim = Simulator::new(&plan).unwrap();
    for (k, v, t) in [
        ("u", 1, 1000),
        ("t", 1, 1000),
        ("t", 2, 4000),
        ("u", 2, 4001),
        ("c", 1, 19_000),
        ("x", 0, 20_000),
    ] {
        sim.push(&keyed_view(k, v, t)).unwrap();
    }
    assert_eq!(
        sim.push(&keyed_view("c", 7, 17_000)).unwrap(),
        Arrival::Delivered
    );
    sim.advance_watermark(30_000).unwrap();
    let out = sim.finish().unwrap();
    let row = |k: &str, s: f64, e: f64, c, v| (k.to_string(), s, e, c, v);
    assert_eq!(
        sessions(&out),
        [
            row("u", 1.0, 4.0, 1, 1),
            row("t", 1.0, 7.0, 2, 3),
            row("u", 4.001, 7.001, 1, 2),
            row("c", 17.0, 22.0, 2, 8),
            row("x", 20.0, 23.0, 1, 0),
        ]
    );
    assert!(out.open_windows.is_empty());
}

#[test]
fn a_session_frees_its_key_when_it_fires() {
    let plan = [session_model(LateEvents::Drop)];
    let mut sim = Simulator::new(&plan).unwrap();
    sim.push(&keyed_view("a", 1, 1000)).unwrap();
    sim.push(&keyed_view("a", 2, 2000)).unwrap();
    assert_eq!(
        sim.keyed_state(&node("w", NodeKind::Window, 0)).unwrap(),
        vec![(vec![s("a"), Value::Timestamp(5000)], vec![i64v(2), i64v(3)])]
    );
    sim.advance_watermark(4999).unwrap();
    assert_eq!(
        sim.keyed_state(&node("w", NodeKind::Window, 0)),
        Some(vec![])
    );
    assert_eq!(sessions(&sim.finish().unwrap()).len(), 1);
}

/// Runs `chain` over `events`, delivering those whose index `deletes` lists as tombstones.
fn changes_with_deletes(
    chain: &[ModelPlan],
    events: &[Vec<Value>],
    deletes: &[usize],
) -> Vec<Change> {
    streamform_sim::run_with_deletes(chain, events, deletes)
        .unwrap()
        .changes
        .to_vec()
}

/// docs/changing-tables.md: an upsert source read as Flink's ChangelogNormalize reads it,
/// aggregated with retraction, on the sequence verified on Flink 2.0 and 2.2: an update
/// inside a group shows the intermediate result, a move between groups retracts from one
/// and adds to the other, a group of one row is deleted and inserted, an identical repeat
/// and a delete of an absent key change nothing, a delete carries the stored row, and MIN,
/// MAX, AVG, COUNT(x) and COUNT(DISTINCT x) follow each retraction (the minimum after it is
/// retracted is the next value; a null leaves sums and counts).
#[test]
fn an_aggregate_over_an_upsert_source_retracts_as_flink_does() {
    let counts = from_source(
        "per_group",
        "u",
        &[
            ("k", DataType::String),
            ("grp", DataType::String),
            ("v", DataType::Int32),
        ],
        kafka("u"),
    )
    .upsert(&["k"])
    .aggregate(
        &["grp"],
        &[
            (AggFunc::Count, None),
            (AggFunc::Sum, Some("v")),
            (AggFunc::Min, Some("v")),
            (AggFunc::Max, Some("v")),
            (AggFunc::Avg, Some("v")),
            (AggFunc::Count, Some("v")),
            (AggFunc::CountDistinct, Some("v")),
        ],
    )
    .sink();
    let ev = |k: &str, g: &str, v: Option<i32>| vec![s(k), s(g), v.map_or(Value::Null, i32v)];
    let tomb = |k: &str| vec![s(k), Value::Null, Value::Null];
    let events = vec![
        ev("a", "g1", Some(10)),
        ev("b", "g1", Some(5)),
        ev("a", "g1", Some(20)),
        ev("a", "g2", Some(20)),
        ev("a", "g2", Some(30)),
        ev("a", "g2", Some(30)),
        tomb("b"),
        tomb("zz"),
        ev("c", "g2", Some(30)),
        tomb("a"),
        ev("c", "g2", None),
    ];
    // count(*), sum, min, max, avg, count(v), count(distinct v).
    let row = |g: &str,
               c: i64,
               sum: Option<i64>,
               mn: Option<i32>,
               mx: Option<i32>,
               av: Option<i32>,
               cv: i64,
               cd: i64| {
        vec![
            s(g),
            i64v(c),
            sum.map_or(Value::Null, i64v),
            mn.map_or(Value::Null, i32v),
            mx.map_or(Value::Null, i32v),
            av.map_or(Value::Null, i32v),
            i64v(cv),
            i64v(cd),
        ]
    };
    let g1_10 = row("g1", 1, Some(10), Some(10), Some(10), Some(10), 1, 1);
    let g1_15 = row("g1", 2, Some(15), Some(5), Some(10), Some(7), 2, 2);
    let g1_5 = row("g1", 1, Some(5), Some(5), Some(5), Some(5), 1, 1);
    let g1_25 = row("g1", 2, Some(25), Some(5), Some(20), Some(12), 2, 2);
    let g2_20 = row("g2", 1, Some(20), Some(20), Some(20), Some(20), 1, 1);
    let g2_30 = row("g2", 1, Some(30), Some(30), Some(30), Some(30), 1, 1);
    let g2_60 = row("g2", 2, Some(60), Some(30), Some(30), Some(30), 2, 1);
    let g2_null = row("g2", 1, None, None, None, None, 0, 0);
    assert_eq!(
        changes_with_deletes(std::slice::from_ref(&counts), &events, &[6, 7, 9]),
        vec![
            ins(g1_10.clone()),
            upd(g1_10, g1_15.clone()),
            upd(g1_15, g1_5.clone()),
            upd(g1_5.clone(), g1_25.clone()),
            upd(g1_25, g1_5.clone()),
            ins(g2_20.clone()),
            del(g2_20),
            ins(g2_30.clone()),
            del(g1_5),
            upd(g2_30.clone(), g2_60.clone()),
            upd(g2_60, g2_30.clone()),
            del(g2_30),
            ins(g2_null),
        ]
    );
}

/// docs/changing-tables.md: MIN and MAX keep a count per value, so retracting the extreme
/// gives the next value, and retracting one of two equal extremes keeps it.
#[test]
fn min_and_max_over_updates_fall_back_to_the_next_value() {
    let extremes = from_source(
        "extremes",
        "u",
        &[("k", DataType::Int64), ("v", DataType::Int64)],
        kafka("u"),
    )
    .upsert(&["k"])
    .aggregate(&[], &[(AggFunc::Min, Some("v")), (AggFunc::Max, Some("v"))])
    .sink();
    let ev = |k: i64, v: i64| vec![i64v(k), i64v(v)];
    let tomb = |k: i64| vec![i64v(k), Value::Null];
    let events = vec![
        ev(1, 3),
        ev(2, 1),
        ev(3, 1),
        ev(4, 9),
        tomb(2),
        tomb(3),
        tomb(4),
    ];
    let r = |mn: i64, mx: i64| vec![i64v(mn), i64v(mx)];
    assert_eq!(
        changes_with_deletes(std::slice::from_ref(&extremes), &events, &[4, 5, 6]),
        vec![
            ins(r(3, 3)),
            upd(r(3, 3), r(1, 3)),
            upd(r(1, 3), r(1, 9)),
            upd(r(1, 9), r(3, 9)),
            upd(r(3, 9), r(3, 3)),
        ]
    );
}

/// docs/changing-tables.md: the normalization of an upsert source keeps each key's current
/// row; a delete of an append source is refused.
#[test]
fn an_upsert_source_keeps_each_keys_current_row() {
    let rows = from_source(
        "rows",
        "u",
        &[("k", DataType::Int64), ("v", DataType::Int64)],
        kafka("u"),
    )
    .upsert(&["k"])
    .sink();
    let mut sim = Simulator::new(std::slice::from_ref(&rows)).unwrap();
    for e in [
        vec![i64v(1), i64v(5)],
        vec![i64v(2), i64v(6)],
        vec![i64v(1), i64v(7)],
    ] {
        sim.push(&e).unwrap();
    }
    sim.push_delete(&[i64v(2), Value::Null]).unwrap();
    assert_eq!(
        sim.keyed_state(&node("rows", NodeKind::Source, 0)).unwrap(),
        vec![(vec![i64v(1)], vec![i64v(1), i64v(7)])]
    );
    let out = sim.finish().unwrap().changes.to_vec();
    assert_eq!(
        out,
        vec![
            ins(vec![i64v(1), i64v(5)]),
            ins(vec![i64v(2), i64v(6)]),
            upd(vec![i64v(1), i64v(5)], vec![i64v(1), i64v(7)]),
            del(vec![i64v(2), i64v(6)]),
        ]
    );
    let append = from_source("plain", "p", &[("k", DataType::Int64)], kafka("p")).sink();
    let mut sim = Simulator::new(std::slice::from_ref(&append)).unwrap();
    let err = sim.push_delete(&[i64v(1)]).unwrap_err();
    assert_eq!(err.failure, streamform_sim::Failure::Plan);
    assert!(err.message.contains("append source"), "{}", err.message);
}

// Several inputs (docs/sql.md, "Several inputs"): a UNION ALL of two sources, a source read
// twice, the watermark of a node with several inputs, events that must name their source.

fn clicks(model: &str, source: &str) -> Model {
    from_source(
        model,
        source,
        &[("page", DataType::String), ("n", DataType::Int64)],
        kafka(source),
    )
}

fn click(page: &str, n: i64) -> Vec<Value> {
    vec![Value::String(page.into()), i64v(n)]
}

#[test]
fn a_union_passes_each_input_change_on_in_delivery_order() {
    let plan = clicks("all_clicks", "web")
        .union_with(clicks("all_clicks", "app").filter(|m| gt(m.col("n"), lit_i64(1))))
        .sink();
    let ids: Vec<String> = plan.nodes.iter().map(|n| n.id.to_string()).collect();
    assert_eq!(
        ids,
        [
            "all_clicks::source::0",
            "all_clicks::source::1",
            "all_clicks::filter::0",
            "all_clicks::union::0",
            "all_clicks::sink::0"
        ]
    );
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    assert_eq!(sim.sources(), ["web", "app"]);
    sim.push_to(1, &click("/a", 1)).unwrap(); // filtered out on the app side
    sim.push_to(0, &click("/b", 1)).unwrap();
    sim.push_to(1, &click("/c", 2)).unwrap();
    sim.push_to(0, &click("/d", 3)).unwrap();
    let out = sim.finish().unwrap();
    assert_eq!(
        out.changes.to_vec(),
        [
            ins(click("/b", 1)),
            ins(click("/c", 2)),
            ins(click("/d", 3))
        ]
    );
    assert_eq!(out.events_processed, 4);
}

#[test]
fn a_source_read_twice_delivers_each_event_to_both_readers_in_plan_order() {
    let plan = clicks("twice", "web")
        .project(|m| vec![(m.col("page"), "page"), (m.col("n"), "n")])
        .union_with(clicks("twice", "web").filter(|m| gt(m.col("n"), lit_i64(1))))
        .sink();
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    assert_eq!(sim.sources(), ["web"]);
    sim.push(&click("/a", 1)).unwrap();
    sim.push(&click("/b", 2)).unwrap();
    assert_eq!(
        sim.finish().unwrap().changes.to_vec(),
        [
            ins(click("/a", 1)),
            ins(click("/b", 2)),
            ins(click("/b", 2))
        ]
    );
}

#[test]
fn events_of_several_sources_must_name_their_source() {
    let plan = clicks("u", "web").union_with(clicks("u", "app")).sink();
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    let err = sim.push(&click("/a", 1)).unwrap_err();
    assert_eq!(err.failure, Failure::Plan);
    assert_eq!(
        err.message,
        "the plans read several sources (`web`, `app`); each event must name its source"
    );
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    let err = sim.push_to(2, &click("/a", 1)).unwrap_err();
    assert_eq!(err.message, "there is no source number 2: the plans read 2");
}

#[test]
fn a_union_whose_inputs_differ_in_type_is_refused() {
    let other = from_source(
        "u",
        "app",
        &[("page", DataType::String), ("n", DataType::Int32)],
        kafka("app"),
    );
    let mut plan = clicks("u", "web").union_with(other).sink();
    // The union's own schema is the first input's.
    plan.nodes[2].schema[1].ty = DataType::Int64;
    let err = Simulator::new(&[plan]).err().unwrap();
    assert_eq!(err.failure, Failure::Plan);
    assert!(
        err.message.contains("input 2 has the types"),
        "{}",
        err.message
    );
}

fn timed_clicks(model: &str, source: &str) -> Model {
    from_source(
        model,
        source,
        &[("page", DataType::String), ("ts", DataType::Timestamp)],
        kafka(source),
    )
    .event_time("ts", 0, LateEvents::Drop)
}

fn at_ms(page: &str, ms: i64) -> Vec<Value> {
    vec![Value::String(page.into()), Value::Timestamp(ms)]
}

#[test]
fn a_window_after_a_union_waits_for_the_slower_source() {
    // The union's watermark is the least of its sources': a source that has seen nothing
    // holds the window back, as on Flink without an idle timeout.
    let plan = timed_clicks("per_page", "web")
        .union_with(timed_clicks("per_page", "app"))
        .window(
            streamform_ir::WindowKind::Tumble { size: 10_000 },
            &["page", "window_start", "window_end"],
            &[(AggFunc::Count, None)],
        )
        .sink();
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    sim.push_to(0, &at_ms("/a", 1_000)).unwrap();
    sim.push_to(0, &at_ms("/a", 25_000)).unwrap();
    // web is at 25 s, app has seen nothing: the window [0, 10 s) stays open.
    assert_eq!(sim.watermark(), None);
    assert_eq!(sim.silent_sources(), ["app"]);
    sim.push_to(1, &at_ms("/a", 5_000)).unwrap();
    // app at 5 s: still before the window's end.
    assert_eq!(sim.watermark(), Some(5_000));
    assert!(sim.silent_sources().is_empty());
    sim.advance_source_watermark(1, 12_000).unwrap();
    assert_eq!(sim.watermark(), Some(12_000));
    let out = sim.finish().unwrap();
    assert_eq!(out.changes.len(), 1);
    let row = out.changes.get(0).unwrap().row.to_vec();
    assert_eq!(row[0], Value::String("/a".into()));
    assert_eq!(
        row[3],
        i64v(2),
        "two rows of [0, 10 s), one from each source"
    );
    assert_eq!(out.open_windows.len(), 1);
    // An app event behind app's own watermark is late there, whatever web's clock says.
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    sim.push_to(1, &at_ms("/a", 20_000)).unwrap();
    assert_eq!(
        sim.push_to(1, &at_ms("/a", 19_999)).unwrap(),
        Arrival::Dropped
    );
    assert_eq!(sim.push_to(0, &at_ms("/a", 1)).unwrap(), Arrival::Delivered);
}

#[test]
fn a_union_with_an_updating_input_passes_its_updates_and_an_aggregate_retracts_them() {
    let prices = from_source(
        "u",
        "prices",
        &[("page", DataType::String), ("n", DataType::Int64)],
        kafka("prices"),
    )
    .upsert(&["page"]);
    let plan = clicks("u", "web")
        .union_with(prices)
        .aggregate(&[], &[(AggFunc::Sum, Some("n"))])
        .sink();
    assert_eq!(plan.nodes[2].changelog, streamform_ir::Changelog::Retract);
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    sim.push_to(0, &click("/a", 1)).unwrap();
    sim.push_to(1, &click("/p", 10)).unwrap();
    sim.push_to(1, &click("/p", 20)).unwrap();
    sim.push_delete_to(1, &[Value::String("/p".into()), Value::Null])
        .unwrap();
    let sums: Vec<(Op, Value)> = sim
        .finish()
        .unwrap()
        .changes
        .iter()
        .map(|c| (c.op, c.row[0].clone()))
        .collect();
    assert_eq!(
        sums,
        [
            (Op::Insert, i64v(1)),
            (Op::Update, i64v(11)),
            // The update 10 → 20 is a retraction then an addition, each with its output.
            (Op::Update, i64v(1)),
            (Op::Update, i64v(21)),
            (Op::Update, i64v(1)),
        ]
    );
}

#[test]
fn a_model_that_no_later_model_reads_is_refused() {
    let a = clicks("a", "web").sink();
    let b = clicks("b", "web").sink();
    let err = Simulator::new(&[a, b]).err().unwrap();
    assert_eq!(err.model, "a");
    assert!(
        err.message.contains("no model after `a` reads it"),
        "{}",
        err.message
    );
}

// Regular joins (docs/joins.md). The sequence is the one verified on Flink 2.2 with two
// append inputs L(id, lv) and R(id, rv): L1a, R1x, L1b, R1y, L2c, R2z, R2w, R4q, L3d, then
// L1a again. Flink emits one event's matches in its state backend's order (y before x for
// the last L1a); the simulator in the order the other side's rows arrived.

fn join_side(model: &str, source: &str, value: &str) -> Model {
    from_source(
        model,
        source,
        &[("id", DataType::Int64), (value, DataType::String)],
        kafka(source),
    )
}

fn join_events() -> Vec<(usize, Vec<Value>)> {
    let l = |id: i64, v: &str| (0, vec![i64v(id), Value::String(v.into())]);
    let r = |id: i64, v: &str| (1, vec![i64v(id), Value::String(v.into())]);
    vec![
        l(1, "a"),
        r(1, "x"),
        l(1, "b"),
        r(1, "y"),
        l(2, "c"),
        r(2, "z"),
        r(2, "w"),
        r(4, "q"),
        l(3, "d"),
        l(1, "a"),
    ]
}

/// The join's changelog as (op, "1ax") strings, a null as `∅`.
fn joined(kind: streamform_ir::JoinKind) -> Vec<String> {
    let plan = join_side("j", "l", "lv")
        .join_with(join_side("j", "r", "rv"), kind, &[("id", "id")])
        .sink();
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    for (source, row) in join_events() {
        sim.push_to(source, &row).unwrap();
    }
    render_joined(&sim.finish().unwrap().changes)
}

/// A join's changelog as (op, "1ax") strings, a null as `∅`.
fn render_joined(changes: &streamform_sim::Changelog) -> Vec<String> {
    changes
        .iter()
        .map(|c| {
            let text = |v: &Value| match v {
                Value::Null => "∅".to_string(),
                Value::Int64(i) => i.to_string(),
                Value::String(s) => s.to_string(),
                other => other.render(),
            };
            let id = if c.row[0].is_null() {
                &c.row[2]
            } else {
                &c.row[0]
            };
            let op = match c.op {
                Op::Insert => "+I",
                Op::Delete => "-D",
                Op::Update => "+U",
            };
            format!("{op} {}{}{}", text(id), text(&c.row[1]), text(&c.row[3]))
        })
        .collect()
}

#[test]
fn an_inner_join_of_two_append_inputs_inserts_each_match() {
    assert_eq!(
        joined(streamform_ir::JoinKind::Inner),
        [
            "+I 1ax", "+I 1bx", "+I 1ay", "+I 1by", "+I 2cz", "+I 2cw", "+I 1ax", "+I 1ay"
        ]
    );
}

#[test]
fn a_left_join_pads_an_unmatched_left_row_and_deletes_the_padding_at_its_first_match() {
    assert_eq!(
        joined(streamform_ir::JoinKind::Left),
        [
            "+I 1a∅", "-D 1a∅", "+I 1ax", "+I 1bx", "+I 1ay", "+I 1by", "+I 2c∅", "-D 2c∅",
            "+I 2cz", "+I 2cw", "+I 3d∅", "+I 1ax", "+I 1ay"
        ]
    );
}

#[test]
fn a_right_join_pads_the_right_rows_without_a_match() {
    assert_eq!(
        joined(streamform_ir::JoinKind::Right),
        [
            "+I 1ax", "+I 1bx", "+I 1ay", "+I 1by", "+I 2cz", "+I 2cw", "+I 4∅q", "+I 1ax",
            "+I 1ay"
        ]
    );
}

#[test]
fn a_full_join_also_pads_the_right_rows_without_a_match() {
    assert_eq!(
        joined(streamform_ir::JoinKind::Full),
        [
            "+I 1a∅", "-D 1a∅", "+I 1ax", "+I 1bx", "+I 1ay", "+I 1by", "+I 2c∅", "-D 2c∅",
            "+I 2cz", "+I 2cw", "+I 4∅q", "+I 3d∅", "+I 1ax", "+I 1ay"
        ]
    );
}

#[test]
fn a_null_join_key_never_matches_and_an_outer_side_pads_it() {
    let plan = join_side("j", "l", "lv")
        .join_with(
            join_side("j", "r", "rv"),
            streamform_ir::JoinKind::Full,
            &[("id", "id")],
        )
        .sink();
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    sim.push_to(0, &[Value::Null, Value::String("a".into())])
        .unwrap();
    sim.push_to(1, &[Value::Null, Value::String("x".into())])
        .unwrap();
    let out = sim.finish().unwrap().changes.to_vec();
    assert_eq!(
        out,
        [
            ins(vec![
                Value::Null,
                Value::String("a".into()),
                Value::Null,
                Value::Null
            ]),
            ins(vec![
                Value::Null,
                Value::Null,
                Value::Null,
                Value::String("x".into())
            ]),
        ]
    );
}

#[test]
fn a_join_names_a_right_column_named_like_a_left_one_as_flink_does() {
    let plan = join_side("j", "l", "lv")
        .join_with(
            join_side("j", "r", "rv"),
            streamform_ir::JoinKind::Left,
            &[("id", "id")],
        )
        .sink();
    assert_eq!(
        plan.nodes[3]
            .schema
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>(),
        ["id", "lv", "id0", "rv"]
    );
    // The right side of a LEFT JOIN may be null.
    assert!(plan.nodes[3].schema[2..].iter().all(|f| f.nullable));
}

/// The sequence verified on Flink 2.2 with an upsert right side R(id PK, rv): L1a, R1x,
/// R1x→y, R1 deleted, L1b, R1z, R1z again (no change), L2c, R2w. Flink marks the joined
/// rows of the retracted half of an update `-U` and of the added half `+U` in an inner
/// join; the simulator emits them as deletes and inserts (docs/joins.md, "Tables that
/// change").
fn joined_with_a_table(kind: streamform_ir::JoinKind) -> Vec<String> {
    let plan = join_side("j", "l", "lv")
        .join_with(
            join_side("j", "r", "rv").upsert(&["id"]),
            kind,
            &[("id", "id")],
        )
        .sink();
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    let s = |v: &str| Value::String(v.into());
    sim.push_to(0, &[i64v(1), s("a")]).unwrap();
    sim.push_to(1, &[i64v(1), s("x")]).unwrap();
    sim.push_to(1, &[i64v(1), s("y")]).unwrap();
    sim.push_delete_to(1, &[i64v(1), Value::Null]).unwrap();
    sim.push_to(0, &[i64v(1), s("b")]).unwrap();
    sim.push_to(1, &[i64v(1), s("z")]).unwrap();
    sim.push_to(1, &[i64v(1), s("z")]).unwrap();
    sim.push_to(0, &[i64v(2), s("c")]).unwrap();
    sim.push_to(1, &[i64v(2), s("w")]).unwrap();
    render_joined(&sim.finish().unwrap().changes)
}

#[test]
fn an_inner_join_with_an_updating_side_retracts_and_adds_each_joined_row() {
    assert_eq!(
        joined_with_a_table(streamform_ir::JoinKind::Inner),
        [
            "+I 1ax", "-D 1ax", "+I 1ay", "-D 1ay", "+I 1az", "+I 1bz", "+I 2cw"
        ]
    );
}

#[test]
fn a_left_join_with_an_updating_side_pads_the_row_between_the_two_halves_of_an_update() {
    assert_eq!(
        joined_with_a_table(streamform_ir::JoinKind::Left),
        [
            "+I 1a∅", "-D 1a∅", "+I 1ax", // x arrives
            "-D 1ax", "+I 1a∅", "-D 1a∅", "+I 1ay", // x becomes y: four records
            "-D 1ay", "+I 1a∅", // the tombstone pads the order again
            "+I 1b∅", "-D 1a∅", "+I 1az", "-D 1b∅", "+I 1bz", // z matches both
            "+I 2c∅", "-D 2c∅", "+I 2cw"
        ]
    );
}

/// Two tables joined on the key they share, upserted by it: the halves of an update the
/// join emits apart are one update in the changelog, and a retracted half that nothing
/// replaces (the new row no longer matches) is a delete (docs/joins.md, "Tables that
/// change").
#[test]
fn the_halves_of_a_joined_update_are_one_update_of_the_key_and_a_lone_retraction_a_delete() {
    let plan = join_side("j", "l", "lv")
        .upsert(&["id"])
        .join_with(
            join_side("j", "r", "rv").upsert(&["id"]),
            streamform_ir::JoinKind::Inner,
            &[("id", "id")],
        )
        .keyed_by(&["id"])
        .filter(|m| {
            bin(
                streamform_ir::BinaryOp::NotEq,
                m.col("rv"),
                Expr::Literal {
                    value: Value::String("blocked".into()),
                    ty: DataType::String,
                },
            )
        })
        .sink();
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    let row = |id: i64, v: &str| vec![i64v(id), Value::String(v.into())];
    sim.push_to(0, &row(1, "a")).unwrap();
    sim.push_to(1, &row(1, "x")).unwrap();
    sim.push_to(1, &row(1, "y")).unwrap();
    sim.push_to(0, &row(1, "b")).unwrap();
    sim.push_to(1, &row(1, "blocked")).unwrap();
    let joined = |l: &str, r: &str| {
        vec![
            i64v(1),
            Value::String(l.into()),
            i64v(1),
            Value::String(r.into()),
        ]
    };
    assert_eq!(
        sim.finish().unwrap().changes.to_vec(),
        [
            ins(joined("a", "x")),
            upd(joined("a", "x"), joined("a", "y")),
            upd(joined("a", "y"), joined("b", "y")),
            del(joined("b", "y")),
        ]
    );
}

#[test]
fn a_join_with_retention_drops_rows_the_watermark_has_passed_without_a_record() {
    // Flink's state TTL drops a row silently: the left row 1 expires, so the right row 1
    // arriving later finds nothing, and the padded row stays as it was emitted.
    let side = |source: &str, value: &str| {
        from_source(
            "j",
            source,
            &[
                ("id", DataType::Int64),
                (value, DataType::String),
                ("ts", DataType::Timestamp),
            ],
            kafka(source),
        )
        .event_time("ts", 0, LateEvents::Drop)
    };
    let plan = side("l", "lv")
        .join_with(
            side("r", "rv"),
            streamform_ir::JoinKind::Left,
            &[("id", "id")],
        )
        .retention(10_000)
        .sink();
    let row =
        |id: i64, v: &str, ms: i64| vec![i64v(id), Value::String(v.into()), Value::Timestamp(ms)];
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    sim.push_to(0, &row(1, "a", 0)).unwrap();
    sim.push_to(1, &row(2, "x", 5_000)).unwrap();
    sim.push_to(0, &row(9, "b", 20_000)).unwrap();
    // The join's watermark is 5 s (the right side's): row 1 (until 10 s) is still kept.
    let join = node("j", NodeKind::Join, 0);
    assert_eq!(sim.keyed_state(&join).unwrap().len(), 3);
    sim.advance_source_watermark(1, 20_000).unwrap();
    // At 20 s, rows 1 (until 10 s) and 2 (until 15 s) are gone; row 9 stays until 30 s.
    let kept: Vec<Vec<Value>> = sim
        .keyed_state(&join)
        .unwrap()
        .into_iter()
        .map(|(key, _)| key)
        .collect();
    assert_eq!(kept, [vec![i64v(9)]]);
    sim.push_to(1, &row(1, "y", 21_000)).unwrap();
    let ops: Vec<Op> = sim.finish().unwrap().changes.iter().map(|c| c.op).collect();
    assert_eq!(
        ops,
        [Op::Insert, Op::Insert],
        "1a∅ and 9b∅, nothing for the late match"
    );
}

#[test]
fn a_join_condition_beside_the_key_decides_what_matches_and_an_outer_side_pads_the_rest() {
    use streamform_ir::{BinaryOp, Expr, JoinKind, Operator};
    let mut plan = join_side("j", "l", "lv")
        .join_with(join_side("j", "r", "rv"), JoinKind::Left, &[("id", "id")])
        .sink();
    let column = |name: &str| Expr::Column {
        name: name.into(),
        ty: DataType::String,
    };
    for node in &mut plan.nodes {
        if let Operator::Join { filter, .. } = &mut node.op {
            // The pairs whose right value is not `y`.
            *filter = Some(bin(
                BinaryOp::NotEq,
                column("rv"),
                Expr::Literal {
                    value: Value::String("y".into()),
                    ty: DataType::String,
                },
            ));
        }
    }
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    let l = |id: i64, v: &str| vec![i64v(id), Value::String(v.into())];
    sim.push_to(0, &l(1, "a")).unwrap();
    // y does not meet the condition: a stays padded.
    sim.push_to(1, &l(1, "y")).unwrap();
    sim.push_to(1, &l(1, "x")).unwrap();
    let out: Vec<String> = sim
        .finish()
        .unwrap()
        .changes
        .iter()
        .map(|c| format!("{} {:?}", c.op, c.row[3]))
        .collect();
    assert_eq!(out, ["insert Null", "delete Null", "insert String(\"x\")"]);
}

// Interval joins (docs/joins.md, "Joins in time"). The timeline is the one verified on
// Flink 2.2 with `R.ts BETWEEN L.ts - 1 s AND L.ts + 1 s` (a FULL join), each source's
// watermark its latest time: L1@10000, R1@10500, L2@11000, R9@12500, L3@14000, R3@13500,
// R3@16000, L4@9000 (late), R6@30000, L5@20000, then the end of the input. The digit is
// the join key.

fn timed_side(source: &str, value: &str) -> Model {
    from_source(
        "j",
        source,
        &[
            ("id", DataType::Int64),
            (value, DataType::String),
            ("ts", DataType::Timestamp),
        ],
        kafka(source),
    )
    .event_time("ts", 0, LateEvents::Keep)
}

fn interval_plan(kind: streamform_ir::JoinKind) -> ModelPlan {
    timed_side("l", "lv")
        .interval_join_with(
            timed_side("r", "rv"),
            kind,
            &[("id", "id")],
            ("ts", "ts0", -1_000, 1_000),
        )
        .sink()
}

/// Per input step, the records it produced, as `L1 R1`, `L2 ∅`, `∅ R9` (a side's value and
/// key), each step's records sorted (Flink's order among them follows its state backend).
fn interval_steps(kind: streamform_ir::JoinKind) -> Vec<Vec<String>> {
    let plan = interval_plan(kind);
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    let row =
        |id: i64, v: &str, ms: i64| vec![i64v(id), Value::String(v.into()), Value::Timestamp(ms)];
    let steps = [
        (0, 1, "L1", 10_000),
        (1, 1, "R1", 10_500),
        (0, 2, "L2", 11_000),
        (1, 9, "R9", 12_500),
        (0, 3, "L3", 14_000),
        (1, 3, "R3", 13_500),
        (1, 3, "R3'", 16_000),
        (0, 4, "L4", 9_000),
        (1, 6, "R6", 30_000),
        (0, 5, "L5", 20_000),
    ];
    let render = |changes: &Changelog, from: usize, to: usize| -> Vec<String> {
        let mut out: Vec<String> = changes
            .iter()
            .take(to)
            .skip(from)
            .map(|c| {
                assert_eq!(c.op, Op::Insert, "an interval join only inserts");
                let v = |v: &Value| match v {
                    Value::String(s) => s.to_string(),
                    _ => "∅".to_string(),
                };
                format!("{} {}", v(&c.row[1]), v(&c.row[4]))
            })
            .collect();
        out.sort();
        out
    };
    let mut counts = Vec::new();
    for (source, id, v, ms) in steps {
        sim.push_to(source, &row(id, v, ms)).unwrap();
        counts.push(sim.changes_emitted());
    }
    // The end of a bounded input: the final watermark.
    sim.advance_watermark(i64::MAX).unwrap();
    let changes = sim.finish().unwrap().changes;
    counts.push(changes.len());
    let mut seen = 0;
    counts
        .into_iter()
        .map(|now| {
            let step = render(&changes, seen, now);
            seen = now;
            step
        })
        .collect()
}

#[test]
fn a_full_interval_join_matches_at_once_and_pads_when_the_watermark_rules_out_a_match() {
    let steps = interval_steps(streamform_ir::JoinKind::Full);
    let expected: [&[&str]; 11] = [
        &[],
        &["L1 R1"],
        &[],
        &[],
        // The join's watermark reaches 12500: L2's last chance (12000) has passed.
        &["L2 ∅"],
        &["L3 R3"],
        // 14000 passes R9's last chance (13500).
        &["∅ R9"],
        // Late (the join's time is 14000, past 9000 + 1 s): padded at once.
        &["L4 ∅"],
        &[],
        // 20000 passes R3' (16000 + 1 s); R3 matched, so it goes without a record.
        &["∅ R3'"],
        // The end of the input: every row left is padded.
        &["L5 ∅", "∅ R6"],
    ];
    assert_eq!(
        steps,
        expected.map(|s| s.iter().map(|x| x.to_string()).collect::<Vec<_>>())
    );
}

#[test]
fn an_inner_interval_join_emits_only_matches_and_drops_an_unmatched_late_row() {
    let steps = interval_steps(streamform_ir::JoinKind::Inner);
    let flat: Vec<String> = steps.into_iter().flatten().collect();
    assert_eq!(flat, ["L1 R1", "L3 R3"]);
}

#[test]
fn a_left_interval_join_pads_only_left_rows() {
    let flat: Vec<String> = interval_steps(streamform_ir::JoinKind::Left)
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(flat, ["L1 R1", "L2 ∅", "L3 R3", "L4 ∅", "L5 ∅"]);
}

#[test]
fn a_right_interval_join_pads_only_right_rows() {
    let flat: Vec<String> = interval_steps(streamform_ir::JoinKind::Right)
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(flat, ["L1 R1", "L3 R3", "∅ R9", "∅ R3'", "∅ R6"]);
}

#[test]
fn a_late_row_an_inner_interval_join_cannot_match_is_reported_dropped() {
    let plan = interval_plan(streamform_ir::JoinKind::Inner);
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    let row = |id: i64, ms: i64| vec![i64v(id), Value::String("v".into()), Value::Timestamp(ms)];
    sim.push_to(0, &row(1, 10_000)).unwrap();
    sim.push_to(1, &row(2, 14_000)).unwrap();
    // The join's time is 10 s: a right row at 8 s may still meet a left row up to 9 s,
    // which can no longer come on time, so it is not kept; it matches nothing.
    assert_eq!(
        sim.push_to(1, &row(3, 8_000)).unwrap(),
        Arrival::DroppedBy(node("j", NodeKind::IntervalJoin, 0))
    );
    // One that matches a kept row is joined, not dropped.
    assert_eq!(sim.push_to(1, &row(1, 9_000)).unwrap(), Arrival::Delivered);
    assert_eq!(sim.finish().unwrap().changes.len(), 1);
}

#[test]
fn a_window_after_an_interval_join_sees_the_watermark_held_back_by_the_longer_wait() {
    // Left rows wait 4 s for a match: the watermark after the join is 4 s behind.
    let join = timed_side("l", "lv")
        .interval_join_with(
            timed_side("r", "rv"),
            streamform_ir::JoinKind::Left,
            &[("id", "id")],
            ("ts", "ts0", -4_000, 0),
        )
        .sink();
    let counts = from_model("counts", &join)
        .window(
            streamform_ir::WindowKind::Tumble { size: 10_000 },
            &["window_start", "window_end"],
            &[(AggFunc::Count, None)],
        )
        .sink();
    let mut sim = Simulator::new(&[join, counts]).unwrap();
    let row = |id: i64, ms: i64| vec![i64v(id), Value::String("v".into()), Value::Timestamp(ms)];
    sim.push_to(0, &row(1, 1_000)).unwrap();
    sim.push_to(1, &row(1, 2_000)).unwrap();
    // Both sources at 12 s: the window [0, 10 s) would close at 10 s on the sources' time,
    // but the join passes on 8 s, and L2 may still be padded into it.
    sim.push_to(0, &row(2, 9_000)).unwrap();
    sim.advance_watermark(12_000).unwrap();
    assert_eq!(sim.changes_emitted(), 0);
    // At 14 s the join pads L2 (9 s + 4 s has passed), then passes on 10 s: the window
    // counts the match and the padded row.
    sim.advance_watermark(14_000).unwrap();
    let out = sim.finish().unwrap();
    assert_eq!(out.changes.len(), 1);
    assert_eq!(out.changes.get(0).unwrap().row[2], i64v(2));
}

// Temporal joins (docs/joins.md, "Joins in time"): orders priced at the rate valid at their
// time. A probe row waits until the watermark (the least of both sources') passes its
// time; the rows one watermark releases come in arrival order.

fn temporal_steps(kind: streamform_ir::JoinKind) -> Vec<Vec<String>> {
    let orders = timed_side("orders", "ov");
    let rates = from_source(
        "j",
        "rates",
        &[
            ("id", DataType::Int64),
            ("rate", DataType::Int64),
            ("ts", DataType::Timestamp),
        ],
        kafka("rates"),
    )
    .event_time("ts", 0, LateEvents::Keep)
    .upsert(&["id"]);
    let plan = orders
        .temporal_join_with(rates, kind, &[("id", "id")], ("ts", "ts0"))
        .sink();
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    let order =
        |id: i64, v: &str, ms: i64| vec![i64v(id), Value::String(v.into()), Value::Timestamp(ms)];
    let rate = |rate: i64, ms: i64| vec![i64v(1), i64v(rate), Value::Timestamp(ms)];
    let steps: Vec<(usize, Vec<Value>)> = vec![
        (1, rate(100, 10_500)),
        (0, order(1, "a", 10_000)),
        (1, rate(200, 11_000)),
        (0, order(1, "b", 12_000)),
        (0, order(1, "c", 11_500)),
        (1, rate(300, 12_500)),
        (0, order(1, "d", 9_000)),
        (0, order(2, "e", 13_000)),
    ];
    let mut counts = Vec::new();
    for (source, row) in steps {
        sim.push_to(source, &row).unwrap();
        counts.push(sim.changes_emitted());
    }
    sim.advance_watermark(i64::MAX).unwrap();
    let changes = sim.finish().unwrap().changes;
    counts.push(changes.len());
    let mut seen = 0;
    counts
        .into_iter()
        .map(|now| {
            let step = changes
                .iter()
                .take(now)
                .skip(seen)
                .map(|c| {
                    assert_eq!(c.op, Op::Insert, "a temporal join only inserts");
                    let rate = match &c.row[4] {
                        Value::Int64(r) => r.to_string(),
                        _ => "∅".into(),
                    };
                    let v = match &c.row[1] {
                        Value::String(s) => s.to_string(),
                        other => other.render(),
                    };
                    format!("{v}{rate}")
                })
                .collect();
            seen = now;
            step
        })
        .collect()
}

#[test]
fn a_left_temporal_join_emits_each_order_with_the_rate_valid_at_its_time_in_arrival_order() {
    let expected: [&[&str]; 9] = [
        &[],
        // The watermark passes 10 s: no rate was valid yet.
        &["a∅"],
        &[],
        &[],
        &[],
        // At 12 s both orders are released, b first as it came first, though c is older.
        &["b200", "c200"],
        &[],
        // Late, released at the next watermark: the rate of 100 is gone by then.
        &["d∅"],
        // The end of the input: no rate for key 2.
        &["e∅"],
    ];
    assert_eq!(
        temporal_steps(streamform_ir::JoinKind::Left),
        expected.map(|s| s.iter().map(|x| x.to_string()).collect::<Vec<_>>())
    );
}

#[test]
fn an_inner_temporal_join_emits_only_the_orders_with_a_rate() {
    let flat: Vec<String> = temporal_steps(streamform_ir::JoinKind::Inner)
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(flat, ["b200", "c200"]);
}

/// The target's Sink is run in place by the driver when it is its input's only consumer:
/// its key check still stops the run, named for the Sink's model and key column, and rows
/// with a key still reach the changelog as the aggregate lends them.
#[test]
fn a_null_key_stops_the_run_at_an_upsert_sink_fed_straight_by_an_aggregate() {
    let mut plan = from_source(
        "totals",
        "orders",
        &[("customer", DataType::String), ("amount", DataType::Int64)],
        kafka("orders"),
    )
    .aggregate(&["customer"], &[(AggFunc::Sum, Some("amount"))])
    .sink();
    for node in &mut plan.nodes {
        if let streamform_ir::Operator::Sink { target, .. } = &mut node.op {
            *target = Some(streamform_ir::SinkTarget {
                connector: kafka("totals"),
                format: "json".into(),
            });
        }
    }
    let plan = [plan];
    let mut sim = Simulator::new(&plan).unwrap();
    sim.push(&[s("a"), i64v(2)]).unwrap();
    sim.push(&[s("a"), i64v(3)]).unwrap();
    let err = sim.push(&[NULL, i64v(1)]).unwrap_err();
    assert_eq!(err.failure, Failure::NullKey);
    assert_eq!(err.model, "totals");
    assert_eq!(err.column.as_deref(), Some("customer"));
    assert_eq!(err.event, 3);
    // Without the null key, both records arrive whole, the update with its before-image.
    assert_eq!(
        changes(&plan, &[vec![s("a"), i64v(2)], vec![s("a"), i64v(3)]]),
        vec![
            ins(vec![s("a"), i64v(2)]),
            upd(vec![s("a"), i64v(2)], vec![s("a"), i64v(5)])
        ]
    );
}

/// A Project that computes lends each change's mapped images from its own buffers: an
/// update keeps both, and a later change does not disturb what an earlier one wrote.
#[test]
fn a_computing_project_after_an_aggregate_maps_both_images_of_every_update() {
    let plan = [from_source(
        "doubled",
        "orders",
        &[("customer", DataType::Int64), ("amount", DataType::Int64)],
        kafka("orders"),
    )
    .aggregate(&["customer"], &[(AggFunc::Sum, Some("amount"))])
    .project(|m| {
        vec![
            (m.col("customer"), "customer"),
            (
                bin(
                    BinaryOp::Arith(ArithOp::Mul),
                    m.col("sum(amount)"),
                    lit_i64(2),
                ),
                "doubled",
            ),
        ]
    })
    .sink()];
    assert_eq!(
        changes(
            &plan,
            &[
                vec![i64v(1), i64v(10)],
                vec![i64v(2), i64v(1)],
                vec![i64v(1), i64v(5)],
            ]
        ),
        vec![
            ins(vec![i64v(1), i64v(20)]),
            ins(vec![i64v(2), i64v(2)]),
            upd(vec![i64v(1), i64v(20)], vec![i64v(1), i64v(30)]),
        ]
    );
}
