//! Best-first search: the phase of [`crate::solver::solve`] that expands the
//! most promising open position first, as scored by
//! [`SolverGame::best_first_score`].
//!
//! A depth-first search commits to its first move at every level and only
//! leaves a subtree once it has searched all of it; a mistake near the root
//! can cost any budget (the restarts bound that cost, they do not remove
//! it). A best-first search instead keeps every position it has generated
//! and not yet expanded in a priority queue and always expands the best,
//! so it leaves a bad subtree as soon as something elsewhere scores higher.
//! The two fail on different deals, so [`crate::solver::solve`] runs them
//! side by side as a portfolio.
//!
//! # Several searches
//!
//! How a best-first search ranks positions decides which hard deals it
//! wins, and two rankings win different ones. So the phase may itself be
//! a portfolio ([`SolverGame::best_first_searches`]): several searches
//! from the same start, each prepared by
//! [`SolverGame::set_best_first_search`] (a different weight in its
//! score), sharing the phase's budget in equal parts and run one after
//! the other each time the phase is given more. Each keeps its own queue,
//! nodes and table; a search gets the same part of a budget however the
//! phase is paced, so the phase wins a deal at a budget exactly when one
//! of its searches wins it within its part. A loss needs only one search
//! whose queue empties (all of them meet the same positions), though it
//! comes after the others have spent as much.
//!
//! # Memory
//!
//! A position of a two-deck game is a few hundred bytes, and a search of a
//! million positions generates several million. So no position is kept:
//! an expanded position is a node (its parent node, the move from it, its
//! depth: 12 bytes in Indian and Midshipman), and an open position is a
//! queue entry (its score, a sequence number, its parent node and the
//! move: 16 bytes). The search holds one position, the last expanded, with
//! the line of moves from the root that reaches it; to expand another it
//! takes back moves to the two positions' last common node and plays the
//! moves down from there (the next position is often a child of the last,
//! one move away). A table of the canonical keys of every position
//! generated keeps each from being queued twice.
//!
//! # Verdicts
//!
//! A win is returned only after its line was replayed from the start
//! through the bare rules engine, as every search's line is.
//!
//! A loss is reported when the queue empties (with budget to spare or by
//! the budget's last position), and only if no step failed:
//! then every position reachable from the start by the moves
//! [`SolverGame::search_moves`] offers, without passing through a position
//! [`SolverGame::is_dead`] calls dead, has been generated (a position is
//! queued when first generated, and each queued one was expanded), and none
//! was won. That is exactly the set of positions a round of the depth-first
//! search visits before it proves a loss, with the same keys, the same
//! pruned moves and the same dead positions; which order visits them does
//! not change the set, so the argument that makes a finished depth-first
//! round a proof makes this one too.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rustc_hash::FxHashSet;

use crate::rules::{Outcome, Rules};
use crate::solver::{
    Budget, MoveOf, ReplayFailure, STOP_CHECK_INTERVAL, SolverGame, Verdict, verify_line,
};

/// An expanded position: how it was reached.
struct Node<M> {
    /// The node it was reached from; the root's is itself.
    parent: u32,
    /// Moves from the root.
    depth: u32,
    /// The move from the parent; `None` for the root.
    mv: Option<M>,
}

/// A generated position waiting to be expanded.
struct Open<M> {
    /// [`SolverGame::best_first_score`] of the position, held in 32 bits
    /// (scores beyond them are clamped, which changes an order, never a
    /// verdict) so that an entry is 16 bytes: higher first.
    score: i32,
    /// When it was generated: among equal scores the latest goes first, so
    /// ties go depth first, and the order is fixed.
    sequence: u32,
    /// The node it is reached from, and the move.
    parent: u32,
    mv: M,
}

impl<M> PartialEq for Open<M> {
    fn eq(&self, other: &Open<M>) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<M> Eq for Open<M> {}

impl<M> PartialOrd for Open<M> {
    fn partial_cmp(&self, other: &Open<M>) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<M> Ord for Open<M> {
    fn cmp(&self, other: &Open<M>) -> Ordering {
        (self.score, self.sequence).cmp(&(other.score, other.sequence))
    }
}

/// One move of the line to the position the search holds.
struct Step<M> {
    /// The node it reaches.
    node: u32,
    mv: M,
    outcome: Outcome,
}

/// The best-first phase: the game's portfolio of searches
/// ([`SolverGame::best_first_searches`]), which share its budget in equal
/// parts; [`BestFirst::run`] goes on where the last call stopped.
pub(crate) struct BestFirst<G: SolverGame> {
    /// Each search, with the positions it has expanded.
    searches: Vec<(Search<G>, u64)>,
}

impl<G: SolverGame> BestFirst<G> {
    /// The phase from `start`, nothing expanded yet: search `i` starts
    /// from a copy prepared by [`SolverGame::set_best_first_search`].
    pub(crate) fn new(start: &G) -> BestFirst<G> {
        let searches = (0..start.best_first_searches().max(1))
            .map(|index| {
                let mut prepared = start.clone();
                prepared.set_best_first_search(index);
                (Search::new(&prepared), 0)
            })
            .collect();
        BestFirst { searches }
    }

