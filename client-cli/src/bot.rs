//! Bots: ordinary protocol clients that race at a human pace.
//!
//! A bot sees only what a person sees: [`Bot::next_move`] takes the board
//! the server sent, nothing else. It guesses the hidden cards ([`guess`]),
//! asks the game's own solver for a winning line of that guess through a
//! [`Hinter`], and plays it move by move, one every `pace`. It keeps the
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
//! ([`Bot::next_move_within`]; it never reads a clock itself): when the
//! deadline passes, its searches stop and it plays the best it has found
//! so far. In a room the deadline is two paces after the board came, at
//! most 10 s ([`think_limit`]).
//!
//! [`Bot`] is sans I/O, so [`play_alone`] can race it against nothing on a
//! known deal (the strength measurement), and [`run`] puts it in a room.
//! The solver runs on a blocking thread, never on a runtime worker.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use patience_shared::any::{AnyGame, AnyMove};
use patience_shared::game::GameKind;
use patience_shared::games::virginia_reel::ReelMove;
use patience_shared::position::{guess, move_shapes};
use patience_shared::protocol::{ClientMessage, ServerMessage};
use patience_shared::rules::{Effect, Rules, View, Zone};
use patience_shared::solver::hinter::{Hinter, Searchable};
use patience_shared::solver::{Budget, Hint, Verdict, shorten_line};
use tokio::time::Instant;

use crate::config::Store;
use crate::net::{NetError, seq_of};
use crate::session::{Entry, SeatSlot, Session};
use crate::thinking::{Deadline, NoDeadline, WallClockDeadline, think_limit};

/// How hard a bot tries: how much each plan may search, and how many
/// guesses of the hidden cards it tries before settling for one good move.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
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
    play_alone_timed(deal, level, variation, max_moves, None, |_| {})
}

/// [`play_alone`], with at most `think_limit` of wall clock time to choose
/// each move (none: no limit), telling `thought` how long the bot took to
/// choose each move: the time a bot at a human pace must fit in its pace.
pub fn play_alone_timed(
    deal: &AnyGame,
    level: BotLevel,
    variation: u64,
    max_moves: u64,
    think_limit: Option<Duration>,
    mut thought: impl FnMut(Duration),
) -> Alone {
    play_alone_within(deal, level, variation, max_moves, |bot, board| {
        let started = std::time::Instant::now();
        let chosen = match think_limit {
            Some(limit) => bot.next_move_within(board, &WallClockDeadline::after(started, limit)),
            None => bot.next_move(board),
        };
        thought(started.elapsed());
        chosen
    })
}

/// [`play_alone`], where `choose` asks the bot for each move (with the
/// deadline it chooses).
fn play_alone_within(
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

/// Joins room `code` on `server` as `name` and races as a bot of `level`
/// until the race ends, telling `log` what happens in the room. With `store`, the bot keeps its
/// seat there ([`SeatSlot::Bot`]) and takes back the one saved for `code`
/// instead of joining anew: `play --bot` brings its bot back after a
/// restart. A bot started on its own (`patience bot`) passes
/// [`Store::none`].
///
/// The bot thinks about each move within [`think_limit`] of `pace` (twice
/// the pace, at most 10 s; no limit at pace 0), on the wall clock from when
/// the board came, and its thinking counts toward the pace: the move is
/// sent a pace (varied like a person's) after the board came, or as soon
/// as it is chosen if thinking took longer.
///
/// Cancel-safe in effect: dropped early, the bot's session is dropped,
/// which keeps its seat for a resume; [`Session::start`] inside it is not
/// (see `crate::session`).
pub async fn run(
    server: &str,
    name: &str,
    code: &str,
    pace: Duration,
    level: BotLevel,
    store: Store,
    log: impl FnMut(&str) + Send,
) -> Result<(), NetError> {
    let room = Room {
        server,
        name,
        code,
        store,
    };
    race(room, pace, level, log, think_off_runtime).await
}

/// Where [`run`] races: the server, the bot's name, the room's code and
/// where its seat is kept.
struct Room<'a> {
    server: &'a str,
    name: &'a str,
    code: &'a str,
    store: Store,
}

