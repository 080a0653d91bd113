//! The moves the search tries, and their order.
//!
//! Apart from the rules engine's `legal_moves` because the search generates
//! each move once up to the key's symmetries, in an order that finds wins
//! sooner, and plays a safe move alone when there is one.
//!
//! # Moves generated
//!
//! The search generates its own moves rather than calling `legal_moves`,
//! whose chains of fillers multiply. A move whose result is the same
//! position up to the key's symmetries as another's is generated once: among
//! identical misplaced cards in one row only the first is released, swapped
//! or used as a filler, and of two home piles with the same top card only the
//! first is a target (a home pile is determined by its top card). Reserves
//! are never merged, since the cards under two equal tops differ. Every move
//! generated is legal; a test checks each against the rules engine's list.
//!
//! Order: first the moves that uncover, on the reserve they take from, a
//! card that can go home at once or an Ace, then those that uncover a base
//! card, then the rest; within each, builds by reserve, releases (chains
//! through misplaced fillers first, longest first, then straight from a
//! reserve), swaps; the deal last. Playing out what the board offers before
//! dealing is usually right. (Sorting by what a move uncovers took seeds
//! 1..=140 from 89 to 91 wins at a million positions; the figures in the
//! search driver's docs, `mod.rs`, were measured before it.)
//!
//! # Safe moves
//!
//! A safe move is played alone: the search tries nothing else there. Each
//! argument takes a winning line and moves the safe move to the front.
//!
//! *A build onto the last free parent.* A reserve card X (rank 5 or more)
//! whose parent P (same suit, three ranks lower) tops a home pile H, when
//! both copies of P are already home. A reserve card leaves only by a build,
//! and only a copy of X can ever go onto P; both copies of P are home, so
//! each is either under the other copy of X already, or the top of a home
//! pile identical to H. A winning line plays X onto some P-topped pile at a
//! time t, and by relabelling identical piles, onto H. Playing X first and
//! then the line without that move is legal: until t nothing but X lands on
//! H; the cards the line deals onto X's pile now lie on the card that was
//! under X, but the line takes them off before t anyway (X must be on top at
//! t) and never reads the pile deeper before t; X is no filler, so no chain
//! needed it. At t both lines reach the same position.
//!
//! *A build whose other copy lies under it.* The same, when the other copy
//! of X lies below X in X's own reserve pile: it cannot reach a parent before
//! X has left, so X is the first copy home in every line, and nothing else
//! can take H before it.
//!
//! *The release of a row's last misplaced card.* A row with one misplaced
//! card M left has exactly one of its base cards not yet home. If that card
//! B tops a reserve, and M is an Ace or both copies of M's parent are home (no
//! other card can want M's target), then M leaves with B straight from that
//! reserve at some time in every winning line (B can fill no other gap, and
//! no chain can end elsewhere: it would need a second base card of the row).
//! Moving that release to the front is legal for the reasons above, and the
//! row's new home pile only adds targets in between.

use std::hash::{Hash, Hasher};

use crate::card::ACE;
use crate::games::virginia_reel::{
    FillChain, MAX_FILLERS, RESERVES, ROWS, ReelMove, ReleaseTarget,
};
use crate::solver::zobrist::mix64;

use super::{ReelSearch, base_rank, home_row, parent};

impl ReelSearch {
    /// The positions of `set` (a misplaced set within one row) that hold a
    /// card not held by a lower position of the set: one per distinct card.
    pub(super) fn distinct_cards(&self, set: u32) -> u32 {
        let mut seen = 0u64;
        let mut kept = 0u32;
        let mut rest = set;
        while rest != 0 {
            let position = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let bit = 1u64 << self.card_at(position).index();
            if seen & bit == 0 {
                seen |= bit;
                kept |= 1 << position;
            }
        }
        kept
    }

    /// Where the misplaced card at `from` can go: onto a home pile, or the
    /// discard for an Ace; `None` if nowhere yet.
    pub(super) fn release_target(&self, from: usize) -> Option<ReleaseTarget> {
        let card = self.card_at(from);
        if card.rank() == ACE {
            return Some(ReleaseTarget::Discard);
        }
        parent(card)
            .and_then(|parent| self.rows.pile_topped_by(parent))
            .map(ReleaseTarget::Home)
    }

    /// Visits every chain filling a gap in `gap_row` once per distinct
    /// outcome: each reserve whose top is the row's base rank, then each
    /// distinct misplaced base card of that rank in another row (the first
    /// position not yet in the chain stands for its copies).
    pub(super) fn visit_chains(
        &self,
        gap_row: usize,
        used: u32,
        fillers: &mut Vec<u8>,
        visit: &mut impl FnMut(&[u8], u8),
    ) {
        for pile in 0..RESERVES {
            if self
                .state
                .reserve(pile)
                .last()
                .is_some_and(|card| card.rank() == base_rank(gap_row))
            {
                visit(fillers, pile as u8);
            }
        }
        if fillers.len() == MAX_FILLERS {
            return;
        }
        for row in (0..ROWS).filter(|&row| row != gap_row) {
            let mut seen = 0u64;
            let mut rest = self.rows.misplaced[row] & !used;
            while rest != 0 {
                let position = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                let card = self.card_at(position);
                if card.rank() != base_rank(gap_row) || seen & (1u64 << card.index()) != 0 {
                    continue;
                }
                seen |= 1u64 << card.index();
                fillers.push(position as u8);
                self.visit_chains(row, used | 1 << position, fillers, visit);
                fillers.pop();
            }
        }
    }

