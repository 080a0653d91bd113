//! libFuzzer entry point of the `http` target: arbitrary bytes as a request
//! head on the game port, read and answered as the server does. The body is
//! `patience_server::web::fuzzing::exercise`, where its checks are
//! described; the server's unit tests run it over `seeds/http/` too.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    patience_server::web::fuzzing::exercise(data);
});
