//! The relaxation: a relaxed game, which can do everything the real game
//! can and more, that cannot bring every card home proves a position lost.
//!
//! One of the two dead-position checks (the other is `precedence.rs`),
//! which are what make proofs of lost deals short. It also tells the
//! precedence counts which cards no line can bring home before a deal.
//!
//! # The relaxed game
//!
//! A relaxed game that can do everything the real game can (and more)
//! cannot bring every card home. It walks the remaining deals in
//! order. Between two deals it repeatedly lets any card "go home" that could
//! possibly go home next:
//! - a card on a reserve top (the relaxed pile is the real pile's cards, in
//!   order, minus those already gone home; each deal puts the real next card
//!   of the stock on top), or a misplaced card;
//! - whose destination could be open: for a card of rank 5 or more, more
//!   copies of its parent have gone home than copies of the card were home at
//!   the start (a parent already covered by the other copy does not count);
//!   for a frozen card, its other copy has gone home and both parents have;
//!   for an Ace, always; for a base card, some misplaced card of its row has
//!   gone home in the relaxation (a filler enters a row only as a misplaced
//!   card leaves it), or, for a misplaced base card, a card of the row it
//!   belongs in could swap with it;
//! - and, for a misplaced card that is not a base card, whose gap could be
//!   filled: a base card of its row has shown on a relaxed reserve top, or
//!   lies misplaced in a row whose own gap could be filled.
//!
//! Every condition is monotone in the set of cards gone home and implied by
//! the real rule, and the relaxed pile is always the real pile minus more
//! cards. By induction over the real moves in order (the cards of one chain
//! or swap taken in chain order), every card the real game brings home before
//! a deal, the relaxation brings home before that deal too; so if the
//! relaxation leaves a card out after the last deal, no real line wins. A card
//! buried under a card that needs it, directly, through another card, or
//! through the stock's later deals, is found at once.

use crate::card::{ACE, Card};
use crate::games::virginia_reel::{COLUMNS, POSITIONS, RESERVES, ROWS};

use super::{MAX_DEALS_LEFT, NO_CARD, ReelSearch, base_rank, home_row, parent};

/// How many copies of each card the relaxation brings home, beyond those
/// home now, before each deal to come (index 0: before the next deal), for
/// the precedence counts (`precedence` module docs, "The relaxation's deals in the
/// counts").
pub(super) type RelaxedBefore = [[u8; 52]; MAX_DEALS_LEFT];

impl ReelSearch {
    /// Whether the relaxed game of the module docs cannot bring every card
    /// home, which proves the position lost.
    #[cfg(test)]
    pub(super) fn is_dead(&self) -> bool {
        self.relax(None)
    }

