//! A bot's planning: the sans-I/O mind of a bot that races at a human pace.
//!
//! A bot sees only what a person sees: [`Bot::next_move`] takes the board
//! its seat was sent, nothing else. It guesses the hidden cards ([`guess`]),
//! asks the game's own solver for a winning line of that guess through a
//! [`Hinter`], and plays it move by move. It keeps the
//! guess it planned on, moved along the line: while the board the server
//! sends is that position's view, the line's next move is played without a
//! new search. When a turned card proves the guess wrong, it guesses again
//! and plans again. Most guesses of a deal are unwinnable, so a plan tries
//! several and, among the winning lines found (each with its detours cut),
//! plays the first move most of them share, from the shortest. A line plays its next card-showing move (a turn of
//! the stock, a card turned up) as early as it commutes with the moves
//! before it, so moves a guess wanted are put off until the card is seen.
//!
//! In Virginia Reel and Midshipman the strong level does more, because a
//! line is right for its own guess only: when its lines start differently it judges
//! their first moves against every guess of the plan and plays the one
//! after which the most guesses still win, and when no guess wins it tries
//! more guesses. In Virginia Reel, where every move is final, it also
//! judges each later move of the line the same way, against the plan's
//! guesses moved along by the moves played since (a guess's own line
//! answers for free when the move can be played first in it), and the
//! deal is always among the moves judged. Planning again, with new
//! guesses, before every final move is a limit of its own, off at every
//! level: measured, it won no more and was far slower.
//!
//! With no line found it plays one good move (home, the stock, uncovering a
//! card) that leads to no board it has seen, and after too many of those in
//! a row, or with none left, it resigns. How hard it tries is its
//! [`BotLevel`]; what each level wins is measured in `docs/BOTS.md`.
//!
//! How long it thinks is bounded by a [`Deadline`] it is given
//! ([`Bot::next_move_within`]); it never reads a clock itself: when the
//! deadline passes, its searches stop and it plays the best it has found
//! so far. Whoever runs a bot (the terminal client's network loop, the
//! server's hosted bots) owns the clock and the pace.
//!
//! [`Bot`] is sans I/O, so [`play_alone`] can race it against nothing on a
//! known deal (the strength measurement). The solver runs inside
//! [`Bot::next_move`]: callers on an async runtime run it on a blocking
//! thread.
//!
//! Layout: [`BotLevel`] and its [`PlanLimits`]; [`Bot`]; [`play_alone`];
//! `deadline.rs`, the [`Deadline`] trait; `pace.rs`, [`human_pace`], the
//! time between moves a runner waits; `tests.rs`.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::any::{AnyGame, AnyMove};
use crate::game::GameKind;
use crate::games::virginia_reel::ReelMove;
use crate::position::{guess, move_shapes};
use crate::rules::{Effect, Rules, View, Zone};
use crate::solver::hinter::{Hinter, Searchable};
use crate::solver::{Budget, Hint, Verdict, shorten_line};

mod deadline;
mod pace;

pub use deadline::{Deadline, NoDeadline};
pub use pace::human_pace;

/// How hard a bot tries: how much each plan may search, and how many
/// guesses of the hidden cards it tries before settling for one good move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BotLevel {
    /// One guess and a small search: often finds no line and muddles on.
    Easy,
    /// A few guesses, a search well under a human move's time.
    Normal,
    /// Several guesses, voting among their shortened winning lines, and in
    /// Virginia Reel and Midshipman their first moves judged against every
    /// guess (in Virginia Reel every move, and the deal with them).
    #[default]
    Strong,
}

impl BotLevel {
    /// Every level, weakest first.
    pub const ALL: [BotLevel; 3] = [BotLevel::Easy, BotLevel::Normal, BotLevel::Strong];

    /// The level's name, as the wire and the command line spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            BotLevel::Easy => "easy",
            BotLevel::Normal => "normal",
            BotLevel::Strong => "strong",
        }
    }
}

impl std::fmt::Display for BotLevel {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A name that is no [`BotLevel`]'s.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no bot level is called {0:?}: easy, normal or strong")]
pub struct UnknownLevel(pub String);

impl std::str::FromStr for BotLevel {
    type Err = UnknownLevel;

