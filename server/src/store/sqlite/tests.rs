//! The SQLite store against its contract: uniqueness, one attempt per
//! player and day, moves in order, atomic finishes, the ranking, races read
//! back as written, migrations, and files that are not ours.

use super::*;
use crate::store::LiveSeat;
use patience_shared::protocol::RoomOptions;
use patience_shared::protocol::Unranked;

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
        store.record_move(&key, 0, "7h>4", 1_100),
        Err(StoreError::AttemptNotOpen)
    ));
    store.begin_attempt(&key, 1_000).expect("begins");
    assert!(matches!(
        store.begin_attempt(&key, 2_000),
        Err(StoreError::AttemptExists)
    ));
    store.record_move(&key, 0, "7h>4", 1_100).expect("records");
    store.record_move(&key, 1, "c1>9", 1_300).expect("records");
    assert!(matches!(
        store.record_move(&key, 1, "2s>3", 1_400),
        Err(StoreError::MoveConflict(1))
    ));
    let open = store.attempt(&key).expect("reads").expect("exists");
    assert_eq!(open.started_at_ms, 1_000);
    assert_eq!(open.moves, ["7h>4", "c1>9"]);
    assert_eq!(open.move_times_ms, [Some(1_100), Some(1_300)]);
    assert_eq!(open.finish, None);

    let progress = Progress {
        moves: 2,
        cards_home: 0,
        elapsed_ms: 5_000,
        ..Progress::default()
    };
    let race = race_of("ada", ada.id, PlayerStatus::Resigned, progress);
    let race_id = store
        .finish_attempt(
            &key,
            PlayerStatus::Resigned,
            progress,
            &race,
            Eligibility::default(),
        )
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
        store.finish_attempt(
            &key,
            PlayerStatus::Won,
            progress,
            &race,
            Eligibility::default()
        ),
        Err(StoreError::AttemptNotOpen)
    ));
    assert_eq!(store.race(race_id + 1).expect("reads"), None);
    assert!(matches!(
        store.record_move(&key, 2, "2s>3", 9_000),
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
            runs_home: 4,
            cards_uncovered: 9,
            stock_turned: 3,
            elapsed_ms: 61_000,
        },
    );
    race.daily = None;
    race.result.open_boards = true;
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

#[test]
fn a_race_whose_players_cannot_be_stored_leaves_no_race() {
    // The race's row is its first write, its players the second: a seat
    // twice breaks the second, and the first must not stay.
    let mut store = store();
    let ada = store.register("ada", &hash(1), 0).expect("registers");
    let progress = Progress::default();
    let mut race = race_of("ada", ada.id, PlayerStatus::Won, progress);
    race.result.standings.push(race.result.standings[0].clone());
    assert!(matches!(
        store.record_race(&race),
        Err(StoreError::Database(_))
    ));
    let races: u32 = store
        .connection
        .query_row("SELECT COUNT(*) FROM races", [], |row| row.get(0))
        .expect("counts");
    assert_eq!(races, 0);
    // Inside a job's savepoint the call undoes itself alone: the job's
    // earlier write stays until the job is rolled back.
    store.savepoint().expect("opens");
    store.register("bob", &hash(2), 0).expect("registers");
    assert!(store.record_race(&race).is_err());
    assert!(store.player_by_token(&hash(2)).expect("reads").is_some());
    store.rollback_to_savepoint().expect("rolls back");
    assert_eq!(store.player_by_token(&hash(2)).expect("reads"), None);
    assert!(store.player_by_token(&hash(1)).expect("reads").is_some());
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
                .finish_attempt(&key, *status, progress, &race, Eligibility::default())
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
        assert_eq!(
            (board.finishers, board.unranked, board.playing),
            (all, 0, 1)
        );
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
    store
        .record_move(&key(ada.id), 0, "7h>4", 1_500)
        .expect("records");
    store.begin_attempt(&key(bob.id), 5_000).expect("begins");
    let expired = store.expired_attempts(2_000).expect("reads");
    assert_eq!(
        expired,
        [ExpiredAttempt {
            key: key(ada.id),
            name: "ada".to_string(),
            registered_at_ms: 0,
            started_at_ms: 1_000,
            moves: vec!["7h>4".to_string()],
            move_times_ms: vec![Some(1_500)],
        }]
    );
    assert_eq!(store.expired_attempts(5_000).expect("reads").len(), 2);
}

