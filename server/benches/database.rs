//! Daily moves written per second through the database thread, on a real
//! file with `synchronous = FULL`: one player at a time (every move its own
//! commit and fsync) against many players at once (their moves share
//! commits). This is the cost of "every accepted move is on disk before the
//! player hears of it".
//!
//! Run with `cargo bench -p patience-server --bench database`.

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use patience_server::database::Database;
use patience_server::store::AttemptKey;
use patience_shared::game::GameKind;

/// Registers `players` players with an open attempt each.
fn setup(database: &Database, runtime: &tokio::runtime::Runtime, players: u64) -> Vec<AttemptKey> {
    runtime.block_on(async {
        let mut keys = Vec::new();
        for index in 0..players {
            let key = database
                .call(move |store| {
                    let mut token = [0u8; 32];
                    token[..8].copy_from_slice(&index.to_le_bytes());
                    let player = store.register(&format!("p{index}"), &token, 0)?;
                    let key = AttemptKey {
                        player: player.id,
                        game: GameKind::ThreeBlindMice,
                        date: "2026-12-01".to_string(),
                    };
                    store.begin_attempt(&key, 0)?;
                    Ok(key)
                })
                .await
                .expect("setup");
            keys.push(key);
        }
        keys
    })
}

/// Writes `moves` moves spread over the players, each player waiting for
/// its previous move's answer as a real connection does; returns the time.
fn write_moves(
    database: &Database,
    runtime: &tokio::runtime::Runtime,
    keys: &[AttemptKey],
    next_index: &mut u32,
    moves: u64,
) -> Duration {
    let per_player = moves.div_ceil(keys.len() as u64);
    let first = *next_index;
    *next_index += u32::try_from(per_player).expect("few moves");
    let started = Instant::now();
    runtime.block_on(async {
        let tasks: Vec<_> = keys
            .iter()
            .cloned()
            .map(|key| {
                let database = database.clone();
                tokio::spawn(async move {
                    for index in first..first + per_player as u32 {
                        let key = key.clone();
                        database
                            .call(move |store| {
                                store.record_move(&key, index, "7h>4", u64::from(index))
                            })
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

fn daily_moves(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("daily_moves_written");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for players in [1u64, 64] {
        let directory = tempfile::tempdir().expect("temp dir");
        let database = Database::open(Some(directory.path()), 4096).expect("opens");
        let keys = setup(&database, &runtime, players);
        let mut next_index = 0;
        group.throughput(Throughput::Elements(players));
        group.bench_function(format!("{players}_players"), |b| {
            b.iter_custom(|iterations| {
                write_moves(
                    &database,
                    &runtime,
                    &keys,
                    &mut next_index,
                    iterations * players,
                )
            });
        });
    }
    group.finish();
}

criterion_group!(benches, daily_moves);
criterion_main!(benches);
