//! A fixture from the fuzzer: YAML loading, typing against the source, running.
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
        ("models/customer_metrics.sql", common::MODEL),
        ("tests/customer_metrics.yml", text),
    ]);
});
