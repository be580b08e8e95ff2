//! A fixture from the fuzzer: YAML loading, typing against the source, running.
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::with_file("tests/customer_metrics.yml", data));
