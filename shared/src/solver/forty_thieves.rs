//! The solver's view of Indian and Midshipman.
//!
//! [`FtSearch`] wraps a [`FortyThieves`] position, keeps the hashes of its
//! key up to date as moves are made and unmade, and tells the generic search
//! of [`crate::solver`] which moves to try, in which order, when a position
//! is lost, and how to restart.
//!
//! A plain depth-first search does badly here. Most moves move one card
//! between two piles and can be taken back, so the tableau can be rearranged
//! in a huge number of ways, and a search that makes an early mistake (turns
//! the one-pass stock too soon, say) then spends any budget rearranging the
//! tableau below that mistake. Three things fix most of it: turning the
//! stock is tried last, the search restarts on a Luby schedule with a
//! differently shuffled move order, and safe foundation moves and dead
//! positions cut the tree; best-first searches on a share of the budget
//! win most of the deals the restarts miss. `docs/WINNABILITY.md` and
//! `docs/BENCHMARKS.md` have the figures.
//!
//! # The key
//!
//! Each pile has its own hash, the xor of a Zobrist value per (depth, card);
//! the key adds up the piles' hashes after a strong mix, so piles that
//! differ only in order are one position. Cards are bytes, so the two copies
//! of a card are the same value and hash alike. On top of that come the
//! waste (a Zobrist xor per (depth, card)) and the stock's length: the stock
//! is always what is left of the deal's stock after the cards turned, so its
//! length says which cards it holds. Two things are left out because they
//! cannot change what happens next:
//!
//! - Which cards lie face down. A face-down card is never a pile's top card
//!   (it turns up as soon as it is), and a card that is not on top cannot
//!   move, face up or not.
//! - The foundations. The cards in play determine them: a suit's two
//!   foundations hold, for each rank, the copies that are not in play, so
//!   which foundation of a suit took which copy never matters.
//!
//! [`FtSearch`] updates the pile and waste hashes on every apply and undo
//! (two xors and two mixes per move), never rehashing a whole pile.
//!
//! # The safe foundation move
//!
//! A card C of rank r that can go home, from the top of a pile or of the
//! waste, while *every* foundation is at rank r - 1 or higher, is sent home
//! at once and alone. Any winning line L from before the move gives one of
//! at most the same length minus one after it, by leaving out the moves of
//! C: no card is ever laid on C in L (its children, the rank r - 1 cards of
//! the other suits, are all home already), so C stays the top card of
//! whatever zone holds it, and a move that L makes from that zone is a move
//! of C; every other source and destination shows the same top card with or
//! without C (or is empty without C where L has C alone in it), and each
//! foundation holds at least as much. The bound on C's own suit matters too:
//! it keeps a foundation at r - 1 free for the other copy of C, which L may
//! send home before this one (from under other waste cards, say).
//!
//! # Dead positions
//!
//! [`SolverGame::is_dead`] computes a superset M of the cards that can ever
//! move again, as a least fixpoint: a card joins M when every card above it
//! in its pile or the waste is in M (stock cards need nothing: the cards
//! above them can be turned) and it has somewhere to go given M:
//!
//! - home, if a foundation of its suit can reach the rank below it: each
//!   rank in between has a copy in M;
//! - a parent (one rank higher, another suit) that is in M, or that lies in
//!   a pile with every card above it in M;
//! - an empty pile, if a pile is empty now, or every card of some pile is in
//!   M and its bottom card could go home or onto a parent as above. (The
//!   first pile ever emptied cannot lose its last card to another empty pile.)
//!
//! Every card that really moves is in M, by induction on the time of its
//! first move: the cards that had to leave first, the foundation cards below
//! it and the parent or the emptied pile it goes to were all moved before.
//! So if a card in play is not in M it never moves, never goes home, and the
//! position is lost. The test `no_position_on_a_winning_line_is_dead` checks
//! that no position along thousands of winning lines is called dead.
//!
//! This proves nothing once a pile is empty or can be emptied: an empty
//! pile takes any card, and a relaxation without time lets it take every
//! card in turn. A stronger proof would have to count empty piles over time
//! (how many cards need a pile of their own at once). The two ideas named
//! were not built, for that reason: a card that every card
//! which could free it lies under, and a waste that cannot be cleared once
//! the stock is out, are cycles the least fixpoint already leaves out of M
//! while no pile can be emptied, and neither holds once one can. No deal of
//! either game has been proved lost (`docs/WINNABILITY.md`). Two things measured there
//! and not kept: a table of positions proved lost shared by the restart
//! rounds (sound: every move but one between piles lowers the stock, the
//! waste or the cards in play, so a position entered by such a move and
//! searched to the end is lost; commit 35aad03) is almost never met again
//! by a later round; and cutting the endings after the stock's last card
//! short (as a fast proof that an ending is lost would) wins none of the
//! deals left unknown, since what is hard is the line before the stock
//! runs out. A proof of a whole deal by exhaustion is out of reach: one
//! round of Indian 943 meets more than twenty million distinct positions
//! after the stock's end alone.
//!
//! # Pruning and ordering
//!
//! Of several piles with the same cards (empty piles above all) moves go
//! only from and to the first: the other moves lead to the same position
//! with piles swapped. A move that takes back the previous one, or moves a
//! card between two equivalent places, leads to a position the table has
//! already seen, and costs one lookup.
//!
//! The order: cards home first; then moves that uncover a card the moved
//! card was not built on (a card from the deal) or empty a pile; waste
//! cards onto piles; other moves between piles; turning the stock last.
//! Every card move commutes with turning the stock, so trying the stock
//! last loses nothing, and keeps the waste's top card in play as long as
//! anything else can be done.
//!
//! # Restarts
//!
//! Most winnable deals are won within a few thousand positions by a search
//! that starts down a good path, and not within millions by one that does
//! not: the time to a win is heavy-tailed. So the search restarts on the
//! Luby schedule (see [`SolverGame::restart_unit`]) in units of 2,048
//! positions, each round with a fresh table; in rounds after the first,
//! ties in the order above are broken by a hash of the position, the move
//! and the round, so each round starts down a different path. On seeds
//! 1..=300 of Midshipman at a million positions this takes the winnable
//! share from 57% to 97%. Restarts cannot change a verdict: a round that
//! runs out of positions to expand has searched every reachable position.
//! Other units (1,024, 4,096, 8,192) and other orders (the stock before a
//! bare shift of a card between two parents, in every round or in every
//! other one) win other deals but not more of them, and limited-discrepancy
//! passes before the restarts win nothing more: `docs/WINNABILITY.md` has
//! the figures.
//!
//! # Best-first phase
//!
//! Beside the restarts runs a best-first phase (`solver::best_first`) on
//! a share of the budget, a share of what the restart rounds spend at a
//! time, when the budget is 50,000 positions or more (see
//! `BEST_FIRST_FROM`): 35% in Indian, 55% in Midshipman. A best-first
//! search expands the open position of highest score, where the score
//! counts (per unit) 40 for each card home, -15 for each face-down card,
//! 10 for each empty pile, 5 for each card lying on its parent, -3 for
//! each card above the next card of a foundation (the shallowest copy, in
//! a pile or the waste; 3 if it is in the stock), -4 for each waste card,
//! and a cost per move from the start, which keeps it from wandering down
//! one line: 1 in Indian. Tuned on 46 hard Midshipman deals at 150,000
//! positions, a cost of 1 won 16 of them, 2 won 22, 3 won 24, 5 won 26, 8
//! won 16 and 12 won 4; but Indian's seeds 1–1,000 lost three wins with 5
//! (996 won against 999 with 1 or 3). The costs win *different* deals, so
//! Midshipman's phase is four searches, with costs 5, 8, 3 and 2, each on
//! a quarter of its share (`best_first_plan`): on Midshipman's seeds
//! 1–1,000 at a million positions one search with a cost of 5 on 35% won
//! 985 deals, the four on 55% win 993 (986 against 970 on seeds
//! 2,001–3,000, which were not used to choose them). The restarts and
//! the phase win different deals too: of the 40 deals of seeds 1–1,000
//! that the restarts alone leave unknown, the search now wins 34, and it
//! loses one that they won (391; their share is smaller).
//! `docs/WINNABILITY.md` has the figures.
//!
//! # Hints
//!
//! A hint is the first move of a winning line, but following hints one at
//! a time need not win here: a move between piles can be taken back, and
//! the line found from the next position may start by taking back the last
//! hint. A caller that gives hints should keep the whole line and ask again
//! only when the player leaves it.
//!
//! # Tests
//!
//! Each shortcut can be turned off ([`FtOptions`]); the tests
//! `*_keep_every_verdict` play each of a thousand deals to a late position
//! (small enough for a search of 3,000 positions to settle most of them)
//! and compare the verdicts with and without it. Winning lines of hundreds
//! of deals are replayed through the plain rules engine.

