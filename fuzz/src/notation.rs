//! Target `notation`: arbitrary text read as a move by every game's parser.
//!
//! Input layout: the first byte picks a row of [`crate::positions`] (a deal,
//! or a position some random moves into it); the rest, as UTF-8 (invalid
//! sequences replaced), is the move text. The text is read against that
//! row's position of every game, so each input exercises all four parsers.
//!
//! Properties of every text a parser accepts, as `docs/NOTATION.md` states:
//! - its canonical form (`format_move`) reads back as the same move;
//! - the canonical form is a fixed point: formatting the move read back
//!   gives the same text;
//! - the move applies exactly when it is among the legal moves; a refused
//!   move changes nothing, and an applied one is undone exactly.

use patience_shared::any::AnyGame;
use patience_shared::rules::Rules;

use crate::positions;

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let Some((&row, text)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(text);
    for state in positions::row(usize::from(row)) {
        check(state, &text);
    }
}

/// Reads `text` against `state` and checks what the parser accepts.
fn check(state: &AnyGame, text: &str) {
    let Ok(mv) = state.parse_move(text) else {
        return;
    };
    let canonical = state.format_move(mv);
    assert_eq!(
        state.parse_move(&canonical),
        Ok(mv),
        "{text:?} reads as {mv:?}, whose canonical form {canonical:?} does not read back"
    );
    assert_eq!(
        state.format_move(mv),
        canonical,
        "format_move is not deterministic for {mv:?}"
    );

    let mut legal = Vec::new();
    state.legal_moves(&mut legal);
    let mut after = state.clone();
    match after.apply(mv) {
        Ok(outcome) => {
            assert!(
                legal.contains(&mv),
                "{canonical:?} applied but is not a legal move"
            );
            after.undo(mv, &outcome);
            assert_eq!(
                &after, state,
                "undo of {canonical:?} did not restore the state"
            );
        }
        Err(error) => {
            assert!(
                !legal.contains(&mv),
                "legal move {canonical:?} refused: {error}"
            );
            assert_eq!(&after, state, "refused {canonical:?} changed the state");
        }
    }
}