    fn from_str(name: &str) -> Result<BotLevel, UnknownLevel> {
        BotLevel::ALL
            .into_iter()
            .find(|level| level.as_str().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| UnknownLevel(name.to_string()))
    }
}

/// What a level allows one plan, for one game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanLimits {
    /// Positions per search of one guess.
    pub budget: u64,
    /// Guesses tried per plan while each is proved unwinnable.
    pub guesses: u64,
    /// Whether a guess the search could not settle is worth another guess
    /// (with a small budget, the next guess usually fares the same).
    pub retry_unknown: bool,
    /// How many winning lines (of different guesses) a plan gathers before
    /// it plays the first move most of them share: a move that wins
    /// whatever the hidden cards are beats one that wins only if the
    /// guess is right. 1 plays the first line found.
    pub votes: u64,
    /// How many moves in a row the bot makes with no winning line before
    /// it resigns: past that, its moves are wasted wandering.
    pub patience: u64,
    /// More guesses a plan may try when none of its first `guesses` won:
    /// a missing line is where more search pays, a line being followed
    /// needs none.
    pub rescue_guesses: u64,
    /// How many different first moves of the winning lines are judged
    /// against every guess of the plan before one is played (fewer than 2
    /// judges none). A line's first move wins its own guess; the one to
    /// play is the one after which the most guesses still win.
    pub judged_moves: usize,
    /// Positions per search of a guess after a judged move.
    pub judge_budget: u64,
    /// Whether every move a line plays is judged too, against the plan's
    /// guesses moved along by the moves played since, with the deal among
    /// the candidates.
    pub judge_every_move: bool,
    /// Whether a plan that judges its first moves judges the deal too.
    pub judge_deal: bool,
}

impl BotLevel {
    /// The limits of one plan of `game` at this level.
    pub fn limits(self, game: GameKind) -> PlanLimits {
        // Positions per second differ by game: Virginia Reel's search is the
        // slowest per position, Three Blind Mice settles most guesses at once.
        let budget = |tbm: u64, forty_thieves: u64, reel: u64| match game {
            GameKind::ThreeBlindMice => tbm,
            GameKind::Indian | GameKind::Midshipman => forty_thieves,
            GameKind::VirginiaReel => reel,
        };
        // Judging first moves and more guesses when none wins: adopted for
        // Virginia Reel, where they won more of 100 proved deals, and for
        // Midshipman once its judging searches were large enough for the
        // solver's best-first phase (50,000 positions; at 25,000, before
        // the phase, they won no more); Indian plays as before
        // (docs/BOTS.md).
        let judges = matches!(game, GameKind::VirginiaReel | GameKind::Midshipman);
        let judging = |other, judged| if judges { judged } else { other };
        match self {
            BotLevel::Easy => PlanLimits {
                budget: budget(2_000, 2_000, 1_000),
                guesses: 1,
                retry_unknown: false,
                votes: 1,
                patience: 100,
                rescue_guesses: 0,
                judged_moves: 0,
                judge_budget: 0,
                judge_every_move: false,
                judge_deal: false,
            },
            BotLevel::Normal => PlanLimits {
                budget: budget(20_000, 20_000, 10_000),
                guesses: 4,
                retry_unknown: false,
                votes: 1,
                patience: 100,
                rescue_guesses: 0,
                judged_moves: 0,
                judge_budget: 0,
                judge_every_move: false,
                judge_deal: false,
            },
            // Smaller plans than before lines were shortened before the vote
            // (100,000 positions, 12 guesses and 5 votes for Indian): on
            // eight deals each of Indian and Virginia Reel they won as
            // often, in less time (docs/BOTS.md).
            BotLevel::Strong => PlanLimits {
                budget: budget(100_000, 50_000, 50_000),
                guesses: 8,
                retry_unknown: true,
                votes: judging(3, 4),
                patience: 40,
                rescue_guesses: judging(0, 8),
                judged_moves: if judges { 3 } else { 0 },
                judge_budget: match game {
                    GameKind::ThreeBlindMice | GameKind::Midshipman => 50_000,
                    GameKind::Indian | GameKind::VirginiaReel => 25_000,
                },
                // Virginia Reel only: its flips were moves of a line
                // judged against no other guess, and the deal was often the
                // move that kept the win (docs/BOTS.md, fourth pass).
                judge_every_move: game == GameKind::VirginiaReel,
                judge_deal: game == GameKind::VirginiaReel,
                // Measured in docs/BOTS.md: a plan before each final move
                // won no more deals and made a game tens of times slower.
            },
        }
    }
}