use crate::card::{Card, KING};
use crate::games::forty_thieves::{
    FOUNDATIONS, FortyThieves, FtMove, MAX_PILE_LEN, MAX_PILES, MAX_STOCK, Variant,
};
use crate::rules::{MoveError, Outcome, Rules};
use crate::solver::SolverGame;
use crate::solver::zobrist::{mix64, table};

/// Zobrist values by `depth * 52 + card index` for pile contents.
static PILE_CARD: [u64; MAX_PILE_LEN * 52] = table(0x4f01);
/// Zobrist values by `depth * 52 + card index` for the waste.
static WASTE_CARD: [u64; MAX_STOCK * 52] = table(0x4f02);
/// Zobrist values by stock length.
static STOCK_LEN: [u64; MAX_STOCK + 1] = table(0x4f03);

/// The unit of the restart schedule, in positions: most deals that a
/// round wins at all, it wins within a few thousand positions.
const RESTART_UNIT: u64 = 2048;

/// The smallest budget, in positions, that the best-first phase takes a
/// share of. Seeds 1–1,000 at 5,000 positions: Indian 543 won without it,
/// 498 with it; Midshipman 312 and 248. At 50,000: Indian 975 and 981,
/// Midshipman 753 and 778 (833 with its four searches on 55%; 5,000 was
/// not run again with them). Most deals the restarts win at all they win in
/// their first rounds, which a small budget cannot spare. (The tests set
/// it lower through [`FtOptions::best_first_from`].)
const BEST_FIRST_FROM: u64 = 50_000;

/// The weights of the best-first score (see the module docs), per unit of
/// each feature: cards home, face-down cards, empty piles, cards on their
/// parent, cards above the next card of each foundation, and waste cards
/// (and the weight per move of [`best_first_plan`]).
const WEIGHT_HOME: i64 = 40;
const WEIGHT_FACE_DOWN: i64 = 15;
const WEIGHT_EMPTY_PILE: i64 = 10;
const WEIGHT_ON_PARENT: i64 = 5;
const WEIGHT_ABOVE_NEXT: i64 = 3;
const WEIGHT_WASTE: i64 = 4;

/// A game's best-first phase (see the module docs).
struct BestFirstPlan {
    /// Its share of the budget, in percent, beside the depth-first
    /// restarts.
    percent: u8,
    /// The weight of each move from the start, one per search of the
    /// phase's portfolio; the first is the one a single search uses.
    depth_weights: &'static [i64],
}

/// Each game's best-first phase: Midshipman's hard deals are won by
/// searches kept closer to the start than Indian's, and searches with
/// different weights win different deals (see the module docs).
fn best_first_plan(variant: Variant) -> BestFirstPlan {
    match variant {
        Variant::Indian => BestFirstPlan {
            percent: 35,
            depth_weights: &[1],
        },
        Variant::Midshipman => BestFirstPlan {
            percent: 55,
            depth_weights: &[5, 8, 3, 2],
        },
    }
}
/// What [`WEIGHT_ABOVE_NEXT`] counts for a foundation whose next card is
/// in neither a pile nor the waste (it is in the stock or on a foundation
/// already): as if three cards lay on it.
const NEXT_IN_STOCK: i64 = 3;

/// Which of the search's shortcuts are on. All are on by default; the
/// soundness tests turn each off to check that it changes no verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FtOptions {
    /// Play a safe foundation move alone when there is one.
    pub safe_foundation: bool,
    /// Stop at positions in which some card can provably never move.
    pub dead_positions: bool,
    /// Of several identical piles (empty ones above all), move only from and
    /// onto the first.
    pub twin_piles: bool,
    /// Restart the search on a Luby schedule, breaking ties in the move
    /// order differently in each round.
    pub restarts: bool,
    /// The percentage of the budget the best-first phase spends, beside
    /// the depth-first search (0 for none, 100 for it alone); `None` for
    /// the game's own (`best_first_plan`).
    pub best_first_percent: Option<u8>,
    /// The smallest budget the best-first phase takes a share of.
    pub best_first_from: u64,
    /// Split the best-first phase between one search per weight of the
    /// game's `best_first_plan`; with `false`, one search with the first.
    pub best_first_portfolio: bool,
}

