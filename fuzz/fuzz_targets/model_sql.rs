//! A model's SQL from the fuzzer: parsing, planning, lowering, and the fixture run on it.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    common::check_and_test(&[
        ("streamform.yml", common::CONFIG),
        ("sources.yml", common::SOURCES),
        ("models/customer_metrics.sql", text),
        ("tests/customer_metrics.yml", common::FIXTURE),
    ]);
});
