//! Top-N (docs/ranking.md) against hand-built plans: each of Flink's rank functions, with
//! and without the row number, change by change as Flink emits them.

mod common;

use common::*;
use streamform_ir::{AggFunc, DataType, ModelPlan, NodeId, NodeKind, Value};
use streamform_sim::{Arrival, Change, Op, Simulator};

/// Items with a price, in one category `a`.
fn items() -> common::Model {
    from_source(
        "top",
        "items",
        &[
            ("cat", DataType::String),
            ("item", DataType::String),
            ("price", DataType::Int32),
        ],
        kafka("items"),
    )
}

fn item(name: &str, price: i32) -> Vec<Value> {
    vec![s("a"), s(name), i32v(price)]
}

/// x5, y7, z6, w1, v9: y and z each push a row out, w never enters, v pushes z out.
fn priced() -> Vec<Vec<Value>> {
    vec![
        item("x", 5),
        item("y", 7),
        item("z", 6),
        item("w", 1),
        item("v", 9),
    ]
}

fn numbered(name: &str, price: i32, rn: i64) -> Vec<Value> {
    vec![s("a"), s(name), i32v(price), i64v(rn)]
}

#[test]
fn over_an_append_input_a_row_entering_the_top_pushes_the_last_one_out() {
    let top = items().rank(&["cat"], &[("price", true)], 2, true).sink();
    // With the row number, each row after the new one moves a place down (an update per
    // place); the row pushed past the top is not deleted, its place is taken.
    assert_eq!(
        changes(std::slice::from_ref(&top), &priced()),
        vec![
            ins(numbered("x", 5, 1)),
            upd(numbered("x", 5, 1), numbered("y", 7, 1)),
            ins(numbered("x", 5, 2)),
            upd(numbered("x", 5, 2), numbered("z", 6, 2)),
            upd(numbered("y", 7, 1), numbered("v", 9, 1)),
            upd(numbered("z", 6, 2), numbered("y", 7, 2)),
        ]
    );
    // Flink keeps the group a new row pushed past the top until a later one drops it: x5
    // stays after z6 arrives, and goes when v9 does.
    let mut sim = Simulator::new(std::slice::from_ref(&top)).unwrap();
    for e in &priced()[..4] {
        sim.push(e).unwrap();
    }
    let id = NodeId {
        model: "top".into(),
        kind: NodeKind::Rank,
        ordinal: 0,
    };
    let kept = |sim: &Simulator| -> Vec<Vec<Value>> {
        sim.keyed_state(&id)
            .unwrap()
            .into_iter()
            .map(|(_, r)| r)
            .collect()
    };
    assert_eq!(kept(&sim), vec![item("y", 7), item("z", 6), item("x", 5)]);
    sim.push(&priced()[4]).unwrap();
    assert_eq!(kept(&sim), vec![item("v", 9), item("y", 7), item("z", 6)]);
}

#[test]
fn a_top_of_one_over_an_append_input_replaces_its_row_only_with_a_better_one() {
    let top = items().rank(&["cat"], &[("price", true)], 1, false).sink();
    assert_eq!(
        changes(std::slice::from_ref(&top), &priced()),
        vec![
            ins(item("x", 5)),
            upd(item("x", 5), item("y", 7)),
            upd(item("y", 7), item("v", 9)),
        ]
    );
    // A tie is not better: the first row stays.
    assert_eq!(
        changes(std::slice::from_ref(&top), &[item("x", 5), item("y", 5)]),
        vec![ins(item("x", 5))]
    );
}

/// Revenue per item, ranked per category: the items' sums change, and the top with them.
fn revenue(number: bool) -> Vec<ModelPlan> {
    let totals = items()
        .aggregate(&["cat", "item"], &[(AggFunc::Sum, Some("price"))])
        .sink();
    let top = from_model("best", &totals)
        .rank(&["cat"], &[("sum(price)", true)], 2, number)
        .sink();
    vec![totals, top]
}

fn total(name: &str, sum: i64) -> Vec<Value> {
    vec![s("a"), s(name), i64v(sum)]
}

fn total_at(name: &str, sum: i64, rn: i64) -> Vec<Value> {
    vec![s("a"), s(name), i64v(sum), i64v(rn)]
}

/// x5, y3, z4, then y again (to 6), then x taken below everything (by a negative sale).
fn sales() -> Vec<Vec<Value>> {
    vec![
        item("x", 5),
        item("y", 3),
        item("z", 4),
        item("y", 3),
        item("x", -4),
    ]
}

