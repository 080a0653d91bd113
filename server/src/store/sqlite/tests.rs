//! The SQLite store against its contract: uniqueness, one attempt per
//! player and day, moves in order, atomic finishes, the ranking, races read
//! back as written, migrations, and files that are not ours.

use super::*;

fn store() -> SqliteStore {
    SqliteStore::in_memory().expect("an in-memory database opens")
}

fn hash(byte: u8) -> TokenHash {
    [byte; 32]
}

fn key(player: PlayerId) -> AttemptKey {
    AttemptKey {
        player,
        game: GameKind::ThreeBlindMice,
        date: "2026-12-01".to_string(),
    }
}

fn race_of(name: &str, player: PlayerId, status: PlayerStatus, progress: Progress) -> NewRace {
    NewRace {
        daily: Some("2026-12-01".to_string()),
        ended_at_ms: 1_796_083_200_000 + progress.elapsed_ms,
        result: RaceResult {
            race_id: None,
            standings: vec![Standing {
                rank: 1,
                seat: 0,
                name: name.to_string(),
                status,
                progress,
            }],
            reveal: Reveal {
                game: GameKind::ThreeBlindMice,
                seed: u64::MAX - 5,
                salt: "00112233445566778899aabbccddeeff".to_string(),
            },
            logs: vec![MoveLog {
                seat: 0,
                moves: vec!["7h>4".to_string(); progress.moves as usize],
            }],
            open_boards: false,
        },
        players: vec![(0, player)],
    }
}

#[test]
fn names_are_unique_whatever_their_case_and_tokens_find_players() {
    let mut store = store();
    let ada = store.register("Ada", &hash(1), 10).expect("registers");
    assert!(matches!(
        store.register("ada", &hash(2), 11),
        Err(StoreError::NameTaken(name)) if name == "ada"
    ));
    let bob = store.register("bob", &hash(3), 12).expect("registers");
    assert_ne!(ada.id, bob.id);
    assert_eq!(store.player_by_token(&hash(1)).expect("reads"), Some(ada));
    assert_eq!(store.player_by_token(&hash(2)).expect("reads"), None);
}

#[test]
fn the_first_secret_and_the_first_daily_deal_stay() {
    let mut store = store();
    let first = store.server_secret([1; 32]).expect("stores");
    assert_eq!(first, [1; 32]);
    assert_eq!(store.server_secret([2; 32]).expect("reads"), [1; 32]);

    let deal = DailyDeal {
        game: GameKind::Indian,
        date: "2026-12-01".to_string(),
        seed: u64::MAX,
        salt: "aa".to_string(),
    };
    assert_eq!(store.save_daily_deal(&deal).expect("saves"), deal);
    let later = DailyDeal {
        seed: 7,
        salt: "bb".to_string(),
        ..deal.clone()
    };
    assert_eq!(store.save_daily_deal(&later).expect("saves"), deal);
    assert_eq!(
        store
            .daily_deal(GameKind::Indian, "2026-12-01")
            .expect("reads"),
        Some(deal)
    );
    assert_eq!(
        store
            .daily_deal(GameKind::Midshipman, "2026-12-01")
            .expect("reads"),
        None
    );
}

#[test]
fn an_attempt_begins_once_takes_moves_in_order_and_finishes_once() {
    let mut store = store();
    let ada = store.register("ada", &hash(1), 0).expect("registers");
    let key = key(ada.id);
    assert!(matches!(
        store.record_move(&key, 0, "7h>4"),
        Err(StoreError::AttemptNotOpen)
    ));
    store.begin_attempt(&key, 1_000).expect("begins");
    assert!(matches!(
        store.begin_attempt(&key, 2_000),
        Err(StoreError::AttemptExists)
    ));
    store.record_move(&key, 0, "7h>4").expect("records");
    store.record_move(&key, 1, "c1>9").expect("records");
    assert!(matches!(
        store.record_move(&key, 1, "2s>3"),
        Err(StoreError::MoveConflict(1))
    ));
    let open = store.attempt(&key).expect("reads").expect("exists");
    assert_eq!(open.started_at_ms, 1_000);
    assert_eq!(open.moves, ["7h>4", "c1>9"]);
    assert_eq!(open.finish, None);

    let progress = Progress {
        moves: 2,
        cards_home: 0,
        elapsed_ms: 5_000,
        ..Progress::default()
    };
    let race = race_of("ada", ada.id, PlayerStatus::Resigned, progress);
    let race_id = store
        .finish_attempt(&key, PlayerStatus::Resigned, progress, &race)
        .expect("finishes");
    let finished = store.attempt(&key).expect("reads").expect("exists");
    assert_eq!(
        finished
            .finish
            .map(|finish| (finish.status, finish.progress, finish.race_id)),
        Some((PlayerStatus::Resigned, progress, race_id))
    );
    // A second finish and later moves are refused, and the refused finish
    // left no race behind.
    assert!(matches!(
        store.finish_attempt(&key, PlayerStatus::Won, progress, &race),
        Err(StoreError::AttemptNotOpen)
    ));
    assert_eq!(store.race(race_id + 1).expect("reads"), None);
    assert!(matches!(
        store.record_move(&key, 2, "2s>3"),
        Err(StoreError::AttemptNotOpen)
    ));
}

