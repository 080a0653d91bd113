//! The solver's view of Three Blind Mice.
//!
//! Every move of this game is final (a card laid on its parent never leaves
//! it; a King moved into an empty pile stays at its bottom), so a game lasts
//! at most 52 moves and the search tree is shallow. What makes the search
//! fast is the key, which folds positions that differ only in the order of
//! piles or of the two cells into one, and one safe move that cuts the
//! branching.
//!
//! # The key
//!
//! Each pile has its own hash (a Zobrist sum over depth and card, plus its
//! face-down count); the position's key adds up the piles' hashes after a
//! strong mix, so the order of the piles does not matter. Foundations are not
//! hashed: which runs left follows from which cards remain. [`TbmSearch`]
//! keeps the pile hashes beside the state and, after a move, rehashes only
//! the two piles it touched.
//!
//! # The safe move
//!
//! If a pile's *top* card X (or a cell card X) can go onto its parent P, and
//! every card under P lies on its own parent down to a King at the bottom
//! (or nothing lies under P), playing it at once never loses a winnable game.
//! X can never go anywhere but onto P, the only card that can ever go onto P
//! is X, and P stays a top card until X arrives. Any winning line from before
//! the move can be replayed after it: moves onto X are still legal (X is still
//! a top card), a move of the card under X now carries nothing, a move of P
//! now carries X as the line would later have, and the card uncovered under X
//! (or the emptied pile) only adds options. The cards under P are what can go
//! wrong, which is why they must be settled: a card under P may need to move
//! (carrying P) onto X or onto a card that will lie on X, and once X lies on
//! P above it, it never can. (Seed 40 is such a deal: its 3♦ lies under the
//! 5♦ and needs the 4♦, so laying the 4♦ on the 5♦ loses the game.) Cards
//! that lie on their parents down to a bottom King never move on their own,
//! so nothing under P can then need X. The restriction to a top X matters
//! too: a buried card moves with everything lying on it, and carrying those
//! onto P can bury the parent of a card among them. The test
//! `safe_move_keeps_every_verdict` compares verdicts with and without the
//! rule on a thousand deals.
//!
//! # Wider safe moves
//!
//! The safe move is a case of a more general argument (a *stubborn set* of
//! one move, which keeps every dead end of the search, the won position
//! included). A move t may be played alone when (a) no sequence of other
//! moves can make t illegal, and (b) t makes no other move illegal: then
//! any winning line contains t, and moving t to the front of it gives a
//! line that is still legal and ends in the same position (the same piles;
//! runs may reach the foundations in another order, which the key ignores).
//! Every move here either lays a face-up card X, with what lies on it (call
//! that stack S), on its parent P, a top card, or moves a King into an
//! empty pile, and a move is legal while its card is face up and its
//! destination is a top card not lying above the card in its own pile. So:
//!
//! - **A King into an empty pile**, when every other King lies at the
//!   bottom of a pile or is gone. Only a King ever enters an empty pile, and
//!   no other King can, so nothing else can take the empty pile (a); moving
//!   a stack to where nothing lies under it puts no card above its parent
//!   (b).
//! - **X onto P** (X need not be a top card), when the *zone* of P's pile
//!   is closed: start from P's pile; for every card in a zone pile that may
//!   still move on its own (not a King, which only moves into an empty pile;
//!   not lying on its parent; not *fixed*, i.e. part of a face-up run lying
//!   on its parents down to a King at the bottom of its pile, which never
//!   moves), its parent must be fixed in some pile, or lie in a pile that
//!   joins the zone; no parent may be in a cell or in X's pile. Then the
//!   cards of the zone only ever move onto zone cards, fixed cards or into
//!   empty piles, and are only ever carried by zone cards; none of them can
//!   come to lie on S or on what later lands on S (those are cards of X's
//!   pile and what moves onto them, never a zone card). Hence P, which only X
//!   covers, stays a top card and never comes to lie above X (a). And after
//!   t, the cards lying above a zone card W are zone cards or S and what
//!   lands on S; W's parent is a zone or fixed card, never one of the
//!   latter, so t buries no card under its own parent (b): a card Y of S
//!   whose parent lies under P in the zone can only reach it once the card
//!   above that parent moves away, carrying P and S with it. The narrow safe
//!   move above is the case where P's pile is fixed up to P.
//!
//! `safe_move_keeps_every_verdict` (every rule on, against the search
//! without any safe move) compares verdicts on a thousand deals (making
//! every move onto a non-empty pile "safe" fails it at seed 11);
//! `wider_safe_moves_fire` shows each case offered alone in a fixture and
//! not offered alone by the narrow rule. The wider rule took seeds
//! 1..=10,000 from 14 deals unknown at a million positions to 5
//! (docs/WINNABILITY.md).
//!
//! # Dead positions
//!
//! Call a card's *final move* its one independent move left: a card not
//! lying on its parent moves on its own only onto its parent (or, a King,
//! into an empty pile), and once there it only travels with what lies under
//! it. Cards lying on their parents, and Kings at the bottom of a pile, make
//! no final move. A winning line must make every final move, each only once
//! what it needs has happened:
//!
//! - C's final move lays it on its parent P, so P must be a top card then.
//!   Only one card can take a card off P: the card Y lying directly on it,
//!   by its own final move (moving P carries Y along, and moving a card above
//!   Y leaves Y where it is). So Y's final move comes first. If P is in a
//!   cell, P's own final move comes first.
//! - If P lies above C in C's own pile, C cannot reach it until some card
//!   between them (P included) has made its final move and carried P away;
//!   moving C, or a card under C, carries P along.
//! - A face-down C can move only once turned up, so once the card directly
//!   on it has made its final move.
//! - Kings are different: a King lying on another card need not move at all,
//!   since its finished run leaves from wherever it lies. So a King stops
//!   blocking the card under it either by its final move into an empty pile
//!   (one empty now, one emptied by the final move of its bottom card, or one
//!   a finished run leaves) or by leaving with its run, once every other
//!   card of its suit has made its final move. A King is never required to
//!   move.
//! - A face-down card must be turned up before its run can leave (runs
//!   leave only face up), so the card lying directly on it must leave it.
//!   If that card is its child, it never does: it lies on its parent for
//!   good, and nothing under it can carry it away (the face-down card, and
//!   every card under that one, is face down and cannot move). Such a
//!   position is lost whatever else happens, which `face_down_under_its_child`
//!   checks before the fixpoint below. (Every one of the five deals of seeds
//!   1..=10,000 that stayed unknown at a million positions deals a King face
//!   down at the bottom of a blind pile with its Queen face down on it; the
//!   search used to prove them lost only by exhausting one to five million
//!   positions, every line ending with that suit's run stuck on its King.)
//!
//! Starting from nothing, the search adds every final move whose needs are
//! met by moves already added, until nothing more can be added. Any real
//! winning line makes its final moves in an order that meets these needs, so
//! each of them would be added; a required final move left out therefore
//! proves the position lost. (It ignores capacity, e.g. that one empty pile
//! takes only one King, and treats any King-bottomed pile as one a run may
//! empty: a relaxation, so it may miss a lost position but never calls a
//! winnable one lost.)
//!
//! # Pruning and ordering
//!
//! All empty piles are alike to the key, so a King goes only into the first
//! empty pile. Moves that turn up a face-down card or empty a pile come first;
//! then moves of fewer cards.