#[test]
fn over_an_updating_input_a_row_leaving_the_top_is_replaced_by_the_next() {
    // Without the row number: rows enter and leave as inserts and deletes; an update of a
    // row is taken back, then added, each with what it moves.
    assert_eq!(
        changes(&revenue(false), &sales()),
        vec![
            ins(total("x", 5)),
            ins(total("y", 3)),
            del(total("y", 3)),
            ins(total("z", 4)),
            // y 3 → 6: taking back y 3 (past the top) says nothing; adding y 6 pushes z out.
            del(total("z", 4)),
            ins(total("y", 6)),
            // x 5 → 1: taking back x 5 deletes it and brings z 4 back in; x 1 is past the top.
            del(total("x", 5)),
            ins(total("z", 4)),
        ]
    );
}

#[test]
fn over_an_updating_input_the_row_number_updates_each_place_that_changes() {
    assert_eq!(
        changes(&revenue(true), &sales()),
        vec![
            ins(total_at("x", 5, 1)),
            ins(total_at("y", 3, 2)),
            upd(total_at("y", 3, 2), total_at("z", 4, 2)),
            // y 6 takes first place, x moves to second and z leaves it.
            upd(total_at("x", 5, 1), total_at("y", 6, 1)),
            upd(total_at("z", 4, 2), total_at("x", 5, 2)),
            // x 5 taken back: z moves up to second; x 1 is added past the top.
            upd(total_at("x", 5, 2), total_at("z", 4, 2)),
        ]
    );
}

#[test]
fn over_an_append_input_without_the_row_number_the_row_pushed_out_is_deleted() {
    let top = items().rank(&["cat"], &[("price", true)], 2, false).sink();
    assert_eq!(
        changes(std::slice::from_ref(&top), &priced()),
        vec![
            ins(item("x", 5)),
            ins(item("y", 7)),
            del(item("x", 5)),
            ins(item("z", 6)),
            del(item("z", 6)),
            ins(item("v", 9)),
        ]
    );
}

/// Clicks of visitor `a` on a page, at a second.
fn clicks() -> common::Model {
    from_source(
        "dedup",
        "clicks",
        &[
            ("visitor", DataType::String),
            ("page", DataType::String),
            ("at", DataType::Timestamp),
        ],
        kafka("clicks"),
    )
    .event_time("at", 10_000, streamform_ir::LateEvents::Keep)
}

fn click(page: &str, second: i64) -> Vec<Value> {
    vec![s("a"), s(page), Value::Timestamp(second * 1000)]
}

#[test]
fn keeping_the_last_row_by_time_a_later_or_equal_time_replaces_it() {
    let last = clicks()
        .deduplicate_by_time(&["visitor"], "at", true)
        .sink();
    let events = [
        click("x", 10),
        click("y", 10),
        click("z", 5),
        click("w", 20),
    ];
    assert_eq!(
        changes(std::slice::from_ref(&last), &events),
        vec![
            ins(click("x", 10)),
            upd(click("x", 10), click("y", 10)),
            upd(click("y", 10), click("w", 20)),
        ]
    );
}

#[test]
fn keeping_the_first_row_by_time_it_waits_for_the_watermark_and_a_late_row_is_dropped() {
    let first = clicks()
        .deduplicate_by_time(&["visitor"], "at", false)
        .sink();
    let mut sim = Simulator::new(std::slice::from_ref(&first)).unwrap();
    // The watermark is 10 s behind the latest click: y at 15 s is on time and earlier than
    // x, so it takes x's place; z at 30 s moves the watermark to 20 s, which emits y.
    for e in [click("x", 20), click("y", 15), click("z", 30)] {
        assert_eq!(sim.push(&e).unwrap(), streamform_sim::Arrival::Delivered);
    }
    let id = NodeId {
        model: "dedup".into(),
        kind: NodeKind::Rank,
        ordinal: 0,
    };
    // q at 12 s is behind the watermark: the deduplication drops it as late.
    assert_eq!(
        sim.push(&click("q", 12)).unwrap(),
        streamform_sim::Arrival::DroppedBy(id.clone())
    );
    let out = sim.finish().unwrap();
    assert_eq!(out.changes.to_vec(), vec![ins(click("y", 15))]);
    // Nothing more is emitted for `a`: its row was, and z is ignored.
    assert!(out.waiting_rows.is_empty(), "{:?}", out.waiting_rows.len());
}