/// Finishes `name`'s attempt as a win in `elapsed_ms`, ranked or not as
/// `eligibility` says; returns the player and the race's id.
fn finish_win(
    store: &mut SqliteStore,
    name: &str,
    elapsed_ms: u64,
    eligibility: Eligibility,
) -> (Player, u64) {
    let byte = name.as_bytes()[0];
    let player = store.register(name, &hash(byte), 0).expect("registers");
    store.begin_attempt(&key(player.id), 0).expect("begins");
    let progress = Progress {
        moves: 50,
        cards_home: 52,
        elapsed_ms,
        ..Progress::default()
    };
    let race = race_of(name, player.id, PlayerStatus::Won, progress);
    let race_id = store
        .finish_attempt(
            &key(player.id),
            PlayerStatus::Won,
            progress,
            &race,
            eligibility,
        )
        .expect("finishes");
    (player, race_id)
}

#[test]
fn unranked_attempts_stay_off_the_ranking_but_see_where_they_would_be() {
    let mut store = store();
    let new_account = Eligibility {
        new_account: true,
        review: false,
    };
    let marked = Eligibility {
        new_account: false,
        review: true,
    };
    let (ada, _) = finish_win(&mut store, "ada", 90_000, Eligibility::default());
    let (bob, bob_race) = finish_win(&mut store, "bob", 10_000, new_account);
    let (cal, _) = finish_win(&mut store, "cal", 5_000, marked);
    let (dan, _) = finish_win(&mut store, "dan", 100_000, Eligibility::default());

    let board = store
        .leaderboard(GameKind::ThreeBlindMice, "2026-12-01", 10, Some(bob.id))
        .expect("reads");
    let names: Vec<&str> = board.rows.iter().map(|row| row.name.as_str()).collect();
    assert_eq!(names, ["ada", "dan"], "only ranked attempts are rows");
    assert!(board.rows.iter().all(|row| row.unranked.is_none()));
    assert_eq!((board.finishers, board.unranked, board.playing), (2, 2, 0));
    let own = board.own.expect("bob's own row");
    assert_eq!(
        (own.rank, own.unranked),
        (1, Some(Unranked::NewAccount)),
        "bob would have been first"
    );
    let cal_row = store
        .leaderboard(GameKind::ThreeBlindMice, "2026-12-01", 10, Some(cal.id))
        .expect("reads")
        .own
        .expect("cal's row");
    assert_eq!(
        (cal_row.rank, cal_row.unranked),
        (1, Some(Unranked::Review))
    );

    // Ranks and winning times count the ranked attempts only.
    let rank = |store: &mut SqliteStore, player: &Player| {
        store
            .rank(&key(player.id))
            .expect("reads")
            .map(|rank| (rank.rank, rank.finishers))
    };
    assert_eq!(rank(&mut store, &ada), Some((1, 2)));
    assert_eq!(rank(&mut store, &dan), Some((2, 2)));
    assert_eq!(rank(&mut store, &bob), Some((1, 2)));
    assert_eq!(
        store
            .winning_times(GameKind::ThreeBlindMice, "2026-12-01", 10)
            .expect("reads"),
        (2, vec![90_000, 100_000])
    );
    assert_eq!(
        store
            .attempt(&key(cal.id))
            .expect("reads")
            .and_then(|attempt| attempt.finish)
            .map(|finish| finish.eligibility),
        Some(marked)
    );

    // The race id leads back to the attempt, and only for daily attempts.
    assert_eq!(
        store.attempt_of_race(bob_race).expect("reads"),
        Some(key(bob.id))
    );
    assert_eq!(store.attempt_of_race(bob_race + 100).expect("reads"), None);

    // The operator's query of the README finds the marked attempt, and
    // clearing the mark ranks it.
    let marked_names: Vec<String> = store
        .connection
        .prepare(
            "SELECT p.name FROM daily_attempts a JOIN players p ON p.id = a.player_id
             WHERE a.review ORDER BY a.date, a.game",
        )
        .expect("prepares")
        .query_map([], |row| row.get(0))
        .expect("queries")
        .collect::<Result<_, _>>()
        .expect("reads");
    assert_eq!(marked_names, ["cal"]);
    store
        .connection
        .execute(
            "UPDATE daily_attempts SET review = 0
             WHERE player_id = (SELECT id FROM players WHERE name = 'cal')
               AND game = 'three-blind-mice' AND date = '2026-12-01'",
            [],
        )
        .expect("clears");
    assert_eq!(rank(&mut store, &cal), Some((1, 3)));
}

