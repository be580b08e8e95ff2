//! streamform.yml, then sources.yml, from the fuzzer; the rest of the project as it is.
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    common::with_file("streamform.yml", data);
    common::with_file("sources.yml", data);
});