    /// The relaxation: whether it leaves a card out (the position is
    /// lost), and, into `before`, how many copies of each card it brings
    /// home beyond those home now before each deal to come (`precedence` module docs,
    /// "The relaxation's deals in the counts").
    pub(super) fn relax(&self, mut before: Option<&mut RelaxedBefore>) -> bool {
        /// A reserve pile in the relaxation: room for its cards and ten deals.
        struct Pile {
            cards: [Card; 24],
            len: usize,
            frozen: u32,
        }
        // Copies of each card on home piles, really (fixed) and in the relaxation.
        let mut really_home = [0u8; 52];
        let mut misplaced: [(Card, usize); POSITIONS] = [(NO_CARD, 0); POSITIONS];
        let mut n_misplaced = 0;
        // `bases_in[row][belongs]`: misplaced base cards of row `belongs` lying in `row`.
        let mut bases_in = [[0u8; ROWS]; ROWS];
        for position in 0..POSITIONS {
            let row = position / COLUMNS;
            let cards = self.state.position(position);
            match cards.first() {
                Some(bottom) if bottom.rank() == base_rank(row) => {
                    for card in cards {
                        really_home[card.index()] += 1;
                    }
                }
                Some(&card) => {
                    misplaced[n_misplaced] = (card, row);
                    n_misplaced += 1;
                    if let Some(belongs) = home_row(card) {
                        bases_in[row][belongs] += 1;
                    }
                }
                None => {}
            }
        }
        let mut home = really_home;
        let mut piles: [Pile; RESERVES] = std::array::from_fn(|pile| {
            let contents = self.state.reserve(pile);
            let mut cards = [NO_CARD; 24];
            cards[..contents.len()].copy_from_slice(contents);
            Pile {
                cards,
                len: contents.len(),
                frozen: u32::from(self.frozen.builds[pile]),
            }
        });
        // Rows where some misplaced card has gone home, opening a gap.
        let mut open = [false; ROWS];
        // Rows whose base rank has shown on a relaxed reserve top.
        let mut exposed = [false; ROWS];
        let parent_free = |card: Card, home: &[u8; 52]| {
            parent(card).is_some_and(|parent| home[parent.index()] > really_home[card.index()])
        };
        let stock = self.state.stock();
        let deals_left = stock.len() / RESERVES;
        for deal in 0..=deals_left {
            if deal > 0 {
                let next = deal - 1;
                for (index, pile) in piles.iter_mut().enumerate() {
                    let card = stock[RESERVES * deals_left - 1 - (RESERVES * next + index)];
                    if pile.len < pile.cards.len() {
                        pile.cards[pile.len] = card;
                        pile.len += 1;
                    }
                }
            }
            loop {
                let mut changed = false;
                for pile in &piles {
                    if let Some(row) = pile
                        .len
                        .checked_sub(1)
                        .and_then(|top| home_row(pile.cards[top]))
                    {
                        exposed[row] = true;
                    }
                }
                // A gap in a row can be filled from an exposed base card, or
                // through a misplaced base card whose own row can be filled.
                let mut fillable = exposed;
                for _ in 0..ROWS {
                    for row in 0..ROWS {
                        for via in 0..ROWS {
                            if bases_in[via][row] > 0 && fillable[via] {
                                fillable[row] = true;
                            }
                        }
                    }
                }
                let mut index = 0;
                while index < n_misplaced {
                    let (card, row) = misplaced[index];
                    let goes = if card.rank() == ACE {
                        fillable[row]
                    } else if let Some(belongs) = home_row(card) {
                        open[belongs] || bases_in[belongs][row] > 0
                    } else {
                        fillable[row] && parent_free(card, &home)
                    };
                    if goes {
                        home[card.index()] += 1;
                        open[row] = true;
                        n_misplaced -= 1;
                        misplaced[index] = misplaced[n_misplaced];
                        changed = true;
                    } else {
                        index += 1;
                    }
                }
                for pile in &mut piles {
                    while let Some(top) = pile.len.checked_sub(1) {
                        let card = pile.cards[top];
                        let goes = card.rank() == ACE
                            || match home_row(card) {
                                Some(row) => open[row],
                                // A frozen card waits for its other copy,
                                // which takes one parent: it needs both.
                                None if pile.frozen & (1 << top) != 0 => {
                                    home[card.index()] > really_home[card.index()]
                                        && parent(card)
                                            .is_some_and(|parent| home[parent.index()] >= 2)
                                }
                                None => parent_free(card, &home),
                            };
                        if !goes {
                            break;
                        }
                        pile.len = top;
                        // The next deal may put a card at this depth: the
                        // freeze was on the card that left, not on the depth.
                        pile.frozen &= !(1 << top);
                        home[card.index()] += 1;
                        changed = true;
                        if let Some(row) = top
                            .checked_sub(1)
                            .and_then(|below| home_row(pile.cards[below]))
                        {
                            exposed[row] = true;
                        }
                    }
                }
                if !changed {
                    break;
                }
            }
            // What the real game can have home before the next deal.
            if deal < deals_left
                && let Some(before) = before.as_deref_mut()
                && let Some(slot) = before.get_mut(deal)
            {
                for (gained, (&now, &really)) in slot.iter_mut().zip(home.iter().zip(&really_home))
                {
                    *gained = now - really;
                }
            }
        }
        n_misplaced > 0 || piles.iter().any(|pile| pile.len > 0)
    }
}