impl Default for FtOptions {
    fn default() -> FtOptions {
        FtOptions {
            safe_foundation: true,
            dead_positions: true,
            twin_piles: true,
            restarts: true,
            best_first_percent: None,
            best_first_from: BEST_FIRST_FROM,
            best_first_portfolio: true,
        }
    }
}

/// An Indian or Midshipman position with the hashes the solver's key needs.
#[derive(Clone, Debug)]
pub struct FtSearch {
    state: FortyThieves,
    /// Per pile, the xor of [`PILE_CARD`] over its cards.
    pile_hashes: [u64; MAX_PILES],
    /// The sum of `mix64` of every pile hash: the pile part of the key, the
    /// same whatever the order of the piles.
    piles_key: u64,
    /// The xor of [`WASTE_CARD`] over the waste.
    waste_hash: u64,
    options: FtOptions,
    /// Breaks ties in the move order; 0 in the first round of a search.
    round_salt: u64,
    /// Which search of the best-first portfolio this is: the index of its
    /// weight in the game's [`best_first_plan`].
    best_first_search: usize,
}

impl FtSearch {
    /// The search's view of `state`, every shortcut on.
    pub fn new(state: FortyThieves) -> FtSearch {
        FtSearch::with_options(state, FtOptions::default())
    }

    /// As [`FtSearch::new`], choosing the shortcuts.
    pub fn with_options(state: FortyThieves, options: FtOptions) -> FtSearch {
        let mut search = FtSearch {
            state,
            pile_hashes: [0; MAX_PILES],
            piles_key: 0,
            waste_hash: 0,
            options,
            round_salt: 0,
            best_first_search: 0,
        };
        for pile in 0..MAX_PILES {
            let hash = fresh_pile_hash(search.state.pile(pile));
            search.pile_hashes[pile] = hash;
            search.piles_key = search.piles_key.wrapping_add(mix64(hash));
        }
        for (depth, card) in search.state.waste().iter().enumerate() {
            search.waste_hash ^= WASTE_CARD[depth * 52 + card.index()];
        }
        search
    }

    /// Toggles `card` at `depth` of pile `pile` in the hashes.
    fn toggle_pile(&mut self, pile: usize, depth: usize, card: Card) {
        let old = self.pile_hashes[pile];
        let new = old ^ PILE_CARD[depth * 52 + card.index()];
        self.pile_hashes[pile] = new;
        self.piles_key = self
            .piles_key
            .wrapping_sub(mix64(old))
            .wrapping_add(mix64(new));
    }

    /// What `mv` changes in the hashes, read from the position before it:
    /// the (pile, depth, card) entries it removes or adds, and the waste
    /// entry. Every change is an xor (or a sum of mixed xors), so applying
    /// the same toggles serves both apply and undo.
    fn toggles(&self, mv: FtMove) -> Toggles {
        let pile_top = |pile: u8| {
            let cards = self.state.pile(usize::from(pile));
            cards
                .last()
                .map(|&card| (usize::from(pile), cards.len() - 1, card))
        };
        let onto = |pile: u8, card: Card| {
            (
                usize::from(pile),
                self.state.pile(usize::from(pile)).len(),
                card,
            )
        };
        let waste = self.state.waste();
        let waste_top = waste.last().map(|&card| (waste.len() - 1, card));
        match mv {
            FtMove::PileToPile { from, to } => {
                let taken = pile_top(from);
                Toggles {
                    taken,
                    put: taken.map(|(_, _, card)| onto(to, card)),
                    waste: None,
                }
            }
            FtMove::PileToFoundation { from, .. } => Toggles {
                taken: pile_top(from),
                put: None,
                waste: None,
            },
            FtMove::WasteToPile { to } => Toggles {
                taken: None,
                put: waste_top.map(|(_, card)| onto(to, card)),
                waste: waste_top,
            },
            FtMove::WasteToFoundation { .. } => Toggles {
                taken: None,
                put: None,
                waste: waste_top,
            },
            FtMove::Draw => Toggles {
                taken: None,
                put: None,
                waste: self.state.stock().last().map(|&card| (waste.len(), card)),
            },
        }
    }

    fn apply_toggles(&mut self, toggles: Toggles) {
        for (pile, depth, card) in toggles.taken.into_iter().chain(toggles.put) {
            self.toggle_pile(pile, depth, card);
        }
        if let Some((depth, card)) = toggles.waste {
            self.waste_hash ^= WASTE_CARD[depth * 52 + card.index()];
        }
    }

    /// The key computed from scratch, for tests of the incremental one.
    #[cfg(test)]
    fn fresh_key(&self) -> u64 {
        FtSearch::with_options(self.state.clone(), self.options).canonical_key()
    }

    /// Whether sending `card` home now can never lose a won game: every
    /// foundation is at least one rank below it (see the module docs).
    fn is_safe_home(&self, card: Card) -> bool {
        let floor = (0..FOUNDATIONS)
            .map(|f| self.state.foundation_rank(f))
            .min()
            .unwrap_or(0);
        floor + 1 >= card.rank()
    }

    /// Ordering score: higher is tried first.
    fn score(&self, mv: FtMove) -> i32 {
        let state = &self.state;
        match mv {
            FtMove::PileToFoundation { .. } | FtMove::WasteToFoundation { .. } => 1000,
            FtMove::PileToPile { from, to } => {
                let pile = state.pile(usize::from(from));
                let len = pile.len();
                let onto_empty = state.pile(usize::from(to)).is_empty();
                let uncovers = len >= 2 && !builds_on(pile[len - 1], pile[len - 2]);
                let mut score = 100;
                if uncovers {
                    score += 400;
                }
                if len == 1 {
                    score += 300;
                }
                if onto_empty {
                    score -= 50;
                }
                score
            }
            FtMove::WasteToPile { to } => {
                if state.pile(usize::from(to)).is_empty() {
                    250
                } else {
                    400
                }
            }
            FtMove::Draw => 10,
        }
    }

