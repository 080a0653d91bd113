//! The solver: proves deals winnable (with a line of moves) or unwinnable (by
//! exhausting every reachable position), within a budget.
//!
//! The search is game-agnostic. Each game gives it a search type that wraps
//! the game's bare rules engine and implements [`SolverGame`], a small trait
//! of its own rather than an extension of [`Rules`]:
//!
//! - the wrapped position ([`SolverGame::Game`], [`SolverGame::state`]),
//!   which is all the search reads of the rules (is it won?);
//! - `apply` and `undo`, which play and take back a move on that position
//!   and keep the search's own data up to date (the games keep their keys
//!   incrementally);
//! - a canonical position key (piles that differ only in order, or two
//!   copies of a card, are one position) and an ordered, pruned list of
//!   moves worth trying;
//! - optional hooks: dead positions, limited-discrepancy passes and their
//!   share of the budget, the restart schedule, word that a position
//!   was searched to the end ([`SolverGame::proved_lost`], which a game
//!   whose positions form a DAG may remember across passes and rounds),
//!   parts of the game the passes search without their limit
//!   ([`SolverGame::unlimited_below`]),
//!   and a best-first phase: its share of the budget, the score it
//!   ranks positions by, and how many searches with different scores
//!   share it ([`SolverGame::best_first_budget`],
//!   [`SolverGame::best_first_score`], [`SolverGame::best_first_searches`]).
//!
//! [`plain::Plain`] is that trait for any game with no pruning at all.
//!
//! One loop, `search_pass`, does every search: a limited-discrepancy pass
//! (a line may stray from the first move a bounded number of times) and a
//! round of the full search (no limit) differ only in that limit and in
//! what their table remembers of a position. The best-first phase
//! (`best_first`) is a second search beside it: it keeps pace with the
//! restart rounds, a share of what they spend at a time, and the deal is
//! settled by whichever settles it first.
//!
//! Layout:
//! - this module: the trait, the iterative depth-first search with its
//!   transposition table, budgets, verdicts, hints and the search for
//!   winnable seeds;
//! - `best_first`: the best-first phase, which keeps a parent and a move
//!   per open position, never the position;
//! - one module per game with its search type ([`three_blind_mice`],
//!   [`forty_thieves`], [`virginia_reel`]) and [`plain`];
//! - [`hinter`]: hints that follow one winning line while the position
//!   stays on it;
//! - [`any`]: the one dispatch from a game named at run time to its search.
//!
//! The solver is pure like the rest of `shared`: it reads no clock. A caller
//! that wants a time limit passes a `should_stop` callback (see [`Budget`]);
//! only the positions budget keeps verdicts reproducible.
//!
//! Every winning line is replayed from the start through the bare rules
//! engine, never through the search type, before it is returned, so a
//! pruning bug or a search type whose `apply` and `undo` stray from the
//! rules can cost a verdict but can never produce a false "winnable": it
//! comes back as a [`ReplayFailure`]. The tests rely on this and do not
//! replay `solve`'s lines again.

pub mod any;
mod best_first;
pub mod forty_thieves;
pub mod hinter;
pub mod plain;
pub mod three_blind_mice;
pub mod virginia_reel;
mod zobrist;

use std::fmt;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::rules::{MoveError, Outcome, Rules};
use crate::solver::best_first::BestFirst;

/// The move type of a search's game.
pub type MoveOf<G> = <<G as SolverGame>::Game as Rules>::Move;

/// What the search needs of a game: the position in its rules engine, make
/// and unmake that keep the search's own data (such as an incremental key)
/// up to date, a canonical key, the moves worth trying, and optional hooks
/// for dead positions and the search's schedules.
///
/// A search type wraps the bare rules engine ([`SolverGame::Game`]) rather
/// than standing in for it: the search reads the rules only through
/// [`SolverGame::state`], and a winning line is replayed through that bare
/// engine, never through the wrapper, so nothing the wrapper keeps can make
/// a line look won.
pub trait SolverGame: Clone {
    /// The rules engine searched.
    type Game: Rules;

    /// The position, as the rules engine holds it.
    fn state(&self) -> &Self::Game;

    /// Plays `mv` on the position, as [`Rules::apply`] does, and brings the
    /// search's own data up to date. A refused move changes nothing.
    fn apply(&mut self, mv: MoveOf<Self>) -> Result<Outcome, MoveError>;

    /// Takes back `mv`, the last move applied, as [`Rules::undo`] does, and
    /// restores the search's own data.
    fn undo(&mut self, mv: MoveOf<Self>, outcome: &Outcome);

    /// A 64-bit key of the position up to symmetries that do not change what
    /// can be won: equal keys must mean equivalent positions (up to hash
    /// collisions, which are 2^-64 events per pair).
    fn canonical_key(&self) -> u64;

    /// Clears `moves` and fills it with the moves worth trying, best first.
    /// It may leave out moves that provably cannot change the verdict, and
    /// may return a single move it proves safe to play at once. Every move it
    /// returns must be legal.
    fn search_moves(&self, moves: &mut Vec<MoveOf<Self>>);

    /// How many limited-discrepancy passes [`solve`] makes before its full
    /// search. Pass `d` follows the order of `search_moves` and strays from
    /// a position's first move at most `d` times along a line, so a game whose
    /// first move is usually right finds its wins before the full search
    /// sinks into the subtree of one early mistake. The passes share the
    /// positions budget; a pass that never had to stray proves the loss by
    /// itself. None by default.
    fn discrepancy_passes(&self) -> u32 {
        0
    }