/// [`run`], thinking about each board with `think` (the bot, the board and
/// the thinking limit in; the bot back with its move, or `None` if the
/// thinking failed).
///
/// The one seam in the race loop, for the tests of the pace: a race thinks
/// with [`think_off_runtime`]; the tests wrap it in a sleep on the
/// runtime's clock. They run on a paused tokio clock, which stands still
/// while the solver runs on its blocking thread, so without the sleep
/// thinking would cost no time there, and a move due a pace after the
/// board came could not be told from one due a pace after the thinking.
async fn race<Think, Thinking>(
    room: Room<'_>,
    pace: Duration,
    level: BotLevel,
    mut log: impl FnMut(&str) + Send,
    mut think: Think,
) -> Result<(), NetError>
where
    Think: FnMut(Bot, View, Option<Duration>) -> Thinking,
    Thinking: Future<Output = Option<(Bot, Option<String>)>>,
{
    let slot = SeatSlot::Bot {
        pace_ms: u64::try_from(pace.as_millis()).unwrap_or(u64::MAX),
        level,
    };
    let entry = Entry::Join(room.code.to_string());
    let (mut session, notes) =
        Session::start_in_slot(room.server, room.name, entry, room.store, slot).await?;
    for note in &notes {
        log(note);
    }
    // Only the solver's choices depend on it; any number keeps bots apart.
    let variation = room.code.bytes().fold(0u64, |hash, byte| {
        hash.wrapping_mul(0x100_0000_01b3) ^ u64::from(byte)
    });
    let mut bot = Some(Bot::new(level, variation));
    let mut next_move: Option<(Instant, String)> = None;
    let mut answer = Answer::default();
    let mut moves_played = 0u64;
    let mut refused_in_a_row = 0u32;
    loop {
        let due = next_move.as_ref().map(|(at, _)| *at);
        tokio::select! {
            received = session.recv() => {
                let (message, notes) = received?;
                for note in session.take_connection_notes().iter().chain(&notes) {
                    log(note);
                }
                if session.state.result.is_some() || session.state.closed.is_some() {
                    break;
                }
                answer.heard(&message);
                match message {
                    ServerMessage::MoveAccepted { .. } => refused_in_a_row = 0,
                    ServerMessage::MoveRejected { .. } => {
                        refused_in_a_row += 1;
                        // The plan was wrong about this position: plan afresh.
                        if let Some(bot) = bot.as_mut() {
                            bot.refused();
                        }
                    }
                    _ => {}
                }
                if !session.state.can_move() || next_move.is_some() || answer.awaited() {
                    continue;
                }
                let Some(board) = session.state.my_board().cloned() else { continue };
                if refused_in_a_row >= REFUSALS_BEFORE_RESIGNING {
                    // The bot's rules and the server's disagree about this
                    // board; another plan would only be refused again.
                    log(&format!("{refused_in_a_row} moves refused in a row: the bot resigns"));
                    session.send(&ClientMessage::Resign).await?;
                    answer.sent();
                    continue;
                }
                let thinking = bot.take().unwrap_or_else(|| Bot::new(level, variation));
                let board_came = Instant::now();
                let (thought, chosen) = think(thinking, board, think_limit(pace))
                    .await
                    // A solver that panicked chose nothing: resign.
                    .unwrap_or_else(|| (Bot::new(level, variation), None));
                bot = Some(thought);
                match chosen {
                    Some(text) => {
                        // Thinking counts toward the pace: a move thought
                        // about longer than its pace is due at once.
                        next_move = Some((board_came + human_pace(pace, moves_played), text));
                        moves_played += 1;
                    }
                    None => {
                        session.send(&ClientMessage::Resign).await?;
                        answer.sent();
                    }
                }
            }
            () = sleep_until(due) => {
                if let Some((_, text)) = next_move.take() {
                    session.send(&ClientMessage::Move { text, seat: None }).await?;
                    answer.sent();
                }
            }
        }
    }
    session.close().await;
    Ok(())
}

