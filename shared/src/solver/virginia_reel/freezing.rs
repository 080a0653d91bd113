//! What is frozen: the builds, releases and swaps a position passed over
//! for a later sibling, which the lines below that sibling may not play.
//!
//! Apart because freezes are part of the position the search explores:
//! they change its key (each freeze names its reserve by the reserve's
//! share of the key), the moves generated, the relaxation's frozen builds
//! and the lost table's entries.
//!
//! # Why a move passed over may be frozen
//!
//! The search splits the winning lines of a position between its children.
//! For a build of X from a reserve onto a parent, or a release (a card M with
//! given fillers and a given reserve card), or a swap of two given cards:
//! either some winning line plays that exact move while nothing can have
//! competed for its target (before the other copy of the card it sends home
//! goes home; at any time if that copy is home already, for an Ace or for a
//! swap), and then, as with the safe moves, the move can be moved to the
//! front, so the child that plays it now covers that line; or no winning line
//! does, and the move may be frozen. The children are tried in the order
//! of `moves.rs`, and each child freezes every build, release and swap
//! tried before it; the deal's child freezes all of them. A frozen build stays frozen until the other copy of
//! its card is home; a frozen release until the other copy of its card is
//! home (never, for an Ace); a frozen swap for good. Releases are frozen by
//! card classes (row and card, not column), so one freeze covers every copy
//! it stands for. Freezing fewer moves is always sound: releases through
//! more than three fillers, and freezes past 48 at once, are not recorded.
//! Moving a move to the front relies on no other card ever competing for
//! its target before the other copy is home, which is why the freeze lifts
//! then.
//!
//! This is what stops the search from playing the same build at every
//! moment between two deals, and from replaying, after a deal, everything it
//! declined before it.
//!
//! Plausible rules that are wrong, and are not used:
//! - *Swaps are safe.* A swap makes two base cards home with no reserve card,
//!   but one of them may be the only filler that can release a card now: a
//!   misplaced 6♥ in row B whose 9♥ covers the only 3 left on the reserve can
//!   leave only through a chain that uses a misplaced 3 from row A. Swapping
//!   that 3 home first buries the game.
//! - *A release with a free target is safe.* Releases compete for fillers:
//!   the base card it takes may be the one another misplaced card in the row
//!   needs before the next one turns up.
//! - *A build onto a parent is safe.* Not while the other copy of the card may
//!   need that parent first and the other parent is still buried.
//! - *Dead when a row's fillers outnumber its freed gaps*, counted greedily:
//!   which filler takes a gap is a choice, and the greedy count declares
//!   winnable deals lost (tried, and rejected for that reason).

use arrayvec::ArrayVec;

use crate::card::{ACE, Card};
use crate::games::virginia_reel::{COLUMNS, RESERVES, ReelMove};
use crate::solver::zobrist::{mix64, table};

use super::ReelSearch;
use super::key::PILE_DEPTH;

/// `pile` of a frozen swap, which takes no reserve card.
const NO_PILE: u8 = u8::MAX;
/// The longest chain whose refusal is remembered; longer ones are rare and
/// stay unfrozen (freezing less is always sound).
pub(super) const FROZEN_CHAIN: usize = 3;
/// The most moves frozen at once; past it, further ones are not frozen.
const MAX_FROZEN_MOVES: usize = 48;

/// Zobrist values by depth for frozen reserve cards (the reserve is named by
/// its share of the key, [`ReelSearch::frozen_token_of_build`]).
static FROZEN_Z: [u64; PILE_DEPTH] = table(0x5e15);

/// A misplaced card's class: its row and the card. Positions of one class
/// are interchangeable (the key ignores columns).
pub(super) fn class_of(row: usize, card: Card) -> u8 {
    (row * 52 + card.index()) as u8
}

/// A release or swap passed over, by card classes so that it covers every
/// copy it stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FrozenMove {
    /// The released card's class, or a swap's lower card's class.
    pub(super) class: u8,
    /// The fillers' classes in chain order, or a swap partner's class.
    pub(super) partners: [u8; FROZEN_CHAIN],
    pub(super) n_partners: u8,
    /// The reserve that ends the chain, or [`NO_PILE`] for a swap.
    pub(super) pile: u8,
    /// The depth of that reserve's top card when the move was passed over.
    pub(super) depth: u8,
    /// Whether the freeze ends when the other copy of the card goes home.
    pub(super) lifts: bool,
}