    /// How many of a search's `budget` positions the discrepancy passes may
    /// spend before the full search (or its restart rounds) takes over with
    /// the rest. All of them by default.
    fn discrepancy_budget(&self, budget: u64) -> u64 {
        budget
    }

    /// Whether the position is provably lost, so the search need not expand
    /// it. Must never say `true` of a position from which a win exists.
    /// The default proves nothing.
    fn is_dead(&self) -> bool {
        false
    }

    /// The size of one unit of the restart schedule for a search of
    /// `budget` positions, or `None` (the default) for a single search.
    ///
    /// A depth-first search that goes wrong near the root can spend any
    /// budget below that mistake. With restarts, the search runs in rounds
    /// of `unit` times the Luby sequence (1, 1, 2, 1, 1, 2, 4, 1, ...)
    /// positions until the budget is spent, each round from scratch (a fresh
    /// table) after [`SolverGame::set_round`] has reshuffled the move order.
    /// Each round is a complete search, so one that runs out of positions
    /// to expand still proves the position unwinnable.
    fn restart_unit(&self, budget: u64) -> Option<u64> {
        let _ = budget;
        None
    }

    /// Prepares round `round` (0-based) of a search with restarts, e.g. by
    /// changing how the move order breaks ties. The default does nothing.
    fn set_round(&mut self, round: u64) {
        let _ = round;
    }

    /// Told, just before the search leaves the position, that every move
    /// [`SolverGame::search_moves`] gave for it was tried and each led to a
    /// position that is dead, already searched to the end in this pass or
    /// round, or itself told so; no line below it was cut short by a
    /// discrepancy limit. In a game whose positions form a DAG (no line
    /// comes back to a position it has left), a position already seen in a
    /// round is never one on the current line, so this proves the position
    /// lost whatever the move order, and a game may remember it for later
    /// passes and rounds. In a game with cycles it proves nothing. The
    /// default ignores it.
    fn proved_lost(&mut self) {}

    /// Whether a limited-discrepancy pass searches everything below this
    /// position without its limit, as a round does: for a part of the game
    /// a game prefers to search to the end whenever it gets there (Virginia
    /// Reel's endgame, once the stock is out), so that what the pass proves
    /// there is complete and can be kept ([`SolverGame::proved_lost`]).
    /// Asked of each position as the search enters it; `false` by default.
    fn unlimited_below(&self) -> bool {
        false
    }

    /// How many of a search's `budget` positions (what the discrepancy
    /// passes left) go to the best-first phase (module `best_first`), run
    /// beside the restart rounds; 0, the default, for none.
    fn best_first_budget(&self, budget: u64) -> u64 {
        let _ = budget;
        0
    }

    /// How promising the position is for the best-first phase, reached by a
    /// line of `depth` moves: the open position with the highest score is
    /// expanded first. Read only when [`SolverGame::best_first_budget`] is
    /// not 0.
    fn best_first_score(&self, depth: u32) -> i64 {
        let _ = depth;
        0
    }

    /// How many best-first searches share the phase's budget, in equal
    /// parts: a portfolio of searches that rank positions differently wins
    /// the deals each wins within its part. 1, the default, for one.
    fn best_first_searches(&self) -> u32 {
        1
    }

    /// Prepares search `index` (0-based) of the best-first phase, on a copy
    /// of the start, e.g. by choosing the weights of its score. It may
    /// change only the scores and the order of the moves, never which
    /// moves [`SolverGame::search_moves`] offers, so that every search of
    /// the portfolio meets the same positions. The default does nothing.
    fn set_best_first_search(&mut self, index: u32) {
        let _ = index;
    }
}

/// How much work a search may do.
#[derive(Clone, Copy)]
pub struct Budget<'a> {
    /// The most positions to expand (generate moves for) before giving up.
    pub positions: u64,
    /// Asked every few thousand positions and before each restart round;
    /// `true` stops the search with an unknown verdict. Use it for time limits; `None` keeps the verdict
    /// reproducible.
    pub should_stop: Option<&'a (dyn Fn() -> bool + Sync)>,
}

impl Budget<'_> {
    /// A budget of `positions` expanded positions and no other limit.
    pub fn positions(positions: u64) -> Budget<'static> {
        Budget {
            positions,
            should_stop: None,
        }
    }
}

impl fmt::Debug for Budget<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Budget")
            .field("positions", &self.positions)
            .field("should_stop", &self.should_stop.is_some())
            .finish()
    }
}

/// The positions budget the published figures use.
pub const DEFAULT_BUDGET: u64 = 1_000_000;

/// What the search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict<M> {
    /// Winnable: this line of moves, from the position searched, wins.
    Winnable(Vec<M>),
    /// Every reachable position was searched and none is won.
    Unwinnable,
    /// The budget ran out first.
    Unknown,
}

impl<M> Verdict<M> {
    /// `winnable`, `unwinnable` or `unknown`.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Winnable(_) => "winnable",
            Verdict::Unwinnable => "unwinnable",
            Verdict::Unknown => "unknown",
        }
    }

    /// Whether the search settled the question either way.
    pub fn is_settled(&self) -> bool {
        !matches!(self, Verdict::Unknown)
    }
}

/// A verdict with the work it took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution<M> {
    /// The verdict.
    pub verdict: Verdict<M>,
    /// Positions expanded.
    pub positions: u64,
}

/// A winning line the search found did not survive its replay through the
/// rules engine. This is a solver bug (an unsound pruning rule or key); it
/// is reported rather than trusted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("solver bug: its winning line failed replay at move {index}: {reason}")]
pub struct ReplayFailure {
    /// 0-based index of the first move that failed, or the line's length if
    /// every move applied but the game was not won.
    pub index: usize,
    /// What went wrong.
    pub reason: String,
}

