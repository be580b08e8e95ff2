//! OVER aggregations (docs/over.md) against hand-built plans: each of Flink's event-time
//! OVER functions, rows emitted as the watermark passes them, rows of equal time as ROWS
//! and RANGE treat them, bounded frames taking rows back, and the rows each drops as late.

mod common;

use common::*;
use streamform_ir::{AggFunc, DataType, FrameUnit, LateEvents, ModelPlan, NodeId, NodeKind, Value};
use streamform_sim::{Arrival, Simulator};

/// Orders of a customer, an amount at a second; the watermark 5 s behind the latest.
fn orders() -> common::Model {
    from_source(
        "running",
        "orders",
        &[
            ("customer", DataType::String),
            ("amount", DataType::Int32),
            ("at", DataType::Timestamp),
        ],
        kafka("orders"),
    )
    .event_time("at", 5_000, LateEvents::Keep)
}

fn order(customer: &str, amount: Option<i32>, second: i64) -> Vec<Value> {
    vec![
        s(customer),
        amount.map_or(Value::Null, i32v),
        Value::Timestamp(second * 1000),
    ]
}

/// An order with the calls' results after it.
fn out(customer: &str, amount: Option<i32>, second: i64, results: &[Value]) -> Vec<Value> {
    let mut row = order(customer, amount, second);
    row.extend_from_slice(results);
    row
}

fn over_id() -> NodeId {
    NodeId {
        model: "running".into(),
        kind: NodeKind::Over,
        ordinal: 0,
    }
}

/// The changes `plan` emits for `events`, then once the watermark passes `flush` seconds.
fn run(plan: &ModelPlan, events: &[Vec<Value>], flush: i64) -> Vec<streamform_sim::Change> {
    let mut sim = Simulator::new(std::slice::from_ref(plan)).unwrap();
    for e in events {
        sim.push(e).unwrap();
    }
    sim.advance_watermark(flush * 1000).unwrap();
    sim.finish().unwrap().changes.to_vec()
}

const SUM_COUNT: [(AggFunc, Option<&str>); 2] =
    [(AggFunc::Sum, Some("amount")), (AggFunc::Count, None)];

#[test]
fn a_row_waits_for_the_watermark_and_range_gives_rows_of_equal_time_one_result() {
    let plan = orders()
        .over(&["customer"], FrameUnit::Range, None, &SUM_COUNT)
        .sink();
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    // a at 10 s and 10 s again, b at 12 s: the watermark is at 7 s, nothing is final.
    for e in [
        order("a", Some(1), 10),
        order("a", Some(2), 10),
        order("b", Some(5), 12),
    ] {
        assert_eq!(sim.push(&e).unwrap(), Arrival::Delivered);
    }
    // a at 16 s moves the watermark to 11 s: a's two rows at 10 s are final, both with the
    // sum of both.
    sim.push(&order("a", Some(4), 16)).unwrap();
    let out_so_far = sim.finish().unwrap();
    assert_eq!(
        out_so_far.changes.to_vec(),
        vec![
            ins(out("a", Some(1), 10, &[i64v(3), i64v(2)])),
            ins(out("a", Some(2), 10, &[i64v(3), i64v(2)])),
        ]
    );
    // b at 12 s and a at 16 s still wait.
    assert_eq!(out_so_far.waiting_rows.len(), 1);
    assert_eq!(out_so_far.waiting_rows[0].count, 2);
}

#[test]
fn rows_gives_rows_of_equal_time_their_own_result_in_arrival_order() {
    let plan = orders()
        .over(&["customer"], FrameUnit::Rows, None, &SUM_COUNT)
        .sink();
    let events = [
        order("a", Some(1), 10),
        order("a", Some(2), 10),
        order("b", Some(5), 10),
        order("a", Some(4), 11),
    ];
    assert_eq!(
        run(&plan, &events, 20),
        vec![
            ins(out("a", Some(1), 10, &[i64v(1), i64v(1)])),
            ins(out("a", Some(2), 10, &[i64v(3), i64v(2)])),
            ins(out("b", Some(5), 10, &[i64v(5), i64v(1)])),
            ins(out("a", Some(4), 11, &[i64v(7), i64v(3)])),
        ]
    );
}

#[test]
fn rows_preceding_takes_the_row_that_leaves_the_frame_back() {
    let plan = orders()
        .over(
            &["customer"],
            FrameUnit::Rows,
            Some(1),
            &[
                (AggFunc::Sum, Some("amount")),
                (AggFunc::Min, Some("amount")),
                (AggFunc::Max, Some("amount")),
            ],
        )
        .sink();
    let events = [
        order("a", Some(5), 10),
        order("a", Some(1), 11),
        order("a", Some(7), 12),
        order("a", Some(3), 12),
    ];
    // Each row with the one before it: 5; 5+1; 1+7; 7+3.
    assert_eq!(
        run(&plan, &events, 20),
        vec![
            ins(out("a", Some(5), 10, &[i64v(5), i32v(5), i32v(5)])),
            ins(out("a", Some(1), 11, &[i64v(6), i32v(1), i32v(5)])),
            ins(out("a", Some(7), 12, &[i64v(8), i32v(1), i32v(7)])),
            ins(out("a", Some(3), 12, &[i64v(10), i32v(3), i32v(7)])),
        ]
    );
}

