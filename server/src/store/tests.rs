//! The contract of [`Store`], one suite for every backend: uniqueness, one
//! attempt per player and day, moves in order, atomic finishes, calls that
//! fail inside a transaction, the ranking, races read back as written,
//! running races kept move by move, the supply of proved deals, ratings
//! and their history, and damaged records.
//!
//! Each test is a function of a [`Backend`] (a store, and the raw SQL a
//! test uses to look behind it); [`on_every_backend!`] runs each one on a
//! SQLite database in memory and on a PostgreSQL database of its own
//! (created for the test and dropped after it, on the server that
//! `tests/with-services` starts). What only one backend has is tested
//! beside it, in `sqlite/tests.rs` and `postgres/tests.rs`.

use patience_shared::game::GameKind;
use patience_shared::protocol::{
    BotLevel, MoveLog, PlayerStatus, Progress, RaceResult, Reveal, RoomOptions, Standing, Unranked,
};
use patience_shared::rating::Rating;

use super::*;

/// A store under test, with the raw SQL the tests use to look behind the
/// trait (the operator's queries of the README, counts, damage).
pub(crate) trait Backend: Store {
    /// Runs one statement that both dialects read alike; panics if it fails.
    fn sql_execute(&mut self, sql: &str) -> u64;
    /// The first column of each row of `sql`, as text.
    fn sql_strings(&mut self, sql: &str) -> Vec<String>;
    /// The one integer `sql` answers.
    fn sql_count(&mut self, sql: &str) -> i64;
    /// Spoils every stored move log of finished races.
    fn damage_move_logs(&mut self);
}

/// Makes each named test function a `#[test]` on SQLite (in memory) and
/// one on PostgreSQL (a database of its own), as `sqlite::NAME` and
/// `postgres::NAME`.
macro_rules! on_every_backend {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $test() {
                    let mut store = crate::store::sqlite::SqliteStore::in_memory()
                        .expect("an in-memory database opens");
                    super::$test(&mut store);
                }
            )*
        }
        mod postgres {
            $(
                #[test]
                fn $test() {
                    // Dropped after the store, whatever the test did.
                    let database = crate::store::postgres::ScratchDatabase::create();
                    let mut store = crate::store::postgres::PostgresStore::connect(database.url())
                        .expect("the test database opens");
                    super::$test(&mut store);
                }
            )*
        }
    };
}

on_every_backend!(
    names_are_unique_whatever_their_case_and_tokens_find_players,
    the_first_secret_and_the_first_daily_deal_stay,
    an_attempt_begins_once_takes_moves_in_order_and_finishes_once,
    races_read_back_as_written,
    a_rooms_code_finds_its_latest_race_and_a_daily_has_no_room,
    a_race_whose_players_cannot_be_stored_leaves_no_race,
    calls_refused_inside_a_transaction_leave_it_usable,
    leaderboards_rank_won_then_time_then_moves,
    expired_attempts_are_the_open_ones_begun_long_enough_ago,
    unranked_attempts_stay_off_the_ranking_but_see_where_they_would_be,
    a_fresh_servers_day_shows_its_unranked_attempts,
    a_running_race_reads_back_with_every_move_recorded_since_it_was_saved,
    saving_a_running_race_again_replaces_it_and_the_moves_it_now_holds,
    a_move_recorded_twice_is_refused_and_an_ended_race_is_forgotten,
    a_resume_token_and_a_code_find_their_running_race,
    a_running_race_with_a_gap_in_a_log_is_corrupt_not_guessed,
    a_corrupt_move_log_is_a_typed_error,
    proved_deals_are_kept_per_owner_oldest_first_until_a_race_on_one_is_kept,
    a_claim_fences_off_every_write_of_the_rooms_that_ran_the_race_before,
    the_races_of_nodes_whose_lease_ended_are_orphaned_until_claimed,
    closed_days_are_tallied_once_and_listed_newest_first_with_podiums_and_deals,
    records_count_days_wins_ranks_medians_and_streaks_over_tallied_days,
    standings_sum_tallied_totals_and_open_days_live_in_tie_break_order,
    an_account_holds_several_tokens_and_each_signs_out_alone,
    a_sign_in_code_signs_in_once_before_it_expires_and_a_new_one_voids_the_old,
    names_that_look_alike_are_one_name,
    registration_buckets_are_kept_one_per_address_newest_first,
    a_races_rating_changes_are_kept_once_and_read_back,
    the_rating_history_is_newest_first_and_names_are_found_whatever_their_case,
);

pub(crate) fn hash(byte: u8) -> TokenHash {
    [byte; 32]
}

/// The date every test attempt is on, unless a test says otherwise.
pub(crate) const DATE: &str = "2026-12-01";

pub(crate) fn key(player: PlayerId) -> AttemptKey {
    AttemptKey {
        player,
        game: GameKind::ThreeBlindMice,
        date: DATE.to_string(),
    }
}