/// Replays `line` from `start` through the rules engine and checks it wins.
pub fn verify_line<R: Rules>(start: &R, line: &[R::Move]) -> Result<(), ReplayFailure> {
    let mut state = start.clone();
    for (index, &mv) in line.iter().enumerate() {
        state.apply(mv).map_err(|error: MoveError| ReplayFailure {
            index,
            reason: error.to_string(),
        })?;
    }
    if state.is_won() {
        Ok(())
    } else {
        Err(ReplayFailure {
            index: line.len(),
            reason: "the line ends in a position that is not won".into(),
        })
    }
}

/// The shortest line from `start` to the end of `line` that passes only
/// through positions of `line` (exactly equal states), one legal move from
/// each to the next.
///
/// A depth-first search's line wanders: it plays whatever its move order
/// tried first, so in Indian a line of 1,500 moves moves cards back and
/// forth that a person would leave alone. Many of those detours come back
/// to a position of the line, or to one a single move away from an earlier
/// one (a card moved away and later back, with other moves between that
/// were legal before it left). This finds every move from a position of the
/// line that lands on a later one and keeps the fewest moves: a shortest
/// path through the line's positions, which visits none of them twice and
/// which a second shortening leaves as it is. It only
/// shortens: the result ends where `line` ends (a won position if `line`
/// wins) and is never longer. A line that does not replay is returned as it
/// is.
pub fn shorten_line<R: Rules>(start: &R, line: &[R::Move]) -> Vec<R::Move> {
    let mut positions = Vec::with_capacity(line.len() + 1);
    positions.push(start.clone());
    let mut state = start.clone();
    for &mv in line {
        if state.apply(mv).is_err() {
            return line.to_vec();
        }
        positions.push(state.clone());
    }
    // Each position's first index after the one being looked at. A line
    // that comes back to a position may skip everything between; and of two
    // later visits to one position the first is never the worse place to
    // land (everything the second can reach, the first can too), while the
    // second may be worse (the line may leave a good detour between them).
    // Landing on the first keeps the result a shortest path of the line's
    // positions, so shortening it again changes nothing.
    let mut first_after: FxHashMap<&R, usize> = FxHashMap::default();
    let end = line.len();
    let mut best: Vec<Shortest<R::Move>> = vec![
        Shortest {
            moves_to_end: usize::MAX,
            first: None,
        };
        end + 1
    ];
    best[end].moves_to_end = 0;
    let mut moves = Vec::new();
    for at in (0..end).rev() {
        first_after.insert(&positions[at + 1], at + 1);
        if positions[at] == positions[end] {
            // The line has already come to where it ends: the rest of it is
            // a round trip (and the first visit of a position is never the
            // worse one only if the end counts as the end on every visit).
            best[at] = Shortest {
                moves_to_end: 0,
                first: None,
            };
            continue;
        }
        best[at] = Shortest {
            moves_to_end: best[at + 1].moves_to_end.saturating_add(1),
            first: Some((line[at], at + 1)),
        };
        positions[at].legal_moves(&mut moves);
        for &mv in &moves {
            let mut after = positions[at].clone();
            if after.apply(mv).is_err() {
                continue;
            }
            if let Some(&reached) = first_after.get(&after)
                && best[reached].moves_to_end.saturating_add(1) < best[at].moves_to_end
            {
                best[at] = Shortest {
                    moves_to_end: best[reached].moves_to_end + 1,
                    first: Some((mv, reached)),
                };
            }
        }
    }
    let mut shortened = Vec::with_capacity(best[0].moves_to_end);
    let mut at = 0;
    while let Some((mv, next)) = best[at].first {
        shortened.push(mv);
        at = next;
    }
    shortened
}

/// The fewest moves from one position of a line to its end, as
/// [`shorten_line`] finds them.
#[derive(Clone, Copy)]
struct Shortest<M> {
    moves_to_end: usize,
    /// The first of those moves and the index of the position it reaches;
    /// `None` at the end.
    first: Option<(M, usize)>,
}

/// One level of the explicit search stack.
struct Frame<M> {
    /// The move that led to this frame's position, with what it did, so it can
    /// be undone when the frame is left. `None` for the root.
    entered_by: Option<(M, Outcome)>,
    /// This frame's moves are `arena[first..end]`; `next` is the next to try.
    first: usize,
    next: usize,
    /// How many more times the line below may stray from a first move;
    /// `u32::MAX`, never spent, in a search without a limit.
    strays_left: u32,
    /// The position's canonical key.
    key: u64,
    /// Whether everything below this position so far was searched to the
    /// end: no line cut at the discrepancy limit, no position skipped that
    /// an earlier pass left unfinished ([`SolverGame::proved_lost`]).
    complete: bool,
}

/// How often (in expanded positions) `should_stop` is asked.
const STOP_CHECK_INTERVAL: u64 = 4096;

