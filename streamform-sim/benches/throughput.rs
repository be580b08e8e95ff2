//! Throughput of the simulator on the docs' customer_metrics model (Source → Aggregate
//! group by customer_id, sum(amount) decimal(38,9) → Project → Sink): 1,000,000 events over
//! 10,000 customers; and the same events on event time through a 1-minute tumbling window
//! (count and sum per customer and minute; 10,000 events a minute); and an inner join of two
//! 500,000-event streams over 10,000 keys. Run with
//! `cargo bench -p streamform-sim -- --sample-size 10`.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;

// The allocator the binary uses.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use streamform_ir::{Decimal, Value};

const EVENTS: usize = 1_000_000;
const CUSTOMERS: u64 = 10_000;

/// Deterministic events: customers visited in a scrambled order, amounts from 0.01 to
/// 999.99 at scale 9.
fn events() -> Vec<Vec<Value>> {
    (0..EVENTS as u64)
        .map(|i| {
            let customer = (i * 7919) % CUSTOMERS;
            let cents = (i.wrapping_mul(2_654_435_761) % 99_999) + 1;
            vec![
                Value::Int64(customer as i64),
                Value::Decimal(Decimal::new(i128::from(cents) * 10_000_000, 9)),
            ]
        })
        .collect()
}

fn throughput(c: &mut Criterion) {
    let plan = [common::customer_metrics(common::DEC)];
    let events = events();
    let mut group = c.benchmark_group("customer_metrics");
    group.throughput(Throughput::Elements(EVENTS as u64));
    group.bench_function("1M events, 10k customers", |b| {
        b.iter(|| {
            let out = streamform_sim::run(black_box(&plan), black_box(&events)).expect("runs");
            assert_eq!(out.changes.len(), EVENTS);
            out
        })
    });
    group.finish();
}

/// The events with a time, 6 ms apart: 10,000 a minute, 100 minutes in all.
fn timed_events() -> Vec<Vec<Value>> {
    events()
        .into_iter()
        .enumerate()
        .map(|(i, mut e)| {
            e.push(Value::Timestamp(1_788_084_000_000 + 6 * i as i64));
            e
        })
        .collect()
}

fn windowed() -> streamform_ir::ModelPlan {
    common::from_source(
        "per_minute",
        "orders",
        &[
            ("customer_id", streamform_ir::DataType::Int64),
            ("amount", common::DEC),
            ("ordered_at", streamform_ir::DataType::Timestamp),
        ],
        common::kafka("orders"),
    )
    .event_time("ordered_at", 1000, streamform_ir::LateEvents::Drop)
    .window(
        streamform_ir::WindowKind::Tumble { size: 60_000 },
        &["customer_id", "window_start", "window_end"],
        &[
            (streamform_ir::AggFunc::Sum, Some("amount")),
            (streamform_ir::AggFunc::Count, None),
        ],
    )
    .sink()
}

fn window_throughput(c: &mut Criterion) {
    let plan = [windowed()];
    let events = timed_events();
    let mut group = c.benchmark_group("tumbling_window");
    group.throughput(Throughput::Elements(EVENTS as u64));
    group.bench_function("1M events, 10k customers, 1-minute windows", |b| {
        b.iter(|| {
            let out = streamform_sim::run(black_box(&plan), black_box(&events)).expect("runs");
            // Every customer once a minute; the 100th minute stays open.
            assert_eq!(out.changes.len(), 99 * CUSTOMERS as usize);
            out
        })
    });
    group.finish();
}

/// 500,000 events on each side of a join over 10,000 keys, taken in turns: the key
/// scrambled, and a value from 0 to 49 on each side.
fn join_events() -> Vec<(usize, Vec<Value>)> {
    (0..EVENTS as u64)
        .map(|i| {
            let key = (i.wrapping_mul(7919) / 2) % CUSTOMERS;
            let value = (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % 50;
            (
                (i % 2) as usize,
                vec![Value::Int64(key as i64), Value::Int64(value as i64)],
            )
        })
        .collect()
}

/// An inner join on the key whose condition also asks for equal values: each arriving row
/// is compared with the other side's rows of its key (50 of them at the end), and about
/// one pair in 50 matches.
fn joined() -> streamform_ir::ModelPlan {
    use streamform_ir::{BinaryOp, DataType, Expr, JoinKind, Operator};
    let side = |source: &str| {
        common::from_source(
            "pairs",
            source,
            &[("k", DataType::Int64), ("v", DataType::Int64)],
            common::kafka(source),
        )
    };
    let mut plan = side("left")
        .join_with(side("right"), JoinKind::Inner, &[("k", "k")])
        .sink();
    let column = |name: &str| Expr::Column {
        name: name.into(),
        ty: DataType::Int64,
    };
    for node in &mut plan.nodes {
        if let Operator::Join { filter, .. } = &mut node.op {
            *filter = Some(common::bin(BinaryOp::Eq, column("v"), column("v0")));
        }
    }
    plan
}

fn join_throughput(c: &mut Criterion) {
    let plan = [joined()];
    let events = join_events();
    let run = |plan: &[streamform_ir::ModelPlan]| {
        let mut sim = streamform_sim::Simulator::new(plan).expect("builds");
        for (side, row) in &events {
            sim.push_to(*side, row).expect("runs");
        }
        sim.finish().expect("runs")
    };
    let matched = run(&plan).changes.len();
    // One pair in about 50 of the 25,000,000 tested.
    assert_eq!(matched, 484_856);
    let mut group = c.benchmark_group("inner_join");
    group.throughput(Throughput::Elements(EVENTS as u64));
    group.bench_function("2 x 500k events, 10k keys", |b| {
        b.iter(|| {
            let out = run(black_box(&plan));
            assert_eq!(out.changes.len(), matched);
            out
        })
    });
    group.finish();
}

criterion_group!(benches, throughput, window_throughput, join_throughput);
criterion_main!(benches);
