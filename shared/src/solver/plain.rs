//! The plain search: no canonical folding, no pruning, no ordering.
//!
//! [`Plain`] wraps any game so the generic search can run on it with the
//! exact state as its key and the legal moves in the engine's order. It is
//! the reference the games' own solvers are checked against (a pruning rule
//! must not change a verdict the plain search settles), and what a game uses
//! before it has a solver of its own.

use std::hash::BuildHasher;

use rustc_hash::FxBuildHasher;

use crate::game::GameKind;
use crate::rules::{Board, MoveError, NotationError, Outcome, Rules, View};
use crate::solver::SolverGame;

/// A game searched as it is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Plain<R>(pub R);

impl<R: Rules> Rules for Plain<R> {
    type Move = R::Move;

    fn kind(&self) -> GameKind {
        self.0.kind()
    }

    fn legal_moves(&self, moves: &mut Vec<R::Move>) {
        self.0.legal_moves(moves);
    }

    fn apply(&mut self, mv: R::Move) -> Result<Outcome, MoveError> {
        self.0.apply(mv)
    }

    fn undo(&mut self, mv: R::Move, outcome: &Outcome) {
        self.0.undo(mv, outcome);
    }

    fn is_won(&self) -> bool {
        self.0.is_won()
    }

    fn is_stuck(&self) -> bool {
        self.0.is_stuck()
    }

    fn board(&self) -> Board {
        self.0.board()
    }

    fn view(&self) -> View {
        self.0.view()
    }

    fn parse_move(&self, text: &str) -> Result<R::Move, NotationError> {
        self.0.parse_move(text)
    }

    fn format_move(&self, mv: R::Move) -> String {
        self.0.format_move(mv)
    }
}

impl<R: Rules> SolverGame for Plain<R> {
    fn canonical_key(&self) -> u64 {
        // FxHash is fine here: the state comes from our own deals, not from
        // anyone who could pick collisions.
        FxBuildHasher.hash_one(&self.0)
    }

    fn search_moves(&self, moves: &mut Vec<R::Move>) {
        self.0.legal_moves(moves);
    }
}