/// Searches from `start` for a winning line: depth first, iteratively, with a
/// transposition table of canonical keys so no position is expanded twice
/// in a round, restarting on the schedule the game asks for
/// ([`SolverGame::restart_unit`]). The game's limited-discrepancy passes, if
/// any, come first, within their share of the budget
/// ([`SolverGame::discrepancy_passes`], [`SolverGame::discrepancy_budget`]).
/// A game with a best-first phase ([`SolverGame::best_first_budget`]) has
/// it run beside the restart rounds: after each round it expands positions
/// until it has spent its share of what the rounds have spent so far, and
/// all of its share once the rounds' is spent. So each of the two searches
/// gets its whole share by the end, and a deal is won at the full budget if
/// either search wins it within its share (the pacing only decides which
/// comes first). A game without restarts runs the phase before its one
/// round.
///
/// With no `should_stop`, the same position and budget always give the same
/// result. The line of a winnable verdict has been replayed through the
/// rules engine ([`SolverGame::state`]).
pub fn solve<G: SolverGame>(
    start: &G,
    budget: Budget<'_>,
) -> Result<Solution<MoveOf<G>>, ReplayFailure> {
    if start.state().is_won() {
        return Ok(Solution {
            verdict: Verdict::Winnable(Vec::new()),
            positions: 0,
        });
    }
    let mut positions = 0;
    let passes_budget = Budget {
        positions: start
            .discrepancy_budget(budget.positions)
            .min(budget.positions),
        should_stop: budget.should_stop,
    };
    for limit in 0..start.discrepancy_passes() {
        match search_pass::<G, FxHashMap<u64, u32>>(
            start,
            start,
            Some(limit),
            passes_budget,
            &mut positions,
        )? {
            // The passes' share is spent: the rest goes to the full search.
            Some(Verdict::Unknown) if passes_budget.positions < budget.positions => break,
            Some(verdict) => return Ok(Solution { verdict, positions }),
            // A line was cut at the limit: the next pass may stray more.
            None => {}
        }
    }
    let rest = budget.positions - positions;
    let best_first_total = start.best_first_budget(rest).min(rest);
    let depth_first_total = rest - best_first_total;
    let mut best_first = (best_first_total > 0).then(|| BestFirst::new(start));
    let mut best_first_spent = 0;
    // Runs the best-first phase until it has spent `target` positions in
    // all; `Some` when that settles the deal or `should_stop` stops it.
    let run_best_first = |best_first: &mut Option<BestFirst<G>>,
                          spent: &mut u64,
                          target: u64|
     -> Result<Option<Verdict<MoveOf<G>>>, ReplayFailure> {
        let Some(search) = best_first else {
            return Ok(None);
        };
        if *spent >= target {
            return Ok(None);
        }
        let share = Budget {
            positions: target,
            should_stop: budget.should_stop,
        };
        match search.run(share, spent)? {
            Some(verdict) => Ok(Some(verdict)),
            None if *spent < target => Ok(Some(Verdict::Unknown)),
            None => Ok(None),
        }
    };
    let unit = start.restart_unit(depth_first_total);
    if unit.is_none() {
        // No rounds to keep pace with: the best-first phase goes first.
        if let Some(verdict) =
            run_best_first(&mut best_first, &mut best_first_spent, best_first_total)?
        {
            return Ok(Solution {
                verdict,
                positions: positions + best_first_spent,
            });
        }
        positions += best_first_spent;
        best_first = None;
    }
    let Some(unit) = unit else {
        let found = search_round(
            start,
            start,
            Budget {
                positions: depth_first_total,
                should_stop: budget.should_stop,
            },
        )?;
        return Ok(Solution {
            verdict: found.verdict,
            positions: positions + found.positions,
        });
    };
    let unit = unit.max(1);
    let mut depth_first_spent = 0;
    let mut round = 0;
    loop {
        // A round counts its positions from 0 and asks `should_stop` every
        // `STOP_CHECK_INTERVAL` of them, so the many rounds of the Luby
        // schedule smaller than that would never ask: ask before each.
        if budget.should_stop.is_some_and(|stop| stop()) {
            return Ok(Solution {
                verdict: Verdict::Unknown,
                positions: positions + depth_first_spent + best_first_spent,
            });
        }
        if depth_first_spent < depth_first_total {
            let mut position = start.clone();
            position.set_round(round);
            let share = luby(round)
                .saturating_mul(unit)
                .min(depth_first_total - depth_first_spent);
            let found = search_round(
                start,
                &position,
                Budget {
                    positions: share,
                    should_stop: budget.should_stop,
                },
            )?;
            depth_first_spent += found.positions;
            if found.verdict.is_settled() || found.positions < share {
                // Settled, or stopped by `should_stop`.
                return Ok(Solution {
                    verdict: found.verdict,
                    positions: positions + depth_first_spent + best_first_spent,
                });
            }
            round += 1;
        } else if best_first.is_none() || best_first_spent >= best_first_total {
            break;
        }
        // The best-first phase keeps pace: its share of what the rounds
        // have spent so far, all of it once they are done.
        let target = if depth_first_spent >= depth_first_total {
            best_first_total
        } else {
            let paced = u128::from(depth_first_spent) * u128::from(best_first_total)
                / u128::from(depth_first_total.max(1));
            u64::try_from(paced)
                .unwrap_or(u64::MAX)
                .min(best_first_total)
        };
        if let Some(verdict) = run_best_first(&mut best_first, &mut best_first_spent, target)? {
            return Ok(Solution {
                verdict,
                positions: positions + depth_first_spent + best_first_spent,
            });
        }
    }
    Ok(Solution {
        verdict: Verdict::Unknown,
        positions: positions + depth_first_spent + best_first_spent,
    })
}

/// Term `index` (0-based) of the Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, 1,
/// 2, 1, 1, 2, 4, 8, ...: the restart schedule that is within a log factor
/// of the best fixed schedule for every distribution of run lengths.
fn luby(index: u64) -> u64 {
    // With i = index + 1: if i = 2^k - 1 the term is 2^(k-1); otherwise it
    // is the term at i - (2^(k-1) - 1), for the k with 2^(k-1) <= i < 2^k - 1.
    let mut i = index.saturating_add(1);
    loop {
        let k = 64 - i.leading_zeros();
        if i == u64::MAX >> (64 - k) {
            return 1 << (k - 1);
        }
        i -= (1u64 << (k - 1)) - 1;
    }
}

