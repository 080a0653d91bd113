//! Checks every game's rules must pass, driven by random play.
//!
//! Each game's tests call [`check_random_play`] from proptest with many seeds;
//! the checks are written once here so that no game can skip one. Test
//! support: compiled for this crate's tests, and for others' tests, benches
//! and fuzz targets through the `test-support` feature, so the server's
//! tests and the fuzzer reuse them on positions of their own.

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

/// Asserts that `after`, the view once a move with `outcome` was played
/// from the view `before`, shows no card the player was not shown: every
/// face-up card was face up before, or is named by the move's effects
/// (turned up, drawn), or is one of the `count` cards a deal from the stock
/// put out; and the face-down cards decreased by exactly as many as the
/// effects turned up, drew and dealt.
///
/// This is independent of [`Rules::board`]: a game whose board under-counts
/// its face-down cards shows a secret in its view, and the next card it
/// turns up was already on show, so this check fails where comparing the
/// view with `board().to_view()` cannot.
pub fn assert_view_reveals_only_effects(
    before: &crate::rules::View,
    after: &crate::rules::View,
    outcome: &crate::rules::Outcome,
) {
    use crate::rules::Effect;
    let mut shown = [0usize; 52];
    for card in before.zones.iter().flat_map(|zone| &zone.face_up) {
        shown[card.index()] += 1;
    }
    let mut revealed = 0usize;
    let mut dealt = 0usize;
    for effect in &outcome.effects {
        match effect {
            Effect::TurnedUp { card, .. } | Effect::Drew { card } => {
                shown[card.index()] += 1;
                revealed += 1;
            }
            Effect::Dealt { count } => dealt += usize::from(*count),
            Effect::RunRemoved { .. } | Effect::AceDiscarded { .. } => {}
        }
    }
    let mut unnamed = 0usize;
    let mut now = [0usize; 52];
    for card in after.zones.iter().flat_map(|zone| &zone.face_up) {
        now[card.index()] += 1;
    }
    for (index, (&now, &shown)) in now.iter().zip(&shown).enumerate() {
        unnamed += now.saturating_sub(shown);
        assert!(
            now <= shown + dealt,
            "card #{index} is on show {now} times but was shown {shown} times: {after:?}"
        );
    }
    assert!(
        unnamed <= dealt,
        "{unnamed} cards came face up unnamed, but only {dealt} were dealt"
    );
    let hidden = |view: &crate::rules::View| -> usize {
        view.zones.iter().map(|zone| usize::from(zone.hidden)).sum()
    };
    assert_eq!(
        hidden(before),
        hidden(after) + revealed + dealt,
        "face-down cards must decrease by what the effects reveal"
    );
}

/// Plays up to `max_moves` random legal moves from `start`, checking after
/// every one that:
/// - every card is present exactly once per deck across all zones;
/// - every generated move applies, and undo then restores the state exactly;
/// - every generated move's notation reads back as the same move;
/// - a move from `arbitrary` that is not generated is refused and changes nothing;
/// - the view never shows a face-down card or the stock's order, judged
///   both against the board and, independently, against what each move's
///   effects revealed ([`assert_view_reveals_only_effects`]);
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
        let before = state.view();
        let outcome = state
            .apply(mv)
            .unwrap_or_else(|e| panic!("generated move refused: {e}"));
        assert_view_reveals_only_effects(&before, &state.view(), &outcome);
    }
    state
}