    /// Runs each search until it has spent its part of `budget.positions`
    /// (the first searches take one more when it does not divide evenly),
    /// the deal is settled or `should_stop` says so. `positions` counts the
    /// positions all of them expanded, and is their sum on entry. Returns
    /// the verdict when one search settles the deal, `None` otherwise.
    ///
    /// A part only grows with the budget, so a search run in shares finds
    /// what it finds in one run, and the portfolio wins at a budget exactly
    /// the deals some search wins within its part. A loss proved by one
    /// search is the portfolio's: each searches every position reachable.
    pub(crate) fn run(
        &mut self,
        budget: Budget<'_>,
        positions: &mut u64,
    ) -> Result<Option<Verdict<MoveOf<G>>>, ReplayFailure> {
        let count = self.searches.len() as u64;
        let mut result = Ok(None);
        for (index, (search, spent)) in (0..).zip(self.searches.iter_mut()) {
            let part = budget.positions / count + u64::from(index < budget.positions % count);
            if *spent >= part {
                continue;
            }
            let share = Budget {
                positions: part,
                should_stop: budget.should_stop,
            };
            result = search.run(share, spent);
            // Settled, stopped by `should_stop`, or failed.
            if !matches!(result, Ok(None)) || *spent < part {
                break;
            }
        }
        *positions = self.searches.iter().map(|(_, spent)| spent).sum();
        result
    }
}

/// One best-first search that can be run a share of its budget at a time:
/// [`Search::run`] goes on where the last call stopped.
struct Search<G: SolverGame> {
    /// The position searched, as given (for the replay of a line).
    start: G,
    /// The position of the last node of `line`.
    state: G,
    /// Every expanded position; node 0 is the start, once expanded.
    nodes: Vec<Node<MoveOf<G>>>,
    /// The moves from the start to `state`: `line[d]` reaches depth d + 1.
    line: Vec<Step<MoveOf<G>>>,
    open: BinaryHeap<Open<MoveOf<G>>>,
    /// The canonical key of every position generated.
    seen: FxHashSet<u64>,
    /// Whether every step so far went as planned (see the module docs);
    /// only then does an empty queue prove a loss.
    sound: bool,
    /// Positions queued so far: the queue's tie-break.
    generated: u32,
    /// Reused buffers.
    moves: Vec<MoveOf<G>>,
    down: Vec<u32>,
}

impl<G: SolverGame> Search<G> {
    /// A search from `start`, nothing expanded yet.
    fn new(start: &G) -> Search<G> {
        Search {
            start: start.clone(),
            state: start.clone(),
            nodes: Vec::new(),
            line: Vec::new(),
            open: BinaryHeap::new(),
            seen: FxHashSet::default(),
            sound: true,
            generated: 0,
            moves: Vec::new(),
            down: Vec::new(),
        }
    }