    /// The best-first score's weight per move from the start, in this
    /// search of the portfolio.
    fn depth_weight(&self) -> i64 {
        let weights = best_first_plan(self.state.variant()).depth_weights;
        weights
            .get(self.best_first_search)
            .or(weights.first())
            .copied()
            .unwrap_or(0)
    }

    /// Keeps only moves from the first of several identical piles and onto
    /// the first of several identical piles (empty piles above all): the
    /// positions they lead to differ only in the order of the piles.
    fn drop_twin_piles(&self, moves: &mut Vec<FtMove>) {
        let n_piles = self.state.n_piles();
        let hashes = &self.pile_hashes[..n_piles];
        let first_twin = |pile: u8| {
            let pile = usize::from(pile);
            let hash = hashes[pile];
            hashes[..pile].iter().all(|&other| other != hash)
        };
        moves.retain(|&mv| match mv {
            FtMove::PileToPile { from, to } => first_twin(from) && first_twin(to),
            FtMove::PileToFoundation { from, .. } => first_twin(from),
            FtMove::WasteToPile { to } => first_twin(to),
            FtMove::WasteToFoundation { .. } | FtMove::Draw => true,
        });
    }

    /// Whether some card still in play can provably never move again: the
    /// least fixpoint of the module docs leaves it out.
    fn has_immovable_card(&self) -> bool {
        let state = &self.state;
        let n_piles = state.n_piles();
        if (0..n_piles).any(|pile| state.pile(pile).is_empty()) {
            // Any card can go into an empty pile, so every card can move.
            return false;
        }
        // Zone `n_piles` is the waste; the others are the piles.
        let zone = |z: usize| {
            if z == n_piles {
                state.waste()
            } else {
                state.pile(z)
            }
        };
        // How many top cards of each zone are known to be able to move.
        let mut movable = [0usize; MAX_PILES + 1];
        // Faces with at least one copy known to be able to move.
        let mut movable_faces: u64 = 0;
        let stock_faces = state
            .stock()
            .iter()
            .fold(0u64, |mask, &card| mask | face_bit(card));
        let mut stock_movable: u64 = 0;
        let tops: [u8; FOUNDATIONS] = std::array::from_fn(|f| state.foundation_rank(f));
        loop {
            // Cards that may ever lie on top of a pile: one that can move, or
            // one whose pile can lose every card above it.
            let mut parents = movable_faces;
            for pile in 0..n_piles {
                let cards = zone(pile);
                if movable[pile] < cards.len() {
                    parents |= face_bit(cards[cards.len() - 1 - movable[pile]]);
                }
            }
            let placeable = children_of(parents) | homeable(&tops, movable_faces);
            // The first pile ever emptied loses its bottom card to a
            // foundation or a parent, there being no empty pile to take it.
            let empty_pile = (0..n_piles).any(|pile| {
                let cards = zone(pile);
                cards.is_empty()
                    || (movable[pile] == cards.len() && placeable & face_bit(cards[0]) != 0)
            });
            let destination = if empty_pile { u64::MAX } else { placeable };
            let mut changed = false;
            for (z, moved) in movable.iter_mut().enumerate().take(n_piles + 1) {
                let cards = zone(z);
                while *moved < cards.len() {
                    let card = cards[cards.len() - 1 - *moved];
                    if destination & face_bit(card) == 0 {
                        break;
                    }
                    *moved += 1;
                    movable_faces |= face_bit(card);
                    changed = true;
                }
            }
            let new_stock = stock_faces & destination & !stock_movable;
            if new_stock != 0 {
                stock_movable |= new_stock;
                movable_faces |= new_stock;
                changed = true;
            }
            if !changed {
                break;
            }
        }
        (0..=n_piles).any(|z| movable[z] < zone(z).len()) || stock_movable != stock_faces
    }
}

/// The hash entries one move changes; see [`FtSearch::toggles`].
#[derive(Clone, Copy)]
struct Toggles {
    /// The card leaving a pile: (pile, depth, card).
    taken: Option<(usize, usize, Card)>,
    /// The card reaching a pile: (pile, depth, card).
    put: Option<(usize, usize, Card)>,
    /// The waste entry added or removed: (depth, card).
    waste: Option<(usize, Card)>,
}

/// A number for each move of a position, to hash for tie-breaks.
fn move_code(mv: FtMove) -> u64 {
    match mv {
        FtMove::PileToPile { from, to } => 1 + u64::from(from) * 16 + u64::from(to),
        FtMove::PileToFoundation { from, .. } => 300 + u64::from(from),
        FtMove::WasteToPile { to } => 400 + u64::from(to),
        FtMove::WasteToFoundation { .. } => 500,
        FtMove::Draw => 600,
    }
}

/// Whether `card` builds on `onto`: one rank lower, any suit but its own.
fn builds_on(card: Card, onto: Card) -> bool {
    card.rank() + 1 == onto.rank() && card.suit() != onto.suit()
}

/// The bit of `card`'s face in a 52-bit mask of faces.
fn face_bit(card: Card) -> u64 {
    1 << card.index()
}

/// The faces of one suit, in a mask of faces: 13 bits, Ace lowest.
const SUIT_LANE: u64 = (1 << 13) - 1;

/// The faces that build on some face of `parents`: one rank lower, in
/// another suit.
fn children_of(parents: u64) -> u64 {
    let lanes: [u64; 4] = std::array::from_fn(|suit| (parents >> (13 * suit)) & SUIT_LANE);
    let mut children = 0;
    for suit in 0..4 {
        let others = (0..4)
            .filter(|&other| other != suit)
            .fold(0, |mask, other| mask | lanes[other]);
        children |= (others >> 1) << (13 * suit);
    }
    children
}

/// The faces that could go home once every face of `movable` had: a card
/// goes onto a foundation once each rank between that foundation's top and
/// the card has a copy that can move.
fn homeable(tops: &[u8; FOUNDATIONS], movable: u64) -> u64 {
    let mut mask = 0;
    for suit in 0..4 {
        let lane = (movable >> (13 * suit)) & SUIT_LANE;
        for &top in &tops[2 * suit..2 * suit + 2] {
            let top = u32::from(top);
            if top < u32::from(KING) {
                // Bit 0 of `above` is the rank just above the foundation.
                let above = lane >> top;
                let count = ((!above).trailing_zeros() + 1).min(u32::from(KING) - top);
                mask |= ((1u64 << count) - 1) << (13 * suit as u32 + top);
            }
        }
    }
    mask
}