/// Moves refused in a row after which the bot resigns rather than plan
/// again. Its moves come from the rules the server plays by, so a refusal
/// means its board is out of date (a plan afresh mends that) or that the
/// two disagree, which no plan mends; without a bound such a bot would send
/// refused moves until the race's time limit, as fast as its pace.
const REFUSALS_BEFORE_RESIGNING: u32 = 3;

/// The answer to the last move (or resignation) the bot sent, while it
/// waits for it: the bot sends nothing else meanwhile, so that it never
/// plays a move chosen for a board that is no longer its own.
///
/// A dropped connection can lose the answer for good: a move lost on its
/// way was never played, a refusal is not among the events a resume
/// replays, and a resume whose missed events are no longer kept sends a
/// snapshot instead. So after a resume the answer is awaited only until
/// the events missed have come (the last is numbered as the `resumed`
/// message says; at once if none was missed), or a snapshot came; then the
/// board the bot has is its board. (When the last event missed was meant
/// for another seat, the next event for this one ends the wait.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Answer {
    /// A move or a resignation was sent and is not answered yet.
    awaited: bool,
    /// After a resume: the number of the last event missed.
    replayed_until: Option<u64>,
    /// The highest event number read so far.
    last_seq: u64,
}

impl Answer {
    /// A move or a resignation has just been sent.
    fn sent(&mut self) {
        self.awaited = true;
    }

    /// Whether the bot still waits for an answer.
    fn awaited(&self) -> bool {
        self.awaited
    }

    /// Takes in a message from the server, in the order read.
    fn heard(&mut self, message: &ServerMessage) {
        match *message {
            ServerMessage::MoveAccepted { .. }
            | ServerMessage::MoveRejected { .. }
            | ServerMessage::Snapshot { .. } => self.awaited = false,
            ServerMessage::Resumed { seq, .. } if self.awaited => self.replayed_until = Some(seq),
            _ => {}
        }
        // A `resumed` message's number is the room's latest event's, not
        // that of an event read here.
        if !matches!(message, ServerMessage::Resumed { .. })
            && let Some(seq) = seq_of(message)
        {
            self.last_seq = self.last_seq.max(seq);
        }
        if self
            .replayed_until
            .is_some_and(|until| self.last_seq >= until)
        {
            self.awaited = false;
        }
        if !self.awaited {
            self.replayed_until = None;
        }
    }
}

/// Thinks about `board` within `limit` of wall clock time from now (none:
/// no limit) on a blocking thread, never on a runtime worker: a plan may
/// search for seconds. Returns the bot with its move (`None`: it resigns),
/// or `None` if the solver panicked.
async fn think_off_runtime(
    mut bot: Bot,
    board: View,
    limit: Option<Duration>,
) -> Option<(Bot, Option<String>)> {
    // The solver's time is the machine's, whatever the runtime's clock says
    // (tests pause it).
    let deadline = limit.map(|limit| WallClockDeadline::after(std::time::Instant::now(), limit));
    tokio::task::spawn_blocking(move || {
        let chosen = match &deadline {
            Some(deadline) => bot.next_move_within(&board, deadline),
            None => bot.next_move(&board),
        };
        (bot, chosen)
    })
    .await
    .ok()
}

/// `pace` varied by up to a third either way, the same for the same move
/// number: people do not move like a metronome.
fn human_pace(pace: Duration, move_number: u64) -> Duration {
    let mut hash = move_number.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    hash ^= hash >> 29;
    let factor = 2.0 / 3.0 + (hash % 1000) as f64 / 1500.0;
    pace.mul_f64(factor)
}

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod run_tests;

#[cfg(test)]
mod tests {
    use patience_shared::solver::any::{ProvedDeal, first_winnable_deal};

    use super::*;

    /// Whether `line` replays from `position` to a win.
    fn wins(position: &AnyGame, line: &[AnyMove]) -> bool {
        let mut position = position.clone();
        line.iter().all(|&mv| position.apply(mv).is_ok()) && position.is_won()
    }