    /// Expands positions until `*positions` reaches `budget.positions`, the
    /// deal is settled or `should_stop` says so. `positions` counts expanded
    /// positions, as the depth-first search does, and goes on from its value
    /// on entry. Returns the verdict when settled, `None` otherwise.
    fn run(
        &mut self,
        budget: Budget<'_>,
        positions: &mut u64,
    ) -> Result<Option<Verdict<MoveOf<G>>>, ReplayFailure> {
        if self.nodes.is_empty() {
            if *positions >= budget.positions {
                return Ok(None);
            }
            // The start: expanded like any other position.
            self.seen.insert(self.state.canonical_key());
            self.nodes.push(Node {
                parent: 0,
                depth: 0,
                mv: None,
            });
            *positions += 1;
            if self.state.is_dead() {
                return Ok(Some(Verdict::Unwinnable));
            }
            if let Some(verdict) = self.expand(0)? {
                return Ok(Some(verdict));
            }
        }
        while *positions < budget.positions {
            let Some(next) = self.open.pop() else {
                return Ok(self.sound.then_some(Verdict::Unwinnable));
            };
            if !self.go_to(next.parent) {
                self.sound = false;
                continue;
            }
            let Ok(outcome) = self.state.apply(next.mv) else {
                // It applied when it was generated, from the same position.
                self.sound = false;
                continue;
            };
            let Ok(node) = u32::try_from(self.nodes.len()) else {
                // Four billion nodes: no budget in use comes near it.
                return Ok(None);
            };
            let depth = self.nodes[next.parent as usize].depth + 1;
            self.nodes.push(Node {
                parent: next.parent,
                depth,
                mv: Some(next.mv),
            });
            self.line.push(Step {
                node,
                mv: next.mv,
                outcome,
            });
            *positions += 1;
            if self.state.is_dead() {
                continue;
            }
            if positions.is_multiple_of(STOP_CHECK_INTERVAL)
                && budget.should_stop.is_some_and(|stop| stop())
            {
                return Ok(None);
            }
            if let Some(verdict) = self.expand(node)? {
                return Ok(Some(verdict));
            }
        }
        // The budget ran out, but if the last position expanded queued
        // nothing new and the queue is empty, every position is expanded:
        // the loss is proved as surely as by the empty queue above.
        if self.open.is_empty() && self.sound {
            return Ok(Some(Verdict::Unwinnable));
        }
        Ok(None)
    }

    /// Generates the children of `node`, the position held: queues each not
    /// generated before, and returns the win if one is won.
    fn expand(&mut self, node: u32) -> Result<Option<Verdict<MoveOf<G>>>, ReplayFailure> {
        let depth = self.nodes[node as usize].depth + 1;
        self.state.search_moves(&mut self.moves);
        for index in 0..self.moves.len() {
            let mv = self.moves[index];
            let Ok(outcome) = self.state.apply(mv) else {
                // `search_moves` promises legal moves; a refused one is
                // skipped, and the verdict stays sound as in the
                // depth-first search.
                continue;
            };
            if self.seen.insert(self.state.canonical_key()) {
                if self.state.state().is_won() {
                    let mut line: Vec<MoveOf<G>> = self.line.iter().map(|step| step.mv).collect();
                    line.push(mv);
                    verify_line(self.start.state(), &line)?;
                    return Ok(Some(Verdict::Winnable(line)));
                }
                let score = self.state.best_first_score(depth);
                let score =
                    i32::try_from(score).unwrap_or(if score < 0 { i32::MIN } else { i32::MAX });
                // Sequence numbers only break ties; wrapping after four
                // billion entries changes an order, never a verdict.
                self.generated = self.generated.wrapping_add(1);
                self.open.push(Open {
                    score,
                    sequence: self.generated,
                    parent: node,
                    mv,
                });
            }
            self.state.undo(mv, &outcome);
        }
        Ok(None)
    }

