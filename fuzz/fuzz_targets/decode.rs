//! libFuzzer entry point of the `decode` target; the body is
//! [`patience_fuzz::decode::run`], where its input layout and checks are described.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| patience_fuzz::decode::run(data));
