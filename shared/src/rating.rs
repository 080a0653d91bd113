//! Ratings of racers: Weng-Lin (OpenSkill's Bradley-Terry model, the
//! `skillratings` crate's multi-team form), one rating per player and game.
//!
//! A rating is a belief about a player's skill: `mu`, the estimate, and
//! `sigma`, its uncertainty. A race of 2 to 8 is ranked by finish order,
//! and everyone who did not win ties for last (resigned, stuck, out of
//! time or left alike), as racetime.gg does: only a win says who was
//! faster. The figure shown is the conservative one, `mu - 3 sigma`, which
//! starts at 0 and rises as the server grows sure of a player; a rating is
//! provisional while `sigma` is above [`PROVISIONAL_SIGMA`]. Between races
//! the uncertainty grows back with inactivity ([`Rating::after_idle`]), so a
//! player who returns moves quickly again.
//!
//! Pure: no clock. Times are arguments (Unix milliseconds); the server and
//! the tests pass the clock's reading.
//!
//! Layout: the parameters; [`Rating`] and its figures; [`rate_race`], the
//! update after one race; the conversions to the wire's whole hundredths.

use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};

/// A new player's estimate: the crate's (and OpenSkill's) default.
pub const INITIAL_MU: f64 = 25.0;

/// A new player's uncertainty: `INITIAL_MU / 3`, so a new player's
/// conservative figure is 0.
pub const INITIAL_SIGMA: f64 = 25.0 / 3.0;

/// The skill-class width: the difference in `mu` that gives the better
/// player about a two-in-three chance of finishing ahead. The crate's
/// default, `INITIAL_SIGMA / 2`.
pub const BETA: f64 = 25.0 / 6.0;

/// A rating is provisional while its uncertainty is above this: about
/// a dozen races of two from a new player's, fewer in larger races.
pub const PROVISIONAL_SIGMA: f64 = 6.0;

/// How fast the uncertainty grows back with inactivity: the variance
/// (`sigma` squared) grows by this much per day without a rated race of
/// the game, up to a new player's. A settled `sigma` of 2 is back to 3
/// after about four months idle, and provisional again after about two
/// years (800 days).
pub const IDLE_VARIANCE_PER_DAY: f64 = 0.04;

/// Milliseconds in a day, the unit of [`IDLE_VARIANCE_PER_DAY`].
pub const DAY_MS: u64 = 24 * 60 * 60 * 1000;

/// The fewest and most racers a rated race has.
pub const RACERS: std::ops::RangeInclusive<usize> = 2..=8;

/// One player's rating at one game.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rating {
    /// The estimate of the player's skill.
    pub mu: f64,
    /// The uncertainty of the estimate (one standard deviation).
    pub sigma: f64,
}

impl Default for Rating {
    fn default() -> Rating {
        Rating::new()
    }
}

impl Rating {
    /// A new player's rating.
    pub const fn new() -> Rating {
        Rating {
            mu: INITIAL_MU,
            sigma: INITIAL_SIGMA,
        }
    }

    /// The figure shown: `mu - 3 sigma`, which the player's skill exceeds
    /// with about 99.9% certainty.
    pub fn conservative(&self) -> f64 {
        self.mu - 3.0 * self.sigma
    }

    /// Whether the rating is still provisional: its uncertainty is above
    /// [`PROVISIONAL_SIGMA`].
    pub fn is_provisional(&self) -> bool {
        self.sigma > PROVISIONAL_SIGMA
    }

    /// The rating after `idle_ms` milliseconds without a rated race: the
    /// variance grows by [`IDLE_VARIANCE_PER_DAY`] per day (in proportion
    /// for part of a day), never above a new player's; the estimate stays.
    pub fn after_idle(&self, idle_ms: u64) -> Rating {
        let days = idle_ms as f64 / DAY_MS as f64;
        let variance = self.sigma.mul_add(self.sigma, IDLE_VARIANCE_PER_DAY * days);
        Rating {
            mu: self.mu,
            sigma: variance.sqrt().min(INITIAL_SIGMA.max(self.sigma)),
        }
    }

    /// The rating at `now_ms` of one last changed at `last_ms`: see
    /// [`Rating::after_idle`]. A `now_ms` before `last_ms` (clocks of two
    /// servers) counts as no time.
    pub fn at(&self, last_ms: u64, now_ms: u64) -> Rating {
        self.after_idle(now_ms.saturating_sub(last_ms))
    }
}

/// One racer of a rated race, in the order of the race's standings (best
/// first: the winners in the order they finished, then everyone else).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entrant {
    /// The racer's rating when the race ended (after its idle time).
    pub rating: Rating,
    /// Whether the racer won the deal.
    pub won: bool,
}

/// Why a race cannot be rated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RateError {
    /// Fewer than two or more than eight racers.
    #[error("a rated race has 2 to 8 racers, not {0}")]
    Racers(usize),
    /// A winner listed after someone who did not win.
    #[error("the winners must come first, in their finish order")]
    Order,
}

/// The places of racers listed best first: the winners 1, 2, 3... in
/// their order, everyone who did not win tied after the last winner.
pub fn places(won: &[bool]) -> Result<Vec<usize>, RateError> {
    let winners = won.iter().take_while(|won| **won).count();
    if won[winners..].iter().any(|won| *won) {
        return Err(RateError::Order);
    }
    Ok((0..won.len())
        .map(|index| {
            if index < winners {
                index + 1
            } else {
                winners + 1
            }
        })
        .collect())
}

/// The ratings after one race, in the order of `entrants`. Every racer
/// is a team of one in the crate's multi-team update; the places are
/// [`places`]'.
pub fn rate_race(entrants: &[Entrant]) -> Result<Vec<Rating>, RateError> {
    if !RACERS.contains(&entrants.len()) {
        return Err(RateError::Racers(entrants.len()));
    }
    let won: Vec<bool> = entrants.iter().map(|entrant| entrant.won).collect();
    let places = places(&won)?;
    let teams: Vec<[WengLinRating; 1]> = entrants
        .iter()
        .map(|entrant| {
            [WengLinRating {
                rating: entrant.rating.mu,
                uncertainty: entrant.rating.sigma,
            }]
        })
        .collect();
    let ranked: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
        .iter()
        .zip(&places)
        .map(|(team, place)| (&team[..], MultiTeamOutcome::new(*place)))
        .collect();
    let config = WengLinConfig {
        beta: BETA,
        ..WengLinConfig::new()
    };
    Ok(weng_lin_multi_team(&ranked, &config)
        .into_iter()
        .map(|team| {
            team.first().map_or(Rating::new(), |player| Rating {
                mu: player.rating,
                sigma: player.uncertainty,
            })
        })
        .collect())
}

/// A figure in whole hundredths, as the wire carries it (the protocol has
/// no floats): 18.437 is 1844.
pub fn hundredths(figure: f64) -> i32 {
    // In range by far: ratings stay within a few hundred of 0.
    (figure * 100.0)
        .round()
        .clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32
}

/// Whole hundredths shown with one decimal: 1844 is "18.4".
pub fn show_hundredths(hundredths: i32) -> String {
    let tenths = (f64::from(hundredths) / 10.0).round() as i64;
    let sign = if tenths < 0 { "-" } else { "" };
    format!("{sign}{}.{}", tenths.abs() / 10, tenths.abs() % 10)
}

#[cfg(test)]
mod tests;