use arrayvec::ArrayVec;

use crate::card::KING;
use crate::games::three_blind_mice::{PILES, TbmMove, ThreeBlindMice};
use crate::rules::{MoveError, Outcome, Rules};
use crate::solver::SolverGame;
use crate::solver::zobrist::{mix64, table};

/// Zobrist values by `depth * 52 + card index` for pile contents.
static PILE_CARD: [u64; 52 * 52] = table(0x7b3a);
/// Zobrist values by face-down count.
static FACE_DOWN: [u64; 8] = table(0x7b3b);
/// Zobrist values by card index for the cards still in cells.
static CELL_CARD: [u64; 52] = table(0x7b3c);

/// Which of the search's shortcuts are on. All are on by default; the
/// soundness tests turn each off to check it changes no verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TbmOptions {
    /// Play the safe move of the module docs alone when there is one.
    pub safe_move: bool,
    /// Stop at positions proved dead by the module docs' cycle argument.
    pub dead_positions: bool,
    /// Play alone the wider safe moves of the module docs (a buried card, or
    /// onto a parent with unsettled cards under it, or a lone King), not only
    /// the narrow one.
    pub wider_safe_move: bool,
    /// Among dead positions, also stop at one with a face-down card whose
    /// child lies directly on it (module docs, "Dead positions"). Only
    /// counts with `dead_positions`.
    pub face_down_under_child: bool,
}

impl Default for TbmOptions {
    fn default() -> TbmOptions {
        TbmOptions {
            safe_move: true,
            dead_positions: true,
            wider_safe_move: true,
            face_down_under_child: true,
        }
    }
}

/// A Three Blind Mice position with the pile hashes the solver's key needs.
#[derive(Clone, Debug)]
pub struct TbmSearch {
    state: ThreeBlindMice,
    pile_hashes: [u64; PILES],
    options: TbmOptions,
}