impl FrozenMove {
    fn share(&self) -> u64 {
        let mut bytes = [0u8; 8];
        bytes[0] = self.class;
        bytes[1..4].copy_from_slice(&self.partners);
        bytes[4] = self.n_partners;
        bytes[5] = self.pile;
        bytes[6] = self.depth;
        mix64(u64::from_le_bytes(bytes) ^ 0x5e17_0000_0000_0000)
    }
}

/// Every freeze in force.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Frozen {
    /// Reserve cards that may not be built: bit `depth` of `builds[pile]`.
    pub(super) builds: [u16; RESERVES],
    /// Releases and swaps that may not be played.
    pub(super) moves: ArrayVec<FrozenMove, MAX_FROZEN_MOVES>,
}

impl ReelSearch {
    /// The key's term for what is frozen: the sum of its tokens
    /// ([`ReelSearch::frozen_token_of_build`], [`ReelSearch::frozen_token_of_move`]).
    ///
    /// Each freeze names its reserve by the reserve's share of the key, not
    /// by its index. With the stock out the key treats reserves as a
    /// multiset, so two positions whose reserves are swapped share the rest
    /// of the key; freezes hashed by index would then give the same key to
    /// "r1 = 8h, r2 = Th, the 8h frozen" and "r1 = Th, r2 = 8h, the Th
    /// frozen", which differ: a win may need the one build frozen in the
    /// other. The search skips a position whose key it has seen, so such a
    /// collision could skip a winnable position and prove a deal lost
    /// falsely. Named by share, a freeze moves with its reserve, and two
    /// reserves with the same share are interchangeable freezes and all.
    /// The tokens are added, not xored: two equal freezes count twice.
    pub(super) fn frozen_term(&self) -> u64 {
        let mut term = 0u64;
        for (pile, &bits) in self.frozen.builds.iter().enumerate() {
            let mut rest = bits;
            while rest != 0 {
                let depth = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                term = term.wrapping_add(self.frozen_token_of_build(pile, depth));
            }
        }
        self.frozen.moves.iter().fold(term, |sum, frozen| {
            sum.wrapping_add(self.frozen_token_of_move(frozen))
        })
    }

    /// A frozen build's token: its depth in a reserve named by its share.
    pub(super) fn frozen_token_of_build(&self, pile: usize, depth: usize) -> u64 {
        mix64(self.pile_shares[pile] ^ FROZEN_Z[depth])
    }

    /// A frozen release's or swap's token: its signature with the reserve
    /// named by its share rather than its index.
    pub(super) fn frozen_token_of_move(&self, frozen: &FrozenMove) -> u64 {
        let pile = if frozen.pile == NO_PILE {
            0
        } else {
            self.pile_shares[usize::from(frozen.pile)]
        };
        let unnamed = FrozenMove { pile: 0, ..*frozen };
        mix64(unnamed.share() ^ pile)
    }

    /// Whether some misplaced position holds a card of class `class`.
    pub(super) fn class_present(&self, class: u8) -> bool {
        let row = usize::from(class) / 52;
        let card = usize::from(class) % 52;
        let mut rest = self.rows.misplaced[row];
        while rest != 0 {
            let position = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if self.card_at(position).index() == card {
                return true;
            }
        }
        false
    }

    /// Sets what is frozen, dropping what can no longer matter (the other
    /// copy of a card is home, or a card or filler is gone), and updates
    /// the key.
    pub(super) fn set_frozen(&mut self, mut frozen: Frozen) {
        for (pile, bits) in frozen.builds.iter_mut().enumerate() {
            let cards = self.state.reserve(pile);
            let mut rest = *bits;
            while rest != 0 {
                let depth = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                let keep = cards
                    .get(depth)
                    .is_some_and(|card| self.rows.copies[card.index()] == 0);
                if !keep {
                    *bits &= !(1 << depth);
                }
            }
        }
        frozen.moves.retain(|frozen| {
            let card = usize::from(frozen.class) % 52;
            self.class_present(frozen.class)
                && frozen.partners[..usize::from(frozen.n_partners)]
                    .iter()
                    .all(|&partner| self.class_present(partner))
                && (frozen.pile == NO_PILE
                    || self.state.reserve(usize::from(frozen.pile)).len()
                        > usize::from(frozen.depth))
                && !(frozen.lifts && self.rows.copies[card] > 0)
        });
        self.frozen = frozen;
        // Freezes name their reserves by share, so the term changes with the
        // piles the move touched even when the freezes do not.
        let term = self.frozen_term();
        self.key = self.key.wrapping_sub(self.frozen_share).wrapping_add(term);
        self.frozen_share = term;
    }

