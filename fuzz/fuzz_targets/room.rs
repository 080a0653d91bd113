//! libFuzzer entry point of the `room` target: arbitrary frame sequences
//! through the room core, as the connection handler routes them. The body
//! is `patience_room_core::fuzzing::exercise` (the room core's `fuzzing`
//! feature), where its input layout and checks are described.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    patience_room_core::fuzzing::exercise(data);
});
