//! The `patience` binary's tournament commands against a real server:
//! `leaderboard --follow` (as lines and as JSON lines) sees another
//! player's attempt begin and finish as it happens; `leaderboard --days`,
//! `stats` and `standings` print what the server stored of a closed day;
//! and the daily attempt's state follows its day on its own connection.
//!
//! The other player plays through the protocol client of `patience_tests`,
//! so that the test decides when each change happens; the followers are
//! the binary, as a person runs it.

use std::io::BufRead as _;
use std::path::PathBuf;
use std::process::Child;
use std::sync::mpsc::{Receiver, sync_channel};
use std::time::Duration;

use patience_server::clock::Clock;
use patience_shared::protocol::{
    ClientMessage, DaysPage, LeaderboardUpdate, PlayerRecord, PlayerStatus, ServerMessage,
    StandingsPage,
};
use patience_tests::{
    Client, DAY, DAY_BEFORE_NOON, DAY_MORNING, HOUR, NEXT_DAY, binary, daily_deal,
    daily_secret_hex, spawn_patience, start_server,
};

/// Longest a test waits for one line: a safety net, never a way to pass time.
const PATIENCE: Duration = Duration::from_secs(30);

/// A config directory of this test's own.
fn config_dir(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!(
        "patience-tournament-client-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&directory);
    directory
}

/// A `patience` process whose standard output is read line by line.
struct Lines {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Lines {
    fn start(config: &std::path::Path, args: &[&str]) -> Lines {
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
        Lines {
            child,
            lines,
            seen: Vec::new(),
        }
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

    /// Ends the process (a follower runs until stopped, as Ctrl-C does).
    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The update a JSON line carries, if it is one.
fn update_of(line: &str) -> Option<LeaderboardUpdate> {
    match serde_json::from_str(line) {
        Ok(ServerMessage::LeaderboardUpdate { update }) => Some(update),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_sees_another_players_attempt_begin_and_finish() {
    // Built first: a build is long enough for an idle connection to be
    // closed.
    assert!(binary("patience-cli", "patience").exists());
    let clock = Clock::virtual_at(DAY_BEFORE_NOON);
    let server_clock = clock.clone();
    let server = start_server(move |config| {
        config.clock = server_clock;
        config.daily_secret = Some(daily_secret_hex());
    })
    .await;
    let url = format!("ws://{}/", server.address());
    // Bob registers the day before, so that his attempt ranks.
    let (_, token) = Client::hello(&server, "bob").await.register("bob").await;
    clock.set(DAY_MORNING);

    let mut text = Lines::start(
        &config_dir("text"),
        &[
            "leaderboard",
            "tbm",
            "--follow",
            "--plain",
            "--server",
            &url,
        ],
    );
    text.wait_for(&format!("daily deal of {DAY} · 0 finished, 0 playing"))
        .await;
    text.wait_for("following live").await;
    let mut json = Lines::start(
        &config_dir("json"),
        &["leaderboard", "tbm", "--follow", "--json", "--server", &url],
    );
    let page = json.wait_for("\"type\":\"leaderboard_page\"").await;
    assert!(page.contains(&format!("\"date\":\"{DAY}\"")), "{page}");

    let mut bob = Client::hello(&server, "bob").await;
    bob.authenticate(&token).await;
    bob.daily_play().await;
    text.wait_for("0 finished, 1 playing").await;
    let began = json.wait_for("\"type\":\"leaderboard_update\"").await;
    let began = update_of(&began).expect("an update");
    assert_eq!((began.row, began.playing), (None, 1));

    bob.send(&ClientMessage::Resign).await;
    let finished = bob
        .recv_until(|message| matches!(message, ServerMessage::DailyFinished { .. }))
        .await;
    let ServerMessage::DailyFinished { result } = finished else {
        unreachable!("recv_until returned another message");
    };
    let line = text.wait_for("rank 1: bob resigned in ").await;
    assert!(
        line.ends_with(&format!(
            "(race {}) · 1 finished, 0 playing",
            result.race_id
        )),
        "{line}"
    );
    let ended = json.wait_for("\"type\":\"leaderboard_update\"").await;
    let ended = update_of(&ended).expect("an update");
    let row = ended.row.expect("bob's row");
    assert_eq!(
        (row.rank, row.name.as_str(), row.status, row.race_id),
        (1, "bob", PlayerStatus::Resigned, result.race_id)
    );
    assert_eq!((ended.finishers, ended.playing), (1, 0));
    text.stop();
    json.stop();
}

/// Runs `patience` to the end with `config` as its config directory and
/// `input` on standard input; returns its status and everything it printed.
async fn run(config: &std::path::Path, args: &[&str], input: &str) -> (bool, String) {
    use std::io::Write as _;
    let mut child = spawn_patience(config, args);
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = input.to_string();
    let output = tokio::task::spawn_blocking(move || {
        stdin
            .write_all(input.as_bytes())
            .expect("the input is written");
        drop(stdin);
        child.wait_with_output().expect("patience exits")
    })
    .await
    .expect("the waiting thread");
    (
        output.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

/// A closed day as `leaderboard --days`, `stats` and `standings` print it:
/// Bob won it with the solver's line, Ada resigned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn days_stats_and_standings_print_what_the_server_stored() {
    let clock = Clock::virtual_at(DAY_BEFORE_NOON);
    let server_clock = clock.clone();
    let server = start_server(move |config| {
        config.clock = server_clock;
        config.daily_secret = Some(daily_secret_hex());
        // Bob's moves come back to back; a person's review is not this test's.
        config.daily_review_window_moves = 0;
    })
    .await;
    let url = format!("ws://{}/", server.address());
    let (ada, bob) = (config_dir("ada"), config_dir("bob"));
    for (config, name) in [(&ada, "ada"), (&bob, "bob")] {
        let (ok, said) = run(config, &["register", name, "--server", &url], "").await;
        assert!(ok, "{said}");
    }
    clock.set(DAY_MORNING);
    let (ok, said) = run(
        &ada,
        &["daily", "tbm", "--plain", "--server", &url],
        "\nresign\n",
    )
    .await;
    assert!(ok && said.contains(": resigned in "), "{said}");
    let (seed, line) = daily_deal(DAY);
    let script: String = "\n".to_string()
        + &line
            .iter()
            .map(|text| format!("{text}\n"))
            .collect::<String>();
    let (ok, said) = run(
        &bob,
        &["daily", "tbm", "--plain", "--server", &url],
        &script,
    )
    .await;
    assert!(ok && said.contains(": won in "), "{said}");
    // The day closes once the last attempt it could have begun is out of time.
    clock.set(NEXT_DAY + 2 * HOUR);

    let (ok, days) = run(
        &ada,
        &["leaderboard", "tbm", "--days", "--server", &url],
        "",
    )
    .await;
    assert!(ok, "{days}");
    assert!(
        days.contains(&format!("{DAY} · 2 finished, 1 won · seed {seed}")),
        "{days}"
    );
    let podium: Vec<&str> = days
        .lines()
        .filter(|line| line.contains(" moves  race "))
        .collect();
    assert_eq!(podium.len(), 2, "{days}");
    assert!(
        podium[0].starts_with("   1  bob ") && podium[0].contains(" won "),
        "{days}"
    );
    assert!(
        podium[1].starts_with("   2  ada ") && podium[1].contains(" resigned "),
        "{days}"
    );
    let (ok, json) = run(
        &ada,
        &["leaderboard", "tbm", "--days", "--json", "--server", &url],
        "",
    )
    .await;
    assert!(ok, "{json}");
    let page: DaysPage = serde_json::from_str(&json).expect("the days as JSON");
    assert_eq!(page.days[0].reveal.seed, seed);

    // Ada's own records, without a name; Bob's by name.
    let (ok, mine) = run(&ada, &["stats", "--server", &url], "").await;
    assert!(ok, "{mine}");
    assert!(
        mine.starts_with(&format!("ada · daily records through {DAY}")),
        "{mine}"
    );
    let figure = |text: &str, label: &str| -> String {
        text.lines()
            .find(|line| line.starts_with(label))
            .unwrap_or_else(|| panic!("no {label:?} in {text}"))
            .split_whitespace()
            .last()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(figure(&mine, "days played"), "1", "{mine}");
    assert_eq!(figure(&mine, "days won"), "0", "{mine}");
    assert_eq!(figure(&mine, "best rank"), "2", "{mine}");
    assert_eq!(figure(&mine, "best winning time"), "-", "{mine}");
    let (ok, bobs) = run(&ada, &["stats", "bob", "--json", "--server", &url], "").await;
    assert!(ok, "{bobs}");
    let record: PlayerRecord = serde_json::from_str(&bobs).expect("the record as JSON");
    let game = &record.games[0];
    assert_eq!(
        (game.days_played, game.wins, game.best_rank, game.win_streak),
        (1, 1, Some(1), 1)
    );

    // This week: Bob 25 points, Ada 18, Ada's own row marked; the week
    // has an open day.
    let (ok, week) = run(&ada, &["standings", "tbm", "--server", &url], "").await;
    assert!(ok, "{week}");
    assert!(
        week.starts_with("Three Blind Mice · week 2026-W49 (2026-11-30 to 2026-12-06) · 2 players"),
        "{week}"
    );
    let rows: Vec<&str> = week
        .lines()
        .filter(|line| line.starts_with("   1  ") || line.starts_with("   2  "))
        .collect();
    assert_eq!(rows.len(), 2, "{week}");
    assert!(
        rows[0].starts_with("   1  bob") && rows[0].contains(" 25 "),
        "{week}"
    );
    assert!(
        rows[1].starts_with("   2  ada") && rows[1].contains(" 18 ") && rows[1].ends_with("← you"),
        "{week}"
    );
    assert!(week.contains("Live: "), "{week}");
    let (ok, month) = run(
        &ada,
        &[
            "standings",
            "tbm",
            "--month",
            "2026-12",
            "--json",
            "--server",
            &url,
        ],
        "",
    )
    .await;
    assert!(ok, "{month}");
    let page: StandingsPage = serde_json::from_str(&month).expect("the standings as JSON");
    assert_eq!((page.key.as_str(), page.players), ("2026-12", 2));
    assert_eq!(page.own.map(|own| own.points), Some(18));
}

/// The daily attempt's state follows its day on the attempt's own
/// connection, as the terminal UI does: the real server's page and updates
/// come between the answers to moves, and the state takes each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daily_attempt_follows_its_days_standings_on_its_own_connection() {
    use patience_cli::config::Store;
    use patience_cli::daily::{self, Opened};
    use patience_shared::game::GameKind;

    let clock = Clock::virtual_at(DAY_BEFORE_NOON);
    let server_clock = clock.clone();
    let server = start_server(move |config| {
        config.clock = server_clock;
        config.daily_secret = Some(daily_secret_hex());
    })
    .await;
    let url = format!("ws://{}/", server.address());
    let (_, token) = Client::hello(&server, "bob").await.register("bob").await;
    clock.set(DAY_MORNING);

    // Ada's first daily play registers her (unranked: her account is of
    // the day) and opens the attempt.
    let store = Store::in_directory(config_dir("follower"));
    let opened = daily::open(
        &url,
        &store,
        GameKind::ThreeBlindMice,
        Some("ada".into()),
        |_| {},
    )
    .await
    .expect("the attempt opens");
    let Opened::Attempt(attempt) = opened else {
        panic!("a new attempt was expected");
    };
    let daily::Attempt {
        mut connection,
        mut state,
        ..
    } = *attempt;
    let follow = state.follow_request().expect("the day is followed");
    connection.send(&follow).await.expect("sent");
    // Reads the attempt's connection into the state until `done` holds.
    async fn read_until(
        connection: &mut patience_cli::net::Connection,
        state: &mut daily::DailyState,
        done: impl Fn(&daily::DailyState) -> bool,
    ) {
        while !done(state) {
            let message = tokio::time::timeout(PATIENCE, connection.recv())
                .await
                .expect("the server answers")
                .expect("the connection holds");
            state.apply(message, std::time::Instant::now());
        }
    }
    read_until(&mut connection, &mut state, |state| {
        state.standings.is_some()
    })
    .await;
    let standings = state.standings.as_ref().expect("followed");
    assert_eq!(standings.page.date, DAY);
    assert!(standings.page.rows.is_empty());

    // Bob plays and resigns meanwhile; Ada's state sees it.
    let mut bob = Client::hello(&server, "bob").await;
    bob.authenticate(&token).await;
    bob.daily_play().await;
    bob.send(&ClientMessage::Resign).await;
    read_until(&mut connection, &mut state, |state| {
        state
            .standings
            .as_ref()
            .is_some_and(|standings| !standings.page.rows.is_empty())
    })
    .await;
    // Ada plays a move and resigns: the answers and the updates interleave.
    let first = daily::legal_texts(state.board())
        .into_iter()
        .next()
        .expect("a legal move");
    connection
        .send(&ClientMessage::Move {
            text: first,
            seat: None,
        })
        .await
        .expect("sent");
    connection.send(&ClientMessage::Resign).await.expect("sent");
    read_until(&mut connection, &mut state, |state| {
        state.result.is_some()
            && state
                .standings
                .as_ref()
                .is_some_and(|standings| standings.page.unranked == 1)
    })
    .await;
    let standings = state.standings.as_ref().expect("followed");
    let rows: Vec<(u32, &str, PlayerStatus)> = standings
        .page
        .rows
        .iter()
        .map(|row| (row.rank, row.name.as_str(), row.status))
        .collect();
    assert_eq!(rows, [(1, "bob", PlayerStatus::Resigned)]);
    assert_eq!(
        (
            standings.page.finishers,
            standings.page.unranked,
            standings.page.playing
        ),
        (1, 1, 0)
    );
    assert_eq!(
        state.attempt.as_ref().map(|attempt| attempt.moves.len()),
        Some(1)
    );
    connection.close().await;
}