/// One round of [`solve`]: the search with no discrepancy limit from
/// `position` (`start` after the round's set-up), within `budget`.
fn search_round<G: SolverGame>(
    start: &G,
    position: &G,
    budget: Budget<'_>,
) -> Result<Solution<MoveOf<G>>, ReplayFailure> {
    let mut positions = 0;
    let verdict = search_pass::<G, FxHashSet<u64>>(start, position, None, budget, &mut positions)?
        // Without a limit no line is ever cut short, so a search that runs
        // out of moves has proved the loss; `None` cannot come back.
        .unwrap_or(Verdict::Unknown);
    Ok(Solution { verdict, positions })
}

/// What the table of a search knew of a position met again.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Visit {
    /// Not searched before (with enough strays): search it now.
    New,
    /// Searched before and left unfinished (a line below it was cut).
    Unfinished,
    /// Searched to the end before, or on the current line (only in a game
    /// with cycles; see [`SolverGame::proved_lost`]).
    Finished,
}

/// The table of positions a search has expanded.
trait Seen: Default {
    /// Records that the position of `key` is being searched with
    /// `strays_left` strays left, unless it was searched before with as many
    /// or more; says which.
    fn first_visit(&mut self, key: u64, strays_left: u32) -> Visit;

    /// Records that the position of `key` was searched to the end.
    fn finished(&mut self, key: u64);
}

/// Without a discrepancy limit every search of a position is complete, so
/// the table only remembers the keys.
impl Seen for FxHashSet<u64> {
    fn first_visit(&mut self, key: u64, _strays_left: u32) -> Visit {
        if self.insert(key) {
            Visit::New
        } else {
            Visit::Finished
        }
    }

    fn finished(&mut self, _key: u64) {}
}

/// With a limit, a position searched with fewer strays left may hide a win
/// that more strays would find, so it comes back only with more; one
/// searched to the end is marked with `u32::MAX` strays, which no pass
/// reaches, and never comes back.
impl Seen for FxHashMap<u64, u32> {
    fn first_visit(&mut self, key: u64, strays_left: u32) -> Visit {
        match self.get(&key) {
            Some(&u32::MAX) => Visit::Finished,
            Some(&searched_with) if searched_with >= strays_left => Visit::Unfinished,
            _ => {
                self.insert(key, strays_left);
                Visit::New
            }
        }
    }

    fn finished(&mut self, key: u64) {
        self.insert(key, u32::MAX);
    }
}

/// The depth-first search from `position`, expanding each position of the
/// table `S` once, whose winning line is checked by replaying it from
/// `start` (the same position, before any round set-up) through the rules.
///
/// With `limit` `Some(d)`, it is one pass of limited-discrepancy search (see
/// [`SolverGame::discrepancy_passes`]): a line may take a move other than
/// the first of its position at most `d` times. With `None` there is no
/// limit: a round of the full search.
///
/// `positions` counts expanded positions and goes on from its value on
/// entry; the search stops with an unknown verdict when it reaches
/// `budget.positions`. Returns a verdict when it settles the deal (a win, a
/// budget run out, or a search that never had to cut a line short, which
/// proves the loss), `None` when a line was cut at the limit and the next
/// pass should go on.
fn search_pass<G: SolverGame, S: Seen>(
    start: &G,
    position: &G,
    limit: Option<u32>,
    budget: Budget<'_>,
    positions: &mut u64,
) -> Result<Option<Verdict<MoveOf<G>>>, ReplayFailure> {
    let mut state = position.clone();
    let mut seen = S::default();
    let mut arena: Vec<MoveOf<G>> = Vec::with_capacity(4096);
    let mut scratch: Vec<MoveOf<G>> = Vec::with_capacity(256);
    let mut stack: Vec<Frame<MoveOf<G>>> = Vec::with_capacity(1024);
    let mut cut = false;

    if *positions >= budget.positions {
        return Ok(Some(Verdict::Unknown));
    }
    let strays_left = if state.unlimited_below() {
        u32::MAX
    } else {
        limit.unwrap_or(u32::MAX)
    };
    let key = state.canonical_key();
    seen.first_visit(key, strays_left);
    *positions += 1;
    if state.is_dead() {
        return Ok(Some(Verdict::Unwinnable));
    }
    state.search_moves(&mut scratch);
    arena.extend_from_slice(&scratch);
    stack.push(Frame {
        entered_by: None,
        first: 0,
        next: 0,
        strays_left,
        key,
        complete: true,
    });

    while let Some(frame) = stack.last_mut() {
        // Taking any move but the position's first is a stray.
        let strays = u32::from(limit.is_some() && frame.next > frame.first);
        if frame.next == arena.len() || strays > frame.strays_left {
            // Every move from this position has been tried, or the limit
            // allows no more: leave it.
            let complete = frame.complete && frame.next == arena.len();
            if frame.next < arena.len() {
                cut = true;
            }
            if complete {
                seen.finished(frame.key);
                state.proved_lost();
            }
            let first = frame.first;
            let entered_by = frame.entered_by.take();
            stack.pop();
            arena.truncate(first);
            if let Some((mv, outcome)) = entered_by {
                state.undo(mv, &outcome);
            }
            if let Some(parent) = stack.last_mut() {
                parent.complete &= complete;
            }
            continue;
        }
        let strays_left = frame.strays_left - strays;
        let mv = arena[frame.next];
        frame.next += 1;
        let outcome = match state.apply(mv) {
            Ok(outcome) => outcome,
            // `search_moves` promises legal moves; a refused one is skipped
            // rather than trusted, and the verdict stays sound.
            Err(_) => continue,
        };
        // A part the game wants searched to the end gets no limit; the
        // table marks it finished on entry (`u32::MAX` strays), which holds
        // for the games that ask (a DAG: it is met again only once left).
        let strays_left = if limit.is_some() && state.unlimited_below() {
            u32::MAX
        } else {
            strays_left
        };
        let key = state.canonical_key();
        match seen.first_visit(key, strays_left) {
            Visit::New => {}
            Visit::Finished => {
                state.undo(mv, &outcome);
                continue;
            }
            Visit::Unfinished => {
                frame.complete = false;
                state.undo(mv, &outcome);
                continue;
            }
        }
        if state.state().is_won() {
            let mut line: Vec<MoveOf<G>> = stack
                .iter()
                .filter_map(|frame| frame.entered_by.as_ref().map(|(m, _)| *m))
                .collect();
            line.push(mv);
            verify_line(start.state(), &line)?;
            return Ok(Some(Verdict::Winnable(line)));
        }
        if *positions >= budget.positions {
            return Ok(Some(Verdict::Unknown));
        }
        *positions += 1;
        if state.is_dead() {
            state.undo(mv, &outcome);
            continue;
        }
        if positions.is_multiple_of(STOP_CHECK_INTERVAL)
            && budget.should_stop.is_some_and(|stop| stop())
        {
            return Ok(Some(Verdict::Unknown));
        }
        let first = arena.len();
        state.search_moves(&mut scratch);
        arena.extend_from_slice(&scratch);
        stack.push(Frame {
            entered_by: Some((mv, outcome)),
            first,
            next: first,
            strays_left,
            key,
            complete: true,
        });
    }
    Ok((!cut).then_some(Verdict::Unwinnable))
}

