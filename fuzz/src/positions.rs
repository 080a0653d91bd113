//! A fixed table of reachable positions of every game, built once per process.
//!
//! Parsing move text depends on the position (a card named by rank and suit
//! must be found in it, a pile may be empty), so the notation target reads
//! its text against positions from deep in a game as well as the deal.
//! Building them by random play on every input would cost more than the
//! parsing itself; the table is built on first use and then only indexed, and
//! it is the same in every run, so a finding replays exactly.

use std::sync::OnceLock;

use patience_shared::any::AnyGame;
use patience_shared::conformance::TestRng;
use patience_shared::game::GameKind;
use patience_shared::rules::Rules;

/// Deals per game in the table.
const SEEDS: u64 = 16;
/// Positions kept per deal: the deal, then one every [`STRIDE`] random moves.
const DEPTHS: usize = 16;
/// Random moves between two kept positions of one deal.
const STRIDE: usize = 8;

/// How many rows the table has (256: one byte of input picks a row); each
/// row holds one position of every game.
pub const ROWS: usize = SEEDS as usize * DEPTHS;

/// The row `index % ROWS` of the table: one position of each game of
/// [`GameKind::ALL`], in that order, reached from the same seed by the same
/// number of random moves (fewer if the game got stuck first).
pub fn row(index: usize) -> &'static [AnyGame; 4] {
    static TABLE: OnceLock<Vec<[AnyGame; 4]>> = OnceLock::new();
    let table = TABLE.get_or_init(build);
    &table[index % table.len()]
}

fn build() -> Vec<[AnyGame; 4]> {
    let mut rows = Vec::with_capacity(ROWS);
    for seed in 0..SEEDS {
        let mut games = GameKind::ALL.map(|game| AnyGame::deal(game, seed));
        let mut rngs = GameKind::ALL.map(|_| TestRng::new(seed));
        let mut moves = Vec::new();
        for _ in 0..DEPTHS {
            rows.push(games.clone());
            for (state, rng) in games.iter_mut().zip(&mut rngs) {
                for _ in 0..STRIDE {
                    state.legal_moves(&mut moves);
                    if moves.is_empty() {
                        break;
                    }
                    let mv = moves[rng.below(moves.len())];
                    // A generated move is legal; were it refused, the position
                    // simply stays where it is.
                    let _ = state.apply(mv);
                }
            }
        }
    }
    rows
}
