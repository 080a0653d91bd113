//! Target `rules`: a position of any game and an arbitrary sequence of moves,
//! applied and taken back through [`AnyGame`].
//!
//! Input layout: byte 0 picks the game (`% 4`, [`GameKind::ALL`] order),
//! byte 1 the starting position, a row of [`crate::positions`] (a deal, or
//! up to 120 random moves into it, so that short inputs still reach the
//! middle and end of games); every further byte is one operation:
//!
//! | byte        | operation |
//! |-------------|-----------|
//! | `0x00–0xBF` | apply legal move number `byte % n` (when there are `n > 0`) |
//! | `0xC0–0xDF` | undo the last applied move still on the stack |
//! | `0xE0–0xEF` | apply the move read from the next `byte & 0xF` bytes as notation |
//! | `0xF0–0xFF` | apply the [`AnyMove`] decoded from the next `byte & 0xF` bytes as MessagePack (any game, any index, so out-of-range piles and moves of other games) |
//!
//! At most [`MAX_OPERATIONS`] are read: each costs a legal-move generation
//! and the checks below, and a short input keeps the target at a few
//! thousand runs a second on a shared machine, which a 10-million-run
//! campaign needs. Sequences still reach deep positions, since each starts
//! up to 120 moves into a game. At the end every move still applied is
//! undone, last first, which must give back the starting position.
//!
//! Checked after every operation (the checks of
//! `patience_shared::conformance`, driven by the fuzzer instead of a random
//! source): a move applies exactly when it is among the legal moves, and a
//! refused one changes nothing; an applied move's notation reads back as the
//! same move; every card is present once per deck; the view shows no
//! face-down card; a position with no legal move is won or stuck, and a won
//! one is not stuck; undo restores exactly the position before its move,
//! however many moves later it comes.

use patience_shared::any::{AnyGame, AnyMove};
use patience_shared::conformance::card_counts;
use patience_shared::game::GameKind;
use patience_shared::rules::{Outcome, Rules};

use crate::positions;

/// The most operations read from one input.
pub const MAX_OPERATIONS: usize = 12;

/// A move applied and not yet undone: what undo needs, and the position it
/// must give back.
struct Applied {
    mv: AnyMove,
    outcome: Outcome,
    before: AnyGame,
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let [game, row, operations @ ..] = data else {
        return;
    };
    let start = &positions::row(usize::from(*row))[usize::from(*game) % GameKind::ALL.len()];
    let mut state = start.clone();
    let mut stack: Vec<Applied> = Vec::new();
    let mut legal = Vec::new();
    check_position(&state, &mut legal);

    let mut rest = operations;
    let mut count = 0;
    while let [operation, tail @ ..] = rest {
        if count == MAX_OPERATIONS {
            break;
        }
        count += 1;
        rest = tail;
        match *operation {
            0x00..=0xBF => {
                if legal.is_empty() {
                    continue;
                }
                let mv = legal[usize::from(*operation) % legal.len()];
                try_move(&mut state, &legal, &mut stack, mv);
            }
            0xC0..=0xDF => {
                let Some(applied) = stack.pop() else {
                    continue;
                };
                take_back(&mut state, applied);
            }
            0xE0..=0xFF => {
                let length = usize::from(*operation & 0x0F).min(rest.len());
                let (bytes, tail) = rest.split_at(length);
                rest = tail;
                let mv = if *operation < 0xF0 {
                    state.parse_move(&String::from_utf8_lossy(bytes)).ok()
                } else {
                    rmp_serde::from_slice::<AnyMove>(bytes).ok()
                };
                let Some(mv) = mv else {
                    continue;
                };
                try_move(&mut state, &legal, &mut stack, mv);
            }
        }
        check_position(&state, &mut legal);
    }

    while let Some(applied) = stack.pop() {
        take_back(&mut state, applied);
    }
    assert_eq!(
        &state, start,
        "undoing every move did not give back the starting position"
    );
}

/// Applies `mv` to `state`, whose legal moves are `legal`, and checks that it
/// is accepted exactly when it is legal.
fn try_move(state: &mut AnyGame, legal: &[AnyMove], stack: &mut Vec<Applied>, mv: AnyMove) {
    let before = state.clone();
    let is_legal = legal.contains(&mv);
    match state.apply(mv) {
        Ok(outcome) => {
            assert!(is_legal, "ungenerated move {mv:?} was accepted");
            let text = before.format_move(mv);
            assert_eq!(
                before.parse_move(&text),
                Ok(mv),
                "notation {text:?} does not round-trip"
            );
            stack.push(Applied {
                mv,
                outcome,
                before,
            });
        }
        Err(error) => {
            assert!(!is_legal, "generated move {mv:?} refused: {error}");
            assert_eq!(*state, before, "refused move {mv:?} changed the state");
        }
    }
}

/// Undoes the last applied move and checks the position it gives back.
fn take_back(state: &mut AnyGame, applied: Applied) {
    state.undo(applied.mv, &applied.outcome);
    assert_eq!(
        *state, applied.before,
        "undo of {:?} did not restore the state",
        applied.mv
    );
}

/// Checks the invariants of a position and fills `legal` with its legal moves.
fn check_position(state: &AnyGame, legal: &mut Vec<AnyMove>) {
    let decks = state.kind().decks();
    let board = state.board();
    assert!(
        card_counts(&board).iter().all(|&n| n == decks),
        "cards not conserved: {state:?}"
    );
    // The checks of `conformance::assert_view_hides_secrets`, on the board
    // already built: it builds its own, and one board per operation instead of
    // two keeps the target fast enough for its 10-million-run campaign.
    let view = state.view();
    assert_eq!(view.game, board.game);
    assert_eq!(view.zones.len(), board.zones.len());
    for (shown, full) in view.zones.iter().zip(&board.zones) {
        assert_eq!(shown.zone, full.zone);
        assert_eq!(shown.hidden, full.face_down, "{:?}", full.zone);
        assert_eq!(
            shown.face_up[..],
            full.cards[usize::from(full.face_down)..],
            "{:?} shows other cards than its face-up ones",
            full.zone
        );
    }
    state.legal_moves(legal);
    if state.is_won() {
        assert!(!state.is_stuck(), "a won game is not stuck");
    }
    if legal.is_empty() {
        assert!(
            state.is_won() || state.is_stuck(),
            "no legal move, yet neither won nor stuck"
        );
    }
}
