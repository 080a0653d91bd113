//! The daily tournament's messages beyond one day's page: a day followed
//! live, the past days, a player's record, and the weekly and monthly
//! standings, with the points scale they are summed on.
//!
//! Nothing here may tell anyone about an open day's deal: rows carry
//! counts and times, never a move, and a day's [`Reveal`] travels only in a
//! [`DaySummary`], which the server builds for closed days alone.

use serde::{Deserialize, Serialize};

use super::{LeaderboardRow, PlayerStatus, Reveal};
use crate::game::GameKind;
use crate::rules::View;

/// A change to a followed day's leaderboard (see
/// [`ClientMessage::Follow`](super::ClientMessage::Follow)).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaderboardUpdate {
    /// The game.
    pub game: GameKind,
    /// The UTC date, `YYYY-MM-DD`.
    pub date: String,
    /// The attempt that just finished: it takes `row.place` on the board,
    /// and every row at that place or below moves down one (and, if `row`
    /// ranks, its rank, or the rank it would have taken, goes up one).
    /// `None` when only the counts changed (an attempt began).
    pub row: Option<LeaderboardRow>,
    /// Finished attempts on the ranking.
    pub finishers: u32,
    /// Finished attempts kept off the ranking.
    pub unranked: u32,
    /// Attempts still being played.
    pub playing: u32,
}

/// A closed day of one game: how many played, who won, and its deal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DaySummary {
    /// The UTC date, `YYYY-MM-DD`.
    pub date: String,
    /// Finished attempts on the ranking.
    pub finishers: u32,
    /// How many of them won.
    pub winners: u32,
    /// The first three rows of the day's final ranking (fewer if fewer
    /// finished).
    pub podium: Vec<LeaderboardRow>,
    /// The day's deal.
    pub reveal: Reveal,
}

/// Past days of one game, newest first: the answer to
/// [`ClientMessage::DailyDays`](super::ClientMessage::DailyDays).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DaysPage {
    /// The game.
    pub game: GameKind,
    /// Closed days that had at least one finished attempt, newest first.
    pub days: Vec<DaySummary>,
    /// Whether there are older days than the last one here (ask again
    /// with `before` set to its date).
    pub more: bool,
}

/// What a player's standing is summed over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Period {
    /// An ISO 8601 week, Monday to Sunday (UTC), named like `2026-W49`.
    Week,
    /// A calendar month (UTC), named like `2026-12`.
    Month,
}

/// The points a day's attempt earns, by its place on the day's ranking:
/// 25, 18, 15, 12, 10, 8, 6, 4, 2 and 1 for the first ten places, 1 for a
/// win placed lower, nothing otherwise. An attempt off the ranking earns
/// nothing.
pub fn points_for(rank: u32, won: bool) -> u32 {
    const TOP_TEN: [u32; 10] = [25, 18, 15, 12, 10, 8, 6, 4, 2, 1];
    let place = usize::try_from(rank).unwrap_or(usize::MAX);
    match place.checked_sub(1).and_then(|index| TOP_TEN.get(index)) {
        Some(&points) => points,
        None => u32::from(won),
    }
}

/// One player's line of a period's standings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandingRow {
    /// 1 for the best: more points, then more wins, then less time in all
    /// over the winning days, then the account registered first.
    pub rank: u32,
    /// The player's name.
    pub name: String,
    /// Points summed over the period's days ([`points_for`]).
    pub points: u32,
    /// Days of the period the player finished a ranked attempt on.
    pub days: u32,
    /// Days of the period the player won.
    pub wins: u32,
    /// The winning times summed, in milliseconds.
    pub win_time_ms: u64,
}

/// A week's or a month's standings of one game: the answer to
/// [`ClientMessage::Standings`](super::ClientMessage::Standings).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandingsPage {
    /// The game.
    pub game: GameKind,
    /// Week or month.
    pub period: Period,
    /// Which one: `2026-W49` or `2026-12`.
    pub key: String,
    /// Its first day, `YYYY-MM-DD`.
    pub first_date: String,
    /// Its last day, `YYYY-MM-DD`.
    pub last_date: String,
    /// Whether a day of it is still open: its points are the live ranking's
    /// and may still change.
    pub live: bool,
    /// Players with at least one ranked attempt in the period.
    pub players: u32,
    /// The top rows.
    pub rows: Vec<StandingRow>,
    /// The asking player's own row, whether or not it is in `rows`.
    pub own: Option<StandingRow>,
}

/// A player's record at one game's daily deal, over closed days.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRecord {
    /// The game.
    pub game: GameKind,
    /// Closed days the player finished an attempt on.
    pub days_played: u32,
    /// Of those, the days won.
    pub wins: u32,
    /// The best final rank of a ranked attempt.
    pub best_rank: Option<u32>,
    /// The median final rank of the ranked attempts (the lower middle one
    /// of an even count).
    pub median_rank: Option<u32>,
    /// The fastest winning time, in milliseconds.
    pub best_time_ms: Option<u64>,
    /// The median winning time, in milliseconds (the lower middle one).
    pub median_time_ms: Option<u64>,
    /// Days played in a row, ending on the last closed day (0 if the player
    /// did not play it).
    pub play_streak: u32,
    /// The most days played in a row.
    pub best_play_streak: u32,
    /// Days won in a row, ending on the last closed day.
    pub win_streak: u32,
    /// The most days won in a row.
    pub best_win_streak: u32,
    /// The last day played, `YYYY-MM-DD`.
    pub last_played: Option<String>,
}

/// A player's records: the answer to
/// [`ClientMessage::PlayerStats`](super::ClientMessage::PlayerStats).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerRecord {
    /// The player's name.
    pub name: String,
    /// The last closed day the records count, `YYYY-MM-DD` (`None` before
    /// any day has closed): an open day counts once it closes.
    pub through: Option<String>,
    /// One record per game the player has finished a closed day of.
    pub games: Vec<GameRecord>,
}

/// A finished race's boards, one for each move of each racer: the answer to
/// [`ClientMessage::ReplayBoards`](super::ClientMessage::ReplayBoards), for
/// a client that plays a race back without a rules engine of its own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardsReplay {
    /// The race's id.
    pub race_id: u64,
    /// For a daily attempt, its UTC date.
    pub daily: Option<String>,
    /// The deal.
    pub reveal: Reveal,
    /// Every racer, in seat order.
    pub seats: Vec<SeatReplay>,
}

/// One racer of a [`BoardsReplay`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatReplay {
    /// The racer's seat.
    pub seat: u8,
    /// The racer's name.
    pub name: String,
    /// Where the racer placed.
    pub rank: u8,
    /// How its race ended.
    pub status: PlayerStatus,
    /// Its moves in notation, `undo` included, as played.
    pub moves: Vec<String>,
    /// The board as the racer saw it before the first move and after each
    /// move: one more than `moves`.
    pub boards: Vec<View>,
}

#[cfg(test)]
mod tests {
    use super::points_for;

    #[test]
    fn points_follow_the_documented_scale() {
        let cases = [
            (1, true, 25),
            (2, true, 18),
            (3, false, 15),
            (10, false, 1),
            (10, true, 1),
            (11, true, 1),
            (11, false, 0),
            (500, true, 1),
            (0, true, 1),
            (u32::MAX, false, 0),
        ];
        for (rank, won, points) in cases {
            assert_eq!(points_for(rank, won), points, "rank {rank}, won {won}");
        }
    }
}
