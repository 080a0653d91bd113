//! The position key: a 64-bit hash of a position up to the symmetries the
//! rules cannot see, kept up to date as moves are made and unmade.
//!
//! Apart from the search because it is the one place that decides which
//! positions count as the same: the transposition table, the lost table and
//! the tests of the key's symmetries all read it.
//!
//! # Which symmetries are real
//!
//! - *Columns.* No rule looks at a position's column (column 1 is home from
//!   the deal, and home piles never move), so each row is a multiset of
//!   positions. A position is one of 104 things per row: a home pile, named by
//!   its top card (its suit and height follow), or a misplaced card. The key
//!   adds up one Zobrist value per position, so that order within a row does
//!   not count and two equal positions still count twice.
//! - *Reserve piles.* A pile is its cards *together with the cards the
//!   remaining deals will put on it*; two piles are interchangeable only when
//!   both agree. Each pile is hashed as its contents mixed with the hash of
//!   its future cards, and the mixed values are added up. While stock
//!   remains, two piles almost never share a future, so this is nearly the
//!   plain pile order; once the stock is gone every future is empty and the
//!   piles become a true multiset.
//! - *Two copies of a card* are the same [`Card`] value already.
//! - The discard is left out: which Aces left follows from the rest, and their
//!   order changes nothing.
//! - What is frozen (`freezing.rs`) is part of the position the search explores, so
//!   it is part of the key too. A freeze names its reserve by the reserve's
//!   share of the key, not by its index, so that it moves with the reserve:
//!   by index, two positions with the stock out, reserves swapped and
//!   different cards frozen would share a key, and the search, which skips
//!   a key it has seen, could skip a win.
//!
//! [`ReelSearch`] keeps each position's and each pile's share of the key and,
//! after a move, recomputes only the shares of what the move touched (a deal
//! touches all eight piles and every future).

use crate::card::Card;
use crate::games::virginia_reel::{COLUMNS, RESERVES, ROWS, ReelMove, ReleaseTarget};
use crate::solver::zobrist::{mix64, table};

use super::{MAX_DEALS_LEFT, ReelSearch, base_rank};

/// Things one row position can be, for the key: a home pile by its top card
/// (`0..52`) or a misplaced card (`52..104`).
const POSITION_KINDS: usize = 104;
/// The deepest a reserve pile can be, with margin (ten deals of one card).
pub(super) const PILE_DEPTH: usize = 16;

/// Zobrist values by `row * 104 + kind` for row positions.
static POSITION_Z: [u64; ROWS * POSITION_KINDS] = table(0x5e11);
/// Zobrist values by `depth * 52 + card` for reserve contents.
static PILE_Z: [u64; PILE_DEPTH * 52] = table(0x5e12);
/// Zobrist values by `deal * 52 + card` for the cards a pile will be dealt.
static FUTURE_Z: [u64; MAX_DEALS_LEFT * 52] = table(0x5e13);
/// Zobrist values by the number of deals left.
static DEALS_Z: [u64; MAX_DEALS_LEFT + 1] = table(0x5e14);

/// For each pile and number of deals left (`[pile][deals_left]`), the hash
/// of the cards the remaining deals put on that pile.
#[derive(Clone, Debug)]
pub(super) struct Futures([[u64; MAX_DEALS_LEFT + 1]; RESERVES]);

impl Futures {
    /// The futures of every pile for each number of deals left, from
    /// `stock` as it is now.
    pub(super) fn of(stock: &[Card]) -> Futures {
        let mut futures = [[0u64; MAX_DEALS_LEFT + 1]; RESERVES];
        let deals_now = stock.len() / RESERVES;
        for deals_left in 0..=deals_now.min(MAX_DEALS_LEFT) {
            // With `deals_left` deals to come, the stock is its bottom
            // `8 * deals_left` cards; deal `j` gives pile `i` the card at
            // `8 * deals_left - 1 - (8 * j + i)`.
            for (pile, future) in futures.iter_mut().enumerate() {
                let mut hash = 0u64;
                for deal in 0..deals_left {
                    let card = stock[RESERVES * deals_left - 1 - (RESERVES * deal + pile)];
                    hash ^= FUTURE_Z[deal * 52 + card.index()];
                }
                future[deals_left] = hash;
            }
        }
        Futures(futures)
    }

    /// The hash of what the `deals_left` deals to come put on `pile`.
    fn of_pile(&self, pile: usize, deals_left: usize) -> u64 {
        self.0[pile][deals_left]
    }
}

impl ReelSearch {
    /// The key computed from scratch out of the shares.
    pub(super) fn fresh_key(&self) -> u64 {
        let positions = self
            .position_shares
            .iter()
            .fold(0u64, |sum, &share| sum.wrapping_add(share));
        let piles = self
            .pile_shares
            .iter()
            .fold(0u64, |sum, &share| sum.wrapping_add(share));
        positions
            .wrapping_add(piles)
            .wrapping_add(DEALS_Z[self.deals_left()])
            .wrapping_add(self.frozen_share)
    }

    pub(super) fn position_share(&self, position: usize) -> u64 {
        let row = position / COLUMNS;
        let cards = self.state.position(position);
        let kind = match (cards.first(), cards.last()) {
            (Some(bottom), Some(top)) if bottom.rank() == base_rank(row) => top.index(),
            (_, Some(card)) => 52 + card.index(),
            // Positions are never empty; a share of zero keeps this total.
            _ => return 0,
        };
        POSITION_Z[row * POSITION_KINDS + kind]
    }

    pub(super) fn pile_share(&self, pile: usize) -> u64 {
        let contents = self
            .state
            .reserve(pile)
            .iter()
            .enumerate()
            .fold(0u64, |hash, (depth, card)| {
                hash ^ PILE_Z[(depth % PILE_DEPTH) * 52 + card.index()]
            });
        mix64(contents ^ self.futures.of_pile(pile, self.deals_left()))
    }

    pub(super) fn reposition(&mut self, position: u8) {
        let position = usize::from(position);
        let share = self.position_share(position);
        self.key = self
            .key
            .wrapping_sub(self.position_shares[position])
            .wrapping_add(share);
        self.position_shares[position] = share;
        self.rows.forget(position);
        self.rows.learn(position, self.state.position(position));
    }

    pub(super) fn repile(&mut self, pile: u8) {
        let pile = usize::from(pile);
        let share = self.pile_share(pile);
        self.key = self
            .key
            .wrapping_sub(self.pile_shares[pile])
            .wrapping_add(share);
        self.pile_shares[pile] = share;
    }

    /// Recomputes what `mv` changed (played or taken back): shares, key and
    /// the rows' counts.
    pub(super) fn update_after(&mut self, mv: ReelMove) {
        match mv {
            ReelMove::Build { reserve, to } => {
                self.reposition(to);
                self.repile(reserve);
            }
            ReelMove::Release { from, to, chain } => {
                self.reposition(from);
                if let ReleaseTarget::Home(to) = to {
                    self.reposition(to);
                }
                for &filler in chain.fillers() {
                    self.reposition(filler);
                }
                self.repile(chain.reserve());
            }
            ReelMove::Swap { first, second } => {
                self.reposition(first);
                self.reposition(second);
            }
            ReelMove::Deal => {
                // Every pile and every future changes, and so does the deals term.
                for pile in 0..RESERVES {
                    self.pile_shares[pile] = self.pile_share(pile);
                }
                self.key = self.fresh_key();
            }
        }
    }

    /// The key without its term for what is frozen.
    pub(super) fn unfrozen_key(&self) -> u64 {
        self.key.wrapping_sub(self.frozen_share)
    }
}
