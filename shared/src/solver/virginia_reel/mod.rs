//! The solver's view of Virginia Reel.
//!
//! [`ReelSearch`] wraps a [`VirginiaReel`] position for the generic search of
//! [`crate::solver`]: it delegates the rules (so every move it plays is
//! checked by the rules engine and undone exactly), keeps a position key up to
//! date as moves are made and unmade, chooses which moves to try, and proves
//! positions lost early.
//!
//! # The shape of the game
//!
//! Every move is final. A build or a release puts a card on a home pile,
//! where it stays; every filler of a release chain and both cards of a swap
//! become home base cards, which never move again; an Ace that leaves is gone;
//! a deal cannot be taken back. So a game is at most about a hundred moves
//! long and the positions form a DAG: the search never wanders in circles. Its
//! cost is breadth: between two deals the same handful of builds and releases
//! can be played in any subset and order, and a deal can come after any of
//! them. Nearly all of the search is spent in the last three deals.
//!
//! # Layout
//!
//! This file is the search driver: [`ReelSearch`] and the state it keeps,
//! the schedule of passes, rounds and the best-first phase (below), and the
//! [`SolverGame`] implementation that ties the parts together. Each part
//! has its own file, with the argument that makes it sound in its docs:
//! - `key.rs`: the position key, its symmetries, and its shares kept up to
//!   date as moves are made and unmade;
//! - `rows.rs`: the rows' counts (home pile tops, copies home, misplaced
//!   cards), which move generation and the checks read;
//! - `moves.rs`: the moves the search generates, their order, and the
//!   safe moves played alone;
//! - `freezing.rs`: the moves passed over that the later siblings may not
//!   play;
//! - `relaxation.rs` and `precedence.rs`: the two checks that prove a
//!   position lost (dead positions), which make proofs of lost deals short;
//! - `lost.rs`: the table of positions proved lost, shared by the passes
//!   and rounds of one search;
//! - `tests.rs`: each rule's soundness on many positions, the key's
//!   symmetries and the checks on fixtures.
//!
//! # Discrepancy passes, then restarts
//!
//! The time to a win is heavy-tailed: a depth-first search that goes wrong
//! near the root can spend millions of positions below that mistake. So the
//! search first makes six limited-discrepancy passes
//! ([`SolverGame::discrepancy_passes`]) that stray from the order of `moves.rs` at
//! most 0, 1, .., 5 times along a line, within 40% of the budget
//! ([`SolverGame::discrepancy_budget`]); then it restarts on the Luby
//! schedule in units of 4,096 positions ([`SolverGame::restart_unit`]), each
//! round with a fresh table and, after the first, the moves of each
//! position in an order shuffled by a hash of the position and the round
//! (the deal stays last). Neither can change a verdict: a win is replayed,
//! and a loss is proved only by a pass that never had to cut a line short
//! or a round that ran out of positions, each a complete search (once
//! the stock is out a pass has no limit: "The endgame in the passes"). The
//! freezing of `freezing.rs` holds for any order that is a fixed function of the
//! position, which the shuffled order is within a round.
//!
//! Measured on seeds 1..=40 at 1,000,000 positions (winnable, unwinnable,
//! unknown): the full search alone 17, 1, 22; six passes with the whole
//! budget 24, 1, 15 (three passes: 18 wins; ten or thirty passes change
//! nothing, the budget is spent within the first six); restarts alone 24,
//! 1, 15 (but not the same 24, and most found sooner); passes within 40%
//! then restarts 26, 1, 13 (30% with units of 8,192: 25 wins; 60%: 26).
//! All but the last were measured before the relaxation stopped carrying a
//! freeze onto newly dealt cards (a false "lost" the rule tests caught);
//! the last was measured again after the fix, with the same counts.
//!
//! # Best-first phase
//!
//! Beside the restart rounds runs the best-first search of
//! `solver::best_first` on half of what the discrepancy passes leave (so
//! 300,000 of a million when the passes spend their 40%), a share of what
//! the rounds spend at a time, when what the passes leave is at least
//! 100,000 positions (`BEST_FIRST_FROM`: so from a budget of about
//! 167,000; not at the bots' 50,000 per guess, nor in the hint tests).
//! It expands the open position of highest score, where the score is, per
//! unit, -10 for each card on a reserve, -10 for each misplaced card, and
//! +3 for each reserve top that can be used at once (a card of rank 5 or
//! more whose parent tops a home pile, or a base card of a row with a
//! misplaced card that has somewhere to go). Why these: a card on a reserve is the game's
//! trouble (it leaves only from the top, and every deal puts a card on
//! it), and counting reserve cards rather than cards home compares
//! positions across deals fairly: a deal adds eight reserve cards, so it
//! ranks below the builds and releases still open before it, and a
//! position three deals on ranks beside an earlier one only if it has as
//! few cards left on the reserves. A misplaced card needs a release (a
//! target and a filler), so it weighs like a reserve card. The usable tops
//! break ties toward positions with something to play. No cost per move
//! (a cost of 5 per move lost most of what the search alone wins), no
//! weight for how deep cards lie (the sum over piles of pairs of cards,
//! or the cards lying on a usable one: both won fewer). Measured with the
//! search alone at 200,000 positions on the 62 deals of seeds 1–200 that
//! the passes and rounds leave unknown: these weights won 8 of them, the
//! others 1 to 8. With the phase, seeds 1–200 at a million positions give
//! 142 won, 5 lost, 53 unknown (133, 5, 62 before; with a share of 30%,
//! 141, 5, 54), and no deal settled before goes unknown; seeds
//! 1,001–1,200, on which the weights were not chosen, give 126, 14, 60
//! (119, 14, 67 before, 124, 14, 62 with 30%: 8 deals newly won, one,
//! seed 1085, newly unknown). `docs/WINNABILITY.md` has the figures.
//!
//! A loss the best-first search reports (its queue emptied) is as sound as
//! one a depth-first round proves, for the same reasons. What is frozen
//! after a move is a fixed function of the position before it and the
//! move (the moves tried before it in the order of round 0, the order the
//! phase uses), and it is part of the key, so replaying a node's moves
//! rebuilds the same freezes, and two positions with one key are the same
//! position with the same freezes up to the key's symmetries. The children
//! of a position split its winning lines that respect its freezes between
//! them (the freezing argument of `freezing.rs`), whatever order they are expanded
//! in; `search_moves` gives no move for a position it proves lost under
//! its freezes (the dead-position checks, and the table of lost positions,
//! which the passes and rounds fill as the phase runs: each of its entries
//! holds in any later search, see `lost.rs`). So when every
//! position generated has been expanded and none is won, each is lost
//! under its freezes, by induction on the length of the shortest winning
//! line that respects them: the child that covers that line has a shorter
//! one. The phase never tells the game a position was proved lost (it
//! does not call [`SolverGame::proved_lost`]), so it adds nothing to the
//! table. The test
//! `the_best_first_search_alone_proves_the_losses_a_round_proves` checks
//! that, with the table off, it proves the same losses as one round after
//! as many positions.
//!
//! # The endgame in the passes
//!
//! Once the stock is out, a discrepancy pass searches everything below a
//! position without its limit, as a round does
//! ([`SolverGame::unlimited_below`]): a pass that reaches an endgame
//! proves it lost or wins it there and then, and keeps its losses in the
//! table for the later passes and rounds, where a pass cut at its limit
//! would prove nothing below the cut. Sound for the reasons `lost.rs` gives: the
//! positions below get no limit, so no line below them is cut; the pass's
//! table marks them searched to the end when they are entered, and a
//! position met again is never one on the current line (a DAG), so it was
//! searched to the end and lost. Above the endgame the pass counts its
//! strays as before, so a pass still proves the deal lost only if it cut
//! no line. The test `the_first_pass_proves_a_lost_endgame_by_itself`
//! checks that the hook fires; `positions_told_lost_are_lost` caught a
//! planted bug that called an endgame searched to the end while its lines
//! were still cut. Measured at a million positions (`docs/WINNABILITY.md`): seeds 1–200 give the
//! same verdicts deal for deal (142 won, 5 lost, 53 unknown) in 4.2% fewer
//! positions; seeds 1,001–1,200 give 128 won, 14 lost, 58 unknown (126,
//! 14, 60 before: seeds 1085 and 1198 newly won, none lost) in 8.5% fewer.
//!
//! Dropping every freeze once the stock is out, so that each endgame loss
//! holds under any freezes, was tried and not kept: endgames reached under
//! different pre-deal choices are rarely the same position, and without
//! freezes each is bigger (the same document has the figures).
//!
//! Each rule can be switched off through [`Pruning`]; the tests compare
//! verdicts with and without each on late positions of a thousand deals and on
//! positions built backwards from a win, which must never be called lost.

