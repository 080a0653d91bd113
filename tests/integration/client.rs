//! The terminal client against a real server: two clients (the library the
//! `patience` binary runs) and a bot race; and `--plain` practice driven
//! through the real binary's standard input.

use std::io::Write as _;
use std::process::Command;
use std::time::Duration;

use patience_cli::config::Store;
use patience_cli::session::{Entry, Session};
use patience_shared::game::GameKind;
use patience_shared::protocol::{ClientMessage, Phase, PlayerStatus, RoomOptions, ServerMessage};
use patience_shared::solver::Budget;
use patience_shared::solver::any::{first_winnable_deal, solve_deal};
use patience_tests::{binary, first_deal, spawn_patience, start_server};

/// Longest a test waits for one message: a safety net, never a way to pass time.
const PATIENCE: Duration = Duration::from_secs(20);

/// A config directory of this test's own.
fn config_dir(name: &str) -> std::path::PathBuf {
    let directory = std::env::temp_dir().join(format!(
        "patience-client-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&directory);
    directory
}

/// Reads messages until `done` holds for the session's state.
async fn until(session: &mut Session, done: impl Fn(&Session) -> bool) {
    while !done(session) {
        tokio::time::timeout(PATIENCE, session.recv())
            .await
            .expect("a message within the test's patience")
            .expect("the connection stays up");
    }
}

#[tokio::test]
async fn two_clients_and_a_bot_race_against_a_real_server() {
    let server = start_server(|_| {}).await;
    let url = format!("ws://{}/", server.address());
    let (_, line) = first_deal();
    let ada_store = Store::in_directory(config_dir("ada"));
    let (mut ada, _) = Session::start(
        &url,
        "ada",
        Entry::Create {
            game: GameKind::ThreeBlindMice,
            players: 3,
            public: false,
            options: RoomOptions::default(),
            bots: Vec::new(),
        },
        ada_store.clone(),
    )
    .await
    .expect("ada connects");
    until(&mut ada, |s| s.state.room.is_some()).await;
    let code = ada
        .state
        .room
        .as_ref()
        .map(|room| room.code.clone())
        .unwrap_or_default();
    let saved = ada_store.load().seat.expect("the resume token is saved");
    assert_eq!(saved.code, code);

    let (mut bob, _) = Session::start(
        &url,
        "bob",
        Entry::Join(code.clone()),
        Store::in_directory(config_dir("bob")),
    )
    .await
    .expect("bob connects");
    let bot = tokio::spawn({
        let (url, code) = (url.clone(), code.clone());
        async move {
            let level = patience_cli::bot::BotLevel::default();
            patience_cli::bot::run(
                &url,
                "bot",
                &code,
                Duration::ZERO,
                level,
                Store::none(),
                |_| {},
            )
            .await
        }
    });
    let racing =
        |s: &Session| s.state.phase() == Some(Phase::Racing) && s.state.my_board().is_some();
    until(&mut ada, racing).await;
    until(&mut bob, racing).await;
    assert_eq!(
        ada.state.my_board(),
        bob.state.my_board(),
        "one deal for all"
    );

    // Ada plays the solver's line; every move is accepted.
    for text in &line {
        ada.send(&ClientMessage::Move {
            text: text.clone(),
            seat: None,
        })
        .await
        .expect("sent");
        loop {
            let (message, _) = tokio::time::timeout(PATIENCE, ada.recv())
                .await
                .expect("an answer")
                .expect("connected");
            match message {
                ServerMessage::MoveAccepted { .. } => break,
                ServerMessage::MoveRejected { message, .. } => panic!("{text} refused: {message}"),
                _ => {}
            }
        }
    }
    until(&mut ada, |s| s.state.my_status() == Some(PlayerStatus::Won)).await;

    // Bob sees Ada's progress, then resigns; the race ends once the bot is done.
    until(&mut bob, |s| {
        s.state
            .racers
            .get(&0)
            .is_some_and(|r| r.status == PlayerStatus::Won)
    })
    .await;
    bob.send(&ClientMessage::Resign).await.expect("sent");
    until(&mut bob, |s| s.state.result.is_some()).await;
    until(&mut ada, |s| s.state.result.is_some()).await;
    tokio::time::timeout(PATIENCE, bot)
        .await
        .expect("the bot finishes")
        .expect("the bot task")
        .expect("the bot raced without error");

    let result = ada.state.result.clone().expect("a result");
    assert!(ada.state.verification.as_ref().is_some_and(|v| v.all_ok()));
    assert!(bob.state.verification.as_ref().is_some_and(|v| v.all_ok()));
    let standings: Vec<(&str, PlayerStatus)> = result
        .standings
        .iter()
        .map(|standing| (standing.name.as_str(), standing.status))
        .collect();
    // The bot may win too, and even first: both rank above a resignation.
    assert!(
        standings.contains(&("ada", PlayerStatus::Won)),
        "{standings:?}"
    );
    assert_ne!(standings[0].1, PlayerStatus::Resigned);
    assert!(standings.contains(&("bob", PlayerStatus::Resigned)));
    let bot_status = standings
        .iter()
        .find(|(name, _)| *name == "bot")
        .map(|s| s.1);
    assert!(
        matches!(
            bot_status,
            Some(PlayerStatus::Won | PlayerStatus::Stuck | PlayerStatus::Resigned)
        ),
        "{standings:?}"
    );
    let bot_log = result
        .logs
        .iter()
        .find(|log| log.seat == 2)
        .expect("the bot's log");
    assert!(!bot_log.moves.is_empty(), "the bot played");
    assert_eq!(
        ada_store.load().seat,
        None,
        "a finished race forgets its token"
    );
    server.shutdown().await;
}

#[test]
fn plain_practice_reads_moves_from_standard_input_and_wins() {
    let game = GameKind::ThreeBlindMice;
    let deal = first_winnable_deal(game, 1.., Budget::positions(200_000))
        .expect("the solver replays")
        .expect("a winnable deal");
    let line = solve_deal(game, deal.seed, Budget::positions(200_000))
        .expect("the solver replays")
        .solution;
    let mut child = spawn_patience(
        &config_dir("practice"),
        &["practice", "tbm", &deal.seed.to_string(), "--plain"],
    );
    let mut script = String::from("1>1\nm\n");
    for text in &line {
        script.push_str(text);
        script.push('\n');
    }
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(script.as_bytes())
        .expect("the script is written");
    let output = child.wait_with_output().expect("patience exits");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    assert!(text.starts_with(&format!("Three Blind Mice · practice · seed {}", deal.seed)));
    assert!(text.contains("refused: "), "{text}");
    assert!(text.contains("moves: "), "{text}");
    assert!(text.contains("##"), "face-down cards are hidden: {text}");
    assert!(
        text.contains(&format!("won in {} moves", line.len())),
        "{text}"
    );
}

#[tokio::test]
async fn a_client_started_again_takes_back_its_seat_with_the_saved_token() {
    let server = start_server(|_| {}).await;
    let url = format!("ws://{}/", server.address());
    let ada_store = Store::in_directory(config_dir("ada-resume"));
    let bob_store = Store::in_directory(config_dir("bob-resume"));
    let create = Entry::Create {
        game: GameKind::ThreeBlindMice,
        players: 2,
        public: false,
        options: RoomOptions::default(),
        bots: Vec::new(),
    };
    let (mut ada, _) = Session::start(&url, "ada", create, ada_store.clone())
        .await
        .expect("ada connects");
    until(&mut ada, |s| s.state.room.is_some()).await;
    let code = ada
        .state
        .room
        .as_ref()
        .map(|room| room.code.clone())
        .unwrap_or_default();
    let (mut bob, _) = Session::start(&url, "bob", Entry::Join(code.clone()), bob_store)
        .await
        .expect("bob connects");
    let racing = |s: &Session| s.state.my_board().is_some() && s.state.can_move();
    until(&mut ada, racing).await;
    until(&mut bob, racing).await;
    let board = ada.state.my_board().cloned();

    // Ada's client dies without a word; started again with the same config
    // and a join of its room, it is back in its seat with its board, and a
    // new token is saved.
    let old_token = ada_store.load().seat.map(|seat| seat.token);
    drop(ada);
    let (mut ada, notes) =
        Session::start(&url, "ada", Entry::Join(code.clone()), ada_store.clone())
            .await
            .expect("ada reconnects");
    assert!(
        notes
            .iter()
            .any(|note| note.contains(&format!("back in room {code}"))),
        "{notes:?}"
    );
    until(&mut ada, racing).await;
    assert_eq!(ada.state.my_board().cloned(), board);
    let new_token = ada_store.load().seat.map(|seat| seat.token);
    assert!(new_token.is_some() && new_token != old_token);

    ada.send(&ClientMessage::Resign).await.expect("sent");
    bob.send(&ClientMessage::Resign).await.expect("sent");
    until(&mut ada, |s| s.state.result.is_some()).await;
    assert!(ada.state.verification.as_ref().is_some_and(|v| v.all_ok()));
    assert_eq!(ada_store.load().seat, None);
    server.shutdown().await;
}

/// Waits for a line of the child's output containing `wanted`, and returns
/// every line read until then.
async fn wait_for_line(
    lines: &std::sync::Arc<std::sync::Mutex<std::sync::mpsc::Receiver<String>>>,
    wanted: &'static str,
) -> Vec<String> {
    let lines = std::sync::Arc::clone(lines);
    tokio::task::spawn_blocking(move || {
        let lines = lines.lock().expect("one reader at a time");
        let mut seen = Vec::new();
        loop {
            let line = lines
                .recv_timeout(PATIENCE)
                .unwrap_or_else(|_| panic!("no line with {wanted:?} in {seen:#?}"));
            let found = line.contains(wanted);
            seen.push(line);
            if found {
                return seen;
            }
        }
    })
    .await
    .expect("the reader thread")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_mode_joins_and_resigns_a_race_through_the_binary() {
    use std::io::BufRead as _;

    // Build (or find) the binary before the race starts, so a cold build
    // cannot eat into the race's clocks.
    binary("patience-cli", "patience");
    let server = start_server(|_| {}).await;
    let url = format!("ws://{}/", server.address());
    let (mut ada, _) = Session::start(
        &url,
        "ada",
        Entry::Create {
            game: GameKind::ThreeBlindMice,
            players: 2,
            public: false,
            options: RoomOptions::default(),
            bots: Vec::new(),
        },
        Store::in_directory(config_dir("ada-plain")),
    )
    .await
    .expect("ada connects");
    until(&mut ada, |s| s.state.room.is_some()).await;
    let code = ada
        .state
        .room
        .as_ref()
        .map(|room| room.code.clone())
        .unwrap_or_default();

    let mut child = spawn_patience(
        &config_dir("bob-plain"),
        &["join", &code, "--server", &url, "--name", "bob", "--plain"],
    );
    let mut stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let (sender, receiver) = std::sync::mpsc::sync_channel(1024);
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let lines = std::sync::Arc::new(std::sync::Mutex::new(receiver));

    let started = wait_for_line(&lines, "the race has started").await;
    assert!(
        started
            .iter()
            .any(|line| line.contains(&format!("joined room {code}")))
    );
    let board = wait_for_line(&lines, "Cell 2:").await;
    assert!(board.iter().any(|line| line.contains("##")), "{board:#?}");

    // Ada moves: Bob reads her progress, not her move (fair play).
    let (_, ada_line) = first_deal();
    ada.send(&ClientMessage::Move {
        text: ada_line[0].clone(),
        seat: None,
    })
    .await
    .expect("sent");
    let rival = wait_for_line(&lines, "ada: 1 move").await;
    assert!(
        rival.iter().all(|line| !line.contains(&ada_line[0])),
        "a rival's move text was printed: {rival:#?}"
    );

    stdin.write_all(b"1>1\n").expect("bob types");
    let refused = wait_for_line(&lines, "refused").await;
    assert!(
        refused
            .iter()
            .any(|line| line.contains("\"1>1\" refused: "))
    );
    stdin.write_all(b"resign\n").expect("bob types");
    wait_for_line(&lines, "bob resigned").await;

    ada.send(&ClientMessage::Resign).await.expect("sent");
    until(&mut ada, |s| s.state.result.is_some()).await;
    let end = wait_for_line(&lines, "verified").await;
    assert!(
        end.iter().any(|line| line.contains("the race is over")),
        "{end:#?}"
    );
    drop(stdin);
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .expect("the waiting thread")
        .expect("patience exits");
    assert!(status.success());
    server.shutdown().await;
}

/// Runs `patience` with `args` and its standard input left open (a person at
/// the terminal who types nothing) until it exits by itself; the test's
/// patience is only a safety net against a client that hangs.
async fn run_until_it_exits(args: &[&str], config: &str) -> std::process::Output {
    let mut child = spawn_patience(&config_dir(config), args);
    let stdin = child.stdin.take().expect("piped stdin");
    let pid = child.id();
    let waiting = tokio::task::spawn_blocking(move || child.wait_with_output());
    let output = match tokio::time::timeout(PATIENCE, waiting).await {
        Ok(output) => output.expect("the waiting thread").expect("patience exits"),
        Err(_) => {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            panic!("patience {args:?} still runs after {PATIENCE:?}");
        }
    };
    drop(stdin);
    output
}

#[tokio::test]
async fn joining_a_room_that_does_not_exist_fails_with_one_line_naming_the_code() {
    let server = start_server(|_| {}).await;
    let url = format!("ws://{}/", server.address());
    let output = run_until_it_exits(
        &[
            "join", "BADCOD", "--server", &url, "--name", "bob", "--plain",
        ],
        "bad-code",
    )
    .await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{output:?}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("BADCOD"), "{stderr}");
}

#[tokio::test]
async fn joining_with_no_server_listening_says_so_once_and_how_to_start_one() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a local port")
        .port();
    let url = format!("ws://127.0.0.1:{port}/");
    let output = run_until_it_exits(
        &[
            "join", "K7PQ3M", "--server", &url, "--name", "bob", "--plain",
        ],
        "refused",
    )
    .await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{output:?}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&url), "{stderr}");
    assert!(
        stderr.contains("cargo run --release -p patience-server"),
        "{stderr}"
    );
    assert!(stderr.matches("refused").count() <= 1, "{stderr}");
}
