//! Memory of the simulator at 1,000,000 keys, the docs' customer_metrics model (sum(amount)
//! decimal(38,9) grouped by customer_id) with one event per customer. Two measurements:
//!
//! - **keyed state**: the events are pushed one at a time as they are generated and a HAVING
//!   that nothing passes follows the aggregate, so what the simulator holds at the end is the
//!   aggregate's 1,000,000 keys and nothing else;
//! - **fixture-sized run**: `run` over the 1,000,000 events held in memory, returning the
//!   1,000,000-record changelog, as a fixture of that size would.
//!
//! - **window state**: a 1-minute tumbling window over 10,000 customers, 10,000 events a
//!   minute, pushed one at a time with a HAVING that nothing passes after the window, over
//!   1,000,000 and then 10,000,000 events: the state is the windows open at once, so both
//!   peaks should be the same.
//! - **interval join state**: orders and shipments over 1,000,000 and 10,000,000 events,
//!   matched within a minute by a condition no pair meets: the rows kept are bounded by the
//!   watermark, not by the events seen.
//!
//! Each reports the peak of live heap bytes (counted by a wrapper around mimalloc, the
//! binary's allocator) and the process's peak resident memory (VmHWM, Linux).
//!
//! Run: `cargo bench -j 2 -p streamform-sim --bench memory`.

#[path = "../tests/common/mod.rs"]
mod common;

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{bin, customer_metrics, from_source, kafka, lit_i64};
use streamform_ir::{AggFunc, BinaryOp, DataType, Decimal, ModelPlan, Value};
use streamform_sim::Simulator;

