//! Hints that keep their line.
//!
//! A hint that solves from scratch each time returns the first move of
//! whatever line the search happens to find, and two searches from
//! neighbouring positions can find lines that start by undoing each other:
//! in Indian a player following such hints moved the J♦ back and forth
//! between two piles for forty moves. A [`Hinter`] remembers the last line
//! it found, with every position along it; while the position asked about
//! is one of those, the hint is that line's next move, and no search runs.
//! Only a position off the line (the player chose another move) is solved
//! anew. Following its hints from a position it has a line for therefore
//! wins in exactly that line's length. The line it keeps is the search's
//! line with its detours cut ([`crate::solver::shorten_line`]), so a
//! player is not walked through a depth-first search's wanderings.
//!
//! [`Searchable`] is what the hinter needs of a position: a search with the
//! game's own pruned solver. `solver::any` implements it for every game and
//! for [`crate::any::AnyGame`], so the client and the bots reach every
//! game's search through one dispatch.

use crate::rules::Rules;
use crate::solver::{Budget, Hint, ReplayFailure, Solution, Verdict, shorten_line, verify_line};

/// A position that can be searched for a winning line with its game's own
/// solver (the pruned search, not the plain reference one).
pub trait Searchable: Rules {
    /// Searches from this position within `budget`; a winning line has been
    /// replayed through the rules engine from this position.
    fn search(&self, budget: Budget<'_>) -> Result<Solution<Self::Move>, ReplayFailure>;
}

/// Gives hints along one winning line for as long as the position stays on
/// it, and searches again only when it leaves the line.
#[derive(Clone, Debug)]
pub struct Hinter<R: Rules> {
    /// `positions[index]` is the position `line[index]` is played from.
    positions: Vec<R>,
    /// The winning line being followed.
    line: Vec<R::Move>,
    /// The index of the position the last hint was given for: the next
    /// hint is most likely asked one further along.
    last: usize,
    /// How many searches the hinter has run.
    searches: u64,
}

impl<R: Rules> Default for Hinter<R> {
    fn default() -> Hinter<R> {
        Hinter {
            positions: Vec::new(),
            line: Vec::new(),
            last: 0,
            searches: 0,
        }
    }
}

impl<R: Rules> Hinter<R> {
    /// A hinter with no line yet.
    pub fn new() -> Hinter<R> {
        Hinter::default()
    }

    /// Follows `line` from `start` from now on (e.g. a line found by a
    /// search of its own). Moves that do not apply end the line there.
    pub fn adopt(&mut self, start: &R, line: &[R::Move]) {
        self.positions.clear();
        self.line.clear();
        self.last = 0;
        let mut state = start.clone();
        for &mv in line {
            let before = state.clone();
            if state.apply(mv).is_err() {
                break;
            }
            self.positions.push(before);
            self.line.push(mv);
        }
    }

    /// Where `position` lies on the line: the index of the move to play
    /// from it, `None` if it is not on the line. The position after the
    /// last hint is looked at first, then the last hint's (asked twice),
    /// then the whole line (after moves taken back).
    pub fn index_on_line(&self, position: &R) -> Option<usize> {
        let next = self.last + 1;
        [next, self.last]
            .into_iter()
            .find(|&index| self.positions.get(index) == Some(position))
            .or_else(|| {
                self.positions
                    .iter()
                    .position(|on_line| on_line == position)
            })
    }

    /// The moves of the line still to play from `position`, if it is on the
    /// line.
    pub fn rest_of_line(&self, position: &R) -> Option<&[R::Move]> {
        self.index_on_line(position)
            .map(|index| &self.line[index..])
    }