impl TbmSearch {
    /// The search's view of `state`, every shortcut on.
    pub fn new(state: ThreeBlindMice) -> TbmSearch {
        TbmSearch::with_options(state, TbmOptions::default())
    }

    /// As [`TbmSearch::new`], choosing the shortcuts.
    pub fn with_options(state: ThreeBlindMice, options: TbmOptions) -> TbmSearch {
        let mut search = TbmSearch {
            state,
            pile_hashes: [0; PILES],
            options,
        };
        for pile in 0..PILES {
            search.rehash(pile);
        }
        search
    }

    fn rehash(&mut self, pile: usize) {
        let cards = self.state.pile(pile);
        let mut hash = FACE_DOWN[self.state.face_down(pile).min(7)];
        for (depth, card) in cards.iter().enumerate() {
            hash ^= PILE_CARD[depth * 52 + card.index()];
        }
        self.pile_hashes[pile] = hash;
    }

    /// The piles a move touches, to rehash after apply or undo.
    fn touched(mv: TbmMove) -> (Option<usize>, usize) {
        match mv {
            TbmMove::PileToPile { from, to, .. } => (Some(usize::from(from)), usize::from(to)),
            TbmMove::CellToPile { to, .. } => (None, usize::from(to)),
        }
    }

    fn rehash_after(&mut self, mv: TbmMove) {
        let (from, to) = TbmSearch::touched(mv);
        if let Some(from) = from {
            self.rehash(from);
        }
        self.rehash(to);
    }

    /// The card a move picks up, and whether it is the top card of its zone.
    fn moved_card(&self, mv: TbmMove) -> Option<(crate::card::Card, bool)> {
        match mv {
            TbmMove::PileToPile { from, count, .. } => {
                let pile = self.state.pile(usize::from(from));
                let index = pile.len().checked_sub(usize::from(count))?;
                Some((pile[index], count == 1))
            }
            TbmMove::CellToPile { cell, .. } => {
                self.state.cell(usize::from(cell)).map(|card| (card, true))
            }
        }
    }

    /// Whether every card under the top of pile `pile` is settled: it lies on
    /// its parent, down to a King at the bottom, or nothing lies under the top.
    /// Settled cards never move on their own again.
    fn under_top_is_settled(&self, pile: usize) -> bool {
        let cards = self.state.pile(pile);
        if cards.len() <= 1 {
            return true;
        }
        self.state.face_down(pile) == 0
            && cards[0].rank() == KING
            && cards
                .windows(2)
                .all(|pair| pair[1].next_higher() == Some(pair[0]))
    }

    /// Whether `mv` is the safe move of the module docs (with
    /// [`TbmOptions::wider_safe_move`], of its section "Wider safe moves").
    fn is_safe(&self, mv: TbmMove) -> bool {
        let (from, to) = match mv {
            TbmMove::PileToPile { from, to, .. } => (Some(usize::from(from)), usize::from(to)),
            TbmMove::CellToPile { to, .. } => (None, usize::from(to)),
        };
        let Some((card, on_top)) = self.moved_card(mv) else {
            return false;
        };
        if on_top && card.rank() != KING && self.under_top_is_settled(to) {
            return true;
        }
        if !self.options.wider_safe_move {
            return false;
        }
        if self.state.pile(to).is_empty() {
            // A King into an empty pile: safe when no other King will ever
            // want an empty pile (each is at the bottom of a pile, or gone).
            return card.rank() == KING
                && KING_INDICES.iter().all(|&king| {
                    king == card.index()
                        || (0..PILES)
                            .all(|p| self.state.pile(p).iter().skip(1).all(|c| c.index() != king))
                            && (0..2)
                                .all(|cell| self.state.cell(cell).is_none_or(|c| c.index() != king))
                });
        }
        self.closed_zone(from, to)
    }

    /// Whether the piles reached from pile `to` by following parents (the
    /// zone of the module docs' "Wider safe moves") avoid pile `from` and the
    /// cells: every card of the zone that may still move on its own has its
    /// parent in the zone, or fixed in another pile.
    fn closed_zone(&self, from: Option<usize>, to: usize) -> bool {
        // Where each card lies: (pile, depth); `NO_CARD` piles for cells and
        // foundations.
        let mut place = [(NO_CARD, 0u8); 52];
        for pile in 0..PILES {
            for (depth, card) in self.state.pile(pile).iter().enumerate() {
                place[card.index()] = (pile as u8, depth as u8);
            }
        }
        let mut fixed = [0usize; PILES];
        for (pile, len) in fixed.iter_mut().enumerate() {
            *len = self.fixed_len(pile);
        }
        let mut in_zone = [false; PILES];
        in_zone[to] = true;
        let mut queue: ArrayVec<usize, PILES> = ArrayVec::new();
        queue.push(to);
        while let Some(pile) = queue.pop() {
            let cards = self.state.pile(pile);
            for (depth, &card) in cards.iter().enumerate().skip(fixed[pile]) {
                let Some(parent) = card.next_higher() else {
                    // A King moves only into an empty pile.
                    continue;
                };
                if depth > 0 && cards[depth - 1] == parent {
                    // Lies on its parent: moves only when carried.
                    continue;
                }
                let (at, at_depth) = place[parent.index()];
                if at == NO_CARD {
                    // In a cell (a gone parent would have taken this card).
                    return false;
                }
                let at = usize::from(at);
                if Some(at) == from {
                    return false;
                }
                if usize::from(at_depth) < fixed[at] || in_zone[at] {
                    continue;
                }
                in_zone[at] = true;
                queue.push(at);
            }
        }
        true
    }

