//! `patience-server`: the authoritative race server.
//!
//! The race server is built by its own issue, after the rules engine and the
//! solver it stands on. Until then this binary only says so, so that nobody
//! mistakes it for a working service.

use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!(
        "patience-server {}: the race server is not built yet; \
         use `patience deal` and `patience moves` meanwhile",
        env!("CARGO_PKG_VERSION")
    );
    ExitCode::FAILURE
}
