//! The `patience` binary's player commands against a real server: register,
//! the daily deal in `--plain` mode (a resignation, a resume, and a whole
//! winning line), the leaderboard as a table and as JSON, and replays.
//!
//! The tests never know the day's seed in advance: Ada resigns her attempt,
//! which lets her replay it, and the replay shows the seed; Bob then plays
//! the solver's line for that seed.

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Output};
use std::sync::mpsc::{Receiver, sync_channel};
use std::time::Duration;

use patience_server::clock::Clock;
use patience_shared::game::GameKind;
use patience_shared::protocol::{LeaderboardPage, PlayerStatus};
use patience_tests::{
    DAY, DAY_BEFORE_NOON, DAY_MORNING, HOUR, NEXT_DAY, binary, daily_deal, daily_secret_hex,
    spawn_patience, start_server,
};

/// Longest a test waits for one line: a safety net, never a way to pass time.
const PATIENCE: Duration = Duration::from_secs(30);

/// A config directory of this test's own.
fn config_dir(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!(
        "patience-daily-client-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&directory);
    directory
}

/// Runs `patience` to the end with `config` as its config directory and
/// `input` on standard input.
async fn run(config: &Path, args: &[&str], input: &str) -> Output {
    let mut child = spawn_patience(config, args);
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = input.to_string();
    tokio::task::spawn_blocking(move || {
        stdin
            .write_all(input.as_bytes())
            .expect("the input is written");
        drop(stdin);
        child.wait_with_output().expect("patience exits")
    })
    .await
    .expect("the waiting thread")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A `patience` process driven line by line.
struct Interactive {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Interactive {
    fn start(config: &Path, args: &[&str]) -> Interactive {
        let mut child = spawn_patience(config, args);
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, lines) = sync_channel(4096);
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Interactive {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
        }
    }

    fn type_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{line}").expect("patience reads its input");
    }

    /// Waits for the terms of the daily and starts its clock (Enter).
    async fn start_the_clock(&mut self) {
        self.wait_for("Press Enter to start the clock").await;
        self.type_line("");
    }

    /// Lists the legal moves (`m`), plays the first, waits for the client
    /// to report it played, and returns it.
    async fn play_first_legal_move(&mut self) -> String {
        self.type_line("m");
        let moves = self.wait_for("moves: ").await;
        let first = moves
            .trim_start_matches("moves: ")
            .split_whitespace()
            .next()
            .expect("the deal has a legal move")
            .to_string();
        self.type_line(&first);
        self.wait_for(&format!("you played {first}")).await;
        first
    }

    /// Reads lines until one contains `wanted`; returns it.
    async fn wait_for(&mut self, wanted: &str) -> String {
        loop {
            let lines = std::mem::replace(&mut self.lines, sync_channel(1).1);
            let (lines, line) = tokio::task::spawn_blocking(move || {
                let line = lines.recv_timeout(PATIENCE);
                (lines, line)
            })
            .await
            .expect("the reading thread");
            self.lines = lines;
            let line = line.unwrap_or_else(|_| {
                panic!("no line with {wanted:?} in:\n{}", self.seen.join("\n"))
            });
            self.seen.push(line.clone());
            if line.contains(wanted) {
                return line;
            }
        }
    }

    /// Closes standard input, waits for the exit, and returns its status
    /// and standard error.
    async fn exit(mut self) -> (std::process::ExitStatus, String) {
        use std::io::Read as _;
        drop(self.stdin.take());
        let mut child = self.child;
        tokio::task::spawn_blocking(move || {
            let mut errors = String::new();
            if let Some(mut stderr) = child.stderr.take() {
                stderr.read_to_string(&mut errors).expect("stderr reads");
            }
            (child.wait().expect("patience exits"), errors)
        })
        .await
        .expect("the waiting thread")
    }

    /// Closes standard input, waits for a successful exit, and returns every
    /// line printed.
    async fn finish(mut self) -> Vec<String> {
        let mut seen = std::mem::take(&mut self.seen);
        let lines = std::mem::replace(&mut self.lines, sync_channel(1).1);
        let (status, errors) = self.exit().await;
        // The reader thread ends at the end of the output: every line is in.
        let rest: Vec<String> = tokio::task::spawn_blocking(move || lines.iter().collect())
            .await
            .expect("the reading thread");
        seen.extend(rest);
        assert!(status.success(), "{status}: {errors}\n{}", seen.join("\n"));
        seen
    }
}

/// The number after `key` in `text`, e.g. the race id after `race id `.
fn number_after(text: &str, key: &str) -> u64 {
    let start = text
        .find(key)
        .unwrap_or_else(|| panic!("{key:?} not in {text}"))
        + key.len();
    text[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or_else(|_| panic!("no number after {key:?} in {text}"))
}

/// A server of daily deals on `clock`, and its URL.
async fn daily_server(clock: &Clock) -> (patience_server::Server, String) {
    let server_clock = clock.clone();
    let server = start_server(move |config| {
        config.clock = server_clock;
        config.daily_secret = Some(daily_secret_hex());
    })
    .await;
    let url = format!("ws://{}/", server.address());
    (server, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_daily_leaderboard_and_replay_through_the_binary() {
    let patience = binary("patience-cli", "patience");
    assert!(patience.exists());
    // Ada registers the day before, so that she ranks on the day.
    let clock = Clock::virtual_at(DAY_BEFORE_NOON);
    let (server, url) = daily_server(&clock).await;
    let (ada, bob, stranger) = (config_dir("ada"), config_dir("bob"), config_dir("stranger"));

    // Register: the token goes to a private file, with a plain warning.
    let registered = run(&ada, &["register", "ada", "--server", &url], "").await;
    let said = text(&registered);
    assert!(registered.status.success(), "{said}");
    assert!(said.contains("registered ada as player "), "{said}");
    assert!(said.contains("only key to the account"), "{said}");
    let account_file = ada.join("account.json");
    let stored = std::fs::read_to_string(&account_file).expect("the account is saved");
    assert!(stored.contains("\"token\""), "{stored}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&account_file)
            .expect("saved")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // Names are unique whatever their case, and validated.
    let taken = run(&bob, &["register", "ADA", "--server", &url], "").await;
    assert!(!taken.status.success());
    assert!(
        text(&taken).contains("\"ADA\" is taken"),
        "{}",
        text(&taken)
    );
    let invalid = run(&bob, &["register", "9lives", "--server", &url], "").await;
    assert!(!invalid.status.success());
    assert!(text(&invalid).contains("not a valid player name"));
    // A second registration would lose the first account's key: refused.
    let again = run(&ada, &["register", "ada2", "--server", &url], "").await;
    assert!(!again.status.success());
    assert!(text(&again).contains("--force"), "{}", text(&again));

    // Ada plays one move of the daily deal, then resigns.
    clock.set(DAY_MORNING);
    let mut daily = Interactive::start(&ada, &["daily", "tbm", "--server", &url, "--plain"]);
    daily.start_the_clock().await;
    daily.wait_for("started: one attempt").await;
    daily
        .wait_for("nobody has finished today's deal yet: a win would rank first")
        .await;
    daily.type_line("b");
    daily.wait_for("a win now would rank 1 of 1").await;
    let first = daily.play_first_legal_move().await;
    daily.type_line("1>1");
    daily.wait_for("refused").await;
    daily.type_line("resign");
    let resigned = daily.wait_for("daily Three Blind Mice ").await;
    assert!(resigned.contains(": resigned in "), "{resigned}");
    daily.wait_for("rank 1 of 1 finishers so far").await;
    let race_line = daily.wait_for("race id ").await;
    let ada_race = number_after(&race_line, "race id ");
    daily.finish().await;

    // One attempt per day: a friendly message and Ada's result, status 0.
    let twice = run(&ada, &["daily", "tbm", "--server", &url, "--plain"], "\n").await;
    let said = text(&twice);
    assert!(twice.status.success(), "{said}");
    assert!(
        said.contains("played today's Three Blind Mice deal already"),
        "{said}"
    );
    assert!(said.contains("Your result: resigned"), "{said}");
    assert!(
        said.contains(&format!("patience replay {ada_race}")),
        "{said}"
    );

    // While the day runs, Ada may watch her own attempt as she saw it: no
    // seed.
    let replay = run(
        &ada,
        &["replay", &ada_race.to_string(), "--server", &url, "--plain"],
        "",
    )
    .await;
    let said = text(&replay);
    assert!(replay.status.success(), "{said}");
    assert!(
        said.starts_with(&format!(
            "Your attempt {ada_race} · Three Blind Mice · daily deal of {DAY} · as you saw it"
        )),
        "{said}"
    );
    assert!(!said.contains(" · seed "), "{said}");
    assert!(said.contains("== seat 1: you (1 moves) =="), "{said}");
    assert!(said.contains(&format!("\n1. {first}")), "{said}");
    assert!(said.contains("Standings:\n1. you resigned in "), "{said}");

    // Nobody else may watch it yet, and the client says what is refused.
    let refused = run(
        &stranger,
        &["replay", &ada_race.to_string(), "--server", &url, "--plain"],
        "",
    )
    .await;
    assert!(!refused.status.success(), "{}", text(&refused));
    assert!(
        text(&refused).contains("only your own attempt"),
        "{}",
        text(&refused)
    );

    // Bob's first daily play registers him, and he pipes in the winning
    // line (the test knows the deal; a player would have to learn it).
    let (seed, line) = daily_deal(DAY);
    assert!(!line.is_empty(), "the daily deal is proved winnable");
    let script: String = "\n".to_string()
        + &line
            .iter()
            .map(|text| format!("{text}\n"))
            .collect::<String>();
    let won = run(
        &bob,
        &["daily", "tbm", "--server", &url, "--plain", "--name", "bob"],
        &script,
    )
    .await;
    let said = text(&won);
    assert!(won.status.success(), "{said}");
    assert!(said.contains("registered bob as player "), "{said}");
    assert!(
        said.contains("1 finished so far, none won: a win would rank first"),
        "{said}"
    );
    assert!(
        said.contains(": won in ")
            && said.contains(&format!("{} moves, 52 cards home", line.len())),
        "{said}"
    );
    // Bob's account is of the day, and his moves came back to back: the
    // win is unranked, held for review (named first), and says where it
    // would be.
    assert!(
        said.contains("unranked: the moves came faster than a person plays"),
        "{said}"
    );
    assert!(
        said.contains("it would rank 1 of 2 so far, and it stands on today's board, marked"),
        "{said}"
    );
    let bob_race = number_after(&said, "race id ");

    // The leaderboard, as Ada sees it: Ada alone ranks, and Bob's win
    // stands above her where it would rank, marked, with no rank.
    let board = run(&ada, &["leaderboard", "tbm", "--server", &url], "").await;
    let said = text(&board);
    assert!(board.status.success(), "{said}");
    assert!(said.contains("Three Blind Mice · daily deal of "), "{said}");
    assert!(
        said.contains("1 finished (1 more unranked), 0 playing"),
        "{said}"
    );
    let rows: Vec<&str> = said
        .lines()
        .filter(|row| row.contains("  ada  ") || row.contains("  bob  "))
        .collect();
    assert_eq!(rows.len(), 2, "{said}");
    assert!(
        rows[0].trim_start().starts_with("-  bob")
            && rows[0].ends_with("unranked (held for review)"),
        "{said}"
    );
    assert!(
        rows[1].trim_start().starts_with("1  ada") && rows[1].ends_with("← you"),
        "{said}"
    );
    assert!(said.contains("The day is still running"), "{said}");
    // Bob sees his own unranked row on the board, and why.
    let own = run(&bob, &["leaderboard", "tbm", "--server", &url], "").await;
    let said = text(&own);
    assert!(!said.contains("   ⋮\n"), "{said}");
    assert!(
        said.contains("bob") && said.contains("← you, unranked (held for review) (would rank 1)"),
        "{said}"
    );
    // JSON is the protocol's page.
    let json = run(
        &stranger,
        &["leaderboard", "tbm", "--json", "--server", &url],
        "",
    )
    .await;
    assert!(json.status.success(), "{}", text(&json));
    let page: LeaderboardPage =
        serde_json::from_slice(&json.stdout).expect("the output is the page as JSON");
    assert_eq!((page.finishers, page.unranked), (1, 1));
    let board: Vec<(PlayerStatus, u32, u32, bool)> = page
        .rows
        .iter()
        .map(|row| (row.status, row.place, row.rank, row.unranked.is_some()))
        .collect();
    assert_eq!(
        board,
        [
            (PlayerStatus::Won, 1, 1, true),
            (PlayerStatus::Resigned, 2, 1, false)
        ]
    );
    assert_eq!(page.own, None, "the stranger has no account");
    assert!(!page.day_over && page.reveal.is_none());

    // Bob's winning attempt plays back to the end.
    let replay = run(
        &bob,
        &[
            "replay",
            &bob_race.to_string(),
            "--server",
            &url,
            "--plain",
            "--seat",
            "1",
        ],
        "",
    )
    .await;
    let said = text(&replay);
    assert!(replay.status.success(), "{said}");
    assert!(
        said.contains(&format!("\n{}. {}", line.len(), line[line.len() - 1])),
        "{said}"
    );
    assert!(!said.contains("the log stops"), "{said}");
    assert!(said.contains("Standings:\n1. you won in "), "{said}");

    // Once the day is closed, anyone may watch Ada's attempt, seed and all,
    // and the day's leaderboard reveals the deal.
    clock.set(NEXT_DAY + HOUR);
    let replay = run(
        &stranger,
        &["replay", &ada_race.to_string(), "--server", &url, "--plain"],
        "",
    )
    .await;
    let said = text(&replay);
    assert!(replay.status.success(), "{said}");
    assert!(
        said.starts_with(&format!(
            "Replay of race {ada_race} · Three Blind Mice · seed {seed}"
        )),
        "{said}"
    );
    assert!(said.contains("== seat 1: ada (1 moves) =="), "{said}");
    assert!(said.contains("Standings:\n1. ada resigned in "), "{said}");
    let board = run(
        &stranger,
        &["leaderboard", "tbm", "--date", DAY, "--server", &url],
        "",
    )
    .await;
    let said = text(&board);
    assert!(
        said.contains(&format!("The deal: Three Blind Mice seed {seed}")),
        "{said}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_servers_first_day_shows_its_unranked_attempts() {
    // On a fresh server every account is new, so nothing ranks: the board
    // still shows the day's attempts, marked, and a result never reads
    // "1 of 0".
    let (server, url) = daily_server(&Clock::virtual_at(DAY_MORNING)).await;
    let cat = config_dir("cat");
    let played = run(
        &cat,
        &["daily", "tbm", "--server", &url, "--plain", "--name", "cat"],
        // An empty line starts the attempt's clock, then she resigns.
        "\nresign\n",
    )
    .await;
    let said = text(&played);
    assert!(played.status.success(), "{said}");
    assert!(
        said.contains("unranked: your account was registered on the day"),
        "{said}"
    );
    assert!(said.contains("it would rank 1 of 1 so far"), "{said}");
    assert!(!said.contains(" of 0"), "{said}");
    let board = run(&cat, &["leaderboard", "tbm", "--server", &url], "").await;
    let said = text(&board);
    assert!(board.status.success(), "{said}");
    assert!(
        said.contains("1 finished, none ranked yet, 0 playing"),
        "{said}"
    );
    assert!(!said.contains("no finished attempts yet"), "{said}");
    let row = said
        .lines()
        .find(|row| row.contains("  cat  "))
        .unwrap_or_else(|| panic!("cat's row is on the board: {said}"));
    assert!(
        row.trim_start().starts_with("-  cat")
            && row.ends_with("← you, unranked (account of the day) (would rank 1)"),
        "{said}"
    );
    assert!(said.contains("shown where it would rank"), "{said}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daily_attempt_left_open_is_taken_back_where_it_stopped() {
    let _ = binary("patience-cli", "patience");
    let server = start_server(|_| {}).await;
    let url = format!("ws://{}/", server.address());
    let carol = config_dir("carol");
    // The first daily play registers Carol; the test server deals Three
    // Blind Mice only, so this one is refused after that.
    let refused = run(
        &carol,
        &[
            "daily",
            "midshipman",
            "--server",
            &url,
            "--plain",
            "--name",
            "carol",
        ],
        "\n",
    )
    .await;
    assert!(!refused.status.success(), "{}", text(&refused));
    assert!(text(&refused).contains("registered carol as player "));
    // Signed in with the stored token this time.
    let mut daily = Interactive::start(&carol, &["daily", "tbm", "--server", &url, "--plain"]);
    daily.start_the_clock().await;
    daily.wait_for("started: one attempt").await;
    daily.play_first_legal_move().await;
    // The end of input leaves the attempt open, its clock running.
    let seen = daily.finish().await;
    assert!(
        seen.iter()
            .any(|line| line.contains("the attempt stays open")),
        "{seen:#?}"
    );

    // Taken back in one client, then in another: the first is closed.
    let mut first_client =
        Interactive::start(&carol, &["daily", "tbm", "--server", &url, "--plain"]);
    first_client.start_the_clock().await;
    first_client.wait_for("resumed: 1 moves played").await;
    let resumed = run(
        &carol,
        &["daily", "tbm", "--server", &url, "--plain"],
        "\nresign\n",
    )
    .await;
    first_client.wait_for("error: ").await;
    let (status, errors) = first_client.exit().await;
    assert!(!status.success(), "a replaced client fails");
    assert!(
        errors.contains("another client took the attempt over"),
        "{errors}"
    );
    let said = text(&resumed);
    assert!(resumed.status.success(), "{said}");
    assert!(said.contains("resumed: 1 moves played"), "{said}");
    assert!(said.contains(": resigned in "), "{said}");
    assert!(said.contains("1 moves, "), "{said}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_player_races_as_itself_and_the_race_plays_back() {
    use patience_cli::config::Store;
    use patience_cli::session::{Entry, Session};
    use patience_shared::protocol::{ClientMessage, RoomOptions};

    let _ = binary("patience-cli", "patience");
    let server = start_server(|_| {}).await;
    let url = format!("ws://{}/", server.address());
    let dan = config_dir("dan");
    let registered = run(&dan, &["register", "dan", "--server", &url], "").await;
    assert!(registered.status.success(), "{}", text(&registered));

    let (mut host, notes) = Session::start(
        &url,
        "someone",
        Entry::Create {
            game: GameKind::ThreeBlindMice,
            players: 2,
            public: false,
            options: RoomOptions::default(),
            bots: Vec::new(),
        },
        Store::in_directory(&dan),
    )
    .await
    .expect("dan connects");
    assert!(notes.contains(&"signed in as dan".to_string()), "{notes:?}");
    let until = async |session: &mut Session, done: &dyn Fn(&Session) -> bool| {
        let mut seen = Vec::new();
        while !done(session) {
            let (_, notes) = tokio::time::timeout(PATIENCE, session.recv())
                .await
                .expect("a message within the test's patience")
                .expect("the connection stays up");
            seen.extend(notes);
        }
        seen
    };
    until(&mut host, &|s| s.state.room.is_some()).await;
    let code = host
        .state
        .room
        .as_ref()
        .map(|room| room.code.clone())
        .unwrap_or_default();
    let (mut guest, _) = Session::start(
        &url,
        "eve",
        Entry::Join(code),
        Store::in_directory(config_dir("eve")),
    )
    .await
    .expect("eve connects");
    let racing = |s: &Session| s.state.can_move();
    until(&mut host, &racing).await;
    until(&mut guest, &racing).await;
    host.send(&ClientMessage::Resign).await.expect("sent");
    guest.send(&ClientMessage::Resign).await.expect("sent");
    let notes = until(&mut host, &|s| s.state.result.is_some()).await;
    let race_id = host
        .state
        .result
        .as_ref()
        .and_then(|result| result.race_id)
        .expect("the server kept the race");
    // The race's lasting page is on the server raced on.
    assert!(
        notes.contains(&format!(
            "race id {race_id}: `patience replay {race_id}` plays it back; its page: http://{}/race/{race_id}",
            server.address()
        )),
        "{notes:?}"
    );
    let standings = host.state.result.as_ref().map(|result| {
        result
            .standings
            .iter()
            .map(|standing| standing.name.clone())
            .collect::<Vec<_>>()
    });
    assert!(
        standings.is_some_and(|names| names.contains(&"dan".to_string())),
        "dan raced under his registered name"
    );

    let replay = run(
        &config_dir("anyone"),
        &["replay", &race_id.to_string(), "--server", &url, "--plain"],
        "",
    )
    .await;
    let said = text(&replay);
    assert!(replay.status.success(), "{said}");
    assert!(said.starts_with(&format!(
        "Replay of race {race_id} · Three Blind Mice · seed "
    )));
    assert!(!said.contains("daily deal of"), "{said}");
    assert!(said.contains("== seat 1: dan (0 moves) =="), "{said}");
    assert!(said.contains("== seat 2: eve (0 moves) =="), "{said}");
    assert!(said.contains("Standings:\n1. "), "{said}");
    let missing = run(
        &config_dir("anyone"),
        &["replay", "999999", "--server", &url, "--plain"],
        "",
    )
    .await;
    assert!(!missing.status.success());
    assert!(text(&missing).contains("asking "), "{}", text(&missing));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_server_restart_the_client_takes_the_attempt_back_from_the_database() {
    let _ = binary("patience-cli", "patience");
    let data = config_dir("restart-data");
    let server = start_server(|config| config.data_dir = Some(data.clone())).await;
    let address = server.address();
    let url = format!("ws://{address}/");
    let fay = config_dir("fay");
    let mut daily = Interactive::start(
        &fay,
        &["daily", "tbm", "--server", &url, "--plain", "--name", "fay"],
    );
    daily.start_the_clock().await;
    daily.wait_for("started: one attempt").await;
    daily.play_first_legal_move().await;

    // The server stops; the client says how to come back and fails.
    server.shutdown().await;
    daily.wait_for("the server is stopping").await;
    let (status, errors) = daily.exit().await;
    assert!(!status.success());
    assert!(
        errors.contains("run `patience daily` again to take it back"),
        "{errors}"
    );

    // Started again on the same data, it deals the same attempt back.
    let server = start_server(|config| {
        config.data_dir = Some(data.clone());
        config.listen = address;
    })
    .await;
    let resumed = run(
        &fay,
        &["daily", "tbm", "--server", &url, "--plain"],
        "\nb\nresign\n",
    )
    .await;
    let said = text(&resumed);
    assert!(resumed.status.success(), "{said}");
    assert!(said.contains("resumed: 1 moves played"), "{said}");
    assert!(said.contains(": resigned in "), "{said}");
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&data);
}

/// The player reads the terms and starts when ready: the attempt is not
/// open, and its clock does not run, until then. Twenty minutes at the
/// terms cost nothing; the time counts from the start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daily_clock_starts_when_the_player_starts() {
    let _ = binary("patience-cli", "patience");
    let clock = Clock::virtual_at(DAY_MORNING);
    let server_clock = clock.clone();
    let server = start_server(move |config| {
        config.clock = server_clock;
        config.daily_secret = Some(daily_secret_hex());
    })
    .await;
    let url = format!("ws://{}/", server.address());
    let (gus, stranger) = (config_dir("gus"), config_dir("gus-stranger"));
    let playing = async |stranger: &Path| -> u32 {
        let json = run(
            stranger,
            &["leaderboard", "tbm", "--json", "--server", &url],
            "",
        )
        .await;
        assert!(json.status.success(), "{}", text(&json));
        let page: LeaderboardPage =
            serde_json::from_slice(&json.stdout).expect("the output is the page as JSON");
        page.playing
    };

    let mut daily = Interactive::start(
        &gus,
        &["daily", "tbm", "--server", &url, "--plain", "--name", "gus"],
    );
    daily.wait_for("The clock starts when you start").await;
    daily.wait_for("Press Enter to start the clock").await;
    assert_eq!(
        playing(&stranger).await,
        0,
        "nothing is open before the start"
    );
    clock.set(DAY_MORNING + HOUR / 3);
    assert_eq!(playing(&stranger).await, 0, "nor twenty minutes later");

    daily.type_line("");
    daily.wait_for("started: one attempt").await;
    assert_eq!(playing(&stranger).await, 1, "the start opens the attempt");
    daily.type_line("resign");
    let resigned = daily.wait_for("daily Three Blind Mice ").await;
    assert!(resigned.contains(": resigned in 0:00.0"), "{resigned}");
    daily.finish().await;

    // Leaving at the terms opens nothing: `q`, then the end of input.
    let before = run(
        &stranger,
        &["daily", "tbm", "--server", &url, "--plain", "--name", "ivy"],
        "q\n",
    )
    .await;
    let said = text(&before);
    assert!(before.status.success(), "{said}");
    assert!(
        said.contains("Not started: the clock has not run."),
        "{said}"
    );
    assert_eq!(playing(&gus).await, 0);
    server.shutdown().await;
}
