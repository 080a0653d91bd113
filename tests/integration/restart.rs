//! A server restart mid-race, as at every deploy, and an outage longer than
//! a few reconnection attempts: the real server binary is stopped (SIGTERM,
//! or SIGKILL as a crash would) while a race runs, and started again on the
//! same data and port once the terminal clients have said that they keep
//! trying. Every terminal client rides it out by itself: `--plain` racing
//! and watching and `patience bot`, as processes, and the terminal UI's own
//! online loop on a test screen in this process. They take their seats
//! back (the watcher watches again), and the race goes on to its end.
//!
//! Nothing waits on wall-clock sleeps: the test follows what the clients
//! print and draw and what the server says; each wait has a deadline only
//! as a safety net against a client that never gets there.

use std::io::{BufRead as _, Write as _};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use patience_cli::config::Store;
use patience_cli::session::{Entry, Session};
use patience_cli::tui::online::{self, Ending};
use patience_shared::protocol::{ClientMessage, RoomInfo, RoomOptions, ServerMessage};
use patience_tests::{Client, ServerProcess, binary, free_port, spawn_patience};

use crate::screen::TestScreen;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use tokio::sync::{mpsc, watch};

/// Longest a wait for one line, frame or message may take: longer than the
/// client's longest pause between two attempts, so a client that keeps
/// trying is never cut short; a safety net, never a way to pass time.
const PATIENCE: Duration = Duration::from_secs(30);

/// Waits until the terminal UI has drawn a frame for which `wanted` holds.
async fn until_drawn(
    frames: &mut watch::Receiver<String>,
    what: &str,
    wanted: impl Fn(&str) -> bool,
) {
    let waiting = async {
        while !wanted(&frames.borrow_and_update()) {
            if frames.changed().await.is_err() {
                panic!("the terminal UI ended before drawing {what}");
            }
        }
    };
    if tokio::time::timeout(PATIENCE, waiting).await.is_err() {
        panic!(
            "the terminal UI never drew {what}; its last frame:\n{}",
            *frames.borrow()
        );
    }
}

/// A `patience` process whose output is read line by line on a thread.
struct LineClient {
    /// `None` once it has exited.
    child: Option<std::process::Child>,
    stdin: Option<std::process::ChildStdin>,
    lines: Arc<Mutex<std::sync::mpsc::Receiver<String>>>,
    /// Every line read so far.
    seen: Arc<Mutex<Vec<String>>>,
}

impl LineClient {
    fn spawn(config: &std::path::Path, args: &[&str]) -> LineClient {
        let mut child = spawn_patience(config, args);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, receiver) = std::sync::mpsc::sync_channel(4096);
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        LineClient {
            child: Some(child),
            stdin,
            lines: Arc::new(Mutex::new(receiver)),
            seen: Arc::default(),
        }
    }

    /// Waits for a line containing `wanted` and returns it.
    async fn line(&self, who: &str, wanted: &str) -> String {
        let (lines, seen) = (Arc::clone(&self.lines), Arc::clone(&self.seen));
        let (who, wanted) = (who.to_string(), wanted.to_string());
        tokio::task::spawn_blocking(move || {
            let lines = lines.lock().expect("one reader at a time");
            loop {
                let line = lines.recv_timeout(PATIENCE).unwrap_or_else(|_| {
                    panic!(
                        "{who} printed no line with {wanted:?}; it printed:\n{}",
                        seen.lock().expect("not poisoned").join("\n")
                    )
                });
                seen.lock().expect("not poisoned").push(line.clone());
                if line.contains(&wanted) {
                    return line;
                }
            }
        })
        .await
        .expect("the reader thread")
    }

    fn type_line(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().expect("standard input is open");
        writeln!(stdin, "{text}").expect("the client reads its input");
    }

    /// Waits for the process to exit by itself; returns whether it succeeded
    /// and everything it printed.
    async fn exit(mut self, who: &str) -> (bool, String) {
        drop(self.stdin.take());
        let mut child = self.child.take().expect("a client exits once");
        let pid = child.id();
        let waiting = tokio::task::spawn_blocking(move || child.wait());
        let status = match tokio::time::timeout(PATIENCE, waiting).await {
            Ok(status) => status.expect("the waiting thread").expect("patience exits"),
            Err(_) => {
                let _ = std::process::Command::new("kill")
                    .arg(pid.to_string())
                    .status();
                panic!("{who} still runs after {PATIENCE:?}");
            }
        };
        let lines = Arc::clone(&self.lines);
        let seen = Arc::clone(&self.seen);
        tokio::task::spawn_blocking(move || {
            let lines = lines.lock().expect("one reader at a time");
            // Until the reader thread reaches the end of the output.
            while let Ok(line) = lines.recv_timeout(PATIENCE) {
                seen.lock().expect("not poisoned").push(line);
            }
        })
        .await
        .expect("the reader thread");
        let printed = self.seen.lock().expect("not poisoned").join("\n");
        (status.success(), printed)
    }
}