    /// Brings the position held to `target`'s: takes moves back to the last
    /// node the two lines share and plays `target`'s moves from there.
    /// `false` if a move of the line was refused (it cannot be: each
    /// applied before from the same position).
    fn go_to(&mut self, target: u32) -> bool {
        self.down.clear();
        let mut at = target;
        loop {
            let depth = self.nodes[at as usize].depth as usize;
            if depth == 0 || (depth <= self.line.len() && self.line[depth - 1].node == at) {
                break;
            }
            self.down.push(at);
            at = self.nodes[at as usize].parent;
        }
        let shared = self.nodes[at as usize].depth as usize;
        while self.line.len() > shared {
            if let Some(step) = self.line.pop() {
                self.state.undo(step.mv, &step.outcome);
            }
        }
        while let Some(node) = self.down.pop() {
            let Some(mv) = self.nodes[node as usize].mv else {
                return false;
            };
            let Ok(outcome) = self.state.apply(mv) else {
                return false;
            };
            self.line.push(Step { node, mv, outcome });
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::forty_thieves::{FortyThieves, Variant};
    use crate::solver::forty_thieves::{FtOptions, FtSearch};

    /// Runs a best-first search from `start` in shares of `step` positions
    /// until it settles or spends `budget`; returns the verdict and the
    /// positions spent.
    fn run_in_steps(start: &FtSearch, budget: u64, step: u64) -> (Verdict<MoveOf<FtSearch>>, u64) {
        let mut search = BestFirst::new(start);
        let mut positions = 0;
        while positions < budget {
            let share = Budget::positions((positions + step).min(budget));
            if let Some(verdict) = search.run(share, &mut positions).expect("replay") {
                return (verdict, positions);
            }
        }
        (Verdict::Unknown, positions)
    }

    /// A search whose queue empties just as the budget runs out has
    /// expanded every position, as one with budget to spare has: both
    /// prove the loss, whatever the shares it was run in.
    #[test]
    fn a_queue_emptied_by_the_last_position_of_the_budget_proves_the_loss() {
        // Nothing can go home (no Four is left) or leave a pile of two, and
        // a King sits on the Queens the waste would need, but the Six of
        // spades can shift between the Sevens of diamonds and the Fives onto
        // it. The dead-position rule, which would stop at the start, is off
        // so that the search has positions to expand.
        let fixture = "game: midshipman\np1: Ks 5h\np2: Ks 5h\np3: Kh 5d\np4: Kh 5d\n\
                       p5: Kd 7d\np6: Kd 7d\np7: 8h\np8: 8h\np9: 8d 6s\nwaste: Qc Qc Kc\n\
                       f1: Jc\nf2: Jc\nf3: 3d\nf4: 3d\nf5: 3h\nf6: 3h\nf7: 3s\nf8: 3s";
        let state = FortyThieves::from_fixture(fixture).expect("fixture");
        let start = FtSearch::with_options(
            state,
            FtOptions {
                dead_positions: false,
                best_first_portfolio: false,
                ..FtOptions::default()
            },
        );
        let (verdict, spent) = run_in_steps(&start, 1_000_000, 1_000_000);
        assert_eq!(verdict, Verdict::Unwinnable);
        assert!(spent >= 5, "only {spent} positions");
        for step in [1, 2, spent] {
            assert_eq!(
                run_in_steps(&start, spent, step),
                (Verdict::Unwinnable, spent),
                "in steps of {step}"
            );
        }
    }

    /// The portfolio wins a deal exactly when one of its searches, run
    /// alone, wins it within its part of the budget; and Midshipman's
    /// searches win different deals.
    #[test]
    fn the_portfolio_wins_what_one_of_its_searches_wins_in_its_part() {
        const PART: u64 = 4_000;
        let mut won_by_some_not_all = 0;
        for seed in 1..=20 {
            let start = FtSearch::new(FortyThieves::deal(Variant::Midshipman, seed));
            let count = start.best_first_searches();
            assert!(count >= 2, "Midshipman has a portfolio");
            let wins_alone: Vec<bool> = (0..count)
                .map(|index| {
                    let mut prepared = start.clone();
                    prepared.set_best_first_search(index);
                    let mut spent = 0;
                    let verdict = Search::new(&prepared)
                        .run(Budget::positions(PART), &mut spent)
                        .expect("replay");
                    matches!(verdict, Some(Verdict::Winnable(_)))
                })
                .collect();
            let (verdict, _) = run_in_steps(&start, PART * u64::from(count), 1_000);
            let some = wins_alone.iter().any(|&won| won);
            assert_eq!(
                matches!(verdict, Verdict::Winnable(_)),
                some,
                "seed {seed}: {wins_alone:?}"
            );
            won_by_some_not_all += usize::from(some && !wins_alone.iter().all(|&won| won));
        }
        assert!(won_by_some_not_all >= 2, "{won_by_some_not_all} deals");
    }

    /// What keeps a search of a million positions within tens of
    /// megabytes: a node and a queue entry hold no position.
    #[test]
    fn nodes_and_queue_entries_are_small() {
        assert_eq!(size_of::<Node<MoveOf<FtSearch>>>(), 12);
        assert_eq!(size_of::<Open<MoveOf<FtSearch>>>(), 16);
    }

    /// The search goes on where it stopped: run a few positions at a time
    /// (as `solve` runs it beside the restart rounds), it finds the same
    /// line in the same positions as in one run, so how the two searches
    /// are paced never changes what the best-first one finds. (Of a
    /// portfolio, which search wins first can depend on the pacing; what
    /// it wins at a budget cannot: see the next test.)
    #[test]
    fn a_search_run_in_shares_finds_what_one_run_finds() {
        let mut won = 0;
        for seed in 1..=12 {
            let variant = Variant::ALL[(seed % 2) as usize];
            let one_search = FtOptions {
                best_first_portfolio: false,
                ..FtOptions::default()
            };
            let start = FtSearch::with_options(FortyThieves::deal(variant, seed), one_search);
            let whole = run_in_steps(&start, 20_000, 20_000);
            assert_eq!(run_in_steps(&start, 20_000, 7), whole, "seed {seed}");
            won += usize::from(matches!(whole.0, Verdict::Winnable(_)));
        }
        assert!(won >= 6, "only {won} deals won");
    }
}
