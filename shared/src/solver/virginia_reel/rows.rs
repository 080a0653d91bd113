//! What the rows hold, counted: each position's home pile top, how many
//! home piles each card tops and where, how many copies of each card are
//! home, and each row's misplaced positions.
//!
//! Kept up to date move by move (`key.rs` recounts the positions a move
//! touches) and read by move generation, the freezes and both checks that
//! prove a position lost, so that none of them walks the rows.

use crate::card::Card;
use crate::games::virginia_reel::{COLUMNS, POSITIONS, ROWS};

use super::base_rank;

/// `top` of a position that holds no home pile.
const NOT_HOME: u8 = u8::MAX;

/// What the rows hold, kept up to date move by move for move generation.
#[derive(Clone, Debug)]
pub(super) struct Rows {
    /// Each position's home pile top (a card index), or [`NOT_HOME`].
    pub(super) top: [u8; POSITIONS],
    /// How many home piles have this card on top.
    pub(super) tops: [u8; 52],
    /// The positions whose home pile has this card on top.
    pub(super) top_at: [u32; 52],
    /// How many copies of this card lie on home piles.
    pub(super) copies: [u8; 52],
    /// Misplaced positions of each row, as bit sets.
    pub(super) misplaced: [u32; ROWS],
}

impl Rows {
    pub(super) fn new() -> Rows {
        Rows {
            top: [NOT_HOME; POSITIONS],
            tops: [0; 52],
            top_at: [0; 52],
            copies: [0; 52],
            misplaced: [0; ROWS],
        }
    }

    /// Takes position `position` out of the counts.
    pub(super) fn forget(&mut self, position: usize) {
        let row = position / COLUMNS;
        self.misplaced[row] &= !(1 << position);
        let top = self.top[position];
        if top == NOT_HOME {
            return;
        }
        let top = usize::from(top);
        self.tops[top] -= 1;
        self.top_at[top] &= !(1 << position);
        // A home pile is its base and every third card of the suit up to its top.
        let mut card = top;
        loop {
            self.copies[card] -= 1;
            if card % 13 + 1 == usize::from(base_rank(row)) {
                break;
            }
            card -= 3;
        }
        self.top[position] = NOT_HOME;
    }

    /// Counts position `position`, which holds `cards`.
    pub(super) fn learn(&mut self, position: usize, cards: &[Card]) {
        let row = position / COLUMNS;
        match (cards.first(), cards.last()) {
            (Some(bottom), Some(top)) if bottom.rank() == base_rank(row) => {
                for card in cards {
                    self.copies[card.index()] += 1;
                }
                self.tops[top.index()] += 1;
                self.top_at[top.index()] |= 1 << position;
                self.top[position] = top.index() as u8;
            }
            (Some(_), _) => self.misplaced[row] |= 1 << position,
            _ => {}
        }
    }

    /// A home pile with `card` on top, if any.
    pub(super) fn pile_topped_by(&self, card: Card) -> Option<u8> {
        let at = self.top_at[card.index()];
        (at != 0).then(|| at.trailing_zeros() as u8)
    }
}
