//! streamform.yml and sources.yml from the fuzzer, the rest of the project as it is.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    common::check_and_test(&[
        ("streamform.yml", text),
        ("sources.yml", common::SOURCES),
        ("models/customer_metrics.sql", common::MODEL),
        ("tests/customer_metrics.yml", common::FIXTURE),
    ]);
    common::check_and_test(&[
        ("streamform.yml", common::CONFIG),
        ("sources.yml", text),
        ("models/customer_metrics.sql", common::MODEL),
        ("tests/customer_metrics.yml", common::FIXTURE),
    ]);
});
