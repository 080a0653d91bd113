//! The daily tournament's reads at 100,000 tallied attempts: 2,000 players
//! each finishing every day of one game over 50 days, in a SQLite file
//! (WAL, `synchronous = FULL`), written through the real [`Store`] calls
//! (`begin_attempt`, `finish_attempt`, one transaction per day) and tallied
//! day by day with [`Store::tally_day`], whose time per day it prints. One
//! more day of 2,000 finished attempts is left open, so that the current
//! week and month have a live day.
//!
//! Measured: a week's and a month's standings with every day tallied (the
//! top rows straight off the standings index) and with the live day (every
//! line of the period read and ranked again), a player's record (with its
//! medians), and a page of ten past days with their podiums.
//!
//! Run with `nice -n 10 cargo bench -p patience-server --bench standings`.

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use patience_server::store::sqlite::SqliteStore;
use patience_server::store::{
    AttemptKey, DailyDeal, Eligibility, NewRace, PeriodSpan, PlayerLookup, Store,
};
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    MoveLog, Period, PlayerStatus, Progress, RaceResult, Reveal, Standing,
};

const PLAYERS: u64 = 2_000;
const TALLIED_DAYS: u64 = 50;
const GAME: GameKind = GameKind::ThreeBlindMice;
/// The first day: 50 days from it end on 2026-12-19, a Saturday.
const FIRST_DAY: &str = "2026-10-31";
/// The open day: the Sunday that ends week 2026-W51.
const OPEN_DAY: &str = "2026-12-20";

fn date(offset: u64) -> String {
    let first: jiff::civil::Date = FIRST_DAY.parse().expect("a date");
    first
        .checked_add(jiff::Span::new().days(i64::try_from(offset).expect("few days")))
        .expect("in range")
        .to_string()
}

/// Every player's attempt at `date`: a win for two in three, times spread
/// over ten minutes.
fn play_day(store: &mut SqliteStore, day: u64, date: &str) {
    store.begin().expect("begins");
    store
        .save_daily_deal(&DailyDeal {
            game: GAME,
            date: date.to_string(),
            seed: day,
            salt: "00112233445566778899aabbccddeeff".to_string(),
        })
        .expect("a deal");
    for player in 1..=PLAYERS {
        let key = AttemptKey {
            player,
            game: GAME,
            date: date.to_string(),
        };
        store.begin_attempt(&key, 0).expect("begins");
        let won = !(player * 7 + day * 13).is_multiple_of(3);
        let status = if won {
            PlayerStatus::Won
        } else {
            PlayerStatus::Resigned
        };
        let progress = Progress {
            moves: 60,
            cards_home: if won { 52 } else { 20 },
            elapsed_ms: 60_000 + (player * 7_919 + day * 104_729) % 600_000,
            ..Progress::default()
        };
        let race = NewRace {
            daily: Some(date.to_string()),
            room_code: None,
            ended_at_ms: progress.elapsed_ms,
            result: RaceResult {
                race_id: None,
                standings: vec![Standing {
                    rank: 1,
                    seat: 0,
                    name: format!("p{player}"),
                    status,
                    progress,
                    bot: None,
                }],
                reveal: Reveal {
                    game: GAME,
                    seed: day,
                    salt: "00112233445566778899aabbccddeeff".to_string(),
                },
                logs: vec![MoveLog {
                    seat: 0,
                    moves: Vec::new(),
                }],
                open_boards: false,
            },
            players: vec![(0, player)],
        };
        store
            .finish_attempt(&key, status, progress, &race, Eligibility::default())
            .expect("finishes");
    }
    store.commit().expect("commits");
}

/// The filled store, and the time each day's tally took.
fn fill(path: &std::path::Path) -> (SqliteStore, Vec<Duration>) {
    let mut store = SqliteStore::open(path).expect("opens");
    store.begin().expect("begins");
    for player in 1..=PLAYERS {
        let mut token = [0u8; 32];
        token[..8].copy_from_slice(&player.to_le_bytes());
        store
            .register(&format!("p{player}"), &token, 0)
            .expect("registers");
    }
    store.commit().expect("commits");
    let mut tallies = Vec::new();
    for day in 0..TALLIED_DAYS {
        let date = date(day);
        play_day(&mut store, day, &date);
        let started = Instant::now();
        store.begin().expect("begins");
        assert!(store.tally_day(GAME, &date).expect("tallies"));
        store.commit().expect("commits");
        tallies.push(started.elapsed());
    }
    play_day(&mut store, TALLIED_DAYS, OPEN_DAY);
    (store, tallies)
}

fn standings(criterion: &mut Criterion) {
    let directory = tempfile::tempdir().expect("a temporary directory");
    let started = Instant::now();
    let (mut store, tallies) = fill(&directory.path().join("patience.sqlite3"));
    let mut sorted = tallies.clone();
    sorted.sort();
    let total: Duration = tallies.iter().sum();
    println!(
        "filled {} finished attempts ({} tallied) in {:.1?}; tally of one day of {PLAYERS} \
         attempts: mean {:.1?}, median {:.1?}, min {:.1?}, max {:.1?}",
        PLAYERS * (TALLIED_DAYS + 1),
        PLAYERS * TALLIED_DAYS,
        started.elapsed(),
        total / u32::try_from(tallies.len()).expect("few days"),
        sorted[sorted.len() / 2],
        sorted[0],
        sorted[sorted.len() - 1],
    );

    let span = |period, key| PeriodSpan::parse(period, key).expect("a period");
    let asker = Some(PLAYERS / 2);
    let cases = [
        ("week 2026-W50, tallied", span(Period::Week, "2026-W50")),
        (
            "week 2026-W51, one day live",
            span(Period::Week, "2026-W51"),
        ),
        ("month 2026-11, tallied", span(Period::Month, "2026-11")),
        (
            "month 2026-12, one day live",
            span(Period::Month, "2026-12"),
        ),
    ];
    let mut group = criterion.benchmark_group("standings");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(4));
    for (name, span) in &cases {
        let page = store
            .standings(GAME, span, OPEN_DAY, 20, asker)
            .expect("standings");
        assert_eq!(page.rows.len(), 20);
        assert!(page.own.is_some());
        assert_eq!(page.players, u32::try_from(PLAYERS).expect("few"));
        group.bench_function(*name, |bench| {
            bench.iter(|| {
                store
                    .standings(GAME, span, OPEN_DAY, 20, asker)
                    .expect("standings")
            });
        });
    }
    group.bench_function("player record", |bench| {
        bench.iter(|| {
            store
                .player_record(PlayerLookup::Name("P1000"))
                .expect("reads")
                .expect("a player")
        });
    });
    group.bench_function("days page of 10", |bench| {
        bench.iter(|| {
            let page = store.daily_days(GAME, None, 10).expect("reads");
            assert_eq!(page.days.len(), 10);
            page
        });
    });
    group.finish();
}

criterion_group!(benches, standings);
criterion_main!(benches);