    fn proved(game: GameKind) -> ProvedDeal {
        first_winnable_deal(game, 1..200, Budget::positions(100_000))
            .expect("the solver's lines replay")
            .expect("a deal is proved")
    }

    /// Fair play: a bot's moves follow from the boards it is shown. Two
    /// deals with the same board but different hidden cards get the same
    /// moves for as long as their boards agree: every game at the easy
    /// level, and Midshipman at the strong level, whose plans judge their
    /// first moves against every guess, and Virginia Reel at the strong
    /// level, which judges every move against guesses kept from its plan.
    #[test]
    fn a_bot_plays_the_same_on_deals_that_differ_only_in_hidden_cards() {
        let cases = GameKind::ALL
            .into_iter()
            .map(|game| (game, BotLevel::Easy))
            .chain([
                (GameKind::Midshipman, BotLevel::Strong),
                (GameKind::VirginiaReel, BotLevel::Strong),
            ]);
        for (game, level) in cases {
            let seed = proved(game).seed;
            let mut first = AnyGame::deal(game, seed);
            let mut second = guess(&first.view(), 99).expect("a dealt view reads");
            assert_ne!(first, second, "{game}: the hidden cards differ");
            let (mut first_bot, mut second_bot) = (Bot::new(level, 5), Bot::new(level, 5));
            let mut moves = 0;
            while first.view() == second.view() && !first.is_won() && moves < 400 {
                let text = first_bot.next_move(&first.view());
                assert_eq!(
                    text,
                    second_bot.next_move(&second.view()),
                    "{game} {level:?} seed {seed} move {moves}"
                );
                let Some(text) = text else { break };
                for position in [&mut first, &mut second] {
                    let mv = position
                        .parse_move(&text)
                        .expect("the bot's notation reads");
                    position.apply(mv).expect("a legal move");
                }
                moves += 1;
            }
            assert!(moves > 0, "{game}: the bots moved");
        }
    }

    /// Whether `position` has no legal move: the game is over.
    fn no_legal_move(position: &AnyGame) -> bool {
        let mut legal = Vec::new();
        position.legal_moves(&mut legal);
        legal.is_empty()
    }

    /// A deadline that passes from its `strike_at + 1`-th question on: a
    /// fake clock, so the tests of the thinking limit are deterministic.
    struct StrikesAfter {
        asked: std::sync::atomic::AtomicU64,
        strike_at: u64,
    }

    impl StrikesAfter {
        fn new(strike_at: u64) -> StrikesAfter {
            StrikesAfter {
                asked: std::sync::atomic::AtomicU64::new(0),
                strike_at,
            }
        }

        fn asked(&self) -> u64 {
            self.asked.load(Ordering::Relaxed)
        }
    }

    impl Deadline for StrikesAfter {
        fn passed(&self) -> bool {
            self.asked.fetch_add(1, Ordering::Relaxed) >= self.strike_at
        }
    }

    /// A bot whose time runs out, at once or after a few questions of
    /// its clock, still plays a legal move on every board of every game,
    /// and never resigns for it: the first 30 moves of a proved deal.
    #[test]
    fn a_bot_out_of_time_still_plays_a_legal_move_in_every_game() {
        for game in GameKind::ALL {
            let seed = proved(game).seed;
            for strike_at in [0, 1, 3] {
                let mut position = AnyGame::deal(game, seed);
                let mut bot = Bot::new(BotLevel::Strong, 5);
                let mut struck = 0;
                for moves in 0..30 {
                    if position.is_won() {
                        break;
                    }
                    let deadline = StrikesAfter::new(strike_at);
                    let Some(text) = bot.next_move_within(&position.view(), &deadline) else {
                        // A game with no legal move left is over: the one
                        // resignation a bot out of time may make.
                        assert!(
                            no_legal_move(&position),
                            "{game} strike at {strike_at}: resigned at move {moves}"
                        );
                        break;
                    };
                    struck += u64::from(deadline.asked() > strike_at);
                    let mv = position.parse_move(&text).unwrap_or_else(|error| {
                        panic!("{game} move {moves}: {text} does not read: {error}")
                    });
                    assert!(
                        position.apply(mv).is_ok(),
                        "{game} strike at {strike_at}: {text} is illegal at move {moves}"
                    );
                }
                assert!(
                    struck > 0,
                    "{game} strike at {strike_at}: the clock never struck"
                );
            }
        }
    }