    /// How many searches this hinter has run.
    pub fn searches(&self) -> u64 {
        self.searches
    }
}

impl<R: Searchable> Hinter<R> {
    /// The next move toward a win from `position`: the next move of the
    /// line if `position` is on it, else the first move of a line found by
    /// a new search within `budget`, which becomes the line. A search that
    /// proves no win or runs out of budget keeps the old line, so a player
    /// who takes moves back to it is on it again.
    pub fn hint(
        &mut self,
        position: &R,
        budget: Budget<'_>,
    ) -> Result<Hint<R::Move>, ReplayFailure> {
        if position.is_won() {
            return Ok(Hint::AlreadyWon);
        }
        if let Some(index) = self.index_on_line(position) {
            self.last = index;
            return Ok(Hint::Play(self.line[index]));
        }
        self.searches += 1;
        Ok(match position.search(budget)?.verdict {
            Verdict::Winnable(line) => {
                // A shorter line through the same positions ends in the
                // same win; it is checked like every line the solver gives.
                let shorter = shorten_line(position, &line);
                let line = if verify_line(position, &shorter).is_ok() {
                    shorter
                } else {
                    line
                };
                self.adopt(position, &line);
                match self.line.first() {
                    Some(&mv) => Hint::Play(mv),
                    // The search returns an empty line only for a won
                    // position, handled above.
                    None => Hint::AlreadyWon,
                }
            }
            Verdict::Unwinnable => Hint::NoWinningLine,
            Verdict::Unknown => Hint::Unknown,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::any::{AnyGame, AnyMove};
    use crate::game::GameKind;

    /// The budget of the tests that need one proved deal.
    const FIRST_SEARCH: u64 = 20_000;

    /// How many proved deals of each game the hints are followed through.
    const DEALS_PER_GAME: u64 = 100;

    /// Follows hints from the deal of `seed` until it is won. Returns `None`
    /// if the first search, of `first_search` positions, does not prove the
    /// deal winnable, else the line's length; panics if the hints stray
    /// from the first line.
    fn follow_hints(game: GameKind, seed: u64, first_search: u64) -> Option<usize> {
        let mut hinter: Hinter<AnyGame> = Hinter::new();
        let mut position = AnyGame::deal(game, seed);
        let budget = Budget::positions(first_search);
        let Ok(Hint::Play(_)) = hinter.hint(&position, budget) else {
            return None;
        };
        let length = hinter.rest_of_line(&position).map_or(0, <[AnyMove]>::len);
        for played in 0..length {
            match hinter.hint(&position, budget) {
                Ok(Hint::Play(mv)) => {
                    if let Err(error) = position.apply(mv) {
                        panic!("{game} seed {seed}: hint {played} is refused: {error}");
                    }
                }
                other => panic!("{game} seed {seed}: hint {played} of {length} is {other:?}"),
            }
        }
        assert!(
            position.is_won(),
            "{game} seed {seed}: {length} hints do not win"
        );
        assert_eq!(hinter.hint(&position, budget), Ok(Hint::AlreadyWon));
        assert_eq!(hinter.searches(), 1, "{game} seed {seed}: searched again");
        Some(length)
    }

    /// Following hints from a proved deal wins within the line's
    /// length, with the one search that found the line, for a hundred
    /// deals of `game`. `first_search` keeps the test quick: a deal not won
    /// within it is passed over, and Virginia Reel's search is the slowest
    /// per position.
    fn check_following_hints_wins(game: GameKind, first_search: u64) {
        let mut proved = 0;
        let mut seed = 0;
        let test = format!("following_hints_wins_proved_deals of {game}");
        let deals = crate::slow_tier::count(&test, DEALS_PER_GAME, 25);
        while proved < deals {
            seed += 1;
            assert!(
                seed <= 2_000,
                "{game}: only {proved} deals proved by seed 2000"
            );
            if follow_hints(game, seed, first_search).is_some() {
                proved += 1;
            }
        }
    }

    #[test]
    fn following_hints_wins_proved_three_blind_mice_deals() {
        check_following_hints_wins(GameKind::ThreeBlindMice, 20_000);
    }

    #[test]
    fn following_hints_wins_proved_indian_deals() {
        check_following_hints_wins(GameKind::Indian, 5_000);
    }

    #[test]
    fn following_hints_wins_proved_midshipman_deals() {
        check_following_hints_wins(GameKind::Midshipman, 5_000);
    }

    #[test]
    fn following_hints_wins_proved_virginia_reel_deals() {
        check_following_hints_wins(GameKind::VirginiaReel, 2_000);
    }

    /// Off the line the hinter searches anew, and that line is followed.
    #[test]
    fn leaving_the_line_searches_again() {
        let budget = Budget::positions(FIRST_SEARCH);
        let start = (1..)
            .map(|seed| AnyGame::deal(GameKind::Indian, seed))
            .find(|start| {
                matches!(
                    start.search(budget),
                    Ok(Solution {
                        verdict: Verdict::Winnable(_),
                        ..
                    })
                )
            })
            .expect("an Indian deal is proved");
        let mut hinter = Hinter::new();
        let Ok(Hint::Play(first)) = hinter.hint(&start, budget) else {
            panic!("a proved deal has a hint");
        };
        let mut moves = Vec::new();
        start.legal_moves(&mut moves);
        let other = moves
            .into_iter()
            .find(|&mv| mv != first)
            .expect("another legal move");
        let mut elsewhere = start.clone();
        elsewhere.apply(other).expect("a legal move");
        assert_eq!(hinter.index_on_line(&elsewhere), None);
        let Ok(Hint::Play(next)) = hinter.hint(&elsewhere, budget) else {
            panic!("the deal is still won after {other:?}");
        };
        assert_eq!(hinter.searches(), 2, "off the line is searched anew");
        assert_eq!(hinter.index_on_line(&elsewhere), Some(0));
        elsewhere.apply(next).expect("the hint is legal");
        assert_eq!(hinter.index_on_line(&elsewhere), Some(1));
    }

    /// A move that loses keeps the line: after taking it back, the hint is
    /// the line's move again, with no new search.
    #[test]
    fn a_lost_position_keeps_the_line_for_when_the_move_is_taken_back() {
        let budget = Budget::positions(FIRST_SEARCH);
        let (start, losing) = (1..2_000)
            .map(|seed| AnyGame::deal(GameKind::ThreeBlindMice, seed))
            .filter(|start| {
                matches!(
                    start.search(budget),
                    Ok(Solution {
                        verdict: Verdict::Winnable(_),
                        ..
                    })
                )
            })
            .find_map(|start| {
                let mut moves = Vec::new();
                start.legal_moves(&mut moves);
                moves
                    .into_iter()
                    .find(|&mv| {
                        let mut after = start.clone();
                        after.apply(mv).is_ok()
                            && matches!(
                                after.search(budget),
                                Ok(Solution {
                                    verdict: Verdict::Unwinnable,
                                    ..
                                })
                            )
                    })
                    .map(|mv| (start, mv))
            })
            .expect("a won Three Blind Mice deal with a losing first move");
        let mut hinter = Hinter::new();
        let first = hinter.hint(&start, budget).expect("the search replays");
        let mut position = start.clone();
        let outcome = position.apply(losing).expect("a legal move");
        assert_eq!(hinter.hint(&position, budget), Ok(Hint::NoWinningLine));
        position.undo(losing, &outcome);
        assert_eq!(hinter.hint(&position, budget), Ok(first));
        assert_eq!(hinter.searches(), 2, "the line was kept");
    }
}