#[test]
fn range_preceding_takes_back_the_rows_more_than_the_frame_before() {
    let plan = orders()
        .over(&["customer"], FrameUnit::Range, Some(10_000), &SUM_COUNT)
        .sink();
    let events = [
        order("a", Some(1), 10),
        order("a", Some(2), 15),
        // 20 s: 10 s is exactly 10 s before, so still in the frame.
        order("a", Some(4), 20),
        // 21 s: 10 s has left it; the two rows at 21 s share one result.
        order("a", Some(8), 21),
        order("a", Some(16), 21),
    ];
    assert_eq!(
        run(&plan, &events, 30),
        vec![
            ins(out("a", Some(1), 10, &[i64v(1), i64v(1)])),
            ins(out("a", Some(2), 15, &[i64v(3), i64v(2)])),
            ins(out("a", Some(4), 20, &[i64v(7), i64v(3)])),
            ins(out("a", Some(8), 21, &[i64v(30), i64v(4)])),
            ins(out("a", Some(16), 21, &[i64v(30), i64v(4)])),
        ]
    );
}

#[test]
fn nulls_are_skipped_and_a_frame_of_nulls_sums_to_null() {
    let plan = orders()
        .over(
            &["customer"],
            FrameUnit::Rows,
            Some(0),
            &[
                (AggFunc::Sum, Some("amount")),
                (AggFunc::Count, Some("amount")),
                (AggFunc::Avg, Some("amount")),
            ],
        )
        .sink();
    let events = [order("a", Some(4), 10), order("a", None, 11)];
    assert_eq!(
        run(&plan, &events, 20),
        vec![
            ins(out("a", Some(4), 10, &[i64v(4), i64v(1), i32v(4)])),
            ins(out("a", None, 11, &[Value::Null, i64v(0), Value::Null])),
        ]
    );
}

#[test]
fn a_frame_back_to_the_first_row_drops_a_row_at_or_behind_the_watermark() {
    let plan = orders()
        .over(&["customer"], FrameUnit::Range, None, &SUM_COUNT)
        .sink();
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    sim.push(&order("a", Some(1), 10)).unwrap();
    sim.push(&order("b", Some(1), 20)).unwrap();
    // The watermark is at 15 s: a row of a new partition at 15 s is at it, so late.
    assert_eq!(
        sim.push(&order("c", Some(1), 15)).unwrap(),
        Arrival::DroppedBy(over_id())
    );
    assert_eq!(
        sim.push(&order("a", Some(1), 16)).unwrap(),
        Arrival::Delivered
    );
}

#[test]
fn a_bounded_frame_drops_only_rows_at_or_before_its_partitions_last_time() {
    let plan = orders()
        .over(&["customer"], FrameUnit::Rows, Some(2), &SUM_COUNT)
        .sink();
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    sim.push(&order("a", Some(1), 10)).unwrap();
    // b at 30 s moves the watermark to 25 s, which emits a's row: a's last time is 10 s.
    sim.push(&order("b", Some(1), 30)).unwrap();
    // c at 12 s is behind the watermark, but its partition has emitted nothing: Flink
    // keeps it, and emits it at the next watermark.
    assert_eq!(
        sim.push(&order("c", Some(3), 12)).unwrap(),
        Arrival::Delivered
    );
    // a at 10 s is at a's last time: dropped; a at 11 s is after it: kept.
    assert_eq!(
        sim.push(&order("a", Some(5), 10)).unwrap(),
        Arrival::DroppedBy(over_id())
    );
    assert_eq!(
        sim.push(&order("a", Some(7), 11)).unwrap(),
        Arrival::Delivered
    );
    sim.advance_watermark(26_000).unwrap();
    assert_eq!(
        sim.finish().unwrap().changes.to_vec(),
        vec![
            ins(out("a", Some(1), 10, &[i64v(1), i64v(1)])),
            ins(out("a", Some(7), 11, &[i64v(8), i64v(2)])),
            ins(out("c", Some(3), 12, &[i64v(3), i64v(1)])),
        ]
    );
}

#[test]
fn a_range_frame_forgets_a_partition_one_and_a_half_frames_after_its_last_row() {
    let plan = orders()
        .over(&["customer"], FrameUnit::Range, Some(10_000), &SUM_COUNT)
        .sink();
    let mut sim = Simulator::new(std::slice::from_ref(&plan)).unwrap();
    sim.push(&order("a", Some(1), 10)).unwrap();
    // The cleanup is at 10 s + 15 s + 1 ms. A watermark of 25 s leaves a's state.
    sim.advance_watermark(25_000).unwrap();
    assert_eq!(
        sim.push(&order("a", Some(2), 10)).unwrap(),
        Arrival::DroppedBy(over_id())
    );
    // Past the cleanup, a's last time is forgotten: a row at 9 s, far behind the
    // watermark, is kept and emitted alone at the next watermark.
    sim.advance_watermark(25_001).unwrap();
    assert_eq!(
        sim.push(&order("a", Some(4), 9)).unwrap(),
        Arrival::Delivered
    );
    sim.advance_watermark(25_002).unwrap();
    assert_eq!(
        sim.finish().unwrap().changes.to_vec(),
        vec![
            ins(out("a", Some(1), 10, &[i64v(1), i64v(1)])),
            ins(out("a", Some(4), 9, &[i64v(4), i64v(1)])),
        ]
    );
}