/// Views of page `page` at millisecond `ms`.
fn page_view(page: &str, ms: i64) -> Vec<Value> {
    vec![s(page), Value::Timestamp(ms)]
}

#[test]
fn a_top_per_window_inserts_each_windows_best_rows_once_when_it_fires() {
    let ranked = from_source(
        "top",
        "views",
        &[("page", DataType::String), ("ts", DataType::Timestamp)],
        kafka("views"),
    )
    .event_time("ts", 0, streamform_ir::LateEvents::Keep)
    .window(
        streamform_ir::WindowKind::Tumble { size: 10_000 },
        &["page", "window_start", "window_end"],
        &[(AggFunc::Count, None)],
    )
    .rank(
        &["window_start", "window_end"],
        &[("count(*)", true), ("page", false)],
        2,
        true,
    )
    .sink();
    // In [0, 10s): b twice, c twice, a once. At 10s the window fires: its two best pages,
    // b before c by name, with their places; nothing before, nothing after.
    let events = [
        page_view("c", 1000),
        page_view("b", 2000),
        page_view("a", 3000),
        page_view("c", 4000),
        page_view("b", 5000),
        page_view("a", 12_000),
    ];
    let row = |page: &str, views: i64, place: i64| {
        vec![
            s(page),
            Value::Timestamp(0),
            Value::Timestamp(10_000),
            i64v(views),
            i64v(place),
        ]
    };
    assert_eq!(
        changes(std::slice::from_ref(&ranked), &events),
        vec![ins(row("b", 2, 1)), ins(row("c", 2, 2))]
    );
}

fn node(model: &str, kind: NodeKind, ordinal: u32) -> NodeId {
    NodeId {
        model: model.into(),
        kind,
        ordinal,
    }
}

/// E9's left side (key, value, seconds): a1@1, b5@2, a3@3, b2@4, c9@5, a7@11, b8@12, then
/// a2@6, late (the watermark is at 12s).
fn e9_events() -> Vec<Vec<Value>> {
    [
        ("a", 1, 1),
        ("b", 5, 2),
        ("a", 3, 3),
        ("b", 2, 4),
        ("c", 9, 5),
        ("a", 7, 11),
        ("b", 8, 12),
        ("a", 2, 6),
    ]
    .iter()
    .map(|&(k, v, t)| vec![s(k), i64v(v), Value::Timestamp(t * 1000)])
    .collect()
}

/// Rows (k, v, ts) on event time, the watermark at the latest ts, late rows kept.
fn keyed_values_on_time(model: &str) -> common::Model {
    from_source(
        model,
        "l",
        &[
            ("k", DataType::String),
            ("v", DataType::Int64),
            ("ts", DataType::Timestamp),
        ],
        kafka("l"),
    )
    .event_time("ts", 0, streamform_ir::LateEvents::Keep)
}

fn e9_dedup(descending: bool) -> ModelPlan {
    keyed_values_on_time("firsts")
        .window_table(streamform_ir::WindowKind::Tumble { size: 10_000 })
        .window_deduplicate(&["k"], "ts", descending)
        .sink()
}

/// (key, value, window end in seconds) of each insert.
fn keyed_values(changes: &[Change]) -> Vec<(String, i64, i64)> {
    changes
        .iter()
        .map(|c| {
            assert_eq!(c.op, Op::Insert, "a window deduplication inserts only");
            match (&c.row[0], &c.row[1], &c.row[4]) {
                (Value::String(k), Value::Int64(v), Value::Timestamp(end)) => {
                    (k.to_string(), *v, end / 1000)
                }
                other => panic!("{other:?}"),
            }
        })
        .collect()
}