    /// What is frozen as a sorted multiset of tokens that do not depend on
    /// which reserve is which: a frozen build or release names its reserve
    /// by the reserve's share of the key (its contents and future), as the
    /// key does, rather than by its index. Two positions with the same key
    /// without freezes and the same tokens have the same freezes up to the
    /// key's symmetries.
    pub(super) fn frozen_tokens(&self, with_moves: bool, tokens: &mut Vec<u64>) {
        tokens.clear();
        for (pile, &bits) in self.frozen.builds.iter().enumerate() {
            let mut rest = bits;
            while rest != 0 {
                let depth = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                tokens.push(self.frozen_token_of_build(pile, depth));
            }
        }
        if with_moves {
            for frozen in &self.frozen.moves {
                tokens.push(self.frozen_token_of_move(frozen));
            }
        }
        tokens.sort_unstable();
    }

    /// Whether the top card of `pile` is frozen.
    pub(super) fn top_frozen(&self, pile: usize) -> bool {
        let len = self.state.reserve(pile).len();
        len > 0 && self.frozen.builds[pile] & (1 << (len - 1)) != 0
    }

    /// What freezing `mv` records, if it is a release or swap that can be
    /// frozen.
    pub(super) fn signature(&self, mv: ReelMove) -> Option<FrozenMove> {
        match mv {
            ReelMove::Release { from, chain, .. } => {
                let from = usize::from(from);
                let card = self.card_at(from);
                let fillers = chain.fillers();
                if fillers.len() > FROZEN_CHAIN {
                    return None;
                }
                let mut partners = [0u8; FROZEN_CHAIN];
                for (partner, &filler) in partners.iter_mut().zip(fillers) {
                    let filler = usize::from(filler);
                    *partner = class_of(filler / COLUMNS, self.card_at(filler));
                }
                let pile = chain.reserve();
                Some(FrozenMove {
                    class: class_of(from / COLUMNS, card),
                    partners,
                    n_partners: fillers.len() as u8,
                    pile,
                    depth: (self.state.reserve(usize::from(pile)).len().max(1) - 1) as u8,
                    lifts: card.rank() != ACE && self.rows.copies[card.index()] == 0,
                })
            }
            ReelMove::Swap { first, second } => {
                let (first, second) = (usize::from(first), usize::from(second));
                Some(FrozenMove {
                    class: class_of(first / COLUMNS, self.card_at(first)),
                    partners: [class_of(second / COLUMNS, self.card_at(second)), 0, 0],
                    n_partners: 1,
                    pile: NO_PILE,
                    depth: 0,
                    lifts: false,
                })
            }
            ReelMove::Build { .. } | ReelMove::Deal => None,
        }
    }

    /// Whether `mv` is frozen.
    pub(super) fn is_frozen(&self, mv: ReelMove) -> bool {
        self.signature(mv)
            .is_some_and(|signature| self.frozen.moves.contains(&signature))
    }

    /// What is frozen after `mv` is played from here: every move the search
    /// tries before `mv` (module docs). A safe build is the only move tried,
    /// so it freezes nothing.
    pub(super) fn frozen_after(&self, mv: ReelMove, siblings: &mut Vec<ReelMove>) -> Frozen {
        let mut frozen = self.frozen.clone();
        if !self.pruning.freeze_passed_moves || self.moves_in_order(siblings) {
            return frozen;
        }
        for &sibling in siblings.iter() {
            if sibling == mv {
                break;
            }
            match sibling {
                ReelMove::Build { reserve, .. } => {
                    let pile = usize::from(reserve);
                    let depth = self.state.reserve(pile).len() - 1;
                    frozen.builds[pile] |= 1 << depth;
                }
                _ => {
                    if let Some(signature) = self.signature(sibling) {
                        let _ = frozen.moves.try_push(signature);
                    }
                }
            }
        }
        frozen
    }
}