/// A bot's mind: the guess it plays on and the line it follows.
#[derive(Debug)]
pub struct Bot {
    level: BotLevel,
    /// The guess of the last plan, moved along by the bot's own moves:
    /// while the board is this position's view, the guess still holds.
    believed: Option<AnyGame>,
    /// The line planned on `believed`.
    hinter: Hinter<AnyGame>,
    /// Draws the next guess; different bots in one room start apart.
    variation: u64,
    /// Every board seen, so a move made without a line never goes back.
    seen: HashSet<View>,
    /// Searches run by plans (the hinter counts its own).
    searches: u64,
    /// Positions expanded by the searches counted in `searches`.
    positions: u64,
    /// Moves made in a row with no winning line.
    without_line: u64,
    /// The guesses of the last plan, moved along by the moves played since:
    /// what a line's next move is judged against (only when the level
    /// judges every move).
    kept: Vec<Kept>,
}

impl Bot {
    /// A bot of `level` whose guesses start from `variation`.
    pub fn new(level: BotLevel, variation: u64) -> Bot {
        Bot {
            level,
            believed: None,
            hinter: Hinter::new(),
            variation,
            seen: HashSet::new(),
            searches: 0,
            positions: 0,
            without_line: 0,
            kept: Vec::new(),
        }
    }

    /// The move (in the notation) to play on `board`, or `None` to resign,
    /// with no limit on the time to think. Runs the solver: call it off any
    /// async runtime.
    pub fn next_move(&mut self, board: &View) -> Option<String> {
        self.next_move_within(board, &NoDeadline)
    }

    /// [`Bot::next_move`] within `deadline`: once it has passed, searches
    /// stop (the solver's `should_stop`), no more guesses are tried and no
    /// more moves judged, and the bot plays the best it has: the best-ranked
    /// of the lines found so far, the judged move that won the most guesses
    /// among those judged in full (else the line's own move), or with no
    /// line one good move of a guess. Running out of time never resigns: a
    /// plan cut short does not count toward the moves without a line.
    pub fn next_move_within(&mut self, board: &View, deadline: &dyn Deadline) -> Option<String> {
        let clock = Clock::new(deadline);
        self.seen.insert(board.clone());
        let limits = self.level.limits(board.game);
        let stop = || clock.up();
        let budget = Budget {
            positions: limits.budget,
            should_stop: Some(&stop),
        };
        // A guess whose board is no longer this one (a deal showed other
        // cards) says nothing about the hidden cards now.
        self.kept.retain(|kept| kept.position.view() == *board);
        if let Some(believed) = self
            .believed
            .take()
            .filter(|believed| believed.view() == *board)
            // On its line the hinter answers without a search; off it, a
            // search is started only with time left.
            && (self.hinter.index_on_line(&believed).is_some() || !clock.up())
            && let Ok(Hint::Play(mv)) = self.hinter.hint(&believed, budget)
        {
            if limits.judge_every_move && self.kept.iter().any(|kept| kept.line.is_some()) {
                return self.play_judged(believed, mv, &limits, &clock);
            }
            return self.play(believed, mv);
        }
        // With nothing hidden every guess is the position: one search will do.
        let (votes, guesses, rescue) = if board.zones.iter().any(|zone| zone.hidden > 0) {
            (limits.votes.max(1), limits.guesses, limits.rescue_guesses)
        } else {
            (1, 1, 0)
        };
        let mut first_guess = None;
        let mut tried: Vec<Tried> = Vec::new();
        let mut won = 0;
        for index in 0..guesses + rescue {
            if !keep_guessing(index, won, votes, guesses) || clock.up() {
                break;
            }
            self.variation = self.variation.wrapping_add(1);
            let position = guess(board, self.variation).ok()?;
            first_guess.get_or_insert_with(|| position.clone());
            self.searches += 1;
            let searched = position.search(budget);
            if let Ok(solution) = &searched {
                self.positions += solution.positions;
            }
            let outcome = match searched.map(|solution| solution.verdict) {
                Ok(Verdict::Winnable(line)) if line.is_empty() => return None,
                Ok(Verdict::Winnable(line)) => {
                    won += 1;
                    GuessOutcome::Won(line)
                }
                Ok(Verdict::Unwinnable) => GuessOutcome::Lost,
                Ok(Verdict::Unknown) | Err(_) if limits.retry_unknown => GuessOutcome::Unsettled,
                // A search that ran out of budget on one guess will on the
                // others too; only proofs of unwinnable guesses are worth
                // another guess.
                Ok(Verdict::Unknown) | Err(_) => break,
            };
            tried.push(Tried { position, outcome });
        }
        self.kept = if limits.judge_every_move {
            tried
                .iter()
                .map(|tried| Kept {
                    position: tried.position.clone(),
                    line: match &tried.outcome {
                        GuessOutcome::Won(line) => Some(line.clone()),
                        GuessOutcome::Lost | GuessOutcome::Unsettled => None,
                    },
                })
                .collect()
        } else {
            Vec::new()
        };
        let (chosen, judged) = chosen_line(tried, &limits, &clock);
        self.searches += judged.searches;
        self.positions += judged.positions;
        if let Some((position, line)) = chosen {
            // The hinter keeps the line for the moves to come while the
            // guess holds.
            self.hinter.adopt(&position, &line);
            let &first = line.first()?;
            return self.play(position, first);
        }
        // A plan the clock cut short proved nothing about the position:
        // only plans that ran their course count toward resigning.
        if !clock.up() {
            self.without_line += 1;
            if self.without_line > limits.patience {
                return None;
            }
        }
        self.kept.clear();
        let position = match first_guess {
            Some(position) => position,
            // Time was up before the first guess: guess now (no search) for
            // the good move.
            None => {
                self.variation = self.variation.wrapping_add(1);
                guess(board, self.variation).ok()?
            }
        };
        let text = good_move(&position, &self.seen)?;
        Some(text)
    }