#[test]
fn races_read_back_as_written() {
    let mut store = store();
    let ada = store.register("ada", &hash(1), 0).expect("registers");
    let mut race = race_of(
        "ada",
        ada.id,
        PlayerStatus::Won,
        Progress {
            moves: 3,
            cards_home: 52,
            elapsed_ms: 61_000,
            ..Progress::default()
        },
    );
    race.daily = None;
    race.result.standings.push(Standing {
        rank: 2,
        seat: 1,
        name: "a guest".to_string(),
        status: PlayerStatus::Left,
        progress: Progress::default(),
    });
    race.result.logs.push(MoveLog {
        seat: 1,
        moves: vec!["undo".to_string()],
    });
    let race_id = store.record_race(&race).expect("stores");
    let record = store.race(race_id).expect("reads").expect("exists");
    assert_eq!(record.race_id, race_id);
    assert_eq!(record.daily, None);
    assert_eq!(record.ended_at_ms, race.ended_at_ms);
    let mut expected = race.result.clone();
    expected.race_id = Some(race_id);
    assert_eq!(record.result, expected);
    assert_eq!(store.race(race_id + 1).expect("reads"), None);
}

/// A finished attempt: `(name, status, elapsed_ms, moves)`.
type Finished = (&'static str, PlayerStatus, u64, u32);

/// Finished attempts in finishing order, and the names in the order the
/// leaderboard must rank them.
const RANKINGS: &[(&[Finished], &[&str])] = &[
    // Won first, whatever the time; then less time; then fewer moves.
    (
        &[
            ("ann", PlayerStatus::Resigned, 10_000, 5),
            ("bea", PlayerStatus::Won, 90_000, 80),
            ("cal", PlayerStatus::Won, 60_000, 99),
            ("dan", PlayerStatus::Won, 60_000, 70),
        ],
        &["dan", "cal", "bea", "ann"],
    ),
    // Equal in all three: who finished first.
    (
        &[
            ("eve", PlayerStatus::Won, 60_000, 70),
            ("fay", PlayerStatus::Won, 60_000, 70),
        ],
        &["eve", "fay"],
    ),
    // Losers by time, then moves, as the issue orders it.
    (
        &[
            ("gus", PlayerStatus::OutOfTime, 3_600_000, 200),
            ("hal", PlayerStatus::Stuck, 400_000, 50),
            ("ivy", PlayerStatus::Resigned, 400_000, 40),
        ],
        &["ivy", "hal", "gus"],
    ),
];

#[test]
fn leaderboards_rank_won_then_time_then_moves() {
    for (attempts, expected) in RANKINGS {
        let mut store = store();
        let mut players = Vec::new();
        for (index, (name, status, elapsed_ms, moves)) in attempts.iter().enumerate() {
            let byte = u8::try_from(index).expect("few players");
            let player = store.register(name, &hash(byte), 0).expect("registers");
            let key = key(player.id);
            store.begin_attempt(&key, 0).expect("begins");
            let progress = Progress {
                moves: *moves,
                cards_home: 0,
                elapsed_ms: *elapsed_ms,
                ..Progress::default()
            };
            let mut race = race_of(name, player.id, *status, progress);
            // Finishing order is the table's order, whatever the times.
            race.ended_at_ms = 1_000 + index as u64;
            store
                .finish_attempt(&key, *status, progress, &race)
                .expect("finishes");
            players.push(player);
        }
        // One attempt still open: counted as playing, never ranked.
        let late = store.register("zed", &hash(99), 0).expect("registers");
        store.begin_attempt(&key(late.id), 0).expect("begins");

        let all = u32::try_from(attempts.len()).expect("few");
        let board = store
            .leaderboard(GameKind::ThreeBlindMice, "2026-12-01", all, None)
            .expect("reads");
        let names: Vec<&str> = board.rows.iter().map(|row| row.name.as_str()).collect();
        assert_eq!(names, *expected);
        assert_eq!((board.finishers, board.playing), (all, 1));
        let ranks: Vec<u32> = board.rows.iter().map(|row| row.rank).collect();
        assert_eq!(ranks, (1..=all).collect::<Vec<_>>());

        // Each player's own row and rank agree with the full table, even
        // when the page holds only the top row.
        for player in &players {
            let own = store
                .leaderboard(GameKind::ThreeBlindMice, "2026-12-01", 1, Some(player.id))
                .expect("reads")
                .own
                .expect("a finished player has a row");
            let position = expected
                .iter()
                .position(|name| *name == player.name)
                .expect("listed");
            assert_eq!(own.rank as usize, position + 1, "{}", player.name);
            assert_eq!(own.name, player.name);
            let rank = store
                .rank(&key(player.id))
                .expect("reads")
                .expect("finished");
            assert_eq!((rank.rank, rank.finishers), (own.rank, all));
        }
        let (finishers, times) = store
            .winning_times(GameKind::ThreeBlindMice, "2026-12-01", 100)
            .expect("reads");
        assert_eq!(finishers, all);
        let expected_times: Vec<u64> = board
            .rows
            .iter()
            .filter(|row| row.status == PlayerStatus::Won)
            .map(|row| row.elapsed_ms)
            .collect();
        assert_eq!(times, expected_times);
        let open = store
            .leaderboard(GameKind::ThreeBlindMice, "2026-12-01", 1, Some(late.id))
            .expect("reads");
        assert_eq!(open.own, None);
        assert_eq!(store.rank(&key(late.id)).expect("reads"), None);
    }
}

#[test]
fn expired_attempts_are_the_open_ones_begun_long_enough_ago() {
    let mut store = store();
    let ada = store.register("ada", &hash(1), 0).expect("registers");
    let bob = store.register("bob", &hash(2), 0).expect("registers");
    store.begin_attempt(&key(ada.id), 1_000).expect("begins");
    store.record_move(&key(ada.id), 0, "7h>4").expect("records");
    store.begin_attempt(&key(bob.id), 5_000).expect("begins");
    let expired = store.expired_attempts(2_000).expect("reads");
    assert_eq!(
        expired,
        [ExpiredAttempt {
            key: key(ada.id),
            name: "ada".to_string(),
            started_at_ms: 1_000,
            moves: vec!["7h>4".to_string()],
        }]
    );
    assert_eq!(store.expired_attempts(5_000).expect("reads").len(), 2);
}

#[test]
fn a_file_keeps_its_data_and_migrates_once() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("patience.sqlite3");
    let player = {
        let mut store = SqliteStore::open(&path).expect("creates");
        store.begin().expect("begins");
        let player = store.register("ada", &hash(1), 0).expect("registers");
        store.commit().expect("commits");
        player
    };
    let mut store = SqliteStore::open(&path).expect("reopens");
    assert_eq!(
        store.schema_version().expect("reads"),
        MIGRATIONS.len() as u32
    );
    assert_eq!(
        store.player_by_token(&hash(1)).expect("reads"),
        Some(player)
    );
    let mode: String = store
        .connection
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .expect("reads");
    assert_eq!(mode, "wal");
}

