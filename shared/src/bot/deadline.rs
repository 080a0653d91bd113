//! How a bot learns that its time to think is up, without reading a clock.
//!
//! [`Bot::next_move_within`](super::Bot::next_move_within) is handed a
//! [`Deadline`] and asks it, between its searches and every few thousand
//! positions inside them (the solver's `should_stop`), whether its time is
//! up. Whoever runs the bot implements it on its own clock (the terminal
//! client and the server on the wall clock); tests hand it a fake that
//! strikes after a set number of questions, so they stay deterministic.

/// Whether the time to think about the current move is up.
///
/// `Sync` because the solver asks it from inside a search
/// (`Budget::should_stop`).
pub trait Deadline: Sync {
    /// `true` once the bot must play the best it has.
    fn passed(&self) -> bool;
}

/// No limit: the bot thinks as long as its level's budgets allow.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoDeadline;

impl Deadline for NoDeadline {
    fn passed(&self) -> bool {
        false
    }
}