    /// How many searches the bot's plans have run.
    pub fn searches(&self) -> u64 {
        self.searches + self.hinter.searches()
    }

    /// Positions expanded by the searches of the bot's plans and judged
    /// moves (not the hinter's, which does not report them).
    pub fn positions_searched(&self) -> u64 {
        self.positions
    }

    /// The server refused the last move: the guess was wrong about the
    /// position, so the next move is planned afresh.
    pub fn refused(&mut self) {
        self.believed = None;
    }

    /// Plays `mv` on the believed position and returns its text.
    fn play(&mut self, believed: AnyGame, mv: AnyMove) -> Option<String> {
        self.play_found(believed, mv, &[])
    }

    /// Judges `planned`, the next move of the line on `believed`, against
    /// the kept guesses, with the other kept lines' next moves and the deal,
    /// and plays the one after which the most guesses still win
    /// ([`most_robust`]; `planned` on a tie). A guess wins after a move if
    /// its line still wins with the move played first, else if a search
    /// after the move says so; a guess with no line counts as lost. Once
    /// `clock` is up every question left counts as lost, so only a move
    /// judged in full before it struck can displace `planned`.
    fn play_judged(
        &mut self,
        believed: AnyGame,
        planned: AnyMove,
        limits: &PlanLimits,
        clock: &Clock<'_>,
    ) -> Option<String> {
        let mut candidates = vec![planned];
        for kept in &self.kept {
            if let Some(&next) = kept.line.as_ref().and_then(|line| line.first())
                && !candidates.contains(&next)
                && candidates.len() <= limits.judged_moves
            {
                candidates.push(next);
            }
        }
        add_deal(&believed, &mut candidates);
        if candidates.len() < 2 {
            return self.play(believed, planned);
        }
        let stop = || clock.up();
        let budget = Budget {
            positions: limits.judge_budget,
            should_stop: Some(&stop),
        };
        // found[candidate][guess]: the guess's winning line after the candidate.
        let mut found: Vec<Vec<Option<Vec<AnyMove>>>> =
            vec![vec![None; self.kept.len()]; candidates.len()];
        let mut searches = 0;
        let mut positions = 0;
        let kept = &self.kept;
        let chosen = most_robust(candidates.len(), kept.len(), |candidate, guess| {
            let (Some(&mv), Some(kept)) = (candidates.get(candidate), kept.get(guess)) else {
                return false;
            };
            if clock.up() {
                return false;
            }
            let Some(line) = &kept.line else {
                return false;
            };
            let after_line = line_after(&kept.position, line, mv).or_else(|| {
                let mut after = kept.position.clone();
                after.apply(mv).ok()?;
                if after.is_won() {
                    return Some(Vec::new());
                }
                searches += 1;
                let solution = after.search(budget).ok()?;
                positions += solution.positions;
                match solution.verdict {
                    Verdict::Winnable(line) => Some(line),
                    Verdict::Unwinnable | Verdict::Unknown => None,
                }
            });
            let wins = after_line.is_some();
            found[candidate][guess] = after_line;
            wins
        })
        .unwrap_or(0);
        self.searches += searches;
        self.positions += positions;
        let Some(&mv) = candidates.get(chosen) else {
            return self.play(believed, planned);
        };
        let found = found.swap_remove(chosen);
        if mv == planned {
            return self.play_found(believed, mv, &found);
        }
        // Follow the line of a guess that wins after the move.
        let adopted = found.iter().enumerate().find_map(|(guess, line)| {
            let line = line.as_ref()?;
            let position = self.kept.get(guess)?.position.clone();
            let mut whole = vec![mv];
            whole.extend_from_slice(line);
            Some((position, whole))
        });
        match adopted {
            Some((position, line)) => {
                self.hinter.adopt(&position, &line);
                self.play_found(position, mv, &found)
            }
            None => self.play_found(believed, mv, &found),
        }
    }