pub(crate) fn race_of(
    name: &str,
    player: PlayerId,
    status: PlayerStatus,
    progress: Progress,
) -> NewRace {
    NewRace {
        daily: Some(DATE.to_string()),
        room_code: None,
        ended_at_ms: 1_796_083_200_000 + progress.elapsed_ms,
        result: RaceResult {
            race_id: None,
            standings: vec![Standing {
                rank: 1,
                seat: 0,
                name: name.to_string(),
                status,
                progress,
                bot: None,
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

fn names_are_unique_whatever_their_case_and_tokens_find_players(store: &mut dyn Backend) {
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

fn names_that_look_alike_are_one_name(store: &mut dyn Backend) {
    store.register("modern", &hash(1), 10).expect("registers");
    store.register("Bob", &hash(2), 11).expect("registers");
    for (index, look_alike) in ["rnodern", "MODERN", "B0b", "bob"].into_iter().enumerate() {
        let token = hash(10 + u8::try_from(index).unwrap_or(0));
        assert!(
            matches!(
                store.register(look_alike, &token, 12),
                Err(StoreError::NameTaken(name)) if name == look_alike
            ),
            "{look_alike}"
        );
    }
    store.register("mode", &hash(3), 13).expect("registers");
}

fn registration_buckets_are_kept_one_per_address_newest_first(store: &mut dyn Backend) {
    use crate::signup::SavedBucket;
    let bucket = |source: &str, tokens: f64, updated_ms: u64| SavedBucket {
        source: source
            .parse()
            .unwrap_or(std::net::IpAddr::from([0, 0, 0, 0])),
        tokens,
        updated_ms,
    };
    assert_eq!(store.registration_buckets(10).expect("reads"), []);
    for saved in [
        bucket("10.0.0.1", 2.0, 100),
        bucket("2001:db8:1:2::", 0.5, 200),
        bucket("10.0.0.1", 1.0, 300),
    ] {
        store.save_registration_bucket(&saved).expect("stores");
    }
    assert_eq!(
        store.registration_buckets(10).expect("reads"),
        [
            bucket("10.0.0.1", 1.0, 300),
            bucket("2001:db8:1:2::", 0.5, 200)
        ]
    );
    assert_eq!(
        store.registration_buckets(1).expect("reads"),
        [bucket("10.0.0.1", 1.0, 300)]
    );
}

fn the_first_secret_and_the_first_daily_deal_stay(store: &mut dyn Backend) {
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

fn an_attempt_begins_once_takes_moves_in_order_and_finishes_once(store: &mut dyn Backend) {
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

fn an_account_holds_several_tokens_and_each_signs_out_alone(store: &mut dyn Backend) {
    let ada = store.register("ada", &hash(1), 10).expect("registers");
    store
        .save_sign_in_code(ada.id, &hash(50), 20, 1_000)
        .expect("keeps the code");
    let signed_in = store.redeem_sign_in_code(&hash(50), &hash(2), 30);
    assert_eq!(signed_in.expect("redeems"), Some(ada.clone()));
    for token in [hash(1), hash(2)] {
        assert_eq!(
            store.player_by_token(&token).expect("reads"),
            Some(ada.clone())
        );
    }
    assert!(store.revoke_token(&hash(2)).expect("signs out"));
    assert!(
        !store.revoke_token(&hash(2)).expect("signs out"),
        "once only"
    );
    assert_eq!(store.player_by_token(&hash(2)).expect("reads"), None);
    assert_eq!(
        store.player_by_token(&hash(1)).expect("reads"),
        Some(ada.clone())
    );
    // The token the account was registered with signs out alone too.
    assert!(store.revoke_token(&hash(1)).expect("signs out"));
    assert_eq!(store.player_by_token(&hash(1)).expect("reads"), None);
}

fn a_sign_in_code_signs_in_once_before_it_expires_and_a_new_one_voids_the_old(
    store: &mut dyn Backend,
) {
    let ada = store.register("ada", &hash(1), 0).expect("registers");
    let bob = store.register("bob", &hash(2), 0).expect("registers");
    let code = |store: &mut dyn Backend, player: &Player, code: u8, now: u64| {
        store
            .save_sign_in_code(player.id, &hash(code), now, now + 600)
            .expect("keeps the code");
    };
    let redeem = |store: &mut dyn Backend, code: u8, token: u8, now: u64| {
        store
            .redeem_sign_in_code(&hash(code), &hash(token), now)
            .expect("reads")
            .map(|player| player.name)
    };
    // Redeemed once only; an unknown code is nobody's.
    code(store, &ada, 50, 100);
    assert_eq!(redeem(store, 50, 10, 200), Some("ada".to_string()));
    assert_eq!(redeem(store, 50, 11, 201), None);
    assert_eq!(redeem(store, 51, 12, 201), None);
    assert_eq!(store.player_by_token(&hash(11)).expect("reads"), None);
    // Expired at its time, not a millisecond later.
    code(store, &ada, 52, 1_000);
    assert_eq!(redeem(store, 52, 13, 1_600), None);
    code(store, &ada, 53, 2_000);
    assert_eq!(redeem(store, 53, 14, 2_599), Some("ada".to_string()));
    // A new code voids the account's earlier one, not another's.
    code(store, &ada, 54, 3_000);
    code(store, &bob, 55, 3_000);
    code(store, &ada, 56, 3_001);
    assert_eq!(redeem(store, 54, 15, 3_002), None);
    assert_eq!(redeem(store, 55, 16, 3_002), Some("bob".to_string()));
    assert_eq!(redeem(store, 56, 17, 3_002), Some("ada".to_string()));
}

fn races_read_back_as_written(store: &mut dyn Backend) {
    let ada = store.register("ada", &hash(1), 0).expect("registers");
    let mut race = race_of(
        "ada",
        ada.id,
        PlayerStatus::Won,
        Progress {
            moves: 3,
            cards_home: 52,
            cards_in_order: 52,
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
        bot: None,
    });
    race.result.standings.push(Standing {
        rank: 3,
        seat: 2,
        name: "bot (strong)".to_string(),
        status: PlayerStatus::Resigned,
        progress: Progress::default(),
        bot: Some(BotLevel::Strong),
    });
    race.result.logs.push(MoveLog {
        seat: 1,
        moves: vec!["undo".to_string()],
    });
    race.result.logs.push(MoveLog {
        seat: 2,
        moves: Vec::new(),
    });
    let race_id = store.record_race(&race).expect("stores");
    let record = store.race(race_id).expect("reads").expect("exists");
    assert_eq!(record.race_id, race_id);
    assert_eq!(record.daily, None);
    assert_eq!(record.ended_at_ms, race.ended_at_ms);
    let mut expected = race.result.clone();
    expected.race_id = Some(race_id);
    // Not a column: each board's cards in order are counted again from the
    // deal and its log.
    for standing in &mut expected.standings {
        let log = expected
            .logs
            .iter()
            .find(|log| log.seat == standing.seat)
            .expect("a log per seat");
        let deal = patience_shared::any::AnyGame::deal(expected.reveal.game, expected.reveal.seed);
        let dealt = patience_shared::rules::Rules::view(&deal);
        let board = patience_shared::replay::final_position(deal, &log.moves);
        standing.progress.cards_in_order = patience_shared::protocol::cards_in_order(
            &dealt,
            &patience_shared::rules::Rules::view(&board),
        );
    }
    assert_eq!(record.result, expected);
    assert_eq!(store.race(race_id + 1).expect("reads"), None);
}

fn a_rooms_code_finds_its_latest_race_and_a_daily_has_no_room(store: &mut dyn Backend) {
    let ada = store.register("ada", &hash(1), 0).expect("registers");
    let mut raced = |room_code: Option<&str>| {
        let mut race = race_of("ada", ada.id, PlayerStatus::Won, Progress::default());
        race.daily = room_code.is_none().then(|| DATE.to_string());
        race.room_code = room_code.map(str::to_string);
        store.record_race(&race).expect("stores")
    };
    let first = raced(Some("K7PQ3X"));
    let elsewhere = raced(Some("M69D3P"));
    let daily = raced(None);
    // A room that raced again after its first race (a quick race's room
    // re-forms): the code leads to its latest race.
    let again = raced(Some("K7PQ3X"));
    assert!(first < elsewhere && elsewhere < daily && daily < again);
    assert_eq!(store.race_of_room("K7PQ3X").expect("reads"), Some(again));
    assert_eq!(
        store.race_of_room("M69D3P").expect("reads"),
        Some(elsewhere)
    );
    assert_eq!(store.race_of_room("ZZZZZZ").expect("reads"), None);
    assert_eq!(store.race_of_room("").expect("reads"), None);
}

fn a_race_whose_players_cannot_be_stored_leaves_no_race(store: &mut dyn Backend) {
    // The race's row is its first write, its players the second: a seat
    // twice breaks the second, and the first must not stay.
    let ada = store.register("ada", &hash(1), 0).expect("registers");
    let progress = Progress::default();
    let mut race = race_of("ada", ada.id, PlayerStatus::Won, progress);
    race.result.standings.push(race.result.standings[0].clone());
    assert!(matches!(
        store.record_race(&race),
        Err(StoreError::Database(_) | StoreError::Postgres(_))
    ));
    assert_eq!(store.sql_count("SELECT COUNT(*) FROM races"), 0);
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

fn leaderboards_rank_won_then_time_then_moves(store: &mut dyn Backend) {
    // One store for every table: each table is a game of its own, so that
    // the tables' attempts never meet.
    for (table, (attempts, expected)) in RANKINGS.iter().enumerate() {
        let game = GameKind::ALL[table];
        let key = |player: PlayerId| AttemptKey {
            player,
            game,
            date: DATE.to_string(),
        };
        let mut players = Vec::new();
        for (index, (name, status, elapsed_ms, moves)) in attempts.iter().enumerate() {
            let byte = u8::try_from(16 * table + index).expect("few players");
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
        let late_name = format!("zed{table}");
        let late_byte = u8::try_from(200 + table).expect("few tables");
        let late = store
            .register(&late_name, &hash(late_byte), 0)
            .expect("registers");
        store.begin_attempt(&key(late.id), 0).expect("begins");

        let all = u32::try_from(attempts.len()).expect("few");
        let board = store.leaderboard(game, DATE, all, None).expect("reads");
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
                .leaderboard(game, DATE, 1, Some(player.id))
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
        let (finishers, times) = store.winning_times(game, DATE, 100).expect("reads");
        assert_eq!(finishers, all);
        let expected_times: Vec<u64> = board
            .rows
            .iter()
            .filter(|row| row.status == PlayerStatus::Won)
            .map(|row| row.elapsed_ms)
            .collect();
        assert_eq!(times, expected_times);
        let open = store
            .leaderboard(game, DATE, 1, Some(late.id))
            .expect("reads");
        assert_eq!(open.own, None);
        assert_eq!(store.rank(&key(late.id)).expect("reads"), None);
    }
}

fn expired_attempts_are_the_open_ones_begun_long_enough_ago(store: &mut dyn Backend) {
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
    store: &mut dyn Backend,
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

/// The board's rows as (name, place, rank, why unranked).
fn board_lines(board: &Leaderboard) -> Vec<(&str, u32, u32, Option<Unranked>)> {
    board
        .rows
        .iter()
        .map(|row| (row.name.as_str(), row.place, row.rank, row.unranked))
        .collect()
}

fn a_fresh_servers_day_shows_its_unranked_attempts(store: &mut dyn Backend) {
    // Every account is new on a fresh server's first day: nothing ranks,
    // and the board still shows every finished attempt, marked.
    let new_account = Eligibility {
        new_account: true,
        review: false,
    };
    finish_win(store, "ada", 90_000, new_account);
    let (bob, _) = finish_win(store, "bob", 10_000, new_account);
    let board = store
        .leaderboard(GameKind::ThreeBlindMice, DATE, 10, Some(bob.id))
        .expect("reads");
    assert_eq!((board.finishers, board.unranked), (0, 2));
    let lines = board_lines(&board);
    assert_eq!(
        lines,
        [
            ("bob", 1, 1, Some(Unranked::NewAccount)),
            ("ada", 2, 1, Some(Unranked::NewAccount)),
        ]
    );
    assert_eq!(board.own.map(|own| own.place), Some(1));
}

fn unranked_attempts_stay_off_the_ranking_but_see_where_they_would_be(store: &mut dyn Backend) {
    let new_account = Eligibility {
        new_account: true,
        review: false,
    };
    let marked = Eligibility {
        new_account: false,
        review: true,
    };
    let (ada, _) = finish_win(store, "ada", 90_000, Eligibility::default());
    let (bob, bob_race) = finish_win(store, "bob", 10_000, new_account);
    let (cal, _) = finish_win(store, "cal", 5_000, marked);
    let (dan, _) = finish_win(store, "dan", 100_000, Eligibility::default());

    let board = store
        .leaderboard(GameKind::ThreeBlindMice, DATE, 10, Some(bob.id))
        .expect("reads");
    // Every finished attempt is on the board, in the ranking's order: the
    // ones off it marked, each ranked by where it would have stood.
    let lines = board_lines(&board);
    assert_eq!(
        lines,
        [
            ("cal", 1, 1, Some(Unranked::Review)),
            ("bob", 2, 1, Some(Unranked::NewAccount)),
            ("ada", 3, 1, None),
            ("dan", 4, 2, None),
        ]
    );
    assert_eq!((board.finishers, board.unranked, board.playing), (2, 2, 0));
    let own = board.own.expect("bob's own row");
    assert_eq!(
        (own.rank, own.unranked, own.place),
        (1, Some(Unranked::NewAccount), 2),
        "bob would have been first, and stands second on the board"
    );
    let top_two = store
        .leaderboard(GameKind::ThreeBlindMice, DATE, 2, Some(dan.id))
        .expect("reads");
    assert_eq!(top_two.rows.len(), 2, "the limit counts every row");
    let own = top_two.own.expect("dan's own row");
    assert_eq!((own.rank, own.place), (2, 4));
    let cal_row = store
        .leaderboard(GameKind::ThreeBlindMice, DATE, 10, Some(cal.id))
        .expect("reads")
        .own
        .expect("cal's row");
    assert_eq!(
        (cal_row.rank, cal_row.unranked),
        (1, Some(Unranked::Review))
    );

    // Ranks and winning times count the ranked attempts only.
    let rank = |store: &mut dyn Backend, player: &Player| {
        store
            .rank(&key(player.id))
            .expect("reads")
            .map(|rank| (rank.rank, rank.finishers))
    };
    assert_eq!(rank(store, &ada), Some((1, 2)));
    assert_eq!(rank(store, &dan), Some((2, 2)));
    assert_eq!(rank(store, &bob), Some((1, 2)));
    assert_eq!(
        store
            .winning_times(GameKind::ThreeBlindMice, DATE, 10)
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
    let marked_names = store.sql_strings(
        "SELECT p.name FROM daily_attempts a JOIN players p ON p.id = a.player_id
         WHERE a.review ORDER BY a.date, a.game",
    );
    assert_eq!(marked_names, ["cal"]);
    let cleared = store.sql_execute(
        "UPDATE daily_attempts SET review = FALSE
         WHERE player_id = (SELECT id FROM players WHERE name = 'cal')
           AND game = 'three-blind-mice' AND date = '2026-12-01'",
    );
    assert_eq!(cleared, 1);
    assert_eq!(rank(store, &cal), Some((1, 3)));
}

fn a_corrupt_move_log_is_a_typed_error(store: &mut dyn Backend) {
    let ada = store.register("ada", &hash(1), 0).expect("registers");
    let race = race_of("ada", ada.id, PlayerStatus::Won, Progress::default());
    let race_id = store.record_race(&race).expect("stores");
    store.damage_move_logs();
    assert!(matches!(store.race(race_id), Err(StoreError::Corrupt(_))));
}

fn calls_refused_inside_a_transaction_leave_it_usable(store: &mut dyn Backend) {
    // The database thread runs a batch in one transaction and each job in
    // a savepoint: a call refused for the player's sake (a name taken, an
    // attempt begun twice, a move played twice) fails alone, and the job
    // may go on, as it may in SQLite.
    store.begin().expect("begins");
    store.savepoint().expect("opens");
    let ada = store.register("ada", &hash(1), 0).expect("registers");
    assert!(matches!(
        store.register("ADA", &hash(2), 0),
        Err(StoreError::NameTaken(name)) if name == "ADA"
    ));
    store.begin_attempt(&key(ada.id), 0).expect("begins");
    assert!(matches!(
        store.begin_attempt(&key(ada.id), 0),
        Err(StoreError::AttemptExists)
    ));
    store
        .record_move(&key(ada.id), 0, "7h>4", 10)
        .expect("records");
    assert!(matches!(
        store.record_move(&key(ada.id), 0, "7h>4", 20),
        Err(StoreError::MoveConflict(0))
    ));
    assert!(matches!(
        store.record_move(&key(ada.id + 1), 0, "7h>4", 20),
        Err(StoreError::AttemptNotOpen)
    ));
    let bob = store.register("bob", &hash(3), 0).expect("registers");
    store.release_savepoint().expect("releases");
    // A job that fails on the database's own error is rolled back to its
    // savepoint; the batch goes on and commits the rest.
    store.savepoint().expect("opens");
    store.register("cal", &hash(4), 0).expect("registers");
    let nobody = AttemptKey {
        player: bob.id + 1_000,
        ..key(bob.id)
    };
    assert!(matches!(
        store.begin_attempt(&nobody, 0),
        Err(StoreError::Database(_) | StoreError::Postgres(_))
    ));
    store.rollback_to_savepoint().expect("rolls back");
    store.commit().expect("commits");
    let attempt = store
        .attempt(&key(ada.id))
        .expect("reads")
        .map(|attempt| attempt.moves);
    assert_eq!(store.player_by_token(&hash(1)).expect("reads"), Some(ada));
    assert_eq!(store.player_by_token(&hash(3)).expect("reads"), Some(bob));
    assert_eq!(store.player_by_token(&hash(4)).expect("reads"), None);
    assert_eq!(attempt, Some(vec!["7h>4".to_string()]));
}

pub(crate) fn live_race(code: &str, logs: [&[&str]; 2]) -> LiveRace {
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
            best_of: None,
            rated: false,
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
                bot: None,
                token: hash(seat + 1),
                status: PlayerStatus::Racing,
                progress: Progress::default(),
                finished_ms: None,
                log: log.iter().map(|text| text.to_string()).collect(),
            })
            .collect(),
        epoch: 0,
        series: None,
    }
}

fn live_move(seat: u8, index: u32, text: &str, elapsed_ms: u64, seq: u64) -> LiveMove {
    LiveMove {
        seat,
        index,
        text: text.to_string(),
        elapsed_ms,
        seq,
        epoch: 0,
    }
}

fn a_running_race_reads_back_with_every_move_recorded_since_it_was_saved(store: &mut dyn Backend) {
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

fn saving_a_running_race_again_replaces_it_and_the_moves_it_now_holds(store: &mut dyn Backend) {
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
    assert_eq!(
        store.sql_count("SELECT COUNT(*) FROM live_moves"),
        1,
        "the rows the saved logs hold are dropped"
    );
}

fn a_move_recorded_twice_is_refused_and_an_ended_race_is_forgotten(store: &mut dyn Backend) {
    store
        .save_live_race(&live_race("AAAAAA", [&[], &[]]))
        .expect("saves");
    store
        .record_live_move("AAAAAA", &live_move(0, 0, "a", 1_200, 11))
        .expect("records");
    assert!(
        matches!(
            store.record_live_move("AAAAAA", &live_move(0, 0, "z", 1_300, 12)),
            Err(StoreError::Database(_) | StoreError::Postgres(_))
        ),
        "one move per index"
    );
    store.end_live_race("AAAAAA", 0).expect("ends");
    store
        .end_live_race("CCCCCC", 0)
        .expect("nothing kept is not an error");
    assert_eq!(store.live_races().expect("reads"), Vec::new());
    assert_eq!(store.sql_count("SELECT COUNT(*) FROM live_moves"), 0);
}

fn a_resume_token_and_a_code_find_their_running_race(store: &mut dyn Backend) {
    store
        .save_live_race(&live_race("AAAAAA", [&[], &[]]))
        .expect("saves");
    let mut other = live_race("BBBBBB", [&["a"], &[]]);
    other.seats[0].token = hash(7);
    other.seats[1].token = hash(8);
    store.save_live_race(&other).expect("saves");
    for (token, expected) in [
        (hash(1), Some("AAAAAA")),
        (hash(2), Some("AAAAAA")),
        (hash(8), Some("BBBBBB")),
        (hash(9), None),
    ] {
        assert_eq!(
            store.live_race_of_token(&token).expect("reads").as_deref(),
            expected
        );
    }
    assert!(store.keeps_live_race("BBBBBB").expect("reads"));
    assert!(!store.keeps_live_race("CCCCCC").expect("reads"));
    // An ended race leads nowhere.
    store.end_live_race("BBBBBB", 0).expect("ends");
    assert_eq!(store.live_race_of_token(&hash(8)).expect("reads"), None);
    assert!(!store.keeps_live_race("BBBBBB").expect("reads"));
}

fn a_running_race_with_a_gap_in_a_log_is_corrupt_not_guessed(store: &mut dyn Backend) {
    for (code, seat, index) in [("AAAAAA", 0, 2), ("BBBBBB", 5, 0)] {
        store
            .save_live_race(&live_race(code, [&["a"], &[]]))
            .expect("saves");
        store
            .record_live_move(code, &live_move(seat, index, "b", 1_200, 11))
            .expect("records");
        assert!(
            matches!(store.live_races(), Err(StoreError::Corrupt(_))),
            "seat {seat}, move {index}"
        );
        // Gone, so that the next case is read alone.
        store.end_live_race(code, 0).expect("ends");
    }
}

fn proved_deals_are_kept_per_owner_oldest_first_until_a_race_on_one_is_kept(
    store: &mut dyn Backend,
) {
    let tbm = GameKind::ThreeBlindMice;
    // Seeds past i64::MAX read back as written.
    for (owner, game, seed) in [
        ("node-a", tbm, 42),
        ("node-a", GameKind::Indian, 7),
        ("", tbm, 9),
        ("node-a", tbm, u64::MAX - 1),
        // The same deal again (another node drew it): kept once, by the first.
        ("", tbm, 42),
    ] {
        store
            .keep_proved_deal(owner, game, seed)
            .expect("a proved deal is kept");
    }
    let node_a = |store: &mut dyn Backend| store.proved_deals("node-a").expect("reads");
    assert_eq!(
        node_a(store),
        [(tbm, 42), (GameKind::Indian, 7), (tbm, u64::MAX - 1)]
    );
    assert_eq!(store.proved_deals("").expect("reads"), [(tbm, 9)]);
    // A race on seed 42 of Three Blind Mice is kept: the deal is dealt.
    store
        .save_live_race(&live_race("ABCD", [&[], &[]]))
        .expect("the race is kept");
    assert_eq!(node_a(store), [(GameKind::Indian, 7), (tbm, u64::MAX - 1)]);
}

fn a_claim_fences_off_every_write_of_the_rooms_that_ran_the_race_before(store: &mut dyn Backend) {
    let started = live_race("AAAAAA", [&["a"], &[]]);
    store.save_live_race(&started).expect("saves");
    store
        .record_live_move("AAAAAA", &live_move(0, 1, "b", 1_100, 11))
        .expect("the first server records");
    assert_eq!(store.claim_live_race("ZZZZZZ").expect("claims"), None);
    // Another server claims it: it reads every move so far, under claim 1.
    let claimed = store
        .claim_live_race("AAAAAA")
        .expect("claims")
        .expect("kept");
    assert_eq!(claimed.epoch, 1);
    assert_eq!(claimed.seats[0].log, ["a", "b"]);
    // The first server, paused or cut off past its lease, writes on: every
    // write is refused and changes nothing.
    let fenced = |result: Result<(), StoreError>| {
        assert!(
            matches!(&result, Err(StoreError::Fenced { code }) if code == "AAAAAA"),
            "{result:?}"
        );
    };
    fenced(store.record_live_move("AAAAAA", &live_move(0, 2, "stale", 1_200, 12)));
    fenced(store.save_live_race(&started));
    fenced(store.end_live_race("AAAAAA", 0));
    // The new owner's writes go on, under its claim.
    store
        .record_live_move(
            "AAAAAA",
            &LiveMove {
                epoch: 1,
                ..live_move(0, 2, "c", 1_300, 13)
            },
        )
        .expect("the owner records");
    store.save_live_race(&claimed).expect("the owner saves");
    let read = store.live_races().expect("reads");
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].epoch, 1);
    assert_eq!(read[0].seats[0].log, ["a", "b", "c"]);
    store.end_live_race("AAAAAA", 1).expect("the owner ends it");
    assert_eq!(store.live_races().expect("reads"), Vec::new());
}

/// Keeps a deal for `date` of Three Blind Mice, its seed the date's digits.
fn deal_on(store: &mut dyn Backend, date: &str) -> DailyDeal {
    let seed: u64 = date.replace('-', "").parse().expect("a date");
    store
        .save_daily_deal(&DailyDeal {
            game: GameKind::ThreeBlindMice,
            date: date.to_string(),
            seed,
            salt: format!("salt-{date}"),
        })
        .expect("saves")
}

/// Finishes `player`'s attempt at `date`'s deal as `status` in
/// `elapsed_ms`, ranked or not as `eligibility` says.
fn finish_on(
    store: &mut dyn Backend,
    player: &Player,
    date: &str,
    status: PlayerStatus,
    elapsed_ms: u64,
    eligibility: Eligibility,
) -> u64 {
    let key = AttemptKey {
        player: player.id,
        game: GameKind::ThreeBlindMice,
        date: date.to_string(),
    };
    store.begin_attempt(&key, 0).expect("begins");
    let progress = Progress {
        moves: 40,
        cards_home: if status == PlayerStatus::Won { 52 } else { 10 },
        elapsed_ms,
        ..Progress::default()
    };
    let mut race = race_of(&player.name, player.id, status, progress);
    race.daily = Some(date.to_string());
    store
        .finish_attempt(&key, status, progress, &race, eligibility)
        .expect("finishes")
}

fn register_all<const N: usize>(store: &mut dyn Backend, names: [&str; N]) -> [Player; N] {
    names.map(|name| {
        // A token of its own per name: the name's bytes.
        let mut token = hash(0xff);
        for (slot, byte) in token.iter_mut().zip(name.bytes()) {
            *slot = byte;
        }
        store.register(name, &token, 0).expect("registers")
    })
}

/// An attempt to finish: whose, how, in how long, ranked or not.
type Finish<'a> = (&'a Player, PlayerStatus, u64, Eligibility);

const WON: PlayerStatus = PlayerStatus::Won;
const RESIGNED: PlayerStatus = PlayerStatus::Resigned;
const RANKED: Eligibility = Eligibility {
    new_account: false,
    review: false,
};
const NEW_ACCOUNT: Eligibility = Eligibility {
    new_account: true,
    review: false,
};

fn closed_days_are_tallied_once_and_listed_newest_first_with_podiums_and_deals(
    store: &mut dyn Backend,
) {
    let [ada, bob, cal, dan] = register_all(store, ["ada", "bob", "cal", "dan"]);
    let first = deal_on(store, "2026-11-30");
    deal_on(store, "2026-12-01");
    deal_on(store, "2026-12-02");
    deal_on(store, "2026-12-03");
    let ada_race = finish_on(store, &ada, "2026-11-30", WON, 100_000, RANKED);
    finish_on(store, &bob, "2026-11-30", WON, 200_000, RANKED);
    finish_on(store, &cal, "2026-11-30", RESIGNED, 5_000, RANKED);
    finish_on(store, &dan, "2026-11-30", WON, 50_000, NEW_ACCOUNT);
    finish_on(store, &bob, "2026-12-01", WON, 90_000, RANKED);
    finish_on(store, &ada, "2026-12-01", WON, 120_000, RANKED);
    // The 2nd had a deal nobody played; the 3rd is not closed.
    finish_on(store, &ada, "2026-12-03", WON, 1_000, RANKED);

    assert_eq!(store.tally_closed_days("2026-12-02").expect("tallies"), 3);
    assert_eq!(store.tally_closed_days("2026-12-02").expect("tallies"), 0);
    assert!(
        !store
            .tally_day(GameKind::ThreeBlindMice, "2026-11-30")
            .expect("tallies")
    );
    assert_eq!(
        store.untallied_days("2026-12-31").expect("reads"),
        [(GameKind::ThreeBlindMice, "2026-12-03".to_string())]
    );

    let page = store
        .daily_days(GameKind::ThreeBlindMice, None, 10)
        .expect("reads");
    let dates: Vec<&str> = page.days.iter().map(|day| day.date.as_str()).collect();
    assert_eq!(
        dates,
        ["2026-12-01", "2026-11-30"],
        "played closed days only"
    );
    assert!(!page.more);
    let oldest = &page.days[1];
    assert_eq!(
        (oldest.finishers, oldest.winners),
        (3, 2),
        "dan is unranked"
    );
    let podium: Vec<(u32, &str, PlayerStatus)> = oldest
        .podium
        .iter()
        .map(|row| (row.rank, row.name.as_str(), row.status))
        .collect();
    assert_eq!(
        podium,
        [(1, "ada", WON), (2, "bob", WON), (3, "cal", RESIGNED)]
    );
    assert_eq!(oldest.podium[0].race_id, ada_race);
    assert_eq!(oldest.podium[0].elapsed_ms, 100_000);
    assert!(oldest.podium.iter().all(|row| row.unranked.is_none()));
    assert_eq!(
        oldest.reveal,
        Reveal {
            game: GameKind::ThreeBlindMice,
            seed: first.seed,
            salt: first.salt,
        }
    );
    let names: Vec<&str> = page.days[0]
        .podium
        .iter()
        .map(|row| row.name.as_str())
        .collect();
    assert_eq!(names, ["bob", "ada"]);

    // Paging: one day, then the ones before it.
    let newest = store
        .daily_days(GameKind::ThreeBlindMice, None, 1)
        .expect("reads");
    assert_eq!(newest.days.len(), 1);
    assert!(newest.more);
    let older = store
        .daily_days(GameKind::ThreeBlindMice, Some("2026-12-01"), 1)
        .expect("reads");
    assert_eq!(
        older
            .days
            .iter()
            .map(|day| day.date.as_str())
            .collect::<Vec<_>>(),
        ["2026-11-30"]
    );
    assert!(!older.more);
    assert!(
        store
            .daily_days(GameKind::Indian, None, 10)
            .expect("reads")
            .days
            .is_empty()
    );
}

fn records_count_days_wins_ranks_medians_and_streaks_over_tallied_days(store: &mut dyn Backend) {
    let [ada, bob, cal, dan] = register_all(store, ["ada", "bob", "cal", "dan"]);
    for date in [
        "2026-12-01",
        "2026-12-02",
        "2026-12-03",
        "2026-12-04",
        "2026-12-05",
    ] {
        deal_on(store, date);
    }
    let days: [(&str, &[Finish<'_>]); 4] = [
        (
            "2026-12-01",
            &[
                (&ada, WON, 100_000, RANKED),
                (&bob, WON, 200_000, RANKED),
                (&cal, RESIGNED, 1_000, RANKED),
                (&dan, WON, 30_000, NEW_ACCOUNT),
            ],
        ),
        (
            "2026-12-02",
            &[(&bob, WON, 50_000, RANKED), (&ada, WON, 150_000, RANKED)],
        ),
        (
            "2026-12-03",
            &[
                (&ada, RESIGNED, 1_000, RANKED),
                (&cal, WON, 300_000, RANKED),
            ],
        ),
        (
            "2026-12-04",
            &[
                (&bob, WON, 60_000, RANKED),
                (&cal, WON, 65_000, RANKED),
                (&ada, WON, 70_000, RANKED),
            ],
        ),
    ];
    for (date, attempts) in days {
        for (player, status, elapsed_ms, eligibility) in attempts {
            finish_on(store, player, date, *status, *elapsed_ms, *eligibility);
        }
    }
    assert_eq!(store.tally_closed_days("2026-12-04").expect("tallies"), 4);
    let record = |store: &mut dyn Backend, lookup: PlayerLookup<'_>| {
        store
            .player_record(lookup)
            .expect("reads")
            .expect("a player")
    };
    let ada_record = record(store, PlayerLookup::Name("ADA"));
    assert_eq!(
        ada_record.name, "ada",
        "as registered, found whatever the case"
    );
    assert_eq!(ada_record.through.as_deref(), Some("2026-12-04"));
    let expected = |days_played,
                    wins,
                    ranks: [Option<u32>; 2],
                    times: [Option<u64>; 2],
                    streaks: [u32; 4],
                    last: &str| {
        patience_shared::protocol::GameRecord {
            game: GameKind::ThreeBlindMice,
            days_played,
            wins,
            best_rank: ranks[0],
            median_rank: ranks[1],
            best_time_ms: times[0],
            median_time_ms: times[1],
            play_streak: streaks[0],
            best_play_streak: streaks[1],
            win_streak: streaks[2],
            best_win_streak: streaks[3],
            last_played: Some(last.to_string()),
        }
    };
    // Ranks 1, 2, 2, 3; wins in 100, 150 and 70 s; lost on the 3rd.
    assert_eq!(
        ada_record.games,
        [expected(
            4,
            3,
            [Some(1), Some(2)],
            [Some(70_000), Some(100_000)],
            [4, 4, 1, 2],
            "2026-12-04"
        )]
    );
    // Missed the 3rd: the play streak starts again.
    assert_eq!(
        record(store, PlayerLookup::Id(bob.id)).games,
        [expected(
            3,
            3,
            [Some(1), Some(1)],
            [Some(50_000), Some(60_000)],
            [1, 2, 1, 2],
            "2026-12-04"
        )]
    );
    assert_eq!(
        record(store, PlayerLookup::Id(cal.id)).games,
        [expected(
            3,
            2,
            [Some(1), Some(2)],
            [Some(65_000), Some(65_000)],
            [2, 2, 2, 2],
            "2026-12-04"
        )]
    );
    // Unranked: played and won, no rank; its streak ended on the 1st.
    assert_eq!(
        record(store, PlayerLookup::Name("dan")).games,
        [expected(
            1,
            1,
            [None, None],
            [Some(30_000), Some(30_000)],
            [0, 1, 0, 1],
            "2026-12-01"
        )]
    );

    // A day played by Bob alone ends everyone else's current streaks.
    finish_on(store, &bob, "2026-12-05", WON, 10_000, RANKED);
    assert_eq!(store.tally_closed_days("2026-12-05").expect("tallies"), 1);
    let ada_record = record(store, PlayerLookup::Id(ada.id));
    assert_eq!(ada_record.through.as_deref(), Some("2026-12-05"));
    let game = &ada_record.games[0];
    assert_eq!(
        (
            game.play_streak,
            game.best_play_streak,
            game.win_streak,
            game.best_win_streak
        ),
        (0, 4, 0, 2)
    );
    let game = &record(store, PlayerLookup::Id(bob.id)).games[0];
    assert_eq!(
        (game.play_streak, game.win_streak, game.days_played),
        (2, 2, 4)
    );

    assert_eq!(
        store
            .player_record(PlayerLookup::Name("nobody"))
            .expect("reads"),
        None
    );
    let [eve] = register_all(store, ["eve"]);
    let fresh = record(store, PlayerLookup::Id(eve.id));
    assert!(fresh.games.is_empty());
}

fn standings_sum_tallied_totals_and_open_days_live_in_tie_break_order(store: &mut dyn Backend) {
    let [ada, bob, cal, dan, eve, fay] =
        register_all(store, ["ada", "bob", "cal", "dan", "eve", "fay"]);
    for date in ["2026-11-30", "2026-12-01", "2026-12-02"] {
        deal_on(store, date);
    }
    finish_on(store, &ada, "2026-11-30", WON, 100, RANKED);
    finish_on(store, &bob, "2026-11-30", WON, 200, RANKED);
    finish_on(store, &cal, "2026-11-30", RESIGNED, 10, RANKED);
    finish_on(store, &bob, "2026-12-01", WON, 100, RANKED);
    finish_on(store, &ada, "2026-12-01", WON, 300, RANKED);
    finish_on(store, &dan, "2026-12-01", RESIGNED, 10, RANKED);
    assert_eq!(store.tally_closed_days("2026-12-01").expect("tallies"), 2);

    let week =
        PeriodSpan::parse(patience_shared::protocol::Period::Week, "2026-W49").expect("a week");
    let month =
        PeriodSpan::parse(patience_shared::protocol::Period::Month, "2026-12").expect("a month");
    let game = GameKind::ThreeBlindMice;
    let lines = |standings: &Standings| -> Vec<(u32, String, u32, u32, u32, u64)> {
        standings
            .rows
            .iter()
            .map(|row| {
                (
                    row.rank,
                    row.name.clone(),
                    row.points,
                    row.days,
                    row.wins,
                    row.win_time_ms,
                )
            })
            .collect()
    };
    let line = |rank, name: &str, points, days, wins, time| {
        (rank, name.to_string(), points, days, wins, time)
    };

    // Tallied only. Ada and Bob tie on points and wins: Bob's time is less.
    // Cal and Dan tie on everything: Cal registered first.
    let standings = store
        .standings(game, &week, "2026-12-01", 10, Some(dan.id))
        .expect("reads");
    assert_eq!(
        lines(&standings),
        [
            line(1, "bob", 43, 2, 2, 300),
            line(2, "ada", 43, 2, 2, 400),
            line(3, "cal", 15, 1, 0, 0),
            line(4, "dan", 15, 1, 0, 0),
        ]
    );
    assert_eq!(standings.players, 4);
    let short = store
        .standings(game, &week, "2026-12-01", 2, Some(dan.id))
        .expect("reads");
    assert_eq!(short.rows.len(), 2);
    assert_eq!(short.own, Some(standings.rows[3].clone()));
    let standings = store
        .standings(game, &month, "2026-12-01", 10, Some(cal.id))
        .expect("reads");
    assert_eq!(standings.players, 3, "the 30th of November is not December");
    assert_eq!(standings.own, None);

    // The 2nd is open: its ranking as it stands counts live. Dan passes
    // Cal; an unranked win and an attempt still open earn nothing.
    finish_on(store, &dan, "2026-12-02", WON, 60, RANKED);
    finish_on(store, &cal, "2026-12-02", WON, 50_000, RANKED);
    finish_on(store, &fay, "2026-12-02", RESIGNED, 10, RANKED);
    finish_on(store, &eve, "2026-12-02", WON, 1, NEW_ACCOUNT);
    store
        .begin_attempt(
            &AttemptKey {
                player: ada.id,
                game,
                date: "2026-12-02".to_string(),
            },
            0,
        )
        .expect("begins");
    let live_week = [
        line(1, "bob", 43, 2, 2, 300),
        line(2, "ada", 43, 2, 2, 400),
        line(3, "dan", 40, 2, 1, 60),
        line(4, "cal", 33, 2, 1, 50_000),
        line(5, "fay", 15, 1, 0, 0),
    ];
    let standings = store
        .standings(game, &week, "2026-12-02", 10, Some(cal.id))
        .expect("reads");
    assert_eq!(lines(&standings), live_week);
    assert_eq!(standings.players, 5);
    assert_eq!(standings.own.map(|row| row.rank), Some(4));
    let top = store
        .standings(game, &week, "2026-12-02", 3, Some(fay.id))
        .expect("reads");
    assert_eq!(top.rows.len(), 3);
    assert_eq!(top.own.map(|row| (row.rank, row.points)), Some((5, 15)));
    // Ada's win took less time than Cal's: she is third.
    let standings = store
        .standings(game, &month, "2026-12-02", 10, None)
        .expect("reads");
    assert_eq!(
        lines(&standings),
        [
            line(1, "dan", 40, 2, 1, 60),
            line(2, "bob", 25, 1, 1, 100),
            line(3, "ada", 18, 1, 1, 300),
            line(4, "cal", 18, 1, 1, 50_000),
            line(5, "fay", 15, 1, 0, 0),
        ]
    );
    assert_eq!(standings.own, None);

    // Once the 2nd is tallied (Ada's attempt still open counts nowhere),
    // the totals are the points that counted live.
    assert_eq!(store.tally_closed_days("2026-12-02").expect("tallies"), 1);
    let tallied = store
        .standings(game, &week, "2026-12-02", 10, Some(cal.id))
        .expect("reads");
    assert_eq!(lines(&tallied), live_week);
    assert_eq!(tallied.players, 5);
    assert_eq!(tallied.own.map(|row| row.rank), Some(4));
    let top = store
        .standings(game, &week, "2026-12-02", 3, Some(fay.id))
        .expect("reads");
    assert_eq!(top.rows, tallied.rows[..3]);
    assert_eq!(top.own.map(|row| (row.rank, row.points)), Some((5, 15)));
}

fn the_races_of_nodes_whose_lease_ended_are_orphaned_until_claimed(store: &mut dyn Backend) {
    // Node a saves two races and renews its lease to 10 s; node b saves
    // one and renews to 2 s; node c saves one and never renews.
    let keep = |store: &mut dyn Backend, node: &str, codes: &[&str]| {
        store.set_node(node);
        for code in codes {
            store
                .save_live_race(&live_race(code, [&["a"], &[]]))
                .expect("saves");
        }
    };
    keep(store, "a", &["AAAAAA", "AAAAAB"]);
    keep(store, "b", &["BBBBBB"]);
    keep(store, "c", &["CCCCCC"]);
    store.renew_node_lease("a", 10_000).expect("renews");
    store.renew_node_lease("b", 2_000).expect("renews");
    assert_eq!(store.orphaned_races(1_000).expect("scans"), ["CCCCCC"]);
    assert_eq!(
        store.orphaned_races(5_000).expect("scans"),
        ["BBBBBB", "CCCCCC"]
    );
    // b is back: its lease runs again.
    store.renew_node_lease("b", 20_000).expect("renews");
    assert_eq!(store.orphaned_races(5_000).expect("scans"), ["CCCCCC"]);
    // a claims c's race: it is a's now, and no longer orphaned.
    store.set_node("a");
    let claimed = store
        .claim_live_race("CCCCCC")
        .expect("claims")
        .expect("kept");
    assert_eq!(claimed.seats[0].log, ["a"]);
    assert_eq!(
        store.orphaned_races(5_000).expect("scans"),
        Vec::<String>::new()
    );
    assert_eq!(
        store.orphaned_races(15_000).expect("scans"),
        ["AAAAAA", "AAAAAB", "CCCCCC"]
    );
    // A race that ended is found no more.
    store.end_live_race("AAAAAB", 0).expect("ends");
    assert!(!store.keeps_live_race("AAAAAB").expect("asks"));
    assert!(store.keeps_live_race("AAAAAA").expect("asks"));
    assert_eq!(
        store.orphaned_races(15_000).expect("scans"),
        ["AAAAAA", "CCCCCC"]
    );
}

/// The game of the ratings tests.
const RATED_GAME: GameKind = GameKind::ThreeBlindMice;

fn rating_change(player: PlayerId, mu: f64, place: u8) -> RatingChange {
    RatingChange {
        player,
        before: Rating::new(),
        after: Rating { mu, sigma: 8.0 },
        place,
    }
}

/// A stored race to hang rating changes on (their key refers to it).
fn stored_race(store: &mut dyn Backend, player: PlayerId) -> u64 {
    let race = race_of("ada", player, PlayerStatus::Won, Default::default());
    store.record_race(&race).expect("stores")
}

fn a_races_rating_changes_are_kept_once_and_read_back(store: &mut dyn Backend) {
    let ada = store.register("ada", &hash(1), 1).expect("registers").id;
    let bob = store.register("bob", &hash(2), 2).expect("registers").id;
    let race_id = stored_race(store, ada);
    let race = RatedRace {
        race_id,
        game: RATED_GAME,
        ended_at_ms: 5_000,
        changes: vec![rating_change(ada, 27.5, 1), rating_change(bob, 22.5, 2)],
    };
    assert!(store.record_ratings(&race).expect("keeps"));
    // Again, even with other figures: nothing is written twice.
    let again = RatedRace {
        changes: vec![rating_change(ada, 40.0, 1), rating_change(bob, 10.0, 2)],
        ..race.clone()
    };
    assert!(!store.record_ratings(&again).expect("answers"));
    let mut read = store.ratings_of(RATED_GAME, &[ada, bob]).expect("reads");
    read.sort_by_key(|rating| rating.player);
    assert_eq!(
        read,
        [
            StoredRating {
                player: ada,
                name: "ada".to_string(),
                rating: Rating {
                    mu: 27.5,
                    sigma: 8.0
                },
                races: 1,
                last_race_ms: 5_000,
            },
            StoredRating {
                player: bob,
                name: "bob".to_string(),
                rating: Rating {
                    mu: 22.5,
                    sigma: 8.0
                },
                races: 1,
                last_race_ms: 5_000,
            },
        ]
    );
    // Another game has no rating yet; the active list is by time.
    assert!(
        store
            .ratings_of(GameKind::Indian, &[ada])
            .expect("reads")
            .is_empty()
    );
    assert_eq!(
        store.ratings_since(RATED_GAME, 5_000).expect("reads").len(),
        2
    );
    assert!(
        store
            .ratings_since(RATED_GAME, 5_001)
            .expect("reads")
            .is_empty()
    );
}

fn the_rating_history_is_newest_first_and_names_are_found_whatever_their_case(
    store: &mut dyn Backend,
) {
    let ada = store.register("Ada", &hash(1), 1).expect("registers").id;
    let bob = store.register("bob", &hash(2), 2).expect("registers").id;
    for (index, at_ms) in [1_000u64, 2_000, 3_000].into_iter().enumerate() {
        let race_id = stored_race(store, ada);
        let mu = 25.0 + index as f64;
        let race = RatedRace {
            race_id,
            game: RATED_GAME,
            ended_at_ms: at_ms,
            changes: vec![rating_change(ada, mu, 1), rating_change(bob, 50.0 - mu, 2)],
        };
        assert!(store.record_ratings(&race).expect("keeps"));
    }
    let history = store
        .rating_history(PlayerLookup::Name("ADA"), RATED_GAME, 2)
        .expect("reads")
        .expect("found");
    assert_eq!(history.name, "Ada");
    let times: Vec<u64> = history.rows.iter().map(|row| row.at_ms).collect();
    assert_eq!(times, [3_000, 2_000]);
    assert_eq!((history.rows[0].place, history.rows[0].racers), (1, 2));
    let current = history.current.expect("rated");
    assert_eq!((current.races, current.rating.mu), (3, 27.0));
    // A player with no rated race of the game, and no player at all.
    let none = store
        .rating_history(PlayerLookup::Id(bob), GameKind::Indian, 5)
        .expect("reads")
        .expect("found");
    assert_eq!((none.current, none.rows.len()), (None, 0));
    assert!(
        store
            .rating_history(PlayerLookup::Name("nobody"), RATED_GAME, 5)
            .expect("reads")
            .is_none()
    );
}