    /// Pushes every release not frozen, in the search's order: chains
    /// through fillers first (longest first), then straight from a reserve.
    pub(super) fn releases(&self, moves: &mut Vec<ReelMove>) {
        let first = moves.len();
        let mut fillers = Vec::with_capacity(8);
        for row in 0..ROWS {
            let mut rest = self.distinct_cards(self.rows.misplaced[row]);
            while rest != 0 {
                let from = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                let Some(to) = self.release_target(from) else {
                    continue;
                };
                self.visit_chains(row, 1 << from, &mut fillers, &mut |chain, pile| {
                    if let Some(chain) = FillChain::new(chain, pile) {
                        let mv = ReelMove::Release {
                            from: from as u8,
                            to,
                            chain,
                        };
                        if !self.is_frozen(mv) {
                            moves.push(mv);
                        }
                    }
                });
            }
        }
        // Stable: within a length, the generation order stays.
        moves[first..].sort_by_key(|mv| match mv {
            ReelMove::Release { chain, .. } => std::cmp::Reverse(chain.fillers().len()),
            _ => std::cmp::Reverse(0),
        });
    }

    /// Pushes every swap not frozen: a card class per row stands for its copies.
    pub(super) fn swaps(&self, moves: &mut Vec<ReelMove>) {
        for row in 0..ROWS {
            let mut rest = self.distinct_cards(self.rows.misplaced[row]);
            while rest != 0 {
                let first = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                let Some(belongs) = home_row(self.card_at(first)) else {
                    continue;
                };
                if belongs <= row {
                    continue; // each pair of rows once, from its lower row
                }
                let mut partners = self.distinct_cards(self.rows.misplaced[belongs]);
                while partners != 0 {
                    let second = partners.trailing_zeros() as usize;
                    partners &= partners - 1;
                    if self.card_at(second).rank() == base_rank(row) {
                        let mv = ReelMove::Swap {
                            first: first as u8,
                            second: second as u8,
                        };
                        if !self.is_frozen(mv) {
                            moves.push(mv);
                        }
                    }
                }
            }
        }
    }

    /// The release of a row's last misplaced card, when nothing competes for
    /// its target and the one filler left for the row shows on a reserve
    /// (module docs).
    pub(super) fn safe_release(&self) -> Option<ReelMove> {
        for row in 0..ROWS {
            let misplaced = self.rows.misplaced[row];
            if misplaced.count_ones() != 1 {
                continue;
            }
            let from = misplaced.trailing_zeros() as usize;
            let card = self.card_at(from);
            let uncontested = card.rank() == ACE
                || parent(card).is_some_and(|parent| self.rows.copies[parent.index()] == 2);
            if !uncontested {
                continue;
            }
            let Some(to) = self.release_target(from) else {
                continue;
            };
            let Some(pile) = (0..RESERVES).find(|&pile| {
                self.state
                    .reserve(pile)
                    .last()
                    .is_some_and(|top| top.rank() == base_rank(row))
            }) else {
                continue;
            };
            let mv = ReelMove::Release {
                from: from as u8,
                to,
                chain: FillChain::from_reserve(pile as u8),
            };
            if !self.is_frozen(mv) {
                return Some(mv);
            }
        }
        None
    }

    /// Fills `moves` with the moves worth trying, in the search's order:
    /// builds by reserve, releases, swaps, the deal. Returns `true` when it is
    /// a single safe build instead.
    pub(super) fn moves_in_order(&self, moves: &mut Vec<ReelMove>) -> bool {
        moves.clear();
        let mut safe = None;
        for pile in 0..RESERVES {
            let Some(&card) = self.state.reserve(pile).last() else {
                continue;
            };
            let Some(parent) = parent(card) else { continue };
            let Some(to) = self.rows.pile_topped_by(parent) else {
                continue;
            };
            if self.top_frozen(pile) {
                continue;
            }
            let mv = ReelMove::Build {
                reserve: pile as u8,
                to,
            };
            let cards = self.state.reserve(pile);
            if self.pruning.safe_builds
                && (self.rows.copies[parent.index()] == 2
                    || cards[..cards.len() - 1].contains(&card))
            {
                safe = Some(mv);
                break;
            }
            moves.push(mv);
        }
        if safe.is_none() && self.pruning.safe_releases {
            safe = self.safe_release();
        }
        if let Some(mv) = safe {
            moves.clear();
            moves.push(mv);
            return true;
        }
        self.releases(moves);
        self.swaps(moves);
        if self.round_salt == 0 {
            // Stable: within a score, the order above stays.
            moves.sort_by_key(|&mv| std::cmp::Reverse(self.exposure(mv)));
        }
        if self.round_salt != 0 {
            let salt = self.key ^ self.round_salt;
            moves.sort_by_cached_key(|&mv| {
                let mut hasher = rustc_hash::FxHasher::default();
                mv.hash(&mut hasher);
                mix64(salt ^ hasher.finish())
            });
        }
        if !self.state.stock().is_empty() {
            moves.push(ReelMove::Deal);
        }
        false
    }

    /// How promising the card `mv` uncovers on a reserve is: one that can
    /// go home at once or leaves by itself (an Ace) 3, a base card 2,
    /// anything else (or nothing) 1.
    pub(super) fn exposure(&self, mv: ReelMove) -> u8 {
        let pile = match mv {
            ReelMove::Build { reserve, .. } => reserve,
            ReelMove::Release { chain, .. } => chain.reserve(),
            ReelMove::Swap { .. } | ReelMove::Deal => return 1,
        };
        let cards = self.state.reserve(usize::from(pile));
        let Some(&under) = cards
            .len()
            .checked_sub(2)
            .and_then(|below| cards.get(below))
        else {
            return 1;
        };
        if under.rank() == ACE
            || parent(under).is_some_and(|parent| self.rows.pile_topped_by(parent).is_some())
        {
            3
        } else if home_row(under).is_some() {
            2
        } else {
            1
        }
    }
}
