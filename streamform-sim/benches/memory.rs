//! Peak memory of the simulator holding 1,000,000 keys: the docs' customer_metrics model
//! (sum(amount) decimal(38,9) grouped by customer_id) over 1,000,000 events, one per
//! customer. Prints the process's peak resident memory (VmHWM, Linux) before the run (the
//! events alone) and after it (events, keyed state and the emitted changelog).
//!
//! Run: `cargo bench -j 2 -p streamform-sim --bench memory`.

#[path = "../tests/common/mod.rs"]
mod common;

use streamform_ir::{Decimal, Value};

// The allocator the binary uses.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const KEYS: u64 = 1_000_000;

fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() {
    // criterion's harness flags are ignored: this is a measurement, printed once.
    let events: Vec<Vec<Value>> = (0..KEYS)
        .map(|i| {
            vec![
                Value::Int64(i as i64),
                Value::Decimal(Decimal::new(i128::from(i % 99_999 + 1) * 10_000_000, 9)),
            ]
        })
        .collect();
    let before = peak_mib();
    let plan = [common::customer_metrics(common::DEC)];
    let out = streamform_sim::run(&plan, &events).expect("runs");
    let after = peak_mib();
    println!(
        "1,000,000 keys: peak resident {after:.0} MiB (the events alone: {before:.0} MiB; {} changelog records)",
        out.changes.len()
    );
}