mod freezing;
mod key;
mod lost;
mod moves;
mod precedence;
mod relaxation;
mod rows;
#[cfg(test)]
mod tests;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::card::{ACE, Card, Suit};
use crate::games::virginia_reel::{POSITIONS, RESERVES, ROWS, ReelMove, VirginiaReel};
use crate::rules::{MoveError, Outcome, Rules};
use crate::solver::SolverGame;
use crate::solver::zobrist::mix64;

use freezing::Frozen;
use key::Futures;
use lost::LostTable;
use relaxation::RelaxedBefore;
use rows::Rows;

/// The most deals that can remain (nine of eight cards).
const MAX_DEALS_LEFT: usize = 9;
/// Limited-discrepancy passes before the restart rounds (module docs).
const DISCREPANCY_PASSES: u32 = 6;
/// The share of a search's budget, in percent, that the discrepancy passes
/// may spend; the restart rounds get the rest (module docs).
const DISCREPANCY_SHARE_PERCENT: u64 = 40;
/// The unit of the restart schedule, in positions (module docs).
const RESTART_UNIT: u64 = 4096;
/// The best-first phase's share of what the discrepancy passes leave, in
/// percent (module docs, "Best-first phase"): 50 settled one deal more of
/// seeds 1–200 than 30, and two more of seeds 1,001–1,200, and lost none
/// that 30 settled.
const BEST_FIRST_PERCENT: u64 = 50;
/// The smallest budget (what the passes leave) the best-first phase takes
/// a share of (module docs): a small budget is better spent on the restart
/// rounds' first rounds, as in Indian and Midshipman, and the bots' budget
/// of 50,000 per guess stays as it was. Budgets between were not measured.
const BEST_FIRST_FROM: u64 = 100_000;
/// The weights of the best-first score, per card on a reserve, per
/// misplaced card and per reserve top that can be used at once (module
/// docs, "Best-first phase").
const WEIGHT_RESERVE_CARD: i64 = 10;
const WEIGHT_MISPLACED: i64 = 10;
const WEIGHT_USABLE_TOP: i64 = 3;