    /// How many cards at the bottom of pile `pile` are fixed for good: a King
    /// at the bottom and the cards lying on their parents above it, all face
    /// up. None of them ever moves again (a bottom King may not move into an
    /// empty pile, and the others lie on their parents).
    fn fixed_len(&self, pile: usize) -> usize {
        let cards = self.state.pile(pile);
        if self.state.face_down(pile) > 0 || cards.first().is_none_or(|c| c.rank() != KING) {
            return 0;
        }
        1 + cards
            .windows(2)
            .take_while(|pair| pair[1].next_higher() == Some(pair[0]))
            .count()
    }

    /// Ordering score: higher is tried first.
    fn score(&self, mv: TbmMove) -> i32 {
        match mv {
            TbmMove::PileToPile { from, count, .. } => {
                let from = usize::from(from);
                let left = self.state.pile(from).len() - usize::from(count);
                let mut score = -i32::from(count);
                if left == 0 {
                    score += 100;
                } else if left == self.state.face_down(from) {
                    score += 200;
                }
                score
            }
            TbmMove::CellToPile { .. } => 50,
        }
    }
}

/// Marks "no card" in the tables of [`TbmSearch::is_dead`].
const NO_CARD: u8 = u8::MAX;

/// Card indices of the four Kings.
const KING_INDICES: [usize; 4] = [12, 25, 38, 51];

/// What must happen before a card's final move (see the module docs).
#[derive(Clone, Copy)]
struct Requirement {
    /// Final moves that must all come first (`NO_CARD` pads).
    all_of: [u8; 2],
    /// `any_of[..any_len]`: at least one of these final moves must come first.
    any_of: [u8; 52],
    any_len: u8,
    /// Whether this is a King's final move, which needs an empty pile.
    needs_empty_pile: bool,
}

impl TbmSearch {
    /// Whether some face-down card has its child lying directly on it: the
    /// child never leaves it, so it is never turned up and its run never
    /// leaves (module docs, "Dead positions").
    fn face_down_under_its_child(&self) -> bool {
        (0..PILES).any(|pile| {
            let cards = self.state.pile(pile);
            let face_down = self.state.face_down(pile);
            cards
                .windows(2)
                .take(face_down)
                .any(|pair| pair[1].next_higher() == Some(pair[0]))
        })
    }

    /// The requirements of every card that has a final move to make, by card
    /// index; `None` for cards that make none (settled or gone).
    fn requirements(&self) -> [Option<Requirement>; 52] {
        let mut above = [NO_CARD; 52];
        let mut face_down = [false; 52];
        let mut settled = [true; 52];
        let mut in_cell = [false; 52];
        let mut pile_of = [NO_CARD; 52];
        for pile in 0..PILES {
            let cards = self.state.pile(pile);
            for (depth, card) in cards.iter().enumerate() {
                let index = card.index();
                above[index] = cards.get(depth + 1).map_or(NO_CARD, |c| c.index() as u8);
                face_down[index] = depth < self.state.face_down(pile);
                pile_of[index] = pile as u8;
                settled[index] = if depth == 0 {
                    card.rank() == KING
                } else {
                    card.next_higher() == Some(cards[depth - 1])
                };
            }
        }
        for card in (0..2).filter_map(|cell| self.state.cell(cell)) {
            in_cell[card.index()] = true;
            settled[card.index()] = false;
        }
        let mut requirements = [None; 52];
        for index in 0..52 {
            if settled[index] {
                continue;
            }
            let card = crate::card::Card::from_index(index);
            let mut requirement = Requirement {
                all_of: [NO_CARD; 2],
                any_of: [NO_CARD; 52],
                any_len: 0,
                needs_empty_pile: false,
            };
            match card.next_higher().map(|parent| parent.index()) {
                None => requirement.needs_empty_pile = true,
                Some(parent) => {
                    // P must be a top card: the card lying on it must leave first.
                    let blocker = if in_cell[parent] {
                        parent as u8
                    } else {
                        above[parent]
                    };
                    if blocker != NO_CARD && usize::from(blocker) != index {
                        requirement.all_of[0] = blocker;
                    }
                    // P must not lie above C in C's own pile: some card between
                    // them (P included) must leave first, carrying P away.
                    if pile_of[parent] != NO_CARD && pile_of[parent] == pile_of[index] {
                        let mut walker = above[index];
                        let mut found_parent = false;
                        while walker != NO_CARD {
                            if !settled[usize::from(walker)] {
                                requirement.any_of[usize::from(requirement.any_len)] = walker;
                                requirement.any_len += 1;
                            }
                            if usize::from(walker) == parent {
                                found_parent = true;
                                break;
                            }
                            walker = above[usize::from(walker)];
                        }
                        // P lies below C: nothing is needed beyond P being a top card.
                        if !found_parent {
                            requirement.any_len = 0;
                        }
                    }
                }
            }
            // A face-down card moves only once the card on it has left.
            if face_down[index] && above[index] != NO_CARD {
                requirement.all_of[1] = above[index];
            }
            requirements[index] = Some(requirement);
        }
        requirements
    }
}