impl Drop for LineClient {
    fn drop(&mut self) {
        // A test that failed midway leaves no client behind.
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A config directory of this test's own.
fn config_dir(root: &std::path::Path, name: &str) -> std::path::PathBuf {
    root.join(name)
}

/// A key typed on the terminal UI.
fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// Every seat's player connected and someone watching.
fn everyone_back(room: &RoomInfo) -> bool {
    room.players.len() == 4
        && room.players.iter().all(|player| player.connected)
        && room.spectators >= 1
}

/// How the server goes away mid-race.
#[derive(Clone, Copy, Debug)]
enum Stop {
    /// SIGTERM, as a deploy stops it: every client is told `shutting_down`.
    Terminate,
    /// SIGKILL, as a crash: every socket breaks without a word.
    Kill,
}

/// A four-seat race (ada, a raw protocol client that checks what the
/// server sees; bob on `--plain`; carol on the terminal UI; a bot) and a
/// `--plain` watcher. The server is stopped as `stop` says mid-race and
/// started again on the same data and port once the plain clients have
/// said their reconnection try number `restart_after_try` failed; then
/// everyone must be back, and the race goes on to its end.
async fn a_race_rides_out_a_server_restart(stop: Stop, restart_after_try: u32) {
    binary("patience-cli", "patience");
    let directory = tempfile::tempdir().expect("temp dir");
    let data = directory.path().join("data");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let server = ServerProcess::start(&data, &["--listen", &listen]);
    let address: SocketAddr = server.address;
    let url = format!("ws://{address}/");

    let mut ada = Client::hello_to(address, "ada").await;
    let (code, ada_token) = ada.create_room(4, RoomOptions::default()).await;
    let online = ["--server", url.as_str(), "--plain"];
    let watcher = LineClient::spawn(
        &config_dir(directory.path(), "watcher"),
        &[&["watch", &code, "--name", "watcher"][..], &online[..]].concat(),
    );
    watcher
        .line("the watcher", &format!("watching room {code}"))
        .await;
    let mut bob = LineClient::spawn(
        &config_dir(directory.path(), "bob"),
        &[&["join", &code, "--name", "bob"][..], &online[..]].concat(),
    );
    bob.line("bob", &format!("joined room {code}")).await;

    let carol_store = Store::in_directory(config_dir(directory.path(), "carol"));
    let (carol, notes) = Session::start(&url, "carol", Entry::Join(code.clone()), carol_store)
        .await
        .expect("carol joins");
    let (screen, mut carol_frames) = TestScreen::new(100, 30);
    let (carol_keys, mut carol_events) = mpsc::channel::<Event>(64);
    let carol_loop = tokio::spawn(async move {
        let mut screen = screen;
        online::run(&mut screen, &mut carol_events, carol, notes).await
    });

    let bot = LineClient::spawn(
        &config_dir(directory.path(), "bot"),
        &[
            "bot", "--join", &code, "--pace", "0", "--server", &url, "--name", "bot",
        ],
    );
    ada.race_started().await;
    bob.line("bob", "the race has started").await;
    watcher.line("the watcher", "the race has started").await;
    until_drawn(&mut carol_frames, "the race", |frame| frame.contains("⏱")).await;

    // The server goes, mid-race.
    let stopped_at = Instant::now();
    match stop {
        Stop::Terminate => {
            let clean = tokio::task::spawn_blocking(move || server.terminate())
                .await
                .expect("the waiting thread");
            assert!(clean, "SIGTERM stops the server cleanly");
        }
        Stop::Kill => tokio::task::spawn_blocking(move || server.kill())
            .await
            .expect("the waiting thread"),
    }
    ada.closed().await;

    // Every client says it keeps trying, on screen, and none gives up.
    let try_failed = format!("try {restart_after_try} failed");
    bob.line("bob", &try_failed).await;
    watcher.line("the watcher", &try_failed).await;
    until_drawn(&mut carol_frames, "that it reconnects", |frame| {
        frame.contains("reconnecting")
    })
    .await;
    let outage = stopped_at.elapsed();

    // The server is back, on the same data and port.
    let server = ServerProcess::start(&data, &["--listen", &listen]);
    assert_eq!(server.address, address);
    let mut ada = Client::hello_to(address, "ada").await;
    ada.send(&ClientMessage::Resume {
        token: ada_token,
        last_seq: 0,
    })
    .await;
    assert!(
        matches!(ada.recv().await, ServerMessage::Resumed { seat: 0, .. }),
        "ada resumes: {:?}",
        ada.received()
    );
    // The server sees every seat taken back and the watcher back.
    ada.recv_until(|message| match message {
        ServerMessage::RoomUpdate { room, .. }
        | ServerMessage::Snapshot { room, .. }
        | ServerMessage::Resumed { room, .. } => everyone_back(room),
        _ => false,
    })
    .await;
    bob.line("bob", &format!("back in room {code}")).await;

    // The race goes on to its end.
    bob.type_line("resign");
    for typed in [KeyCode::Char(':')]
        .into_iter()
        .chain("resign".chars().map(KeyCode::Char))
        .chain([KeyCode::Enter])
    {
        carol_keys
            .send(key(typed))
            .await
            .expect("the loop reads keys");
    }
    ada.send(&ClientMessage::Resign).await;
    let ServerMessage::RaceEnded { result, .. } = ada
        .recv_until(|message| matches!(message, ServerMessage::RaceEnded { .. }))
        .await
    else {
        unreachable!("waited for race_ended");
    };
    assert_eq!(result.standings.len(), 4);
    bob.line("bob", "the race is over").await;
    watcher.line("the watcher", "the race is over").await;
    until_drawn(&mut carol_frames, "the result", |frame| {
        frame.contains("verified")
    })
    .await;
    drop(carol_keys);
    let ending = tokio::time::timeout(PATIENCE, carol_loop)
        .await
        .expect("the terminal UI ends with its keys")
        .expect("the loop's task")
        .expect("the loop ends cleanly");
    assert!(matches!(ending, Ending::Close(_)), "the terminal went away");
    online::finish(ending)
        .await
        .expect("closing after the result");

    for (who, client) in [("bob", bob), ("the watcher", watcher), ("the bot", bot)] {
        let (success, printed) = client.exit(who).await;
        assert!(success, "{who} exits well:\n{printed}");
        assert!(printed.contains("the race is over"), "{who}:\n{printed}");
        if who != "the watcher" {
            assert!(
                printed.contains(&format!("back in room {code}")),
                "{who} took its seat back:\n{printed}"
            );
        }
    }
    drop(server);
    eprintln!("{stop:?}: the server was away {outage:?}");
    if restart_after_try >= 7 {
        assert!(
            outage > Duration::from_secs(12),
            "the outage outlasted six tries: {outage:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_race_rides_out_a_sigterm_restart_longer_than_twelve_seconds() {
    a_race_rides_out_a_server_restart(Stop::Terminate, 7).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_race_and_its_watcher_ride_out_a_crashed_server() {
    a_race_rides_out_a_server_restart(Stop::Kill, 2).await;
}
