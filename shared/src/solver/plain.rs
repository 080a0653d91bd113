//! The plain search: no canonical folding, no pruning, no ordering.
//!
//! [`Plain`] wraps any game so the generic search can run on it with the
//! exact state as its key and the legal moves in the engine's order. It is
//! the reference the games' own solvers are checked against (a pruning rule
//! must not change a verdict the plain search settles), and what a game uses
//! before it has a solver of its own.

use std::hash::BuildHasher;

use rustc_hash::FxBuildHasher;

use crate::rules::{MoveError, Outcome, Rules};
use crate::solver::SolverGame;

/// A game searched as it is.
#[derive(Clone, Debug)]
pub struct Plain<R>(pub R);

impl<R: Rules> SolverGame for Plain<R> {
    type Game = R;

    fn state(&self) -> &R {
        &self.0
    }

    fn apply(&mut self, mv: R::Move) -> Result<Outcome, MoveError> {
        self.0.apply(mv)
    }

    fn undo(&mut self, mv: R::Move, outcome: &Outcome) {
        self.0.undo(mv, outcome);
    }

    fn canonical_key(&self) -> u64 {
        // FxHash is fine here: the state comes from our own deals, not from
        // anyone who could pick collisions.
        FxBuildHasher.hash_one(&self.0)
    }

    fn search_moves(&self, moves: &mut Vec<R::Move>) {
        self.0.legal_moves(moves);
    }
}
