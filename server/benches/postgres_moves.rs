//! Running races' moves kept per second in PostgreSQL through the database
//! thread, on a server with its default durability (`fsync = on`,
//! `synchronous_commit = on`): every move is committed before its player
//! would be told. Each race writes its moves in a sequence, as a room does
//! ([`Database::queue_in`]), and waits for each answer before the next
//! move, as a racer waits for its ack, so only races moving at the same
//! time share a commit.
//!
//! It needs a PostgreSQL server of its own: `PATIENCE_BENCH_POSTGRES_URL`
//! names a database there (`postgres` will do) beside which it creates a
//! scratch database, dropped at the end. docs/BENCHMARKS.md has the
//! commands that start one and run this.

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use patience_server::database::{Database, Sequence};
use patience_server::store::postgres::ScratchDatabase;
use patience_server::store::{LiveMove, LiveRace, LiveSeat};
use patience_shared::game::GameKind;
use patience_shared::protocol::{PlayerStatus, Progress, RoomOptions};

/// The variable naming the benchmark's PostgreSQL server.
const URL_VARIABLE: &str = "PATIENCE_BENCH_POSTGRES_URL";

/// A running race of two seats, as a room keeps it when it starts.
fn race(code: String) -> LiveRace {
    LiveRace {
        code,
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
        elapsed_ms: 0,
        seq: 0,
        seats: (0u8..2)
            .map(|seat| LiveSeat {
                seat,
                name: format!("racer {seat}"),
                player: None,
                bot: None,
                token: [seat; 32],
                status: PlayerStatus::Racing,
                progress: Progress::default(),
                finished_ms: None,
                log: Vec::new(),
            })
            .collect(),
        epoch: 0,
        series: None,
    }
}

/// Keeps `races` running races; their codes.
fn setup(database: &Database, runtime: &tokio::runtime::Runtime, races: usize) -> Vec<String> {
    runtime.block_on(async {
        let mut codes = Vec::new();
        for index in 0..races {
            let code = format!("B{index:05}");
            let kept = race(code.clone());
            database
                .call(move |store| store.save_live_race(&kept))
                .await
                .expect("keeps the race");
            codes.push(code);
        }
        codes
    })
}

/// Writes `moves` moves spread over the races, each race waiting for its
/// previous move's answer; returns the time.
fn write_moves(
    database: &Database,
    runtime: &tokio::runtime::Runtime,
    codes: &[String],
    next_index: &mut u32,
    moves: u64,
) -> Duration {
    let per_race = moves.div_ceil(codes.len() as u64);
    let first = *next_index;
    *next_index += u32::try_from(per_race).expect("few moves");
    let started = Instant::now();
    runtime.block_on(async {
        let tasks: Vec<_> = codes
            .iter()
            .cloned()
            .map(|code| {
                let database = database.clone();
                tokio::spawn(async move {
                    let sequence = Sequence::new();
                    for index in first..first + per_race as u32 {
                        let code = code.clone();
                        let kept = LiveMove {
                            seat: 0,
                            index,
                            text: "7h>4".to_string(),
                            elapsed_ms: u64::from(index),
                            seq: u64::from(index),
                            epoch: 0,
                        };
                        database
                            .queue_in(&sequence, move |store| store.record_live_move(&code, &kept))
                            .await
                            .await
                            .expect("written");
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.expect("joins");
        }
    });
    started.elapsed()
}

fn live_moves(c: &mut Criterion) {
    let admin_url = std::env::var(URL_VARIABLE).unwrap_or_else(|_| {
        panic!("{URL_VARIABLE} is not set: docs/BENCHMARKS.md says how to start a PostgreSQL")
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("postgres_live_moves_kept");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for races in [1usize, 64, 256] {
        let scratch = ScratchDatabase::create_on(admin_url.clone());
        let database =
            Database::open_postgres(&scratch.url().parse().expect("a database URL"), 4096)
                .expect("opens");
        let codes = setup(&database, &runtime, races);
        let mut next_index = 0;
        group.throughput(Throughput::Elements(races as u64));
        group.bench_function(format!("{races}_races"), |b| {
            b.iter_custom(|iterations| {
                write_moves(
                    &database,
                    &runtime,
                    &codes,
                    &mut next_index,
                    iterations * races as u64,
                )
            });
        });
        drop(database);
    }
    group.finish();
}

criterion_group!(benches, live_moves);
criterion_main!(benches);
