//! Helpers for the end-to-end tests: locating (and if need be building) the
//! real binaries, and running them as a person or a script would.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The workspace's target directory, found from the running test binary
/// (`target/<profile>/deps/integration-…`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    exe.parent()
        .and_then(|deps| deps.parent())
        .map(PathBuf::from)
        .expect("test binaries live in target/<profile>/deps")
}

/// The path of a workspace binary, built once per test run with the same
/// cargo and profile that built the tests, so the tests always run the
/// current code.
pub fn binary(package: &str, name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let release = profile_dir().ends_with("release");
        let mut command = Command::new(cargo);
        command.args(["build", "--quiet", "--package", package, "--bin", name]);
        if release {
            command.arg("--release");
        }
        let status = command.status().expect("cargo runs");
        assert!(status.success(), "building {name} failed");
    });
    profile_dir().join(name)
}

/// Runs `patience` with `args` and returns what it printed and its status.
pub fn patience(args: &[&str]) -> Output {
    Command::new(binary("patience-cli", "patience"))
        .args(args)
        .output()
        .expect("patience runs")
}

/// Standard output of a run, as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard error of a run, as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