    /// Every search the bot starts follows a question of its clock
    /// answered "not yet": with `strike_at` such answers it starts at most
    /// `strike_at` searches for a move, whatever the game and level.
    #[test]
    fn a_bot_starts_no_search_after_its_time_is_up() {
        for game in GameKind::ALL {
            let seed = proved(game).seed;
            for strike_at in [0, 1, 2, 4] {
                let mut position = AnyGame::deal(game, seed);
                let mut bot = Bot::new(BotLevel::Strong, 5);
                for moves in 0..20 {
                    if position.is_won() {
                        break;
                    }
                    let before = bot.searches();
                    let deadline = StrikesAfter::new(strike_at);
                    let Some(text) = bot.next_move_within(&position.view(), &deadline) else {
                        assert!(no_legal_move(&position), "{game}: resigned at move {moves}");
                        break;
                    };
                    let searches = bot.searches() - before;
                    assert!(
                        searches <= strike_at,
                        "{game} move {moves}: {searches} searches with {strike_at} questions before the strike"
                    );
                    let mv = position
                        .parse_move(&text)
                        .expect("the bot's notation reads");
                    position.apply(mv).expect("a legal move");
                }
            }
        }
    }

    /// The clock reaches inside a search: struck at the solver's first
    /// question, a guess's search stops before its budget, where the same
    /// guess searched with no limit spends all of it. (The solver asks
    /// before each restart round and every 4,096 positions of a pass or
    /// round; before it asked at round starts, a Midshipman guess struck
    /// here ran 31,743 of its 50,000 positions, now none.)
    #[test]
    fn the_limit_stops_a_search_under_way() {
        for game in [GameKind::Midshipman, GameKind::VirginiaReel] {
            let seed = proved(game).seed;
            let board = AnyGame::deal(game, seed).view();
            let limits = BotLevel::Strong.limits(game);
            // The first guess whose search runs long: `Bot::new(_, v)`
            // draws its first guess with variation `v + 1`.
            let (variation, unlimited) = (1..50)
                .find_map(|variation| {
                    let positions = guess(&board, variation + 1)
                        .expect("a dealt view reads")
                        .search(Budget::positions(limits.budget))
                        .expect("the solver's lines replay")
                        .positions;
                    (positions > 40_000).then_some((variation, positions))
                })
                .expect("a guess of the deal runs long");
            let mut bot = Bot::new(BotLevel::Strong, variation);
            // The bot asks once before the guess, the solver next.
            let deadline = StrikesAfter::new(1);
            let text = bot.next_move_within(&board, &deadline);
            assert!(text.is_some(), "{game}: a move");
            assert_eq!(bot.searches(), 1, "{game}: one guess searched");
            let limited = bot.positions_searched();
            assert!(
                limited < unlimited,
                "{game} seed {seed}: {limited} positions with the limit, {unlimited} without"
            );
        }
    }

    /// With nothing hidden the guess is the position: the bot wins along
    /// the line of its one search, a move per line move. (Only Three Blind
    /// Mice shows every card before the end: the other games keep a stock.)
    #[test]
    fn a_bot_that_sees_everything_wins_along_one_line() {
        for game in [GameKind::ThreeBlindMice] {
            let deal = proved(game);
            let mut position = AnyGame::deal(game, deal.seed);
            // Play the proved line until no card is hidden.
            let mut played = 0;
            while position.view().zones.iter().any(|zone| zone.hidden > 0) {
                position.apply(deal.line[played]).expect("the line replays");
                played += 1;
            }
            let rest = deal.line.len() - played;
            assert!(rest > 0, "{game}: the line ends as the last card turns");
            let mut bot = Bot::new(BotLevel::Normal, 1);
            let mut moves = 0;
            while !position.is_won() {
                let text = bot
                    .next_move(&position.view())
                    .expect("the bot finds a move");
                let mv = position
                    .parse_move(&text)
                    .expect("the bot's notation reads");
                position.apply(mv).expect("the bot's move is legal");
                moves += 1;
                assert!(moves <= rest, "{game}: {moves} moves and no win");
            }
            assert_eq!(bot.searches(), 1, "{game}: the line was kept");
        }
    }