impl SolverGame for TbmSearch {
    type Game = ThreeBlindMice;

    fn state(&self) -> &ThreeBlindMice {
        &self.state
    }

    fn apply(&mut self, mv: TbmMove) -> Result<Outcome, MoveError> {
        let outcome = self.state.apply(mv)?;
        self.rehash_after(mv);
        Ok(outcome)
    }

    fn undo(&mut self, mv: TbmMove, outcome: &Outcome) {
        self.state.undo(mv, outcome);
        self.rehash_after(mv);
    }

    fn canonical_key(&self) -> u64 {
        let piles = self
            .pile_hashes
            .iter()
            .fold(0u64, |key, &hash| key.wrapping_add(mix64(hash)));
        let cells = (0..2)
            .filter_map(|cell| self.state.cell(cell))
            .fold(0u64, |key, card| key ^ CELL_CARD[card.index()]);
        piles ^ mix64(cells)
    }

    fn is_dead(&self) -> bool {
        if !self.options.dead_positions {
            return false;
        }
        if self.options.face_down_under_child && self.face_down_under_its_child() {
            return true;
        }
        let requirements = self.requirements();
        // Where a King's final move can go: a pile empty now, one emptied by
        // the final move of its bottom card (not a King), or one a finished run
        // leaves: under a King lying at the bottom now, or one moved there.
        let mut king_can_land = false;
        let mut bottoms: ArrayVec<u8, PILES> = ArrayVec::new();
        for pile in 0..PILES {
            match self.state.pile(pile).first() {
                Some(bottom) if bottom.rank() != KING => bottoms.push(bottom.index() as u8),
                // Empty, or a King at the bottom whose run may leave.
                _ => king_can_land = true,
            }
        }
        // Grow the set of final moves that could have happened, to a fixpoint.
        // A settled card never makes one, so it never counts as having moved.
        let mut happened = [false; 52];
        loop {
            let mut progress = false;
            for (index, requirement) in requirements.iter().enumerate() {
                let Some(requirement) = requirement else {
                    continue;
                };
                if happened[index] {
                    continue;
                }
                let has_happened = |card: u8| card != NO_CARD && happened[usize::from(card)];
                let all_done = requirement
                    .all_of
                    .iter()
                    .all(|&card| card == NO_CARD || has_happened(card));
                let any_done = requirement.any_len == 0
                    || requirement.any_of[..usize::from(requirement.any_len)]
                        .iter()
                        .any(|&card| has_happened(card));
                let ready = if requirement.needs_empty_pile {
                    // A King stops blocking by its final move, or by leaving with
                    // its finished run, which needs every other card of its suit.
                    let suit_linked = (index / 13 * 13..index / 13 * 13 + 12)
                        .all(|other| requirements[other].is_none() || happened[other]);
                    let lands = king_can_land
                        || bottoms.iter().any(|&card| has_happened(card))
                        || (KING_INDICES
                            .iter()
                            .any(|&king| king != index && happened[king]));
                    lands || suit_linked
                } else {
                    true
                };
                if all_done && any_done && ready {
                    happened[index] = true;
                    progress = true;
                }
            }
            if !progress {
                break;
            }
        }
        // Kings need not make a final move (their run may finish where they
        // lie); every other card must.
        requirements
            .iter()
            .zip(happened)
            .enumerate()
            .any(|(index, (requirement, happened))| {
                requirement.is_some() && !happened && index % 13 != 12
            })
    }

