//! Moves per second of the rules engine: random games of each game, where
//! every step generates the legal moves, applies one at random and, every
//! other step, undoes and re-applies it, the pattern the solver uses.
//!
//! Run with `cargo bench -p patience-shared --bench rules`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use patience_shared::conformance::TestRng;
use patience_shared::games::forty_thieves::{FortyThieves, Variant};
use patience_shared::games::three_blind_mice::ThreeBlindMice;
use patience_shared::games::virginia_reel::VirginiaReel;
use patience_shared::rules::Rules;

/// Games played per measured iteration.
const GAMES: u64 = 20;
/// Longest game played, in moves.
const MAX_MOVES: usize = 400;

/// Plays `GAMES` random games from the deals of seeds `0..GAMES`, returning
/// the number of moves applied (undone moves and their replays included).
fn play_random<R: Rules>(deal: impl Fn(u64) -> R, moves: &mut Vec<R::Move>) -> u64 {
    let mut rng = TestRng::new(1);
    let mut applied = 0;
    for seed in 0..GAMES {
        let mut state = deal(seed);
        for step in 0..MAX_MOVES {
            state.legal_moves(moves);
            if moves.is_empty() {
                break;
            }
            let mv = moves[rng.below(moves.len())];
            let Ok(outcome) = state.apply(mv) else { break };
            applied += 1;
            if step % 2 == 0 {
                state.undo(mv, &outcome);
                if state.apply(mv).is_err() {
                    break;
                }
                applied += 2;
            }
        }
        black_box(&state);
    }
    applied
}

fn bench_game<R: Rules>(c: &mut Criterion, name: &str, deal: impl Fn(u64) -> R + Copy) {
    let mut moves = Vec::with_capacity(256);
    // Count the moves of one iteration once, so criterion reports moves per second.
    let per_iteration = play_random(deal, &mut moves);
    let mut group = c.benchmark_group("random_play");
    group.throughput(Throughput::Elements(per_iteration));
    group.bench_function(name, |b| b.iter(|| play_random(deal, &mut moves)));
    group.finish();
}

fn rules(c: &mut Criterion) {
    bench_game(c, "three_blind_mice", ThreeBlindMice::deal);
    bench_game(c, "indian", |seed| {
        FortyThieves::deal(Variant::Indian, seed)
    });
    bench_game(c, "midshipman", |seed| {
        FortyThieves::deal(Variant::Midshipman, seed)
    });
    bench_game(c, "virginia_reel", VirginiaReel::deal);
}

criterion_group!(benches, rules);
criterion_main!(benches);
