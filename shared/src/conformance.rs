//! Checks every game's rules must pass, driven by random play.
//!
//! Each game's tests call [`check_random_play`] from proptest with many seeds;
//! the checks are written once here so that no game can skip one. They are
//! public (not `cfg(test)`) so the solver's and the server's tests can reuse
//! them on positions of their own.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

use crate::rules::{Board, Rules};

/// A small deterministic random source for tests and benches.
pub struct TestRng(ChaCha8Rng);

impl TestRng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> TestRng {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        TestRng(ChaCha8Rng::from_seed(key))
    }

    /// A number in `0..bound` (`bound` ≥ 1); slightly biased, which is fine for tests.
    pub fn below(&mut self, bound: usize) -> usize {
        (self.0.next_u64() % bound.max(1) as u64) as usize
    }
}

/// How many of each card (by [`crate::card::Card::index`]) a board holds.
pub fn card_counts(board: &Board) -> [usize; 52] {
    let mut counts = [0usize; 52];
    for card in board.all_cards() {
        counts[card.index()] += 1;
    }
    counts
}

/// Asserts that the view shows exactly the face-up cards of the board and
/// only counts of the face-down ones.
pub fn assert_view_hides_secrets<R: Rules>(state: &R) {
    let board = state.board();
    let view = state.view();
    assert_eq!(view.game, board.game);
    assert_eq!(view.zones.len(), board.zones.len());
    for (shown, full) in view.zones.iter().zip(&board.zones) {
        assert_eq!(shown.zone, full.zone);
        assert_eq!(
            usize::from(shown.hidden),
            usize::from(full.face_down),
            "{:?}",
            full.zone
        );
        assert_eq!(
            shown.face_up[..],
            full.cards[usize::from(full.face_down)..],
            "{:?}",
            full.zone
        );
    }
}

/// Plays up to `max_moves` random legal moves from `start`, checking after
/// every one that:
/// - every card is present exactly once per deck across all zones;
/// - every generated move applies, and undo then restores the state exactly;
/// - every generated move's notation reads back as the same move;
/// - a move from `arbitrary` that is not generated is refused and changes nothing;
/// - the view never shows a face-down card or the stock's order;
/// - a position with no legal move is won or stuck, and a won one is not stuck.
///
/// Returns the final position.
pub fn check_random_play<R: Rules>(
    start: &R,
    seed: u64,
    max_moves: usize,
    mut arbitrary: impl FnMut(&R, &mut TestRng) -> R::Move,
) -> R {
    let mut rng = TestRng::new(seed);
    let mut state = start.clone();
    let decks = state.kind().decks();
    let mut moves = Vec::new();
    for _ in 0..max_moves {
        assert!(
            card_counts(&state.board()).iter().all(|&n| n == decks),
            "cards not conserved: {state:?}"
        );
        assert_view_hides_secrets(&state);
        state.legal_moves(&mut moves);
        if state.is_won() {
            assert!(!state.is_stuck(), "a won game is not stuck");
        }
        for &mv in &moves {
            let text = state.format_move(mv);
            assert_eq!(
                state.parse_move(&text),
                Ok(mv),
                "notation {text:?} does not round-trip"
            );
            let before = state.clone();
            let outcome = state
                .apply(mv)
                .unwrap_or_else(|e| panic!("generated move {text} refused: {e}"));
            state.undo(mv, &outcome);
            assert_eq!(state, before, "undo of {text} did not restore the state");
        }
        for _ in 0..8 {
            let candidate = arbitrary(&state, &mut rng);
            if !moves.contains(&candidate) {
                let before = state.clone();
                assert!(
                    state.apply(candidate).is_err(),
                    "ungenerated move {candidate:?} was accepted"
                );
                assert_eq!(state, before, "a refused move changed the state");
            }
        }
        if moves.is_empty() {
            assert!(
                state.is_won() || state.is_stuck(),
                "no legal move, yet neither won nor stuck"
            );
            break;
        }
        let mv = moves[rng.below(moves.len())];
        state
            .apply(mv)
            .unwrap_or_else(|e| panic!("generated move refused: {e}"));
    }
    state
}