fn fresh_pile_hash(cards: &[Card]) -> u64 {
    cards.iter().enumerate().fold(0, |hash, (depth, card)| {
        hash ^ PILE_CARD[depth * 52 + card.index()]
    })
}

impl SolverGame for FtSearch {
    type Game = FortyThieves;

    fn state(&self) -> &FortyThieves {
        &self.state
    }

    fn apply(&mut self, mv: FtMove) -> Result<Outcome, MoveError> {
        let toggles = self.toggles(mv);
        let outcome = self.state.apply(mv)?;
        self.apply_toggles(toggles);
        Ok(outcome)
    }

    fn undo(&mut self, mv: FtMove, outcome: &Outcome) {
        self.state.undo(mv, outcome);
        let toggles = self.toggles(mv);
        self.apply_toggles(toggles);
    }

    fn canonical_key(&self) -> u64 {
        self.piles_key ^ mix64(self.waste_hash ^ STOCK_LEN[self.state.stock().len()])
    }

    fn is_dead(&self) -> bool {
        self.options.dead_positions && self.has_immovable_card()
    }

    fn restart_unit(&self, _budget: u64) -> Option<u64> {
        self.options.restarts.then_some(RESTART_UNIT)
    }

    fn set_round(&mut self, round: u64) {
        self.round_salt = if round == 0 { 0 } else { mix64(round) };
    }

    fn best_first_budget(&self, budget: u64) -> u64 {
        if budget < self.options.best_first_from {
            return 0;
        }
        let percent = self
            .options
            .best_first_percent
            .unwrap_or(best_first_plan(self.state.variant()).percent);
        let percent = u64::from(percent.min(100));
        // Budgets are far below u64::MAX / 100.
        budget.saturating_mul(percent) / 100
    }

    fn best_first_score(&self, depth: u32) -> i64 {
        let state = &self.state;
        let n_piles = state.n_piles();
        let tops: [u8; FOUNDATIONS] = std::array::from_fn(|f| state.foundation_rank(f));
        let home: i64 = tops.iter().map(|&rank| i64::from(rank)).sum();
        let (mut face_down, mut empty_piles, mut on_parent) = (0i64, 0i64, 0i64);
        // Per foundation, the fewest cards lying on a copy of its next card
        // in a pile or the waste.
        let mut above_next = [i64::MAX; FOUNDATIONS];
        let mut look_for_next = |cards: &[Card]| {
            for (at, card) in cards.iter().enumerate() {
                let suit = card.suit().index();
                for f in 2 * suit..2 * suit + 2 {
                    if tops[f] + 1 == card.rank() {
                        above_next[f] = above_next[f].min((cards.len() - 1 - at) as i64);
                    }
                }
            }
        };
        for pile in 0..n_piles {
            let cards = state.pile(pile);
            face_down += i64::from(state.face_down(pile));
            empty_piles += i64::from(cards.is_empty());
            on_parent += cards
                .windows(2)
                .filter(|pair| builds_on(pair[1], pair[0]))
                .count() as i64;
            look_for_next(cards);
        }
        look_for_next(state.waste());
        let buried: i64 = (0..FOUNDATIONS)
            .filter(|&f| tops[f] < KING)
            .map(|f| match above_next[f] {
                i64::MAX => NEXT_IN_STOCK,
                above => above,
            })
            .sum();
        WEIGHT_HOME * home - WEIGHT_FACE_DOWN * face_down
            + WEIGHT_EMPTY_PILE * empty_piles
            + WEIGHT_ON_PARENT * on_parent
            - WEIGHT_ABOVE_NEXT * buried
            - WEIGHT_WASTE * state.waste().len() as i64
            - self.depth_weight() * i64::from(depth)
    }

    fn best_first_searches(&self) -> u32 {
        if self.options.best_first_portfolio {
            // A handful of weights per game.
            best_first_plan(self.state.variant()).depth_weights.len() as u32
        } else {
            1
        }
    }

    fn set_best_first_search(&mut self, index: u32) {
        self.best_first_search = index as usize;
    }