#[test]
fn a_version_one_file_keeps_its_attempts_ranked_and_its_moves_untimed() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("patience.sqlite3");
    {
        let connection = Connection::open(&path).expect("creates");
        connection.execute_batch(MIGRATIONS[0]).expect("version 1");
        connection
            .execute_batch(
                "PRAGMA user_version = 1;
                 INSERT INTO players (id, name, token_hash, created_at_ms) VALUES (1, 'ada', x'01', 0);
                 INSERT INTO daily_attempts (player_id, game, date, started_at_ms, status)
                     VALUES (1, 'three-blind-mice', '2026-12-01', 0, 'racing');
                 INSERT INTO daily_moves (player_id, game, date, idx, text)
                     VALUES (1, 'three-blind-mice', '2026-12-01', 0, '7h>4');",
            )
            .expect("version 1 rows");
    }
    let mut store = SqliteStore::open(&path).expect("migrates");
    let attempt = store.attempt(&key(1)).expect("reads").expect("kept");
    assert_eq!(attempt.moves, ["7h>4"]);
    assert_eq!(attempt.move_times_ms, [None]);
    let progress = Progress {
        moves: 1,
        cards_home: 0,
        elapsed_ms: 1_000,
        ..Progress::default()
    };
    let race = race_of("ada", 1, PlayerStatus::Resigned, progress);
    store
        .finish_attempt(
            &key(1),
            PlayerStatus::Resigned,
            progress,
            &race,
            Eligibility::default(),
        )
        .expect("finishes");
    assert_eq!(
        store
            .rank(&key(1))
            .expect("reads")
            .map(|rank| rank.finishers),
        Some(1)
    );
}

#[test]
fn a_race_stored_before_open_boards_reads_back_closed_with_zero_counts() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("patience.sqlite3");
    {
        let connection = Connection::open(&path).expect("creates");
        for step in &MIGRATIONS[..2] {
            connection.execute_batch(step).expect("versions 1 and 2");
        }
        connection
            .execute_batch(
                "PRAGMA user_version = 2;
                 INSERT INTO races (id, game, seed, salt, daily_date, ended_at_ms)
                     VALUES (7, 'indian', 42, '00', NULL, 1000);
                 INSERT INTO race_players (race_id, seat, player_id, name, rank, status,
                                           moves, cards_home, elapsed_ms, log)
                     VALUES (7, 0, NULL, 'ada', 1, 'resigned', 0, 0, 500, x'90');",
            )
            .expect("version 2 rows");
    }
    let mut store = SqliteStore::open(&path).expect("migrates");
    let record = store.race(7).expect("reads").expect("kept");
    assert!(!record.result.open_boards);
    assert_eq!(
        record.result.standings[0].progress,
        Progress {
            elapsed_ms: 500,
            ..Progress::default()
        }
    );
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

fn live_race(code: &str, logs: [&[&str]; 2]) -> LiveRace {
    LiveRace {
        code: code.to_string(),
        game: GameKind::ThreeBlindMice,
        max_players: 2,
        public: false,
        quick: false,
        options: RoomOptions {
            undo_allowed: true,
            time_limit_ms: Some(600_000),
            open_boards: false,
        },
        owner: Some(0),
        seed: 42,
        salt: "00112233445566778899aabbccddeeff".to_string(),
        elapsed_ms: 1_000,
        seq: 10,
        seats: (0u8..)
            .zip(logs)
            .map(|(seat, log)| LiveSeat {
                seat,
                name: format!("racer {seat}"),
                player: None,
                token: hash(seat + 1),
                status: PlayerStatus::Racing,
                progress: Progress::default(),
                finished_ms: None,
                log: log.iter().map(|text| text.to_string()).collect(),
            })
            .collect(),
    }
}

fn live_move(seat: u8, index: u32, text: &str, elapsed_ms: u64, seq: u64) -> LiveMove {
    LiveMove {
        seat,
        index,
        text: text.to_string(),
        elapsed_ms,
        seq,
    }
}