    /// Plays `mv` on the believed position and returns its text; the kept
    /// guesses move along, each with the line `found` for it after `mv`,
    /// else its own line if that still wins with `mv` played first.
    fn play_found(
        &mut self,
        mut believed: AnyGame,
        mv: AnyMove,
        found: &[Option<Vec<AnyMove>>],
    ) -> Option<String> {
        for (index, kept) in self.kept.iter_mut().enumerate() {
            let before = kept.position.clone();
            if kept.position.apply(mv).is_err() {
                kept.line = None;
                continue;
            }
            kept.line = match found.get(index).cloned().flatten() {
                Some(line) => Some(line),
                None => kept
                    .line
                    .take()
                    .and_then(|line| line_after(&before, &line, mv)),
            };
        }
        self.without_line = 0;
        let text = believed.format_move(mv);
        believed.apply(mv).ok()?;
        self.believed = Some(believed);
        Some(text)
    }
}

/// A guess of the last plan, moved along by the moves played since.
#[derive(Clone, Debug)]
struct Kept {
    /// The guessed position now.
    position: AnyGame,
    /// A winning line from it; `None` once none is known (proved lost,
    /// unsettled, or a move played that its line cannot take first).
    line: Option<Vec<AnyMove>>,
}

/// Whether `mv` deals from the stock (Virginia Reel's deal).
fn is_deal(mv: AnyMove) -> bool {
    matches!(mv, AnyMove::VirginiaReel(ReelMove::Deal))
}

/// Adds the deal to `candidates` when it is legal on `position` and not
/// among them yet.
fn add_deal(position: &AnyGame, candidates: &mut Vec<AnyMove>) {
    let mut legal = Vec::new();
    position.legal_moves(&mut legal);
    if let Some(&deal) = legal.iter().find(|mv| is_deal(**mv))
        && !candidates.contains(&deal)
    {
        candidates.push(deal);
    }
}

/// The rest of `line`, a winning line from `position`, with `mv` played
/// first: `line` without `mv` if that still wins after `mv`, else `None`.
fn line_after(position: &AnyGame, line: &[AnyMove], mv: AnyMove) -> Option<Vec<AnyMove>> {
    let at = line.iter().position(|&on_line| on_line == mv)?;
    let mut rest = line.to_vec();
    rest.remove(at);
    if at == 0 {
        return Some(rest);
    }
    let mut state = position.clone();
    let replays = state.apply(mv).is_ok()
        && rest.iter().all(|&next| state.apply(next).is_ok())
        && state.is_won();
    replays.then_some(rest)
}