    fn search_moves(&self, moves: &mut Vec<FtMove>) {
        self.state.legal_moves(moves);
        if self.options.safe_foundation {
            let safe = moves.iter().copied().find(|&mv| match mv {
                FtMove::PileToFoundation { card, .. } | FtMove::WasteToFoundation { card } => {
                    self.is_safe_home(card)
                }
                _ => false,
            });
            if let Some(mv) = safe {
                moves.clear();
                moves.push(mv);
                return;
            }
        }
        if self.options.twin_piles {
            self.drop_twin_piles(moves);
        }
        if self.round_salt == 0 {
            moves.sort_by_key(|&mv| std::cmp::Reverse(self.score(mv)));
        } else {
            // Ties go by a hash of the position, the move and the round.
            let salt = self.canonical_key() ^ self.round_salt;
            moves.sort_by_key(|&mv| {
                let tie = mix64(salt ^ move_code(mv)) >> 54;
                std::cmp::Reverse((i64::from(self.score(mv)) << 10) | tie as i64)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::conformance::TestRng;
    use crate::games::forty_thieves::Variant;
    use crate::solver::shared_results::{Cache, once};
    use crate::solver::{Budget, Solution, Verdict, solve};

    /// A late position of deal `seed`: play from the deal, mostly the
    /// search's favourite move and sometimes another, until the stock is
    /// nearly out, so that searches from it settle within small budgets.
    fn late_position(seed: u64) -> FortyThieves {
        let variant = Variant::ALL[(seed % 2) as usize];
        let mut search = FtSearch::new(FortyThieves::deal(variant, seed));
        let mut rng = TestRng::new(seed);
        let stop_at = rng.below(6);
        let mut moves = Vec::new();
        let mut extra = rng.below(60);
        while search.state().stock().len() > stop_at || extra > 0 {
            search.search_moves(&mut moves);
            if search.state().stock().len() <= stop_at {
                extra -= 1;
                moves.retain(|&mv| mv != FtMove::Draw);
            }
            let mv = match rng.below(10) {
                0 if search.state().stock().len() > stop_at => FtMove::Draw,
                1 if !moves.is_empty() => moves[rng.below(moves.len())],
                _ => match moves.first() {
                    Some(&mv) => mv,
                    None => break,
                },
            };
            search.apply(mv).expect("a legal move");
        }
        search.state
    }

    /// The budget of the with/without tests, small enough for a debug build.
    const LATE_BUDGET: u64 = 3_000;

    /// The deals whose late positions the with/without tests compare:
    /// 1..=1000 in the slow tier.
    const FULL_DEALS: u64 = 1000;

    /// How many of deals 1..=`FULL_DEALS` the with/without tests compare.
    fn n_deals(test: &str) -> u64 {
        crate::slow_tier::count(test, FULL_DEALS, 200)
    }

    /// A floor set for `FULL_DEALS` deals, scaled to the deals compared.
    fn floor(at_full: usize, test: &str) -> usize {
        crate::slow_tier::floor(at_full, FULL_DEALS, n_deals(test))
    }

    /// What a search with `options` finds from the late position of each
    /// deal 1..=1000, by seed from 1: solved once per test binary, since the
    /// with/without tests all compare against the same searches. Each line
    /// was replayed by `solve`.
    fn late_solutions(options: FtOptions) -> &'static [Solution<FtMove>] {
        static SOLUTIONS: Cache<FtOptions, Vec<Solution<FtMove>>> = Mutex::new(Vec::new());
        once(&SOLUTIONS, options, || {
            (1..=n_deals("forty_thieves::tests::late_solutions"))
                .map(|seed| {
                    let search = FtSearch::with_options(late_position(seed), options);
                    solve(&search, Budget::positions(LATE_BUDGET)).expect("replay")
                })
                .collect()
        })
        .as_slice()
    }

    /// Solves the late positions of deals 1..=1000 with every shortcut on
    /// and with `options`, and checks that each position settled both ways
    /// gets the same verdict. Returns how many were compared, and how many
    /// of those were winnable.
    fn compare_verdicts(options: FtOptions) -> (usize, usize) {
        let all_on = FtOptions {
            restarts: false,
            best_first_percent: Some(0),
            ..FtOptions::default()
        };
        let (mut compared, mut winnable) = (0, 0);
        let pairs = late_solutions(all_on).iter().zip(late_solutions(options));
        for (seed, (with, without)) in (1..).zip(pairs) {
            assert!(without.positions <= LATE_BUDGET, "seed {seed}");
            if with.verdict.is_settled() && without.verdict.is_settled() {
                assert_eq!(with.verdict.name(), without.verdict.name(), "seed {seed}");
                compared += 1;
                winnable += usize::from(matches!(with.verdict, Verdict::Winnable(_)));
            }
        }
        (compared, winnable)
    }

    /// The best-first search alone settles what one depth-first round does
    /// the same way, and a loss it reports (its queue emptied) is the
    /// depth-first round's loss: the same positions, as many of them.
    #[test]
    fn best_first_search_keeps_every_verdict() {
        let best_first_only = FtOptions {
            restarts: false,
            best_first_percent: Some(100),
            best_first_from: 0,
            best_first_portfolio: false,
            ..FtOptions::default()
        };
        let (compared, winnable) = compare_verdicts(best_first_only);
        assert!(
            compared >= floor(500, "best_first_search_keeps_every_verdict")
                && winnable >= floor(100, "best_first_search_keeps_every_verdict"),
            "{compared} compared, {winnable} winnable"
        );
        let depth_first = FtOptions {
            restarts: false,
            best_first_percent: Some(0),
            ..FtOptions::default()
        };
        let pairs = late_solutions(depth_first)
            .iter()
            .zip(late_solutions(best_first_only));
        let mut lost = 0;
        for (seed, (depth, best)) in (1..).zip(pairs) {
            if depth.verdict == Verdict::Unwinnable || best.verdict == Verdict::Unwinnable {
                assert_eq!(depth.verdict, best.verdict, "seed {seed}");
                assert_eq!(depth.positions, best.positions, "seed {seed}");
                lost += 1;
            }
        }
        let lost_floor = floor(100, "best_first_search_keeps_every_verdict");
        assert!(lost >= lost_floor, "only {lost} losses compared");
    }

    /// Midshipman's portfolio of best-first searches, alone, settles what
    /// one depth-first round does the same way (a loss is proved by the
    /// first search whose queue empties).
    #[test]
    fn the_best_first_portfolio_keeps_every_verdict() {
        let (compared, winnable) = compare_verdicts(FtOptions {
            restarts: false,
            best_first_percent: Some(100),
            best_first_from: 0,
            ..FtOptions::default()
        });
        assert!(
            compared >= floor(500, "the_best_first_portfolio_keeps_every_verdict")
                && winnable >= floor(100, "the_best_first_portfolio_keeps_every_verdict"),
            "{compared} compared, {winnable} winnable"
        );
    }

    #[test]
    fn safe_foundation_moves_keep_every_verdict() {
        let (compared, winnable) = compare_verdicts(FtOptions {
            safe_foundation: false,
            restarts: false,
            ..FtOptions::default()
        });
        assert!(
            compared >= floor(500, "safe_foundation_moves_keep_every_verdict")
                && winnable >= floor(100, "safe_foundation_moves_keep_every_verdict"),
            "{compared} compared, {winnable} winnable"
        );
    }

    #[test]
    fn dead_positions_keep_every_verdict() {
        let (compared, winnable) = compare_verdicts(FtOptions {
            dead_positions: false,
            restarts: false,
            ..FtOptions::default()
        });
        assert!(
            compared >= floor(500, "dead_positions_keep_every_verdict")
                && winnable >= floor(100, "dead_positions_keep_every_verdict"),
            "{compared} compared, {winnable} winnable"
        );
    }

    #[test]
    fn twin_piles_keep_every_verdict() {
        let (compared, winnable) = compare_verdicts(FtOptions {
            twin_piles: false,
            restarts: false,
            ..FtOptions::default()
        });
        assert!(
            compared >= floor(500, "twin_piles_keep_every_verdict")
                && winnable >= floor(100, "twin_piles_keep_every_verdict"),
            "{compared} compared, {winnable} winnable"
        );
    }

    /// Restarts, and the best-first phase beside them, change the order of
    /// the search, never a verdict.
    #[test]
    fn restarts_keep_every_verdict() {
        let (compared, winnable) = compare_verdicts(FtOptions {
            best_first_from: 0,
            ..FtOptions::default()
        });
        assert!(
            compared >= floor(500, "restarts_keep_every_verdict")
                && winnable >= floor(100, "restarts_keep_every_verdict"),
            "{compared} compared, {winnable} winnable"
        );
    }

    #[test]
    fn face_masks_match_their_definitions() {
        let mut rng = TestRng::new(7);
        for _ in 0..2000 {
            let mask = (0..52).fold(0u64, |mask, index| {
                mask | (u64::from(rng.below(3) == 0) << index)
            });
            let children = (0..52).fold(0u64, |found, index| {
                let child = Card::from_index(index);
                let has_parent = (0..52).any(|parent| {
                    mask & (1 << parent) != 0 && builds_on(child, Card::from_index(parent))
                });
                found | (u64::from(has_parent) << index)
            });
            assert_eq!(children_of(mask), children, "{mask:x}");
            let tops: [u8; FOUNDATIONS] = std::array::from_fn(|_| rng.below(14) as u8);
            let homes = (0..52).fold(0u64, |found, index| {
                let card = Card::from_index(index);
                let suit = card.suit().index();
                let reachable = tops[2 * suit..2 * suit + 2].iter().any(|&top| {
                    top < card.rank()
                        && (top + 1..card.rank())
                            .all(|rank| mask & face_bit(Card::new(card.suit(), rank)) != 0)
                });
                found | (u64::from(reachable) << index)
            });
            assert_eq!(homeable(&tops, mask), homes, "{mask:x} {tops:?}");
        }
    }

    fn fixture(text: &str) -> FortyThieves {
        FortyThieves::from_fixture(text).unwrap_or_else(|e| panic!("bad fixture: {e}\n{text}"))
    }

    fn key(text: &str) -> u64 {
        FtSearch::new(fixture(text)).canonical_key()
    }

    #[test]
    fn key_ignores_pile_order_and_face_down_cards_but_not_contents() {
        let base = key("game: indian\np1: 9c | Kh 7d\np2: 8s\nstock: 4c 5h\nwaste: Qs 2d\nf1: 3c");
        // The same piles in other places.
        assert_eq!(
            base,
            key("game: indian\np4: 8s\np10: 9c | Kh 7d\nstock: 4c 5h\nwaste: Qs 2d\nf1: 3c")
        );
        // A face-down card behaves as a face-up one under others would.
        assert_eq!(
            base,
            key("game: indian\np1: 9c Kh 7d\np2: 8s\nstock: 4c 5h\nwaste: Qs 2d\nf1: 3c")
        );
        let different = [
            "game: indian\np1: 9c | 7d Kh\np2: 8s\nstock: 4c 5h\nwaste: Qs 2d\nf1: 3c",
            "game: indian\np1: 9c | Kh\np2: 8s 7d\nstock: 4c 5h\nwaste: Qs 2d\nf1: 3c",
            "game: indian\np1: 9c | Kh 7d\np2: 8s\nstock: 4c 5h\nwaste: 2d Qs\nf1: 3c",
            "game: indian\np1: 9c | Kh 7d\np2: 8s\nstock: 4c\nwaste: Qs 2d 5h\nf1: 3c",
        ];
        for text in different {
            assert_ne!(base, key(text), "{text}");
        }
    }

    #[test]
    fn key_ignores_which_foundation_of_a_suit_took_a_card() {
        // Two Aces and a Two of clubs go home in two different orders.
        let start = fixture("game: indian\np1: 2c\np2: Ac\np3: Ac\np4: Kd");
        let home = |from: u8, card: &str| FtMove::PileToFoundation {
            from,
            card: card.parse().expect("card"),
        };
        let play = |moves: &[FtMove]| {
            let mut search = FtSearch::new(start.clone());
            for &mv in moves {
                search.apply(mv).expect("legal");
            }
            search
        };
        let a = play(&[home(1, "Ac"), home(0, "2c"), home(2, "Ac")]);
        let b = play(&[home(1, "Ac"), home(2, "Ac"), home(0, "2c")]);
        assert_eq!(a.canonical_key(), b.canonical_key());
        assert_eq!(a.state(), b.state());
    }

    #[test]
    fn incremental_key_matches_a_fresh_one_during_play_and_undo() {
        for seed in 1..=40 {
            let variant = Variant::ALL[(seed % 2) as usize];
            let mut search = FtSearch::new(FortyThieves::deal(variant, seed));
            let mut rng = TestRng::new(seed);
            let mut moves = Vec::new();
            let mut played = Vec::new();
            for _ in 0..300 {
                search.state().legal_moves(&mut moves);
                let Some(&mv) = moves.get(rng.below(moves.len())) else {
                    break;
                };
                let outcome = search.apply(mv).expect("legal");
                assert_eq!(search.canonical_key(), search.fresh_key(), "seed {seed}");
                played.push((mv, outcome));
            }
            while let Some((mv, outcome)) = played.pop() {
                search.undo(mv, &outcome);
                assert_eq!(search.canonical_key(), search.fresh_key(), "seed {seed}");
            }
            assert_eq!(search.state(), &FortyThieves::deal(variant, seed));
        }
    }

    #[test]
    fn a_refused_move_leaves_the_key_alone() {
        let mut search = FtSearch::new(fixture("game: midshipman\np1: 9c\np2: 9d\nwaste: Qs"));
        let key = search.canonical_key();
        assert!(search.apply(FtMove::PileToPile { from: 0, to: 1 }).is_err());
        assert!(search.apply(FtMove::Draw).is_err());
        assert_eq!(search.canonical_key(), key);
    }

    /// The moves `search_moves` offers in a fixture position, in notation.
    fn offered(text: &str) -> Vec<String> {
        crate::solver::offered_in_notation(&FtSearch::new(fixture(text)))
    }

    #[test]
    fn a_safe_foundation_move_is_offered_alone() {
        // Every foundation is at Two or more: the Three of spades is safe.
        let twos = "f1: 2c\nf2: 2c\nf3: 2d\nf4: 2d\nf5: 2h\nf6: 2h\nf7: 2s\nf8: 2s";
        assert_eq!(
            offered(&format!(
                "game: indian\np1: 4d 3s\np2: Kc\nstock: 9h\n{twos}"
            )),
            ["1>f"]
        );
        // An Ace is always safe, from the waste too.
        assert_eq!(
            offered("game: indian\np1: 2d\np2: 3c\nwaste: Ah\nstock: 9h"),
            ["w>f"]
        );
        // With the heart foundations empty the Two of hearts might still need
        // to lie on the Three of spades: both moves are offered.
        let offered_moves = offered(&format!(
            "game: indian\np1: 4d 3s\np2: 2h\nstock: 9h\n{}",
            twos.replace("f5: 2h\nf6: 2h", "")
        ));
        assert!(
            offered_moves.contains(&"1>f".to_string()),
            "{offered_moves:?}"
        );
        assert!(
            offered_moves.contains(&"2>1".to_string()),
            "{offered_moves:?}"
        );
    }

    #[test]
    fn twin_piles_are_moved_from_and_onto_once() {
        // Piles 1 and 2 are alike, and piles 3 to 10 are empty.
        let moves = offered("game: indian\np1: 9c 8d\np2: 9c 8d\nwaste: 4s\nstock: Ks");
        assert_eq!(moves, ["w>3", "1>3", "s"]);
    }

    #[test]
    fn a_card_that_can_never_move_makes_the_position_dead() {
        let dead = |text: &str| FtSearch::new(fixture(text)).is_dead();
        // Nothing can ever move: the King of clubs on the waste needs an
        // empty pile (both Queens of clubs lie under it), and no pile can be
        // emptied, as no pile card has a parent in play or a way home.
        let stuck = "game: midshipman\np1: 5h\np2: 5h\np3: 5d\np4: 5d\np5: 5s\np6: 5s\n\
                     p7: 8h\np8: 8h\np9: 8d\nwaste: Qc Qc Kc\nf1: Jc\nf2: Jc\nf3: 3d\nf4: 3d\n\
                     f5: 3h\nf6: 3h\nf7: 3s\nf8: 3s";
        assert!(dead(stuck));
        // With pile 9 empty the King can move, and then everything under it.
        assert!(!dead(&stuck.replace("p9: 8d\n", "")));
        // With a Six of spades on pile 9, a Five of hearts can leave pile 1
        // for it, and the King can take pile 1.
        assert!(!dead(&stuck.replace("p9: 8d", "p9: 8d 6s")));
        // No deal starts dead.
        for seed in 1..=50 {
            for variant in Variant::ALL {
                assert!(!FtSearch::new(FortyThieves::deal(variant, seed)).is_dead());
            }
        }
    }

    /// Solves deals `1..=count` of both games; `solve` has replayed every
    /// winning line through the plain rules engine (see
    /// `a_line_that_does_not_replay_is_reported_not_trusted` in `solver`).
    /// Returns the lines, by deal.
    fn winning_lines(count: u64, options: FtOptions) -> Vec<(FortyThieves, Vec<FtMove>)> {
        let mut lines = Vec::new();
        for seed in 1..=count {
            for variant in Variant::ALL {
                let deal = FortyThieves::deal(variant, seed);
                let found = solve(
                    &FtSearch::with_options(deal.clone(), options),
                    Budget::positions(20_000),
                )
                .expect("replay");
                if let Verdict::Winnable(line) = found.verdict {
                    lines.push((deal, line));
                }
            }
        }
        lines
    }

    #[test]
    fn winning_lines_replay_through_the_rules() {
        let n = crate::slow_tier::count("winning_lines_replay_through_the_rules", 200, 50);
        let lines = winning_lines(n, FtOptions::default());
        let floor = crate::slow_tier::floor(200, 200, n);
        assert!(lines.len() >= floor, "only {} winning lines", lines.len());
    }

    /// A hint from any position along a winning line is a move to play.
    /// (Following hints one at a time need not win: moves between piles can
    /// be taken back, and the line found from the next position may start
    /// by taking back the last hint. A caller keeps the line and asks again
    /// only when the player leaves it.)
    #[test]
    fn hints_along_a_winning_line_are_moves_to_play() {
        for variant in Variant::ALL {
            let budget = Budget::positions(100_000);
            // The first deal proved winnable (deal 2 in both games with the
            // restarts alone; the best-first phase takes a share of them).
            let (deal, line) = (1..=20)
                .find_map(|seed| {
                    let deal = FortyThieves::deal(variant, seed);
                    match solve(&FtSearch::new(deal.clone()), budget).ok()?.verdict {
                        Verdict::Winnable(line) => Some((deal, line)),
                        _ => None,
                    }
                })
                .unwrap_or_else(|| panic!("{variant:?}: no deal of 1..=20 proved"));
            let mut position = FtSearch::new(deal);
            for (index, &mv) in line.iter().enumerate() {
                // Every fourth position keeps the test quick.
                if index % 4 == 0 {
                    let hint = crate::solver::hint(&position, budget).expect("replay");
                    let crate::solver::Hint::Play(hinted) = hint else {
                        panic!("{variant:?}, move {index}: {hint:?}");
                    };
                    let mut after = position.clone();
                    after.apply(hinted).expect("a hint is legal");
                }
                position.apply(mv).expect("the line is legal");
            }
            assert_eq!(
                crate::solver::hint(&position, budget),
                Ok(crate::solver::Hint::AlreadyWon)
            );
        }
    }

    /// A sharper check of the dead-position rule: no position along a
    /// winning line found with the rule off is called dead.
    #[test]
    fn no_position_on_a_winning_line_is_dead() {
        let options = FtOptions {
            dead_positions: false,
            ..FtOptions::default()
        };
        let mut checked = 0;
        let n = crate::slow_tier::count("no_position_on_a_winning_line_is_dead", 100, 30);
        for (deal, line) in winning_lines(n, options) {
            let mut search = FtSearch::new(deal);
            for mv in line {
                assert!(
                    !search.is_dead(),
                    "dead on a winning line:\n{}",
                    search.state().to_fixture()
                );
                search.apply(mv).expect("the line is legal");
                checked += 1;
            }
        }
        let floor = crate::slow_tier::floor(10_000, 100, n);
        assert!(checked >= floor, "only {checked} positions checked");
    }
}