/// A placeholder card for fixed arrays.
const NO_CARD: Card = Card::new(Suit::Clubs, ACE);

/// The base rank of a row: 2, 3 or 4.
const fn base_rank(row: usize) -> u8 {
    row as u8 + 2
}

/// The row a base card belongs in, or `None` for other ranks.
const fn home_row(card: Card) -> Option<usize> {
    match card.rank() {
        2..=4 => Some(card.rank() as usize - 2),
        _ => None,
    }
}

/// The card a card of rank 5 or more builds on: same suit, three ranks lower.
fn parent(card: Card) -> Option<Card> {
    (card.rank() >= 5).then(|| Card::new(card.suit(), card.rank() - 3))
}

/// Which pruning rules and safe moves the search uses. Each is sound on its
/// own (see the docs of the module that holds it); switching one off is for the tests that check
/// exactly that.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pruning {
    /// Play a build onto the last free parent at once, alone.
    pub safe_builds: bool,
    /// Play the release of a row's last misplaced card at once, alone.
    pub safe_releases: bool,
    /// A move passed over for a later sibling is frozen.
    pub freeze_passed_moves: bool,
    /// Declare a position lost when the relaxed game cannot win it.
    pub relaxation: bool,
    /// Declare a position lost when the precedence counts forbid it.
    pub precedence: bool,
    /// In the precedence counts, also match the copies of a card to the
    /// parents they go onto and a row's gaps to the base cards that fill
    /// them (`precedence` module docs, "The matchings").
    pub matchings: bool,
    /// In the precedence counts, also order the cards of the deals to come
    /// against the cards of the piles they land on (`precedence` module docs, "The
    /// deals in the counts").
    pub deal_order: bool,
    /// In the precedence counts, also put each card the relaxation cannot
    /// bring home before a deal after that deal (`precedence` module docs, "The
    /// relaxation's deals in the counts").
    pub relaxed_deals: bool,
    /// Declare a position lost when an earlier pass or round of the same
    /// search proved it lost under no more freezes.
    pub lost_table: bool,
}

