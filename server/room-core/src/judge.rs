//! The one judge of a move: every racer's in a room and the daily
//! attempt's. It reads the notation on the position, writes the move in
//! its canonical form, and applies it, or says why not in the protocol's
//! terms (`bad_notation`, or `illegal_move` with the rules' reason).
//! Pure: the position and the text in, the move played or refused out.

use patience_shared::any::{AnyGame, AnyMove};
use patience_shared::protocol::ErrorCode;
use patience_shared::rules::{MoveError, Outcome, Rules as _};

/// A move the position took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Played {
    /// The move, to take back with its outcome.
    pub mv: AnyMove,
    /// The move in canonical notation, as logged and acknowledged.
    pub text: String,
    /// What it did beyond itself.
    pub outcome: Outcome,
}

/// Why the position refused a move, in the protocol's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// `bad_notation` or `illegal_move`.
    pub code: ErrorCode,
    /// The rules' reason, for an illegal move.
    pub reason: Option<MoveError>,
    /// For people.
    pub message: String,
}

/// Plays `text` on `position`, or leaves it as it was and says why not.
pub fn play(position: &mut AnyGame, text: &str) -> Result<Played, Refused> {
    let mv = position.parse_move(text).map_err(|error| Refused {
        code: ErrorCode::BadNotation,
        reason: None,
        message: error.to_string(),
    })?;
    let canonical = position.format_move(mv);
    let outcome = position.apply(mv).map_err(|error| Refused {
        code: ErrorCode::IllegalMove,
        message: error.to_string(),
        reason: Some(error),
    })?;
    Ok(Played {
        mv,
        text: canonical,
        outcome,
    })
}

#[cfg(test)]
mod tests {
    use patience_shared::game::GameKind;
    use patience_shared::rules::Rules as _;

    use super::*;

    /// A legal move is played in its canonical form; bad notation and an
    /// illegal move are refused with their codes, the position untouched.
    #[test]
    fn a_move_is_played_or_refused_in_the_protocols_terms() {
        let deal = AnyGame::deal(GameKind::ThreeBlindMice, 1);
        let mut legal = Vec::new();
        deal.legal_moves(&mut legal);
        let first = deal.format_move(legal[0]);

        let mut position = deal.clone();
        let played = play(&mut position, &first).expect("a legal move");
        assert_eq!(
            (played.mv, played.text.as_str()),
            (legal[0], first.as_str())
        );
        assert_ne!(position.view(), deal.view());

        let check = |text: &str, code: ErrorCode, has_reason: bool| {
            let mut position = deal.clone();
            let refused = play(&mut position, text).expect_err(text);
            assert_eq!(refused.code, code, "{text}");
            assert_eq!(refused.reason.is_some(), has_reason, "{text}");
            assert!(!refused.message.is_empty());
            assert_eq!(position.view(), deal.view(), "{text}: untouched");
        };
        check("no such move", ErrorCode::BadNotation, false);
        check("1>1", ErrorCode::IllegalMove, true);
    }
}