/// Whether a plan that has tried `tried` guesses and found `won` winning
/// lines tries another: until it has `votes` lines, and past its first
/// `guesses` only while it has none (the caller bounds the rescue guesses).
fn keep_guessing(tried: u64, won: u64, votes: u64, guesses: u64) -> bool {
    won < votes && (tried < guesses || won == 0)
}

/// One guess of a plan and what its search found.
struct Tried {
    /// The guessed position.
    position: AnyGame,
    /// Its search's verdict.
    outcome: GuessOutcome,
}

/// What the search of one guess found.
enum GuessOutcome {
    /// A winning line.
    Won(Vec<AnyMove>),
    /// No win from this guess: nor after any move.
    Lost,
    /// The budget ran out.
    Unsettled,
}

/// The line to play of the winning lines found on different guesses, each
/// with its detours cut ([`shorten_line`]), and the searches it ran.
///
/// The lines are ranked by [`ranked_lines`]: first those whose first move
/// the most lines share (a move that wins whatever the hidden cards are
/// beats one that wins only if the guess is right), then the shortest,
/// then the earliest found. With `judged_moves` of 2 or more and lines that
/// start differently, the first moves of the best-ranked lines are judged
/// against every guess of the plan ([`guesses_won_after`]) and the line
/// played is the best-ranked one starting with the move after which the
/// most guesses still win: a line's first move wins its own guess, not
/// necessarily the others. Once `clock` is up every question left counts
/// as lost, so the best-ranked line is played unless a move judged in full
/// before the strike beat it.
fn chosen_line(
    tried: Vec<Tried>,
    limits: &PlanLimits,
    clock: &Clock<'_>,
) -> (Option<(AnyGame, Vec<AnyMove>)>, Judged) {
    let winners: Vec<(usize, Vec<AnyMove>)> = tried
        .iter()
        .enumerate()
        .filter_map(|(index, tried)| match &tried.outcome {
            GuessOutcome::Won(line) => {
                let line = reveal_early(&tried.position, &shorten_line(&tried.position, line));
                (!line.is_empty()).then_some((index, line))
            }
            GuessOutcome::Lost | GuessOutcome::Unsettled => None,
        })
        .collect();
    let lines: Vec<&[AnyMove]> = winners.iter().map(|(_, line)| line.as_slice()).collect();
    let ranked = ranked_lines(&lines);
    let mut candidates: Vec<AnyMove> = Vec::new();
    for &index in &ranked {
        if let Some(&first) = lines[index].first()
            && !candidates.contains(&first)
            && candidates.len() < limits.judged_moves.max(1)
        {
            candidates.push(first);
        }
    }
    // The deal is judged too: a line of a guess plays the cards of the rows
    // and reserves before it deals, right for that guess's stock only.
    if limits.judge_deal
        && !candidates.is_empty()
        && let Some(first) = tried.first()
    {
        add_deal(&first.position, &mut candidates);
    }
    let mut judged = Judged::default();
    let chosen_move = if candidates.len() >= 2 {
        // Each guess's own line says it wins after that line's first move.
        let own_first: Vec<Option<AnyMove>> = (0..tried.len())
            .map(|index| {
                winners
                    .iter()
                    .find(|(guess, _)| *guess == index)
                    .and_then(|(_, line)| line.first().copied())
            })
            .collect();
        let stop = || clock.up();
        let budget = Budget {
            positions: limits.judge_budget,
            should_stop: Some(&stop),
        };
        let wins_after = |candidate: usize, guess: usize| {
            let (Some(&candidate), Some(tried)) = (candidates.get(candidate), tried.get(guess))
            else {
                return false;
            };
            if clock.up() {
                return false;
            }
            match tried.outcome {
                // No move wins a lost position.
                GuessOutcome::Lost => return false,
                _ if own_first.get(guess).copied().flatten() == Some(candidate) => return true,
                GuessOutcome::Won(_) | GuessOutcome::Unsettled => {}
            }
            let mut after = tried.position.clone();
            if after.apply(candidate).is_err() {
                return false;
            }
            if after.is_won() {
                return true;
            }
            judged.searches += 1;
            let Ok(solution) = after.search(budget) else {
                return false;
            };
            judged.positions += solution.positions;
            // An unsettled search counts as no win.
            matches!(solution.verdict, Verdict::Winnable(_))
        };
        most_robust(candidates.len(), tried.len(), wins_after)
            .and_then(|index| candidates.get(index).copied())
    } else {
        candidates.first().copied()
    };
    let chosen = ranked
        .into_iter()
        .find(|&index| lines[index].first().copied() == chosen_move)
        .and_then(|index| {
            let (guess, line) = winners.get(index)?;
            Some((tried.get(*guess)?.position.clone(), line.clone()))
        })
        .or_else(|| {
            // A deal no line starts with: play it alone; what it shows
            // is planned on afresh.
            let deal = chosen_move.filter(|&mv| is_deal(mv))?;
            let (guess, _) = winners.first()?;
            Some((tried.get(*guess)?.position.clone(), vec![deal]))
        });
    (chosen, judged)
}