impl Pruning {
    /// Every rule on: what the solver uses.
    pub const ALL: Pruning = Pruning {
        safe_builds: true,
        safe_releases: true,
        freeze_passed_moves: true,
        relaxation: true,
        precedence: true,
        matchings: true,
        deal_order: true,
        relaxed_deals: true,
        lost_table: true,
    };
    /// Every rule off: the search still uses its key and move generation.
    pub const NONE: Pruning = Pruning {
        safe_builds: false,
        safe_releases: false,
        freeze_passed_moves: false,
        relaxation: false,
        precedence: false,
        matchings: false,
        deal_order: false,
        relaxed_deals: false,
        lost_table: false,
    };
}

/// A Virginia Reel position with what the solver keeps up to date beside it:
/// the key's shares, the rows' counts and what is frozen.
#[derive(Clone, Debug)]
pub struct ReelSearch {
    state: VirginiaReel,
    /// Each row position's share of the key.
    position_shares: [u64; POSITIONS],
    /// Each reserve pile's share of the key (contents mixed with future).
    pile_shares: [u64; RESERVES],
    /// The hash of the cards the remaining deals put on each pile, computed
    /// once from the stock.
    futures: Futures,
    /// What is frozen (`freezing` module docs).
    frozen: Frozen,
    /// The frozen sets before each move played, for undo.
    frozen_before: Vec<Frozen>,
    /// The frozen set's share of the key.
    frozen_share: u64,
    /// The sum of every share.
    key: u64,
    rows: Rows,
    /// Room for the move list `apply` rebuilds to know what it passes over.
    scratch: Vec<ReelMove>,
    pruning: Pruning,
    /// Limited-discrepancy passes before the full search.
    passes: u32,
    /// Positions per unit of the restart schedule; `None` for one search.
    restart_unit: Option<u64>,
    /// The best-first phase's share of the budget, in percent, and the
    /// smallest budget it takes a share of (module docs).
    best_first_percent: u64,
    best_first_from: u64,
    /// Breaks ties in the move order; 0 in the first round of a search.
    round_salt: u64,
    /// Positions proved lost, shared by every clone of this search: the
    /// passes and rounds of one `solve` (`lost` module docs).
    lost: Rc<RefCell<LostTable>>,
    /// The key of the last position a dead-position check proved lost:
    /// those checks read no frozen release or swap, so that loss is
    /// remembered under the frozen builds alone.
    dead_key: Cell<u64>,
    /// Whether the discrepancy passes search the endgame to the end
    /// (module docs, "The endgame in the passes").
    endgame_unlimited: bool,
}

impl ReelSearch {
    /// The search's view of `state`, with every rule on.
    pub fn new(state: VirginiaReel) -> ReelSearch {
        ReelSearch::with_pruning(state, Pruning::ALL)
    }

    /// As [`ReelSearch::new`], choosing the rules used.
    pub fn with_pruning(state: VirginiaReel, pruning: Pruning) -> ReelSearch {
        let futures = Futures::of(state.stock());
        let mut search = ReelSearch {
            state,
            position_shares: [0; POSITIONS],
            pile_shares: [0; RESERVES],
            futures,
            frozen: Frozen::default(),
            frozen_before: Vec::with_capacity(128),
            frozen_share: 0,
            key: 0,
            rows: Rows::new(),
            scratch: Vec::with_capacity(64),
            pruning,
            passes: DISCREPANCY_PASSES,
            restart_unit: Some(RESTART_UNIT),
            best_first_percent: BEST_FIRST_PERCENT,
            best_first_from: BEST_FIRST_FROM,
            round_salt: 0,
            lost: Rc::default(),
            dead_key: Cell::new(0),
            endgame_unlimited: true,
        };
        for position in 0..POSITIONS {
            search.position_shares[position] = search.position_share(position);
            search.rows.learn(position, search.state.position(position));
        }
        for pile in 0..RESERVES {
            search.pile_shares[pile] = search.pile_share(pile);
        }
        search.frozen_share = search.frozen_term();
        search.key = search.fresh_key();
        search
    }

    fn deals_left(&self) -> usize {
        (self.state.stock().len() / RESERVES).min(MAX_DEALS_LEFT)
    }