#[test]
fn a_running_race_reads_back_with_every_move_recorded_since_it_was_saved() {
    let mut store = store();
    store
        .save_live_race(&live_race("AAAAAA", [&["a"], &[]]))
        .expect("saves");
    for kept in [
        live_move(0, 1, "b", 1_500, 11),
        live_move(1, 0, "c", 2_500, 13),
        live_move(0, 2, "undo", 2_000, 12),
    ] {
        store.record_live_move("AAAAAA", &kept).expect("records");
    }
    store
        .save_live_race(&live_race("BBBBBB", [&[], &[]]))
        .expect("saves");
    let races = store.live_races().expect("reads");
    assert_eq!(races.len(), 2);
    let mut expected = live_race("AAAAAA", [&["a", "b", "undo"], &["c"]]);
    expected.elapsed_ms = 2_500;
    expected.seq = 13;
    // Each seat's last move's time (the counts are the rules' to redo).
    expected.seats[0].progress.elapsed_ms = 2_000;
    expected.seats[1].progress.elapsed_ms = 2_500;
    assert_eq!(races[0], expected);
    assert_eq!(races[1], live_race("BBBBBB", [&[], &[]]));
    // Reading forgets nothing: the server that reads them keeps them.
    assert_eq!(store.live_races().expect("reads").len(), 2);
}

#[test]
fn saving_a_running_race_again_replaces_it_and_the_moves_it_now_holds() {
    let mut store = store();
    store
        .save_live_race(&live_race("AAAAAA", [&[], &[]]))
        .expect("saves");
    store
        .record_live_move("AAAAAA", &live_move(0, 0, "a", 1_200, 11))
        .expect("records");
    store
        .record_live_move("AAAAAA", &live_move(0, 1, "b", 1_300, 12))
        .expect("records");
    // Saved at a SIGTERM with both moves in the log, the clock later.
    let mut saved = live_race("AAAAAA", [&["a", "b"], &[]]);
    saved.elapsed_ms = 5_000;
    store.save_live_race(&saved).expect("saves");
    store
        .record_live_move("AAAAAA", &live_move(1, 0, "c", 5_100, 14))
        .expect("records");
    let mut expected = live_race("AAAAAA", [&["a", "b"], &["c"]]);
    expected.elapsed_ms = 5_100;
    expected.seq = 14;
    expected.seats[1].progress.elapsed_ms = 5_100;
    assert_eq!(store.live_races().expect("reads"), vec![expected]);
    let rows: i64 = store
        .connection
        .query_row("SELECT COUNT(*) FROM live_moves", [], |row| row.get(0))
        .expect("counts");
    assert_eq!(rows, 1, "the rows the saved logs hold are dropped");
}

#[test]
fn a_move_recorded_twice_is_refused_and_an_ended_race_is_forgotten() {
    let mut store = store();
    store
        .save_live_race(&live_race("AAAAAA", [&[], &[]]))
        .expect("saves");
    store
        .record_live_move("AAAAAA", &live_move(0, 0, "a", 1_200, 11))
        .expect("records");
    assert!(
        store
            .record_live_move("AAAAAA", &live_move(0, 0, "z", 1_300, 12))
            .is_err(),
        "one move per index"
    );
    store.end_live_race("AAAAAA").expect("ends");
    store
        .end_live_race("CCCCCC")
        .expect("nothing kept is not an error");
    assert_eq!(store.live_races().expect("reads"), Vec::new());
    let rows: i64 = store
        .connection
        .query_row("SELECT COUNT(*) FROM live_moves", [], |row| row.get(0))
        .expect("counts");
    assert_eq!(rows, 0);
}

#[test]
fn a_running_race_with_a_gap_in_a_log_is_corrupt_not_guessed() {
    for (seat, index) in [(0, 2), (5, 0)] {
        let mut store = store();
        store
            .save_live_race(&live_race("AAAAAA", [&["a"], &[]]))
            .expect("saves");
        store
            .record_live_move("AAAAAA", &live_move(seat, index, "b", 1_200, 11))
            .expect("records");
        assert!(
            matches!(store.live_races(), Err(StoreError::Corrupt(_))),
            "seat {seat}, move {index}"
        );
    }
}