    fn search_moves(&self, moves: &mut Vec<TbmMove>) {
        self.state.legal_moves(moves);
        if self.options.safe_move {
            let safe = moves.iter().copied().find(|&mv| self.is_safe(mv));
            if let Some(mv) = safe {
                moves.clear();
                moves.push(mv);
                return;
            }
        }
        // Kings into empty piles: the first empty pile stands for all of them.
        let first_empty = (0..PILES).find(|&pile| self.state.pile(pile).is_empty());
        moves.retain(|&mv| match mv {
            TbmMove::PileToPile { to, .. } | TbmMove::CellToPile { to, .. } => {
                !self.state.pile(usize::from(to)).is_empty() || Some(usize::from(to)) == first_empty
            }
        });
        moves.sort_by_key(|&mv| std::cmp::Reverse(self.score(mv)));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::solver::shared_results::{Cache, once};
    use crate::solver::{Budget, Verdict, solve};

    fn verdict_name<M>(verdict: &Verdict<M>) -> &'static str {
        verdict.name()
    }

    /// The deals the verdict loops run: 1..=1000 in the slow tier.
    const FULL_DEALS: u64 = 1000;

    /// How many of deals 1..=`FULL_DEALS` the verdict loops run.
    fn n_deals(test: &str) -> u64 {
        crate::slow_tier::count(test, FULL_DEALS, 150)
    }