    /// The misplaced card at `position`, which the caller knows is misplaced.
    fn card_at(&self, position: usize) -> Card {
        self.state.position(position)[0]
    }

    /// The best-first score (module docs, "Best-first phase"): fewer
    /// cards on the reserves and fewer misplaced cards are better, and a
    /// reserve top that can be used at once is worth a little.
    fn best_first_score_now(&self) -> i64 {
        // Rows with a misplaced card that could leave now if a base card
        // of the row filled its gap.
        let mut gap_ready = [false; ROWS];
        for (row, ready) in gap_ready.iter_mut().enumerate() {
            let mut rest = self.rows.misplaced[row];
            while rest != 0 {
                let position = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                if self.release_target(position).is_some() {
                    *ready = true;
                    break;
                }
            }
        }
        let (mut reserve_cards, mut usable_tops) = (0i64, 0i64);
        for pile in 0..RESERVES {
            let cards = self.state.reserve(pile);
            reserve_cards += cards.len() as i64;
            let usable = cards.last().is_some_and(|&top| match home_row(top) {
                Some(row) => gap_ready[row],
                None => {
                    parent(top).is_some_and(|parent| self.rows.pile_topped_by(parent).is_some())
                }
            });
            usable_tops += i64::from(usable);
        }
        let misplaced: i64 = self
            .rows
            .misplaced
            .iter()
            .map(|set| i64::from(set.count_ones()))
            .sum();
        -WEIGHT_RESERVE_CARD * reserve_cards - WEIGHT_MISPLACED * misplaced
            + WEIGHT_USABLE_TOP * usable_tops
    }
}

impl SolverGame for ReelSearch {
    type Game = VirginiaReel;

    fn state(&self) -> &VirginiaReel {
        &self.state
    }

    fn apply(&mut self, mv: ReelMove) -> Result<Outcome, MoveError> {
        let mut siblings = std::mem::take(&mut self.scratch);
        let frozen = self.frozen_after(mv, &mut siblings);
        self.scratch = siblings;
        let outcome = self.state.apply(mv)?;
        self.update_after(mv);
        self.frozen_before.push(self.frozen.clone());
        self.set_frozen(frozen);
        Ok(outcome)
    }

    fn undo(&mut self, mv: ReelMove, outcome: &Outcome) {
        self.state.undo(mv, outcome);
        self.update_after(mv);
        let frozen = self.frozen_before.pop().unwrap_or_default();
        self.set_frozen(frozen);
    }

    fn canonical_key(&self) -> u64 {
        self.key
    }

    fn discrepancy_passes(&self) -> u32 {
        self.passes
    }

    fn discrepancy_budget(&self, budget: u64) -> u64 {
        budget / 100 * DISCREPANCY_SHARE_PERCENT
    }

    fn best_first_budget(&self, budget: u64) -> u64 {
        if budget < self.best_first_from {
            return 0;
        }
        // Budgets are far below u64::MAX / 100.
        budget.saturating_mul(self.best_first_percent.min(100)) / 100
    }

    fn best_first_score(&self, _depth: u32) -> i64 {
        self.best_first_score_now()
    }

    fn restart_unit(&self, _budget: u64) -> Option<u64> {
        self.restart_unit
    }

    fn unlimited_below(&self) -> bool {
        self.endgame_unlimited && self.state.stock().is_empty()
    }

    fn set_round(&mut self, round: u64) {
        self.round_salt = if round == 0 { 0 } else { mix64(round) };
    }

    fn proved_lost(&mut self) {
        if self.pruning.lost_table {
            self.remember_lost();
        }
    }

    fn search_moves(&self, moves: &mut Vec<ReelMove>) {
        moves.clear();
        if self.state.is_won() {
            return;
        }
        if self.pruning.lost_table && self.is_known_lost() {
            return;
        }
        let dead = if self.pruning.relaxation {
            let mut relaxed: RelaxedBefore = [[0; 52]; MAX_DEALS_LEFT];
            self.relax(Some(&mut relaxed))
                || (self.pruning.precedence
                    && self.is_dead_by_precedence_given(
                        self.pruning.relaxed_deals.then_some(&relaxed),
                    ))
        } else {
            self.pruning.precedence && self.is_dead_by_precedence()
        };
        if dead {
            self.dead_key.set(self.key);
        } else {
            self.moves_in_order(moves);
        }
    }
}
