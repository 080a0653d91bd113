//! A move log played back from the deal: what rebuilds a kept race, a
//! replay's boards, and a client's replay all do, one logged move at a time
//! (`undo` in a log takes back the move before it).

use crate::any::{AnyGame, AnyMove};
use crate::protocol::UNDO_TEXT;
use crate::rules::{Effect, MoveError, MoveStack, NotationError, Rules as _, View};

/// Why a logged move does not replay.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    /// An `undo` with no move before it to take back.
    #[error("nothing to take back")]
    NothingToUndo,
    /// Not a move of this position's notation.
    #[error(transparent)]
    Notation(#[from] NotationError),
    /// The rules refuse it.
    #[error(transparent)]
    Illegal(#[from] MoveError),
}

/// A position and the moves that led to it, so that `undo` can take them
/// back.
#[derive(Clone, Debug)]
pub struct LogReplay {
    position: AnyGame,
    played: MoveStack<AnyMove>,
}

impl LogReplay {
    /// Starts from `deal`.
    pub fn new(deal: AnyGame) -> LogReplay {
        LogReplay {
            position: deal,
            played: MoveStack::new(),
        }
    }

    /// The position now.
    pub fn position(&self) -> &AnyGame {
        &self.position
    }

    /// The position and the moves played to it, for whoever plays on
    /// (and may take them back).
    pub fn into_parts(self) -> (AnyGame, MoveStack<AnyMove>) {
        (self.position, self.played)
    }

    /// Plays one logged move, `undo` included; returns what it did beyond
    /// itself (nothing, for a take-back). A move that does not replay
    /// changes nothing.
    pub fn step(&mut self, text: &str) -> Result<Vec<Effect>, StepError> {
        if text == UNDO_TEXT {
            let (mv, outcome) = self.played.pop().ok_or(StepError::NothingToUndo)?;
            self.position.undo(mv, &outcome);
            return Ok(Vec::new());
        }
        let mv = self.position.parse_move(text)?;
        let outcome = self.position.apply(mv)?;
        self.played.push(mv, &outcome);
        Ok(outcome.effects.to_vec())
    }
}

/// The position `moves` lead to from `deal`, stopping at the first move
/// that does not replay (a log the server accepted move by move has none).
pub fn final_position(deal: AnyGame, moves: &[String]) -> AnyGame {
    let mut replay = LogReplay::new(deal);
    for text in moves {
        if replay.step(text).is_err() {
            break;
        }
    }
    replay.into_parts().0
}

/// The board after each move of `moves` from `deal`: the deal first, then
/// one more per move. The first move that does not replay is an error with
/// its index.
pub fn boards(deal: AnyGame, moves: &[String]) -> Result<Vec<View>, (usize, StepError)> {
    let mut replay = LogReplay::new(deal);
    let mut boards = Vec::with_capacity(moves.len() + 1);
    boards.push(replay.position().view());
    for (index, text) in moves.iter().enumerate() {
        replay.step(text).map_err(|error| (index, error))?;
        boards.push(replay.position().view());
    }
    Ok(boards)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameKind;

    /// Two legal moves of a Three Blind Mice deal, found by the rules.
    fn two_moves(deal: &AnyGame) -> Vec<String> {
        let mut position = deal.clone();
        let mut texts = Vec::new();
        for _ in 0..2 {
            let mut moves = Vec::new();
            position.legal_moves(&mut moves);
            let Some(&mv) = moves.first() else { break };
            texts.push(position.format_move(mv));
            if position.apply(mv).is_err() {
                break;
            }
        }
        texts
    }

    #[test]
    fn a_log_replays_with_its_take_backs() {
        let deal = AnyGame::deal(GameKind::ThreeBlindMice, 7);
        let moves = two_moves(&deal);
        assert_eq!(moves.len(), 2, "the deal has two moves to play");
        let log = vec![
            moves[0].clone(),
            UNDO_TEXT.to_string(),
            moves[0].clone(),
            moves[1].clone(),
        ];
        let shown = boards(deal.clone(), &log).unwrap_or_default();
        assert_eq!(shown.len(), 5);
        assert_eq!(shown[0], deal.view(), "the deal first");
        assert_eq!(shown[2], shown[0], "the undo takes the board back");
        assert_eq!(shown[3], shown[1], "the move again");
        assert_ne!(shown[4], shown[3]);
    }

    #[test]
    fn the_first_move_that_does_not_replay_is_named() {
        let deal = AnyGame::deal(GameKind::ThreeBlindMice, 7);
        let moves = two_moves(&deal);
        let cases: [(Vec<String>, usize, &str); 3] = [
            (vec![UNDO_TEXT.to_string()], 0, "undo first"),
            (vec![moves[0].clone(), "zz".to_string()], 1, "not notation"),
            (
                vec![moves[0].clone(), moves[0].clone(), moves[0].clone()],
                1,
                "a move no longer legal",
            ),
        ];
        for (log, index, what) in cases {
            match boards(deal.clone(), &log) {
                Err((at, _)) => assert_eq!(at, index, "{what}"),
                Ok(_) => panic!("{what}: replayed"),
            }
        }
    }
}