/// The answer to "what should I play next?".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hint<M> {
    /// The next move of a winning line.
    Play(M),
    /// The position is won already.
    AlreadyWon,
    /// No winning line exists from here.
    NoWinningLine,
    /// The budget ran out before either was found.
    Unknown,
}

/// A hint for `position`: the first move of a winning line from it.
pub fn hint<G: SolverGame>(
    position: &G,
    budget: Budget<'_>,
) -> Result<Hint<MoveOf<G>>, ReplayFailure> {
    if position.state().is_won() {
        return Ok(Hint::AlreadyWon);
    }
    Ok(match solve(position, budget)?.verdict {
        Verdict::Winnable(line) => line.first().map_or(Hint::AlreadyWon, |&mv| Hint::Play(mv)),
        Verdict::Unwinnable => Hint::NoWinningLine,
        Verdict::Unknown => Hint::Unknown,
    })
}

/// A seed proved winnable, with its line and how many seeds were passed over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WinnableDeal<M> {
    /// The seed.
    pub seed: u64,
    /// A winning line from its deal.
    pub line: Vec<M>,
    /// Seeds tried before it: proved unwinnable or left unknown.
    pub skipped: u64,
}

/// Walks `seeds` in order and returns the first whose deal the solver proves
/// winnable within `budget`, or `None` if the stream ends first.
///
/// Unknown deals are skipped along with unwinnable ones, which tilts the
/// deals chosen toward those the solver finds easy; `docs/WINNABILITY.md`
/// measures how much.
pub fn first_winnable<G: SolverGame>(
    seeds: impl IntoIterator<Item = u64>,
    deal: impl Fn(u64) -> G,
    budget: Budget<'_>,
) -> Result<Option<WinnableDeal<MoveOf<G>>>, ReplayFailure> {
    for (skipped, seed) in (0u64..).zip(seeds) {
        if let Verdict::Winnable(line) = solve(&deal(seed), budget)?.verdict {
            return Ok(Some(WinnableDeal {
                seed,
                line,
                skipped,
            }));
        }
    }
    Ok(None)
}

/// What the solver's tests share: results several tests need, computed once
/// per test binary rather than once per test.
#[cfg(test)]
pub(crate) mod shared_results {
    use std::sync::{Mutex, OnceLock, PoisonError};

    /// Results by what they were computed for (a game's options, say).
    pub(crate) type Cache<K, V> = Mutex<Vec<(K, &'static OnceLock<V>)>>;

    /// The result for `key`: `compute`d by the first test that asks for it,
    /// while other tests asking for the same key wait and tests asking for
    /// other keys compute theirs at the same time. A cell lives as long as
    /// the test binary, hence the leak.
    pub(crate) fn once<K: PartialEq, V: Send + Sync>(
        cache: &'static Cache<K, V>,
        key: K,
        compute: impl FnOnce() -> V,
    ) -> &'static V {
        let cell: &'static OnceLock<V> = {
            let mut cells = cache.lock().unwrap_or_else(PoisonError::into_inner);
            match cells.iter().find(|(known, _)| *known == key) {
                Some(&(_, cell)) => cell,
                None => {
                    let cell: &'static OnceLock<V> = Box::leak(Box::new(OnceLock::new()));
                    cells.push((key, cell));
                    cell
                }
            }
        };
        cell.get_or_init(compute)
    }
}