/// The work of a plan's judging: searches run and positions they expanded.
#[derive(Clone, Copy, Debug, Default)]
struct Judged {
    /// Searches run.
    searches: u64,
    /// Positions they expanded.
    positions: u64,
}

/// A bot's view of its [`Deadline`] while it chooses one move: once the
/// deadline has passed it stays passed, so every step after the strike
/// agrees (and a fake deadline is asked once per step until then).
struct Clock<'a> {
    /// The deadline the bot was given.
    deadline: &'a dyn Deadline,
    /// Whether it has passed (atomic: the solver asks through a `Sync`
    /// callback).
    struck: AtomicBool,
}

impl<'a> Clock<'a> {
    fn new(deadline: &'a dyn Deadline) -> Clock<'a> {
        Clock {
            deadline,
            struck: AtomicBool::new(false),
        }
    }

    /// Whether the time to think is up.
    fn up(&self) -> bool {
        if self.struck.load(Ordering::Relaxed) {
            return true;
        }
        let up = self.deadline.passed();
        if up {
            self.struck.store(true, Ordering::Relaxed);
        }
        up
    }
}

/// Of `candidates` moves, best-ranked first, the index of the one after
/// which the most of `guesses` guesses still win (`wins(candidate, guess)`),
/// the best-ranked on a tie; `None` with no candidates. Asks no more than
/// it must: a candidate's guesses stop being asked once it can no longer
/// win more guesses than the best so far, since every question may be a
/// search.
fn most_robust(
    candidates: usize,
    guesses: usize,
    mut wins: impl FnMut(usize, usize) -> bool,
) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for candidate in 0..candidates {
        // A later candidate must win strictly more guesses to be chosen.
        let needed = best.map_or(0, |(_, most)| most + 1);
        let mut won = 0;
        for guess in 0..guesses {
            if won + (guesses - guess) < needed {
                break;
            }
            won += usize::from(wins(candidate, guess));
        }
        if won >= needed {
            best = Some((candidate, won));
        }
    }
    best.map(|(candidate, _)| candidate)
}

/// `line` with its first move that shows a hidden card (a turn of the
/// stock, a deal, a card turned up) played as early as it commutes with
/// the moves before it: the line reaches the same position after it, so
/// it wins the same. A bot plans again on what the card shows, so the
/// moves it put off are made only if the new plan still wants them: a line
/// of a guess moves cards about for the cards it guessed, and played before
/// the stock turns, those moves were often undone after it.
fn reveal_early(position: &AnyGame, line: &[AnyMove]) -> Vec<AnyMove> {
    let mut state = position.clone();
    let mut first_reveal = None;
    let mut revealed = position.clone();
    for (at, &mv) in line.iter().enumerate() {
        let Ok(outcome) = state.apply(mv) else {
            return line.to_vec();
        };
        let reveals = outcome.effects.iter().any(|effect| {
            matches!(
                effect,
                Effect::TurnedUp { .. } | Effect::Drew { .. } | Effect::Dealt { .. }
            )
        });
        if reveals {
            first_reveal = Some(at);
            revealed = state;
            break;
        }
    }
    let Some(reveal) = first_reveal.filter(|&at| at > 0) else {
        return line.to_vec();
    };
    for earlier in 0..reveal {
        let mut moved = line.to_vec();
        let mv = moved.remove(reveal);
        moved.insert(earlier, mv);
        let mut state = position.clone();
        let commutes = moved[..=reveal].iter().all(|&mv| state.apply(mv).is_ok());
        if commutes && state == revealed {
            return moved;
        }
    }
    line.to_vec()
}