#[test]
fn a_window_deduplication_keeps_each_windows_first_or_last_row_and_drops_late_rows() {
    // Flink's E9 (research checked on 2.0 and 2.2): first rows a1, b5, c9, then a7, b8;
    // last rows a3, b2, c9, then a7, b8. a2@6 arrives after [0, 10s) fired: dropped.
    let events = {
        let mut e = e9_events();
        e.push(vec![s("z"), i64v(0), Value::Timestamp(30_000)]);
        e
    };
    let firsts = e9_dedup(false);
    // The late row is dropped, not processed.
    let changes = |plan: &ModelPlan| {
        let out = streamform_sim::run(std::slice::from_ref(plan), &events).unwrap();
        assert_eq!(out.events_processed, events.len() - 1);
        out.changes.to_vec()
    };
    let expect = |rows: &[(&str, i64, i64)]| -> Vec<(String, i64, i64)> {
        rows.iter()
            .map(|&(k, v, e)| (k.to_string(), v, e))
            .collect()
    };
    assert_eq!(
        keyed_values(&changes(&firsts)),
        expect(&[
            ("a", 1, 10),
            ("b", 5, 10),
            ("c", 9, 10),
            ("a", 7, 20),
            ("b", 8, 20)
        ])
    );
    let lasts = e9_dedup(true);
    assert_eq!(
        keyed_values(&changes(&lasts)),
        expect(&[
            ("a", 3, 10),
            ("b", 2, 10),
            ("c", 9, 10),
            ("a", 7, 20),
            ("b", 8, 20)
        ])
    );
    let mut sim = Simulator::new(std::slice::from_ref(&firsts)).unwrap();
    let arrivals: Vec<Arrival> = e9_events().iter().map(|e| sim.push(e).unwrap()).collect();
    assert_eq!(
        arrivals.last(),
        Some(&Arrival::DroppedBy(node("firsts", NodeKind::Rank, 0)))
    );
}

#[test]
fn of_rows_at_one_time_a_window_deduplication_keeps_the_first_ascending_and_the_last_descending() {
    let events = [
        vec![s("a"), i64v(1), Value::Timestamp(4000)],
        vec![s("a"), i64v(2), Value::Timestamp(4000)],
        vec![s("a"), i64v(3), Value::Timestamp(4000)],
        vec![s("a"), i64v(0), Value::Timestamp(5000)],
        vec![s("z"), i64v(0), Value::Timestamp(20_000)],
    ];
    let first = keyed_values(&changes(&[e9_dedup(false)], &events));
    let last = keyed_values(&changes(&[e9_dedup(true)], &events));
    assert_eq!(first, vec![("a".to_string(), 1, 10)]);
    assert_eq!(last, vec![("a".to_string(), 0, 10)]);
    let ties = &events[..3]
        .iter()
        .cloned()
        .chain([vec![s("z"), i64v(0), Value::Timestamp(20_000)]])
        .collect::<Vec<_>>();
    assert_eq!(
        keyed_values(&changes(&[e9_dedup(true)], ties)),
        vec![("a".to_string(), 3, 10)]
    );
}

#[test]
fn a_top_over_a_hopping_window_table_ranks_each_row_in_each_of_its_windows() {
    // HOP slide 5s, size 10s: a row at 6s is in [0, 10) and [5, 15). The top 1 by value
    // per window. A row at 3s arrives when the watermark is at 9.999s: [0, 10) has fired,
    // and [-5, 5) before it, so the whole row is late; a row at 7s then is late for
    // [0, 10) only and still ranks in [5, 15). [10, 20) holds no row and emits nothing.
    let top = keyed_values_on_time("top")
        .window_table(streamform_ir::WindowKind::Hop {
            slide: 5000,
            size: 10_000,
        })
        .rank(&["window_start", "window_end"], &[("v", true)], 1, true)
        .sink();
    let row = |k: &str, v: i64, t: i64| vec![s(k), i64v(v), Value::Timestamp(t)];
    let mut sim = Simulator::new(std::slice::from_ref(&top)).unwrap();
    let arrivals: Vec<Arrival> = [
        row("a", 1, 1000),
        row("b", 5, 6000),
        row("c", 2, 9999),
        row("d", 9, 3000),
        row("e", 7, 7000),
        row("f", 1, 30_000),
    ]
    .iter()
    .map(|e| sim.push(e).unwrap())
    .collect();
    assert_eq!(
        arrivals[3],
        Arrival::DroppedBy(node("top", NodeKind::Rank, 0))
    );
    assert_eq!(arrivals[4], Arrival::Delivered);
    let out = sim.finish().unwrap();
    let got: Vec<(String, i64, i64, i64)> = out
        .changes
        .iter()
        .map(|c| match (&c.row[0], &c.row[1], &c.row[4], &c.row[6]) {
            (Value::String(k), Value::Int64(v), Value::Timestamp(end), Value::Int64(rn)) => {
                (k.to_string(), *v, end / 1000, *rn)
            }
            other => panic!("{other:?}"),
        })
        .collect();
    let want = |k: &str, v, e, rn| (k.to_string(), v, e, rn);
    assert_eq!(
        got,
        vec![want("a", 1, 5, 1), want("b", 5, 10, 1), want("e", 7, 15, 1),]
    );
}