/// The moves `search_moves` offers in `search`'s position, in notation: what
/// the games' fixture tests of their pruning compare.
#[cfg(test)]
pub(crate) fn offered_in_notation<G: SolverGame>(search: &G) -> Vec<String> {
    let mut moves = Vec::new();
    search.search_moves(&mut moves);
    moves
        .iter()
        .map(|&mv| search.state().format_move(mv))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    use super::*;
    use crate::games::forty_thieves::{FortyThieves, FtMove, Variant};
    use crate::games::three_blind_mice::{TbmMove, ThreeBlindMice};
    use crate::solver::forty_thieves::FtSearch;
    use crate::solver::plain::Plain;
    use crate::solver::three_blind_mice::TbmSearch;

    fn tbm(seed: u64) -> TbmSearch {
        TbmSearch::new(ThreeBlindMice::deal(seed))
    }

    /// The first Three Blind Mice seed of 1..=200 proved winnable at 100,000
    /// positions, found once for the tests that need a won deal.
    fn first_won_deal() -> &'static WinnableDeal<TbmMove> {
        static FOUND: OnceLock<WinnableDeal<TbmMove>> = OnceLock::new();
        FOUND.get_or_init(|| {
            first_winnable(1..=200, tbm, Budget::positions(100_000))
                .expect("replay")
                .expect("some seed is winnable")
        })
    }

    /// Following hints from a winnable deal wins it, one hint at a time.
    #[test]
    fn following_hints_wins_a_winnable_deal() {
        let mut position = tbm(first_won_deal().seed);
        for _ in 0..=52 {
            match hint(&position, Budget::positions(100_000)).expect("replay") {
                Hint::Play(mv) => {
                    position.apply(mv).expect("a hint is legal");
                }
                Hint::AlreadyWon => return,
                other => panic!("lost the thread: {other:?}"),
            }
        }
        panic!("no win within 52 hints");
    }

    #[test]
    fn hints_say_when_there_is_no_winning_line() {
        let lost = (1..)
            .find(|&seed| {
                solve(&tbm(seed), Budget::positions(100_000)).map(|s| s.verdict)
                    == Ok(Verdict::Unwinnable)
            })
            .expect("some seed is lost");
        assert_eq!(
            hint(&tbm(lost), Budget::positions(100_000)),
            Ok(Hint::NoWinningLine)
        );
    }

    #[test]
    fn first_winnable_counts_the_seeds_it_skips() {
        let found = first_won_deal();
        assert_eq!(found.skipped, found.seed - 1);
        for seed in 1..found.seed {
            assert!(!matches!(
                solve(&tbm(seed), Budget::positions(100_000)).map(|s| s.verdict),
                Ok(Verdict::Winnable(_))
            ));
        }
        assert_eq!(
            first_winnable(std::iter::empty::<u64>(), tbm, Budget::positions(10)),
            Ok(None)
        );
    }

    #[test]
    fn the_same_deal_and_budget_give_the_same_result() {
        for seed in 1..=50 {
            let budget = Budget::positions(5_000);
            assert_eq!(solve(&tbm(seed), budget), solve(&tbm(seed), budget));
        }
    }

    #[test]
    fn a_tiny_budget_gives_unknown_and_a_stop_callback_stops() {
        let starved = solve(&tbm(first_won_deal().seed), Budget::positions(1)).expect("replay");
        assert!(matches!(
            starved.verdict,
            Verdict::Winnable(_) | Verdict::Unknown
        ));
        let stop = || true;
        let stopped = solve(
            &Plain(FortyThieves::deal(Variant::Indian, 1)),
            Budget {
                positions: u64::MAX,
                should_stop: Some(&stop),
            },
        )
        .expect("replay");
        assert_eq!(stopped.verdict, Verdict::Unknown);
        assert!(stopped.positions <= STOP_CHECK_INTERVAL);
    }

    /// A stop callback is heard within a few thousand positions in every
    /// game, however small its restart rounds (Forty Thieves' are 2,048
    /// positions, fewer than the positions between two questions inside a
    /// round).
    #[test]
    fn a_stop_callback_is_heard_between_small_rounds() {
        use crate::any::AnyGame;
        use crate::game::GameKind;
        use crate::solver::hinter::Searchable;
        let stop = || true;
        for game in GameKind::ALL {
            for seed in 1..=3 {
                let stopped = AnyGame::deal(game, seed)
                    .search(Budget {
                        positions: 1_000_000,
                        should_stop: Some(&stop),
                    })
                    .expect("replay");
                assert!(
                    stopped.positions <= 2 * STOP_CHECK_INTERVAL,
                    "{game:?} seed {seed}: {} positions after the stop",
                    stopped.positions
                );
            }
        }
    }

    #[test]
    fn the_restart_schedule_is_the_luby_sequence() {
        let terms: Vec<u64> = (0..31).map(luby).collect();
        assert_eq!(
            terms,
            [
                1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8, 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2,
                4, 8, 16
            ]
        );
        assert_eq!(luby(u64::MAX - 1), 1 << 63);
    }

    /// Shortened lines still win, are never longer, and cut the detours of
    /// Indian's depth-first lines; Three Blind Mice's moves are final, so
    /// its lines have none to cut. A line that does not replay is kept.
    #[test]
    fn shortened_lines_win_and_cut_detours() {
        let mut cut = 0;
        for seed in 1..=5 {
            let start = FortyThieves::deal(Variant::Indian, seed);
            let Ok(Solution {
                verdict: Verdict::Winnable(line),
                ..
            }) = solve(&FtSearch::new(start.clone()), Budget::positions(100_000))
            else {
                continue;
            };
            let shorter = shorten_line(&start, &line);
            verify_line(&start, &shorter).expect("the shortened line wins");
            assert!(shorter.len() <= line.len(), "seed {seed}");
            if 2 * shorter.len() < line.len() {
                cut += 1;
            }
            assert_eq!(
                shorten_line(&start, &shorter),
                shorter,
                "seed {seed}: shortest already"
            );
        }
        assert!(cut >= 2, "only {cut} Indian lines lost half their moves");
        let found = first_won_deal();
        let start = ThreeBlindMice::deal(found.seed);
        assert_eq!(shorten_line(&start, &found.line), found.line);
        // The first move twice: its card has left the place it names.
        let refused = [found.line[0], found.line[0]];
        let mut state = start.clone();
        assert!(refused.iter().any(|&mv| state.apply(mv).is_err()));
        assert_eq!(shorten_line(&start, &refused), refused);
    }

    /// Lines that come back to their positions again and again: a walk of
    /// legal moves, each chosen by a fixed arithmetic rule, so that cards
    /// wander between piles and back as a depth-first line's do.
    fn wandering_line<R: Rules>(start: &R, walk: u64, length: usize) -> Vec<R::Move> {
        let mut state = start.clone();
        let mut line = Vec::with_capacity(length);
        let mut moves = Vec::new();
        let mut choice = walk;
        for _ in 0..length {
            state.legal_moves(&mut moves);
            if moves.is_empty() {
                break;
            }
            choice = choice
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let mv = moves[(choice >> 33) as usize % moves.len()];
            state.apply(mv).expect("a legal move applies");
            line.push(mv);
        }
        line
    }

    #[test]
    fn shortening_twice_changes_nothing() {
        let mut revisits = 0;
        for walk in 1..=40 {
            let start = FortyThieves::deal(Variant::Indian, walk);
            let line = wandering_line(&start, walk, 400);
            let end = |line: &[FtMove]| {
                let mut state = start.clone();
                for &mv in line {
                    state.apply(mv).expect("the line replays");
                }
                state
            };
            let shorter = shorten_line(&start, &line);
            assert!(end(&shorter) == end(&line), "walk {walk}: the same end");
            let mut seen = FxHashSet::default();
            let mut state = start.clone();
            seen.insert(state.clone());
            for &mv in &shorter {
                state.apply(mv).expect("the shortened line replays");
                assert!(seen.insert(state.clone()), "walk {walk}: a position twice");
            }
            assert_eq!(shorten_line(&start, &shorter), shorter, "walk {walk}");
            let mut positions = FxHashSet::default();
            let mut state = start.clone();
            for &mv in &line {
                state.apply(mv).expect("the line replays");
                revisits += usize::from(!positions.insert(state.clone()));
            }
        }
        assert!(
            revisits > 100,
            "the walks come back to a position only {revisits} times"
        );
    }

    #[test]
    fn verify_line_refuses_a_line_that_does_not_win() {
        let deal = ThreeBlindMice::deal(1);
        let mut moves = Vec::new();
        deal.legal_moves(&mut moves);
        let failure = verify_line(&deal, &moves[..1]).expect_err("one move does not win");
        assert_eq!(failure.index, 1);
    }

    /// Indian's search with a shortcut that is not a search move: after
    /// each move, `apply` also sends home every card that can go, and
    /// `undo` takes those back, but the line the search records holds only
    /// the moves it chose.
    #[derive(Clone)]
    struct SilentAutoplay {
        search: FtSearch,
        /// Per move applied, the cards it sent home on its own.
        sent_home: Vec<Vec<(FtMove, Outcome)>>,
    }

    impl SolverGame for SilentAutoplay {
        type Game = FortyThieves;

        fn state(&self) -> &FortyThieves {
            self.search.state()
        }

        fn apply(&mut self, mv: FtMove) -> Result<Outcome, MoveError> {
            let outcome = self.search.apply(mv)?;
            let mut sent = Vec::new();
            let mut moves = Vec::new();
            loop {
                self.search.state().legal_moves(&mut moves);
                let home = moves.iter().copied().find(|mv| {
                    matches!(
                        mv,
                        FtMove::PileToFoundation { .. } | FtMove::WasteToFoundation { .. }
                    )
                });
                let Some(home) = home else { break };
                match self.search.apply(home) {
                    Ok(outcome) => sent.push((home, outcome)),
                    Err(_) => break,
                }
            }
            self.sent_home.push(sent);
            Ok(outcome)
        }

        fn undo(&mut self, mv: FtMove, outcome: &Outcome) {
            for (home, home_outcome) in self.sent_home.pop().unwrap_or_default().iter().rev() {
                self.search.undo(*home, home_outcome);
            }
            self.search.undo(mv, outcome);
        }

        fn canonical_key(&self) -> u64 {
            self.search.canonical_key()
        }

        fn search_moves(&self, moves: &mut Vec<FtMove>) {
            self.search.search_moves(moves);
        }
    }

    /// The guard behind every test that trusts `solve`'s lines without
    /// replaying them again: a search that reaches a won position by a line
    /// that does not win from the start reports a `ReplayFailure`, never a
    /// winnable verdict.
    #[test]
    fn a_line_that_does_not_replay_is_reported_not_trusted() {
        let mut caught = 0;
        for seed in 1..=10 {
            let deal = FortyThieves::deal(Variant::Indian, seed);
            let search = SilentAutoplay {
                search: FtSearch::new(deal.clone()),
                sent_home: Vec::new(),
            };
            match solve(&search, Budget::positions(20_000)) {
                Err(ReplayFailure { .. }) => caught += 1,
                Ok(Solution {
                    verdict: Verdict::Winnable(line),
                    ..
                }) => assert_eq!(verify_line(&deal, &line), Ok(()), "seed {seed}"),
                Ok(_) => {}
            }
        }
        assert!(caught >= 5, "only {caught} false lines caught");
    }
}