    /// The verdicts of deals 1..=1000 at `budget` positions with `options`,
    /// by seed from 1: solved once per test binary, since several tests
    /// compare or walk the same verdicts. Each line was replayed by `solve`.
    fn verdicts(options: TbmOptions, budget: u64) -> &'static [Verdict<TbmMove>] {
        static VERDICTS: Cache<(TbmOptions, u64), Vec<Verdict<TbmMove>>> = Mutex::new(Vec::new());
        once(&VERDICTS, (options, budget), || {
            (1..=n_deals("three_blind_mice::tests::verdicts"))
                .map(|seed| {
                    let search = TbmSearch::with_options(ThreeBlindMice::deal(seed), options);
                    solve(&search, Budget::positions(budget))
                        .expect("replay")
                        .verdict
                })
                .collect()
        })
        .as_slice()
    }

    /// Solves seeds 1..=1000 with `options` and with every shortcut on, and
    /// checks that every deal settled both ways gets the same verdict.
    /// Returns how many deals were compared.
    fn compare_verdicts(options: TbmOptions, budget: u64) -> usize {
        let mut compared = 0;
        let with = verdicts(TbmOptions::default(), budget);
        let without = verdicts(options, budget);
        for (seed, (with, without)) in (1..).zip(with.iter().zip(without)) {
            if with.is_settled() && without.is_settled() {
                assert_eq!(verdict_name(with), verdict_name(without), "seed {seed}");
                compared += 1;
            }
        }
        compared
    }

    #[test]
    fn safe_move_keeps_every_verdict() {
        let compared = compare_verdicts(
            TbmOptions {
                safe_move: false,
                ..TbmOptions::default()
            },
            30_000,
        );
        let n = n_deals("safe_move_keeps_every_verdict");
        let floor = crate::slow_tier::floor(900, FULL_DEALS, n);
        assert!(compared >= floor, "only {compared} deals settled both ways");
    }

    #[test]
    fn dead_positions_keep_every_verdict() {
        let compared = compare_verdicts(
            TbmOptions {
                dead_positions: false,
                ..TbmOptions::default()
            },
            30_000,
        );
        let n = n_deals("dead_positions_keep_every_verdict");
        let floor = crate::slow_tier::floor(300, FULL_DEALS, n);
        assert!(compared >= floor, "only {compared} deals settled both ways");
    }

    /// A sharper check of the dead-position rule: no position along a
    /// winning line, found with the rule off, is ever called dead.
    #[test]
    fn no_position_on_a_winning_line_is_dead() {
        let options = TbmOptions {
            dead_positions: false,
            ..TbmOptions::default()
        };
        let mut checked = 0;
        for (seed, verdict) in (1..).zip(verdicts(options, 30_000)) {
            let Verdict::Winnable(line) = verdict else {
                continue;
            };
            let mut state = ThreeBlindMice::deal(seed);
            for &mv in line {
                assert!(
                    !TbmSearch::new(state.clone()).is_dead(),
                    "seed {seed}: dead position on a winning line"
                );
                state.apply(mv).expect("the line is legal");
                checked += 1;
            }
        }
        let n = n_deals("no_position_on_a_winning_line_is_dead");
        let floor = crate::slow_tier::floor(5_000, FULL_DEALS, n);
        assert!(checked >= floor, "only {checked} positions checked");
    }

    /// Along random games, the first position called dead is checked with
    /// the rule off: the search without it must not find a win.
    #[test]
    fn positions_called_dead_are_not_winnable() {
        let options = TbmOptions {
            dead_positions: false,
            ..TbmOptions::default()
        };
        let mut rng = crate::conformance::TestRng::new(20);
        let mut moves = Vec::new();
        let mut checked = 0;
        let n = n_deals("positions_called_dead_are_not_winnable");
        for seed in 1..=n {
            let mut state = ThreeBlindMice::deal(seed);
            loop {
                if TbmSearch::new(state.clone()).is_dead() {
                    let verdict = solve(
                        &TbmSearch::with_options(state.clone(), options),
                        Budget::positions(20_000),
                    )
                    .expect("replay")
                    .verdict;
                    assert!(
                        !matches!(verdict, Verdict::Winnable(_)),
                        "seed {seed}: a dead position wins:\n{state}"
                    );
                    checked += 1;
                    // Positions after a dead one are mostly dead for the same reason.
                    break;
                }
                state.legal_moves(&mut moves);
                let Some(&mv) = moves.get(rng.below(moves.len().max(1))) else {
                    break;
                };
                state.apply(mv).expect("legal");
            }
        }
        let floor = crate::slow_tier::floor(700, FULL_DEALS, n);
        assert!(checked >= floor, "only {checked} dead positions checked");
    }

    /// A face-down card's child lying on it is there from the deal (cards
    /// land only on top cards), so the rule fires on a deal's whole game or
    /// never. Along random play from every deal of 1..=1000 it fires on,
    /// the position a few moves in is solved with no dead-position proof at
    /// all: it must never win, and small ones must be proved lost.
    #[test]
    fn face_down_under_its_child_keeps_every_verdict() {
        let without = TbmOptions {
            dead_positions: false,
            ..TbmOptions::default()
        };
        let mut rng = crate::conformance::TestRng::new(14);
        let mut moves = Vec::new();
        let (mut fired, mut proved_lost) = (0, 0);
        let n = n_deals("face_down_under_its_child_keeps_every_verdict");
        for seed in 1..=n {
            let mut state = ThreeBlindMice::deal(seed);
            if !TbmSearch::new(state.clone()).face_down_under_its_child() {
                continue;
            }
            fired += 1;
            for _ in 0..20 {
                state.legal_moves(&mut moves);
                let Some(&mv) = moves.get(rng.below(moves.len().max(1))) else {
                    break;
                };
                state.apply(mv).expect("legal");
            }
            let search = TbmSearch::new(state.clone());
            assert!(search.is_dead(), "seed {seed}: the rule stopped firing");
            let verdict = solve(
                &TbmSearch::with_options(state.clone(), without),
                Budget::positions(20_000),
            )
            .expect("replay")
            .verdict;
            assert!(
                !matches!(verdict, Verdict::Winnable(_)),
                "seed {seed}: a position with a face-down card under its child wins:\n{state}"
            );
            proved_lost += usize::from(verdict == Verdict::Unwinnable);
        }
        let floor = crate::slow_tier::floor(100, FULL_DEALS, n);
        assert!(fired >= floor, "the rule fired on only {fired} deals");
        assert!(
            proved_lost >= fired * 9 / 10,
            "only {proved_lost} of {fired} positions proved lost without the rule"
        );
    }

    #[test]
    fn face_down_under_its_child_fires() {
        let without = TbmOptions {
            face_down_under_child: false,
            ..TbmOptions::default()
        };
        let dead = |state: &ThreeBlindMice, options| {
            TbmSearch::with_options(state.clone(), options).is_dead()
        };
        // Each position: whether it is dead with the rule, and without it.
        let cases = [
            // The Queen of hearts lies face up on its King, face down.
            ("p1: Kh | Qh", true, false),
            // The deals' pattern: a King face down at the bottom with its
            // Queen face down on it.
            ("p1: Kd Qd | 2s\np2: 3s", true, false),
            // Face up, the Queen lies on its King as she should.
            ("p1: Kh Qh", false, false),
            // The card on the face-down King is not its child.
            ("p1: Kh | Qs", false, false),
        ];
        for (text, with_rule, without_rule) in cases {
            let state = ThreeBlindMice::from_fixture(text).expect("fixture");
            assert_eq!(dead(&state, TbmOptions::default()), with_rule, "{text}");
            assert_eq!(dead(&state, without), without_rule, "{text}");
        }
        // The five deals of 1..=10,000 a million positions left unknown
        // (docs/WINNABILITY.md) are each dead from the deal, and the rest of
        // the proof would not see it.
        for seed in [1916, 2053, 2373, 5305, 8150] {
            let deal = ThreeBlindMice::deal(seed);
            assert!(dead(&deal, TbmOptions::default()), "seed {seed}");
            assert!(!dead(&deal, without), "seed {seed}");
        }
    }

    /// `solve` replays every line it finds through the rules and reports a
    /// line that fails as an error (`a_line_that_does_not_replay_is_reported_not_trusted`
    /// in `solver` shows it does), so a line it returns is not replayed again.
    #[test]
    fn winning_lines_replay_through_the_rules() {
        let mut winnable = 0;
        let n = crate::slow_tier::count("winning_lines_replay_through_the_rules", 5000, 500);
        for seed in 1..=n {
            let deal = ThreeBlindMice::deal(seed);
            if let Verdict::Winnable(_) = solve(&TbmSearch::new(deal), Budget::positions(20_000))
                .expect("replay")
                .verdict
            {
                winnable += 1;
            }
        }
        let floor = crate::slow_tier::floor(1000, 5000, n);
        assert!(winnable >= floor, "only {winnable} winning lines replayed");
    }

    /// The moves `search_moves` offers in a fixture position, in notation.
    fn offered(text: &str, options: TbmOptions) -> Vec<String> {
        crate::solver::offered_in_notation(&TbmSearch::with_options(
            ThreeBlindMice::from_fixture(text).expect("fixture"),
            options,
        ))
    }

    #[test]
    fn wider_safe_moves_fire() {
        let narrow = TbmOptions {
            wider_safe_move: false,
            ..TbmOptions::default()
        };
        // Each position: the one move the wider rule plays alone, and how
        // many moves are offered without it.
        let cases = [
            // A buried Five of hearts (the Nine of clubs on it) onto a Six
            // fixed on its King; the Seven of diamonds may not go alone (the
            // Nine of diamonds under the Eight is nowhere in play).
            (
                "p1: Kh Qh Jh Th 9h 8h 7h 6h\np2: 5h 9c\np3: 8d\np4: 7d Jc",
                "5h>1",
                2,
            ),
            // The Queen of diamonds onto its King, with an unsettled Four of
            // clubs under the King whose parent is fixed in pile 2. The King
            // in a cell keeps the King of diamonds from moving alone.
            (
                "p1: 4c Kd\np2: Kc Qc Jc Tc 9c 8c 7c 6c 5c Js\np3: Qd\nc1: Ks",
                "Qd>1",
                3,
            ),
            // The last King that needs an empty pile.
            ("p1: 4c Kd\np2: Kc\np3: 9s 8h\nc1: 7h", "Kd>4", 2),
        ];
        for (text, alone, without) in cases {
            assert_eq!(offered(text, TbmOptions::default()), [alone], "{text}");
            assert_eq!(offered(text, narrow).len(), without, "{text}");
        }
        // Not safe: a card under the King needs a parent in the mover's own
        // pile (the Five of clubs under the Queen).
        let own_pile = "p1: 4c Kd\np2: 5c Qd\nc1: Ks";
        assert_eq!(offered(own_pile, TbmOptions::default()).len(), 3);
    }

    #[test]
    fn key_ignores_pile_order_but_not_contents() {
        let a = ThreeBlindMice::from_fixture("p1: Kh Qh\np2: 9c\nc1: 2d").expect("fixture");
        let b = ThreeBlindMice::from_fixture("p2: Kh Qh\np5: 9c\nc2: 2d").expect("fixture");
        let c = ThreeBlindMice::from_fixture("p1: Kh Qh\np2: 9c\nc1: 3d").expect("fixture");
        let d = ThreeBlindMice::from_fixture("p1: Kh | Qh\np2: 9c\nc1: 2d").expect("fixture");
        let key = |state: &ThreeBlindMice| TbmSearch::new(state.clone()).canonical_key();
        assert_eq!(key(&a), key(&b));
        assert_ne!(key(&a), key(&c));
        assert_ne!(key(&a), key(&d));
    }

    #[test]
    fn incremental_hashes_match_fresh_ones_during_play() {
        let mut search = TbmSearch::new(ThreeBlindMice::deal(5));
        let mut moves = Vec::new();
        let mut played = Vec::new();
        loop {
            search.state().legal_moves(&mut moves);
            let Some(&mv) = moves.last() else { break };
            let outcome = search.apply(mv).expect("legal");
            assert_eq!(
                search.canonical_key(),
                TbmSearch::new(search.state().clone()).canonical_key()
            );
            played.push((mv, outcome));
        }
        while let Some((mv, outcome)) = played.pop() {
            search.undo(mv, &outcome);
            assert_eq!(
                search.canonical_key(),
                TbmSearch::new(search.state().clone()).canonical_key()
            );
        }
    }
}