    /// `play_alone` reports a win only for a won game, within its moves.
    #[test]
    fn playing_alone_counts_moves_and_stops_at_the_limit() {
        let deal = proved(GameKind::ThreeBlindMice);
        let start = AnyGame::deal(GameKind::ThreeBlindMice, deal.seed);
        let stopped = play_alone(&start, BotLevel::Normal, 1, 1);
        assert_eq!(
            stopped,
            Alone {
                won: false,
                moves: 1
            }
        );
        // Measured: the strong bot wins this deal (docs/BOTS.md); a move
        // per card and a few more.
        let alone = play_alone(&start, BotLevel::Strong, deal.seed, 500);
        assert!(alone.won, "seed {}: {alone:?}", deal.seed);
        assert!(alone.moves >= 20 && alone.moves < 100, "{alone:?}");
    }

    /// Of winning lines of different guesses, the one played starts with
    /// the move most of them share, and is the shortest of those.
    #[test]
    fn the_line_played_starts_with_the_most_shared_move_and_is_the_shortest() {
        // (lines, the index of the one played)
        let cases: [(&[&str], Option<usize>); 6] = [
            (&[], None),
            (&["", ""], None),
            (&["ab", "bxy", "bz", "a"], Some(3)),
            (&["abc", "bxy", "bz", "ax"], Some(2)),
            (&["abcd", "bxy", "bz", "acde"], Some(2)),
            (&["ab", "cd", "ef"], Some(0)),
        ];
        for (lines, expected) in cases {
            let lines: Vec<Vec<char>> = lines.iter().map(|line| line.chars().collect()).collect();
            let slices: Vec<&[char]> = lines.iter().map(Vec::as_slice).collect();
            assert_eq!(most_shared_shortest(&slices), expected, "{lines:?}");
        }
    }

    /// Of the first moves of winning lines, the one played is the one after
    /// which the most guesses win, the best-ranked on a tie, and a
    /// candidate's guesses stop being asked once it cannot beat the best.
    #[test]
    fn the_move_played_wins_the_most_guesses_and_no_guess_is_asked_in_vain() {
        // (rows of wins, one per candidate and one column per guess; the
        // candidate chosen; how many questions were asked)
        let cases: [(&[&str], Option<usize>, usize); 7] = [
            (&[], None, 0),
            (&["1100"], Some(0), 4),
            (&["1100", "1111", "0111"], Some(1), 8),
            (&["1111", "1111"], Some(0), 4),
            (&["0000", "0001", "0110"], Some(2), 4 + 4 + 4),
            (&["1110", "0111"], Some(0), 4 + 1),
            (&["0", "0"], Some(0), 1 + 1),
        ];
        for (rows, expected, expected_asked) in cases {
            let guesses = rows.first().map_or(0, |row| row.len());
            let mut asked = 0;
            let chosen = most_robust(rows.len(), guesses, |candidate, guess| {
                asked += 1;
                rows[candidate].as_bytes()[guess] == b'1'
            });
            assert_eq!((chosen, asked), (expected, expected_asked), "{rows:?}");
        }
    }

