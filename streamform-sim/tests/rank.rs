//! Top-N (docs/ranking.md) against hand-built plans: each of Flink's rank functions, with
//! and without the row number, change by change as Flink emits them.

mod common;

use common::*;
use streamform_ir::{AggFunc, DataType, ModelPlan, NodeId, NodeKind, Value};
use streamform_sim::Simulator;

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
