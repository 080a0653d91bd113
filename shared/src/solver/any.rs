//! The solver for a game named at run time: what the commands, the server's
//! deal pool, the client's hints and the bots call.
//!
//! This is the one place that maps a game to its own search ([`TbmSearch`],
//! [`FtSearch`], [`ReelSearch`]): [`Searchable`] is implemented here for
//! each game's state and for [`AnyGame`], and everything else goes through
//! it.

use serde::{Deserialize, Serialize};

use crate::any::{AnyGame, AnyMove};
use crate::game::GameKind;
use crate::games::forty_thieves::FortyThieves;
use crate::games::three_blind_mice::ThreeBlindMice;
use crate::games::virginia_reel::VirginiaReel;
use crate::rules::Rules;
use crate::solver::forty_thieves::FtSearch;
use crate::solver::hinter::Searchable;
use crate::solver::three_blind_mice::TbmSearch;
use crate::solver::virginia_reel::ReelSearch;
use crate::solver::{Budget, ReplayFailure, Solution, Verdict, solve};

impl Searchable for ThreeBlindMice {
    fn search(&self, budget: Budget<'_>) -> Result<Solution<Self::Move>, ReplayFailure> {
        solve(&TbmSearch::new(self.clone()), budget)
    }
}

impl Searchable for FortyThieves {
    fn search(&self, budget: Budget<'_>) -> Result<Solution<Self::Move>, ReplayFailure> {
        solve(&FtSearch::new(self.clone()), budget)
    }
}

impl Searchable for VirginiaReel {
    fn search(&self, budget: Budget<'_>) -> Result<Solution<Self::Move>, ReplayFailure> {
        solve(&ReelSearch::new(self.clone()), budget)
    }
}

impl Searchable for AnyGame {
    fn search(&self, budget: Budget<'_>) -> Result<Solution<AnyMove>, ReplayFailure> {
        fn wrap<M>(solution: Solution<M>, into: fn(M) -> AnyMove) -> Solution<AnyMove> {
            Solution {
                verdict: match solution.verdict {
                    Verdict::Winnable(line) => {
                        Verdict::Winnable(line.into_iter().map(into).collect())
                    }
                    Verdict::Unwinnable => Verdict::Unwinnable,
                    Verdict::Unknown => Verdict::Unknown,
                },
                positions: solution.positions,
            }
        }
        Ok(match self {
            AnyGame::ThreeBlindMice(state) => wrap(state.search(budget)?, AnyMove::ThreeBlindMice),
            AnyGame::FortyThieves(state) => wrap(state.search(budget)?, AnyMove::FortyThieves),
            AnyGame::VirginiaReel(state) => wrap(state.search(budget)?, AnyMove::VirginiaReel),
        })
    }
}

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

/// Solves the deal of `game` for `seed`.
pub fn solve_deal(
    game: GameKind,
    seed: u64,
    budget: Budget<'_>,
) -> Result<DealReport, ReplayFailure> {
    let start = AnyGame::deal(game, seed);
    let solution = start.search(budget)?;
    let (verdict, line) = match solution.verdict {
        Verdict::Winnable(line) => (VerdictKind::Winnable, line_notation(&start, &line)),
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

/// The first seed of `seeds` whose deal of `game` is proved winnable,
/// searched with the game's own solver (through [`Searchable`] on
/// [`AnyGame`], like every other search here).
pub fn first_winnable_deal(
    game: GameKind,
    seeds: impl IntoIterator<Item = u64>,
    budget: Budget<'_>,
) -> Result<Option<ProvedDeal>, ReplayFailure> {
    for (skipped, seed) in (0u64..).zip(seeds) {
        if let Verdict::Winnable(line) = AnyGame::deal(game, seed).search(budget)?.verdict {
            return Ok(Some(ProvedDeal {
                game,
                seed,
                line,
                skipped,
            }));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::plain::Plain;

    /// The commands, hints and bots reach each game's own pruned
    /// search through here (`TbmSearch`, `FtSearch`, `ReelSearch`), never
    /// the plain reference search: the client once copied this dispatch
    /// and picked `Plain` for the two-deck games. A deal searched through
    /// `AnyGame` comes out exactly as from its game's search type, and
    /// otherwise than from the plain search.
    #[test]
    fn each_game_is_searched_with_its_own_pruned_search() {
        fn positions_and_settled<M>(solution: Result<Solution<M>, ReplayFailure>) -> (u64, bool) {
            let solution = solution.expect("the lines replay");
            (solution.positions, solution.verdict.is_settled())
        }
        let budget = Budget::positions(20_000);
        for game in GameKind::ALL {
            let mut told_apart = 0;
            for seed in 1..=5 {
                let deal = AnyGame::deal(game, seed);
                let (own, plain) = match &deal {
                    AnyGame::ThreeBlindMice(state) => (
                        positions_and_settled(solve(&TbmSearch::new(state.clone()), budget)),
                        positions_and_settled(solve(&Plain(state.clone()), budget)),
                    ),
                    AnyGame::FortyThieves(state) => (
                        positions_and_settled(solve(&FtSearch::new(state.clone()), budget)),
                        positions_and_settled(solve(&Plain(state.clone()), budget)),
                    ),
                    AnyGame::VirginiaReel(state) => (
                        positions_and_settled(solve(&ReelSearch::new(state.clone()), budget)),
                        positions_and_settled(solve(&Plain(state.clone()), budget)),
                    ),
                };
                assert_eq!(
                    positions_and_settled(deal.search(budget)),
                    own,
                    "{game} seed {seed}"
                );
                told_apart += usize::from(own != plain);
            }
            assert!(told_apart > 0, "{game}: no deal tells the searches apart");
        }
    }
}
