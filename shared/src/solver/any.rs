//! The solver for a game named at run time: what the commands, the server's
//! deal pool and the client's hints call.

use serde::{Deserialize, Serialize};

use crate::any::{AnyGame, AnyMove};
use crate::game::GameKind;
use crate::games::forty_thieves::{FortyThieves, Variant};
use crate::games::three_blind_mice::ThreeBlindMice;
use crate::games::virginia_reel::VirginiaReel;
use crate::rules::Rules;
use crate::solver::forty_thieves::FtSearch;
use crate::solver::three_blind_mice::TbmSearch;
use crate::solver::virginia_reel::ReelSearch;
use crate::solver::{
    Budget, Hint, ReplayFailure, SolverGame, Verdict, first_winnable, hint, solve,
};

/// A verdict without its line, for reports and statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictKind {
    /// Proved winnable.
    Winnable,
    /// Proved unwinnable.
    Unwinnable,
    /// Not settled within the budget.
    Unknown,
}

/// The solver's report on one deal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DealReport {
    /// The game.
    pub game: GameKind,
    /// The deal's seed.
    pub seed: u64,
    /// The verdict.
    pub verdict: VerdictKind,
    /// Positions expanded.
    pub positions: u64,
    /// The winning line in the move notation; empty unless winnable.
    pub solution: Vec<String>,
}

/// The notation of each move of `line`, each written in the position it is played from.
pub fn line_notation<R: Rules>(start: &R, line: &[R::Move]) -> Vec<String> {
    let mut state = start.clone();
    line.iter()
        .map(|&mv| {
            let text = state.format_move(mv);
            // The line was verified before, so every move applies.
            let _ = state.apply(mv);
            text
        })
        .collect()
}

fn report_for<G: SolverGame>(
    game: GameKind,
    seed: u64,
    start: &G,
    budget: Budget<'_>,
) -> Result<DealReport, ReplayFailure> {
    let solution = solve(start, budget)?;
    let (verdict, line) = match solution.verdict {
        Verdict::Winnable(line) => (VerdictKind::Winnable, line_notation(start, &line)),
        Verdict::Unwinnable => (VerdictKind::Unwinnable, Vec::new()),
        Verdict::Unknown => (VerdictKind::Unknown, Vec::new()),
    };
    Ok(DealReport {
        game,
        seed,
        verdict,
        positions: solution.positions,
        solution: line,
    })
}

/// Solves the deal of `game` for `seed`.
pub fn solve_deal(
    game: GameKind,
    seed: u64,
    budget: Budget<'_>,
) -> Result<DealReport, ReplayFailure> {
    match game {
        GameKind::ThreeBlindMice => report_for(
            game,
            seed,
            &TbmSearch::new(ThreeBlindMice::deal(seed)),
            budget,
        ),
        GameKind::Indian => report_for(
            game,
            seed,
            &FtSearch::new(FortyThieves::deal(Variant::Indian, seed)),
            budget,
        ),
        GameKind::Midshipman => report_for(
            game,
            seed,
            &FtSearch::new(FortyThieves::deal(Variant::Midshipman, seed)),
            budget,
        ),
        GameKind::VirginiaReel => report_for(
            game,
            seed,
            &ReelSearch::new(VirginiaReel::deal(seed)),
            budget,
        ),
    }
}

/// A hint for a position of any game.
pub fn hint_any(position: &AnyGame, budget: Budget<'_>) -> Result<Hint<AnyMove>, ReplayFailure> {
    fn wrap<M>(hint: Hint<M>, into: fn(M) -> AnyMove) -> Hint<AnyMove> {
        match hint {
            Hint::Play(mv) => Hint::Play(into(mv)),
            Hint::AlreadyWon => Hint::AlreadyWon,
            Hint::NoWinningLine => Hint::NoWinningLine,
            Hint::Unknown => Hint::Unknown,
        }
    }
    Ok(match position {
        AnyGame::ThreeBlindMice(state) => wrap(
            hint(&TbmSearch::new(state.clone()), budget)?,
            AnyMove::ThreeBlindMice,
        ),
        AnyGame::FortyThieves(state) => wrap(
            hint(&FtSearch::new(state.clone()), budget)?,
            AnyMove::FortyThieves,
        ),
        AnyGame::VirginiaReel(state) => wrap(
            hint(&ReelSearch::new(state.clone()), budget)?,
            AnyMove::VirginiaReel,
        ),
    })
}

/// A seed of `game` proved winnable, with its line as moves of [`AnyMove`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProvedDeal {
    /// The game.
    pub game: GameKind,
    /// The seed.
    pub seed: u64,
    /// A winning line from the deal.
    pub line: Vec<AnyMove>,
    /// Seeds passed over before this one.
    pub skipped: u64,
}

/// The first seed of `seeds` whose deal of `game` is proved winnable.
pub fn first_winnable_deal(
    game: GameKind,
    seeds: impl IntoIterator<Item = u64>,
    budget: Budget<'_>,
) -> Result<Option<ProvedDeal>, ReplayFailure> {
    fn wrap<M>(
        game: GameKind,
        found: Option<super::WinnableDeal<M>>,
        into: fn(M) -> AnyMove,
    ) -> Option<ProvedDeal> {
        found.map(|deal| ProvedDeal {
            game,
            seed: deal.seed,
            line: deal.line.into_iter().map(into).collect(),
            skipped: deal.skipped,
        })
    }
    Ok(match game {
        GameKind::ThreeBlindMice => wrap(
            game,
            first_winnable(
                seeds,
                |seed| TbmSearch::new(ThreeBlindMice::deal(seed)),
                budget,
            )?,
            AnyMove::ThreeBlindMice,
        ),
        GameKind::Indian => wrap(
            game,
            first_winnable(
                seeds,
                |seed| FtSearch::new(FortyThieves::deal(Variant::Indian, seed)),
                budget,
            )?,
            AnyMove::FortyThieves,
        ),
        GameKind::Midshipman => wrap(
            game,
            first_winnable(
                seeds,
                |seed| FtSearch::new(FortyThieves::deal(Variant::Midshipman, seed)),
                budget,
            )?,
            AnyMove::FortyThieves,
        ),
        GameKind::VirginiaReel => wrap(
            game,
            first_winnable(
                seeds,
                |seed| ReelSearch::new(VirginiaReel::deal(seed)),
                budget,
            )?,
            AnyMove::VirginiaReel,
        ),
    })
}