#[test]
fn a_database_from_a_newer_server_is_refused() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("patience.sqlite3");
    {
        let store = SqliteStore::open(&path).expect("creates");
        store
            .connection
            .pragma_update(None, "user_version", 99)
            .expect("sets");
    }
    assert!(matches!(
        SqliteStore::open(&path),
        Err(StoreError::NewerSchema { found: 99, .. })
    ));
}

#[test]
fn a_file_that_is_not_a_database_is_a_typed_error() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("patience.sqlite3");
    std::fs::write(
        &path,
        b"this is not a database, it is a shopping list\n".repeat(200),
    )
    .expect("writes");
    let error = SqliteStore::open(&path).expect_err("refused");
    assert!(matches!(error, StoreError::Database(_)), "{error}");
    assert!(error.to_string().contains("not a database"), "{error}");
}

#[test]
fn a_corrupt_move_log_is_a_typed_error() {
    let mut store = store();
    let ada = store.register("ada", &hash(1), 0).expect("registers");
    let race = race_of("ada", ada.id, PlayerStatus::Won, Progress::default());
    let race_id = store.record_race(&race).expect("stores");
    store
        .connection
        .execute("UPDATE race_players SET log = x'c1'", [])
        .expect("damages");
    assert!(matches!(store.race(race_id), Err(StoreError::Corrupt(_))));
}
