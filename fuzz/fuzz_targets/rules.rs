//! libFuzzer entry point of the `rules` target; the body is
//! [`patience_fuzz::rules::run`], where its input layout and checks are described.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| patience_fuzz::rules::run(data));