/// mimalloc, counting the bytes live and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static INNER: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to mimalloc unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        unsafe { INNER.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { INNER.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        unsafe { INNER.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Old and new may both be live while the contents move.
        grew(new_size);
        let p = unsafe { INNER.realloc(ptr, layout, new_size) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const KEYS: u64 = 1_000_000;
const MIB: f64 = 1024.0 * 1024.0;

fn resident_peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn event(i: u64) -> Vec<Value> {
    vec![
        Value::Int64(i as i64),
        Value::Decimal(Decimal::new(i128::from(i % 99_999 + 1) * 10_000_000, 9)),
    ]
}

/// customer_metrics with `HAVING total_spend < 0`: every key is kept, nothing is emitted.
fn metrics_emitting_nothing() -> ModelPlan {
    from_source(
        "customer_metrics",
        "orders",
        &[("customer_id", DataType::Int64), ("amount", common::DEC)],
        kafka("orders"),
    )
    .aggregate(&["customer_id"], &[(AggFunc::Sum, Some("amount"))])
    .filter(|m| bin(BinaryOp::Lt, m.col("sum(amount)"), lit_i64(0)))
    .sink()
}

/// Per customer and minute, count(*), with `HAVING count(*) < 0`: nothing is emitted.
fn windows_emitting_nothing() -> ModelPlan {
    from_source(
        "per_minute",
        "orders",
        &[
            ("customer_id", DataType::Int64),
            ("amount", common::DEC),
            ("ordered_at", DataType::Timestamp),
        ],
        kafka("orders"),
    )
    .event_time("ordered_at", 1000, streamform_ir::LateEvents::Drop)
    .window(
        streamform_ir::WindowKind::Tumble { size: 60_000 },
        &["customer_id", "window_start", "window_end"],
        &[(AggFunc::Count, None)],
    )
    .filter(|m| bin(BinaryOp::Lt, m.col("count(*)"), lit_i64(0)))
    .sink()
}

/// The peak live heap of pushing `n` timed events (6 ms apart, over 10,000 customers)
/// through the window.
fn window_peak(n: u64) -> usize {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let mut sim = Simulator::new(&[windows_emitting_nothing()]).expect("a valid chain");
    for i in 0..n {
        let mut e = event((i * 7919) % 10_000);
        e.push(Value::Timestamp(1_788_084_000_000 + 6 * i as i64));
        sim.push(&e).expect("runs");
    }
    let peak = PEAK.load(Ordering::Relaxed) - base;
    assert!(sim.finish().expect("runs").changes.is_empty());
    peak
}

/// The live heap the inner join of two 500,000-event streams over 10,000 keys holds at the
/// end (both sides kept whole), with a condition no pair meets, so nothing is emitted.
fn join_held() -> usize {
    use streamform_ir::{Expr, JoinKind, Operator};
    let side = |source: &str| {
        from_source(
            "pairs",
            source,
            &[("k", DataType::Int64), ("v", DataType::Int64)],
            kafka(source),
        )
    };
    let mut plan = side("left")
        .join_with(side("right"), JoinKind::Inner, &[("k", "k")])
        .sink();
    for node in &mut plan.nodes {
        if let Operator::Join { filter, .. } = &mut node.op {
            let column = |name: &str| Expr::Column {
                name: name.into(),
                ty: DataType::Int64,
            };
            *filter = Some(bin(BinaryOp::Lt, column("v"), column("v0")));
        }
    }
    let base = LIVE.load(Ordering::Relaxed);
    let mut sim = Simulator::new(&[plan]).expect("a valid plan");
    for i in 0..1_000_000u64 {
        let key = (i.wrapping_mul(7919) / 2) % 10_000;
        // Left values above every right value: `v < v0` never holds.
        let value = if i % 2 == 0 { 100 + i as i64 } else { 0 };
        sim.push_to(
            (i % 2) as usize,
            &[Value::Int64(key as i64), Value::Int64(value)],
        )
        .expect("runs");
    }
    let held = LIVE.load(Ordering::Relaxed) - base;
    assert!(sim.finish().expect("runs").changes.is_empty());
    held
}

/// The peak live heap of an interval join of orders and shipments (each order shipped 30 s
/// after it, one order every 6 ms, each its own key), matched within a minute but for a
/// condition no pair meets, so nothing is emitted: `n` events in all, half on each side.
fn interval_join_peak(n: u64) -> usize {
    use streamform_ir::{Expr, JoinKind, LateEvents, Operator};
    let side = |source: &str| {
        from_source(
            "shipped",
            source,
            &[
                ("k", DataType::Int64),
                ("v", DataType::Int64),
                ("t", DataType::Timestamp),
            ],
            kafka(source),
        )
        .event_time("t", 0, LateEvents::Keep)
    };
    let mut plan = side("orders")
        .interval_join_with(
            side("shipments"),
            JoinKind::Inner,
            &[("k", "k")],
            ("t", "t0", -60_000, 0),
        )
        .sink();
    for node in &mut plan.nodes {
        if let Operator::IntervalJoin { filter, .. } = &mut node.op {
            let column = |name: &str| Expr::Column {
                name: name.into(),
                ty: DataType::Int64,
            };
            *filter = Some(bin(BinaryOp::Lt, column("v"), column("v0")));
        }
    }
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let mut sim = Simulator::new(&[plan]).expect("a valid plan");
    let start = 1_788_084_000_000i64;
    for i in 0..n / 2 {
        let at = start + 6 * i as i64;
        let key = Value::Int64(i as i64);
        // Orders' values above every shipment's: `v < v0` never holds.
        sim.push_to(0, &[key.clone(), Value::Int64(1), Value::Timestamp(at)])
            .expect("runs");
        sim.push_to(1, &[key, Value::Int64(0), Value::Timestamp(at + 30_000)])
            .expect("runs");
    }
    let peak = PEAK.load(Ordering::Relaxed) - base;
    assert!(sim.finish().expect("runs").changes.is_empty());
    peak
}

fn main() {
    // criterion's harness flags are ignored: these are measurements, printed once.
    let small = interval_join_peak(1_000_000);
    let large = interval_join_peak(10_000_000);
    println!(
        "interval join state, a minute of orders and shipments kept: {:.1} MiB peak heap over 1,000,000 events, {:.1} MiB over 10,000,000",
        small as f64 / MIB,
        large as f64 / MIB
    );
    let join = join_held();
    println!(
        "join state, 2 x 500,000 events over 10,000 keys: {:.0} MiB live at the end ({:.0} bytes a row)",
        join as f64 / MIB,
        join as f64 / 1_000_000.0
    );
    let small = window_peak(1_000_000);
    let large = window_peak(10_000_000);
    println!(
        "window state, 10,000 customers, 1-minute windows: {:.1} MiB peak heap over 1,000,000 events, {:.1} MiB over 10,000,000",
        small as f64 / MIB,
        large as f64 / MIB
    );

    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let mut sim = Simulator::new(&[metrics_emitting_nothing()]).expect("a valid chain");
    for i in 0..KEYS {
        sim.push(&event(i)).expect("runs");
    }
    let held = LIVE.load(Ordering::Relaxed) - base;
    let peak = PEAK.load(Ordering::Relaxed) - base;
    let out = sim.finish().expect("runs");
    assert!(out.changes.is_empty());
    println!(
        "keyed state, 1,000,000 keys: {:.0} MiB live at the end, {:.0} MiB peak heap, {:.0} MiB peak resident",
        held as f64 / MIB,
        peak as f64 / MIB,
        resident_peak_mib()
    );

    let base = LIVE.load(Ordering::Relaxed);
    let events: Vec<Vec<Value>> = (0..KEYS).map(event).collect();
    let with_events = LIVE.load(Ordering::Relaxed);
    PEAK.store(with_events, Ordering::Relaxed);
    let out = streamform_sim::run(&[customer_metrics(common::DEC)], &events).expect("runs");
    let peak = PEAK.load(Ordering::Relaxed) - base;
    let output = LIVE.load(Ordering::Relaxed) - with_events;
    println!(
        "fixture-sized run: {:.0} MiB peak heap (events {:.0} MiB, changelog of {} records {:.0} MiB, the rest keyed state and buffers), {:.0} MiB peak resident",
        peak as f64 / MIB,
        (with_events - base) as f64 / MIB,
        out.changes.len(),
        output as f64 / MIB,
        resident_peak_mib()
    );
}
