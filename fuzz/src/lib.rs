//! The bodies of Patience Race's fuzz targets, one module per target.
//!
//! Each module has one entry point, `run(data: &[u8])`, which reads the
//! fuzzer's bytes as an input to one part of `patience-shared` and checks
//! properties beyond "does not panic" (round trips, undo, legality). The
//! binaries under `fuzz_targets/` are one line each and only hand libFuzzer's
//! bytes to `run`. A new target (the connection handler through the room
//! core, next) is a new module here, a one-line binary and a seeds folder:
//! see `docs/FUZZING.md`.
//!
//! A failed check panics on purpose: a panic is how a fuzz target reports a
//! finding to libFuzzer, which then saves the input under `artifacts/`.
//!
//! Only public APIs of `patience-shared` are used, so a target checks what
//! the server and the client can actually reach.
//!
//! Layout: [`decode`] (protocol frames), [`notation`] (move text for every
//! game), [`rules`] (`apply`/`undo` on arbitrary move sequences), and
//! [`positions`], the table of reachable positions the notation target reads
//! text against.

pub mod decode;
pub mod notation;
pub mod positions;
pub mod rules;
