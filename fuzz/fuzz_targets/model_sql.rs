//! A model's SQL from the fuzzer: parsing, planning, lowering, and the fixture run on it.
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::with_file("models/customer_metrics.sql", data));
