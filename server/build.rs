//! Builds the web page's rules engine (`shared/wasm`, package
//! `patience-wasm`) for `wasm32-unknown-unknown`, so that the server
//! embeds it like the page's other files and serves everything itself.
//!
//! The engine is built by a nested `cargo build --release` into its own
//! target directory (beside this profile's), whatever profile the server
//! is built with: the solver is far too slow unoptimised, and the nested
//! build's own directory keeps it from waiting on the outer build's lock.
//! Its profile is set here through `CARGO_PROFILE_RELEASE_*` (no debug
//! info, link-time optimisation, `panic = "abort"`): the workspace's
//! release profile keeps debug info for the native binaries, which would
//! triple the file the page downloads.
//!
//! A toolchain without the target fails with a one-line message naming
//! the command to run.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const TARGET: &str = "wasm32-unknown-unknown";

fn main() -> ExitCode {
    match build_engine() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            // Cargo prints a build script's stderr when it fails.
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn build_engine() -> Result<(), String> {
    let manifest_dir = PathBuf::from(env_var("CARGO_MANIFEST_DIR")?);
    let workspace = manifest_dir
        .parent()
        .ok_or("the server's manifest has no parent directory")?
        .to_path_buf();
    let out_dir = PathBuf::from(env_var("OUT_DIR")?);
    for watched in [
        "shared/src",
        "shared/Cargo.toml",
        "shared/wasm/src",
        "shared/wasm/Cargo.toml",
        "Cargo.lock",
    ] {
        println!(
            "cargo:rerun-if-changed={}",
            workspace.join(watched).display()
        );
    }

    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    if !target_installed(&rustc) {
        return Err(format!(
            "the web page's engine needs Rust's {TARGET} target: run `rustup target add {TARGET}`, then build again"
        ));
    }

    // OUT_DIR is TARGET_DIR/PROFILE/build/patience-server-HASH/out.
    let target_dir = out_dir
        .ancestors()
        .nth(3)
        .unwrap_or(&out_dir)
        .join("wasm-engine");
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(&workspace)
        .args([
            "build",
            "--release",
            "--locked",
            "--lib",
            "-p",
            "patience-wasm",
        ])
        .args(["--target", TARGET])
        .arg("--target-dir")
        .arg(&target_dir)
        .env("CARGO_PROFILE_RELEASE_DEBUG", "0")
        .env("CARGO_PROFILE_RELEASE_STRIP", "true")
        .env("CARGO_PROFILE_RELEASE_LTO", "true")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")
        .env("CARGO_PROFILE_RELEASE_PANIC", "abort")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "3");
    // What the outer build set for its own compilations (clippy's driver,
    // flags for the host, a target dir) must not reach the nested one.
    for variable in [
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_RUSTFLAGS",
    ] {
        command.env_remove(variable);
    }
    let status = command
        .status()
        .map_err(|error| format!("running cargo for the web page's engine: {error}"))?;
    if !status.success() {
        return Err(format!(
            "building the web page's engine (patience-wasm for {TARGET}) failed: {status}"
        ));
    }
    let built = target_dir
        .join(TARGET)
        .join("release")
        .join("patience_wasm.wasm");
    let embedded = out_dir.join("patience.wasm");
    std::fs::copy(&built, &embedded).map_err(|error| {
        format!(
            "copying {} to {}: {error}",
            built.display(),
            embedded.display()
        )
    })?;
    Ok(())
}

fn env_var(name: &str) -> Result<String, String> {
    env::var(name).map_err(|_| format!("cargo did not set {name}"))
}

/// Whether `rustc`'s toolchain has the standard library for [`TARGET`].
fn target_installed(rustc: &str) -> bool {
    let Ok(output) = Command::new(rustc)
        .args(["--print", "target-libdir", "--target", TARGET])
        .output()
    else {
        return false;
    };
    let libdir = String::from_utf8_lossy(&output.stdout).trim().to_string();
    output.status.success()
        && Path::new(&libdir).read_dir().is_ok_and(|mut entries| {
            entries.any(|entry| {
                entry.is_ok_and(|entry| entry.file_name().to_string_lossy().starts_with("libcore"))
            })
        })
}