/// The index of the line to play: the first of [`ranked_lines`]. `None`
/// if every line is empty.
#[cfg(test)]
fn most_shared_shortest<M: Copy + Eq + std::hash::Hash>(lines: &[&[M]]) -> Option<usize> {
    ranked_lines(lines).first().copied()
}

/// The indices of the non-empty lines, best first: those whose first move
/// the most lines share, then the shortest, then the earliest.
fn ranked_lines<M: Copy + Eq + std::hash::Hash>(lines: &[&[M]]) -> Vec<usize> {
    let mut votes: HashMap<M, usize> = HashMap::new();
    for line in lines {
        if let Some(&first) = line.first() {
            *votes.entry(first).or_default() += 1;
        }
    }
    let mut ranked: Vec<(usize, usize, usize)> = lines
        .iter()
        .enumerate()
        .filter_map(|(index, line)| {
            let shared = votes.get(line.first()?)?;
            Some((index, *shared, line.len()))
        })
        .collect();
    ranked.sort_by_key(|&(index, shared, length)| (std::cmp::Reverse(shared), length, index));
    ranked.into_iter().map(|(index, _, _)| index).collect()
}

/// How a bot fared alone on a deal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Alone {
    /// Whether it won.
    pub won: bool,
    /// Moves it played (refused ones included).
    pub moves: u64,
}

/// Plays a bot of `level` on `deal` with no one else in the room and no
/// pace, at most `max_moves` moves: the bot sees each board as the server
/// would send it, never the deal itself.
pub fn play_alone(deal: &AnyGame, level: BotLevel, variation: u64, max_moves: u64) -> Alone {
    play_alone_within(deal, level, variation, max_moves, |bot, board| {
        bot.next_move(board)
    })
}

/// [`play_alone`], where `choose` asks the bot for each move (with the
/// deadline it chooses: a caller with a clock bounds each move's thinking).
pub fn play_alone_within(
    deal: &AnyGame,
    level: BotLevel,
    variation: u64,
    max_moves: u64,
    mut choose: impl FnMut(&mut Bot, &View) -> Option<String>,
) -> Alone {
    let mut position = deal.clone();
    let mut bot = Bot::new(level, variation);
    for moves in 0..max_moves {
        if position.is_won() {
            return Alone { won: true, moves };
        }
        let chosen = choose(&mut bot, &position.view());
        let Some(text) = chosen else {
            return Alone { won: false, moves };
        };
        let played = position
            .parse_move(&text)
            .ok()
            .is_some_and(|mv| position.apply(mv).is_ok());
        if !played {
            bot.refused();
        }
    }
    Alone {
        won: position.is_won(),
        moves: max_moves,
    }
}

/// A move that makes progress without a plan: a card home, else one that
/// uncovers a face-down card, else one from the waste, else the stock, else
/// any, never back to a board already seen.
fn good_move(position: &AnyGame, seen: &HashSet<View>) -> Option<String> {
    let before = position.view();
    let uncovers = |zone: Zone, depth: usize| {
        before
            .zones
            .iter()
            .any(|z| z.zone == zone && z.hidden > 0 && depth + 1 == z.face_up.len())
    };
    move_shapes(position)
        .into_iter()
        .filter_map(|shape| {
            let mut after = position.clone();
            after.apply(shape.mv).ok()?;
            let after = after.view();
            let rank = match (shape.to, shape.from) {
                (Some(Zone::Foundation(_) | Zone::Discard), _) => 0,
                _ if uncovers(shape.from, shape.depth) => 1,
                (_, Zone::Waste | Zone::Reserve(_)) => 2,
                (_, Zone::Stock) => 3,
                _ => 4,
            };
            (!seen.contains(&after)).then_some((rank, shape.text))
        })
        .min_by_key(|(rank, _)| *rank)
        .map(|(_, text)| text)
}

#[cfg(test)]
mod tests;
