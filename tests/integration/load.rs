//! The load tool works: `patience-load` run for a few seconds against real
//! `patience-server` and `patience-echo` processes, as its user runs it.
//! These check only that it works (its JSON line parses, moves were
//! answered, the server's CPU and memory were read, the counts add up),
//! never a time: the figures are for docs/BENCHMARKS.md, measured on a
//! quiet machine.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

use patience_tests::{SEED_START, SOLVER_BUDGET, binary, read_printed_address, stderr};
use serde_json::Value;

/// A server process on a port of the system's choosing, killed when
/// dropped.
struct Target {
    child: Child,
    address: SocketAddr,
    /// Holds the settings file.
    _directory: tempfile::TempDir,
}

impl Target {
    /// `patience-server` in memory with the test settings (Three Blind
    /// Mice, a short countdown, rate limits out of the way) and `extra`.
    fn race_server(extra: &[&str]) -> Target {
        let directory = tempfile::tempdir().expect("a temporary directory");
        let settings = directory.path().join("server.toml");
        std::fs::write(
            &settings,
            "messages_per_second = 10000\n\
             message_burst = 10000\n\
             moves_per_second = 10000\n\
             move_burst = 10000\n",
        )
        .expect("the settings file is written");
        let seed_start = SEED_START.to_string();
        let budget = SOLVER_BUDGET.to_string();
        let mut args = vec![
            "--config",
            settings.to_str().expect("a UTF-8 temporary path"),
            "--listen",
            "127.0.0.1:0",
            "--no-admin",
            "--in-memory",
            "--games",
            "tbm",
            "--countdown-ms",
            "10",
            "--deal-pool-size",
            "4",
            "--deal-seed-start",
            &seed_start,
            "--solver-budget-positions",
            &budget,
        ];
        args.extend_from_slice(extra);
        Target::start(
            Command::new(binary("patience-server", "patience-server")).args(args),
            directory,
        )
    }

    /// `patience-echo`.
    fn echo_server() -> Target {
        Target::start(
            Command::new(binary("patience-tests", "patience-echo"))
                .args(["--listen", "127.0.0.1:0"]),
            tempfile::tempdir().expect("a temporary directory"),
        )
    }

    /// Starts `command` and reads its address from the first line it
    /// prints (`… listening on ws://ADDRESS`).
    fn start(command: &mut Command, directory: tempfile::TempDir) -> Target {
        let mut child = command
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let address = read_printed_address(&mut std::io::BufReader::new(stdout));
        Target {
            child,
            address,
            _directory: directory,
        }
    }

    /// Runs `patience-load` against it with `args`, and returns its JSON
    /// line.
    fn load(&self, args: &[&str]) -> Value {
        let output = Command::new(binary("patience-tests", "patience-load"))
            .arg("--url")
            .arg(format!("ws://{}", self.address))
            .arg("--server-pid")
            .arg(self.child.id().to_string())
            .args(args)
            .output()
            .expect("patience-load runs");
        assert!(output.status.success(), "{}", stderr(&output));
        let stdout = String::from_utf8_lossy(&output.stdout);
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 1, "one line on stdout: {stdout:?}");
        serde_json::from_str(lines[0])
            .unwrap_or_else(|error| panic!("not JSON ({error}): {:?}", lines[0]))
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What every run reports: the server's CPU time and memory, read from
/// /proc, and the machine's load.
fn check_common(line: &Value, scenario: &str) {
    assert_eq!(line["scenario"], scenario, "{line}");
    let server = &line["server"];
    assert!(server["cpu_s"].as_f64().is_some(), "{line}");
    assert!(
        server["rss_bytes_end"].as_u64().is_some_and(|rss| rss > 0),
        "{line}"
    );
    assert!(line["load_average_end"][0].as_f64().is_some(), "{line}");
    assert_eq!(line["errors"], 0, "{line}");
    assert_eq!(line["disconnects"], 0, "{line}");
}

/// Moves were sent and answered, with latencies and a cost per move.
fn check_moves(line: &Value) {
    let accepted = line["moves_accepted"].as_u64().expect("moves_accepted");
    assert!(accepted > 0, "{line}");
    assert_eq!(line["move_to_ack_us"]["samples"], accepted, "{line}");
    assert!(line["move_to_ack_us"]["p99_9"].as_u64().is_some(), "{line}");
    assert!(
        line["deliveries"].as_u64().expect("deliveries") >= accepted,
        "{line}"
    );
    assert!(
        line["server"]["cpu_us_per_accepted_move"]
            .as_f64()
            .is_some(),
        "{line}"
    );
}

#[test]
fn racing_rooms_report_moves_rivals_spectators_and_the_stalled_clients() {
    let server = Target::race_server(&[]);
    let line = server.load(&[
        "--rooms",
        "2",
        "--move-interval-ms",
        "100",
        "--warmup-s",
        "1",
        "--duration-s",
        "3",
        "--stall-players",
        "1",
        "--stall-spectators",
        "1",
        "--stall-s",
        "1",
    ]);
    check_common(&line, "race");
    check_moves(&line);
    assert_eq!(line["settings"]["rooms"], 2, "{line}");
    assert!(
        line["move_to_opponent_us"]["samples"].as_u64() > Some(0),
        "{line}"
    );
    assert!(
        line["move_to_spectator_us"]["samples"].as_u64() > Some(0),
        "{line}"
    );
    let stalls = line["stalls"].as_array().expect("stalls");
    let who: Vec<&str> = stalls
        .iter()
        .filter_map(|stall| stall["who"].as_str())
        .collect();
    assert_eq!(who.len(), 2, "{line}");
    assert!(
        who.contains(&"racer") && who.contains(&"spectator"),
        "{line}"
    );
}

#[test]
fn racers_in_closed_loop_move_as_soon_as_answered() {
    let server = Target::race_server(&[]);
    let line = server.load(&[
        "--rooms",
        "2",
        "--move-interval-ms",
        "0",
        "--endless",
        "--warmup-s",
        "1",
        "--duration-s",
        "2",
    ]);
    check_common(&line, "race");
    check_moves(&line);
    // Closed loop has no ticks to be late for.
    assert_eq!(line["late_ticks"], 0, "{line}");
}

#[test]
fn the_echo_baseline_times_round_trips() {
    let server = Target::echo_server();
    for interval in ["50", "0"] {
        let line = server.load(&[
            "--scenario",
            "echo",
            "--rooms",
            "2",
            "--move-interval-ms",
            interval,
            "--warmup-s",
            "1",
            "--duration-s",
            "2",
        ]);
        check_common(&line, "echo");
        check_moves(&line);
        assert_eq!(line["connections"], 8, "{line}");
        assert!(line["frame_bytes"].as_u64() > Some(0), "{line}");
    }
}

#[test]
fn idle_sockets_are_counted_accepted_or_refused_with_their_memory() {
    let server = Target::race_server(&["--max-connections", "3"]);
    let line = server.load(&[
        "--scenario",
        "idle",
        "--sockets",
        "5",
        "--duration-s",
        "1",
        "--source-addresses",
        "2",
    ]);
    check_common(&line, "idle");
    assert_eq!(line["sockets_accepted"], 3, "{line}");
    assert_eq!(line["sockets_refused"], 2, "{line}");
    assert_eq!(line["sockets_failed"], 0, "{line}");
    assert!(line["rss_bytes_per_socket"].as_f64().is_some(), "{line}");
}