    /// A move taken out of a winning line and played first leaves the rest
    /// of the line only if the rest still wins after it: every move of a
    /// proved Virginia Reel line is tried, some come first (the line's own
    /// first move always), some do not, and a move not on the line never.
    #[test]
    fn a_line_gives_up_a_move_played_first_only_if_the_rest_still_wins() {
        let deal = proved(GameKind::VirginiaReel);
        let start = AnyGame::deal(GameKind::VirginiaReel, deal.seed);
        let line = &deal.line;
        let (mut first, mut not_first) = (0, 0);
        for (at, &mv) in line.iter().enumerate() {
            match line_after(&start, line, mv) {
                Some(rest) => {
                    assert_eq!(rest.len(), line.len() - 1, "move {at}");
                    let mut after = start.clone();
                    after.apply(mv).expect("the move is played first");
                    assert!(wins(&after, &rest), "move {at}: the rest does not win");
                    first += 1;
                }
                None => {
                    assert!(at > 0, "the line's own first move comes first");
                    not_first += 1;
                }
            }
        }
        assert!(first > 1 && not_first > 0, "{first} first, {not_first} not");
        let mut legal = Vec::new();
        start.legal_moves(&mut legal);
        let off_line = legal.into_iter().find(|mv| !line.contains(mv));
        if let Some(off_line) = off_line {
            assert_eq!(line_after(&start, line, off_line), None);
        }
    }

    /// A plan guesses until it has its votes; past its guesses, only while
    /// no guess has won.
    #[test]
    fn a_plan_guesses_more_only_while_it_has_no_line() {
        // (guesses tried, lines found, votes, guesses, another guess?)
        let cases = [
            (0, 0, 4, 8, true),
            (3, 3, 4, 8, true),
            (3, 4, 4, 8, false),
            (7, 1, 4, 8, true),
            (8, 1, 4, 8, false),
            (8, 0, 4, 8, true),
            (15, 0, 4, 8, true),
            (0, 0, 1, 1, true),
            (1, 0, 1, 1, true),
            (1, 1, 1, 1, false),
        ];
        for (tried, won, votes, guesses, expected) in cases {
            assert_eq!(
                keep_guessing(tried, won, votes, guesses),
                expected,
                "{tried} tried, {won} won, {votes} votes, {guesses} guesses"
            );
        }
    }

    /// A line's first card-showing move comes as early as it commutes with
    /// the moves before it: the moves are the same, the line still wins,
    /// and it reaches the same position once the card is shown. Solver
    /// lines of the games with a stock or face-down cards, with a full
    /// view of the deal.
    #[test]
    fn a_card_showing_move_is_played_as_early_as_it_commutes() {
        let reveal_at = |position: &AnyGame, line: &[AnyMove]| {
            let mut state = position.clone();
            line.iter().position(|&mv| {
                state.apply(mv).is_ok_and(|outcome| {
                    outcome.effects.iter().any(|effect| {
                        matches!(
                            effect,
                            Effect::TurnedUp { .. } | Effect::Drew { .. } | Effect::Dealt { .. }
                        )
                    })
                })
            })
        };
        let after = |position: &AnyGame, moves: &[AnyMove]| {
            let mut state = position.clone();
            state.play_all(moves).expect("the line replays");
            state
        };
        let mut moved = 0;
        for game in [
            GameKind::ThreeBlindMice,
            GameKind::Indian,
            GameKind::VirginiaReel,
        ] {
            let deal = proved(game);
            let mut position = AnyGame::deal(game, deal.seed);
            for at in 0..deal.line.len() {
                let line = &deal.line[at..];
                // Every seventh position of the line: enough, and quick.
                if at % 7 != 0 {
                    position.apply(line[0]).expect("the line replays");
                    continue;
                }
                let early = reveal_early(&position, line);
                assert!(wins(&position, &early), "{game} seed {} at {at}", deal.seed);
                let (mut sorted, mut original) = (early.clone(), line.to_vec());
                let key = |mv: &AnyMove| format!("{mv:?}");
                sorted.sort_by_key(key);
                original.sort_by_key(key);
                assert_eq!(sorted, original, "{game}: the same moves");
                if let (Some(was), Some(now)) =
                    (reveal_at(&position, line), reveal_at(&position, &early))
                {
                    assert!(now <= was, "{game}: the reveal came later");
                    assert_eq!(
                        after(&position, &early[..=was]),
                        after(&position, &line[..=was]),
                        "{game} seed {} at {at}: the same position once the card shows",
                        deal.seed
                    );
                    if now < was {
                        moved += 1;
                    }
                }
                position.apply(line[0]).expect("the line replays");
            }
        }
        assert!(moved > 0, "no reveal was brought forward");
    }
}
