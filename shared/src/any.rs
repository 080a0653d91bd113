//! One type for "a position of any game", for code that serves every game
//! alike: the server, the terminal client and the inspection commands.
//!
//! [`AnyGame`] implements [`Rules`] by delegating to the game it holds, so the
//! same generic code (and the same conformance checks) work on it. Code that
//! needs speed, such as the solver, uses the concrete game types instead.

use serde::{Deserialize, Serialize};

use crate::game::GameKind;
use crate::games::forty_thieves::{FortyThieves, FtMove, Variant};
use crate::games::three_blind_mice::{TbmMove, ThreeBlindMice};
use crate::games::virginia_reel::{ReelMove, VirginiaReel};
use crate::rules::{Board, MoveError, NotationError, Outcome, Rules, View};

/// A position of any game.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AnyGame {
    /// Three Blind Mice.
    ThreeBlindMice(ThreeBlindMice),
    /// Indian or Midshipman.
    FortyThieves(FortyThieves),
    /// Virginia Reel.
    VirginiaReel(VirginiaReel),
}

/// A move of any game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnyMove {
    /// A Three Blind Mice move.
    ThreeBlindMice(TbmMove),
    /// An Indian or Midshipman move.
    FortyThieves(FtMove),
    /// A Virginia Reel move.
    VirginiaReel(ReelMove),
}

impl AnyGame {
    /// The deal of `game` for `seed`.
    pub fn deal(game: GameKind, seed: u64) -> AnyGame {
        match game {
            GameKind::ThreeBlindMice => AnyGame::ThreeBlindMice(ThreeBlindMice::deal(seed)),
            GameKind::Indian => AnyGame::FortyThieves(FortyThieves::deal(Variant::Indian, seed)),
            GameKind::Midshipman => {
                AnyGame::FortyThieves(FortyThieves::deal(Variant::Midshipman, seed))
            }
            GameKind::VirginiaReel => AnyGame::VirginiaReel(VirginiaReel::deal(seed)),
        }
    }

    /// Plays a list of moves, stopping at the first refused one with its
    /// 0-based index in the list.
    pub fn play_all(&mut self, moves: &[AnyMove]) -> Result<(), (usize, MoveError)> {
        for (index, &mv) in moves.iter().enumerate() {
            self.apply(mv).map_err(|error| (index, error))?;
        }
        Ok(())
    }
}

/// Calls `$body` with `$state` bound to the concrete game inside `$any`.
macro_rules! with_game {
    ($any:expr, $state:ident => $body:expr) => {
        match $any {
            AnyGame::ThreeBlindMice($state) => $body,
            AnyGame::FortyThieves($state) => $body,
            AnyGame::VirginiaReel($state) => $body,
        }
    };
}

/// Pairs a position with a move of the same game, or refuses with `$mismatch`.
macro_rules! with_game_and_move {
    ($any:expr, $mv:expr, $state:ident, $game_move:ident => $body:expr, $mismatch:expr) => {
        match ($any, $mv) {
            (AnyGame::ThreeBlindMice($state), AnyMove::ThreeBlindMice($game_move)) => $body,
            (AnyGame::FortyThieves($state), AnyMove::FortyThieves($game_move)) => $body,
            (AnyGame::VirginiaReel($state), AnyMove::VirginiaReel($game_move)) => $body,
            _ => $mismatch,
        }
    };
}

/// Runs `legal_moves` of a concrete game and wraps each move. This allocates a
/// scratch buffer per call, which is fine for the server and the client (a few
/// calls per human move); the solver and the benches use concrete games.
fn wrapped_moves<R: Rules>(state: &R, wrap: fn(R::Move) -> AnyMove, moves: &mut Vec<AnyMove>) {
    let mut concrete = Vec::with_capacity(moves.capacity());
    state.legal_moves(&mut concrete);
    moves.clear();
    moves.extend(concrete.into_iter().map(wrap));
}

impl Rules for AnyGame {
    type Move = AnyMove;

    fn kind(&self) -> GameKind {
        with_game!(self, state => state.kind())
    }

    fn legal_moves(&self, moves: &mut Vec<AnyMove>) {
        match self {
            AnyGame::ThreeBlindMice(state) => wrapped_moves(state, AnyMove::ThreeBlindMice, moves),
            AnyGame::FortyThieves(state) => wrapped_moves(state, AnyMove::FortyThieves, moves),
            AnyGame::VirginiaReel(state) => wrapped_moves(state, AnyMove::VirginiaReel, moves),
        }
    }

    fn apply(&mut self, mv: AnyMove) -> Result<Outcome, MoveError> {
        with_game_and_move!(self, mv, state, game_move => state.apply(game_move), Err(MoveError::WrongGame))
    }

    fn undo(&mut self, mv: AnyMove, outcome: &Outcome) {
        // A move of another game was never applied here, so there is nothing to undo.
        with_game_and_move!(self, mv, state, game_move => state.undo(game_move, outcome), ())
    }

    fn is_won(&self) -> bool {
        with_game!(self, state => state.is_won())
    }

    fn is_stuck(&self) -> bool {
        with_game!(self, state => state.is_stuck())
    }

    fn board(&self) -> Board {
        with_game!(self, state => state.board())
    }

    fn view(&self) -> View {
        with_game!(self, state => state.view())
    }

    fn parse_move(&self, text: &str) -> Result<AnyMove, NotationError> {
        match self {
            AnyGame::ThreeBlindMice(state) => state.parse_move(text).map(AnyMove::ThreeBlindMice),
            AnyGame::FortyThieves(state) => state.parse_move(text).map(AnyMove::FortyThieves),
            AnyGame::VirginiaReel(state) => state.parse_move(text).map(AnyMove::VirginiaReel),
        }
    }

    fn format_move(&self, mv: AnyMove) -> String {
        with_game_and_move!(self, mv, state, game_move => state.format_move(game_move), String::from("?"))
    }
}
