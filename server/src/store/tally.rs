//! The daily tournament's arithmetic, shared by both stores so that they
//! cannot drift apart: what the tally of one closed day adds to the period
//! totals and to each player's record, the periods (ISO weeks, calendar
//! months) and their keys, the order of a period's standings, and the
//! medians of a record.
//!
//! # What a closed day counts
//!
//! A day of a game is tallied once, after it has closed
//! ([`day_closed`](crate::daily::day_closed)), oldest first; a marker row
//! per game and date makes a second tally of it do nothing.
//!
//! - Every **ranked** finished attempt (not a new account's, not one held
//!   for review) takes its final rank, in the order of the day's
//!   leaderboard (won first, then less time, then fewer moves, then who
//!   finished first, then who registered first), and earns
//!   [`points_for`] that rank into the totals of the day's ISO week and of
//!   its calendar month: points, one day, one win if it won, and its time
//!   if it won.
//! - Every finished attempt, **ranked or not**, counts in its player's
//!   record: one day played, one win if it won (its time then counts for
//!   the best and median winning times), and the streaks. Only ranked
//!   attempts have a rank (best and median rank) or earn points.
//! - Attempts still open when the day is tallied (the sweeper could not
//!   replay one) count nowhere. The tally is taken once: an operator's
//!   clearing of a review mark after it does not change it.
//!
//! # Streaks
//!
//! Days "in a row" are consecutive tallied days of the game: a day the
//! server dealt no deal at all (it was down) is no day, so it breaks no
//! streak; a day with a deal nobody played is one, and breaks them all. A
//! play streak grows by one on each day played after playing the day
//! before, and starts again at 1 otherwise; a win streak likewise with days
//! won, and is 0 after a day played and lost. A current streak is 0 unless
//! its last day is the game's last tallied day. A day tallied late (older
//! than a day of the game already tallied) counts in the totals and
//! records but leaves the streaks as they are.

use std::collections::HashMap;

use jiff::civil::{Date, ISOWeekDate, Weekday};
use patience_shared::game::GameKind;
use patience_shared::protocol::{GameRecord, Period, StandingRow, points_for};

use super::PlayerId;

/// The ISO week or calendar month that a standing is summed over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeriodSpan {
    /// Week or month.
    pub period: Period,
    /// Its name: `2026-W49` or `2026-12`.
    pub key: String,
    /// Its first day, `YYYY-MM-DD`.
    pub first_date: String,
    /// Its last day, `YYYY-MM-DD`.
    pub last_date: String,
}

impl PeriodSpan {
    /// The week or month holding `date` (`YYYY-MM-DD`); `None` if it is no
    /// date.
    pub fn containing(period: Period, date: &str) -> Option<PeriodSpan> {
        let date: Date = date.parse().ok()?;
        match period {
            Period::Week => {
                let week = date.iso_week_date();
                Some(week_span(week.year(), week.week())?)
            }
            Period::Month => Some(month_span(date.year(), date.month())),
        }
    }

    /// The period named `key` (`2026-W49` for a week, `2026-12` for a
    /// month, zero-padded, years 1000 to 9999), or why it is no such name.
    pub fn parse(period: Period, key: &str) -> Result<PeriodSpan, String> {
        let bad = || match period {
            Period::Week => format!(
                "{key:?} is not an ISO week written YYYY-Www (e.g. 2026-W49, weeks 01 to 52 or 53)"
            ),
            Period::Month => format!("{key:?} is not a month written YYYY-MM (e.g. 2026-12)"),
        };
        let digits = |text: &str, len: usize| {
            (text.len() == len && text.bytes().all(|byte| byte.is_ascii_digit()))
                .then(|| text.parse::<i16>().ok())
                .flatten()
        };
        let (year, rest) = key.split_once('-').ok_or_else(bad)?;
        let year = digits(year, 4)
            .filter(|year| *year >= 1000)
            .ok_or_else(bad)?;
        let span = match period {
            Period::Week => {
                let week = rest.strip_prefix('W').ok_or_else(bad)?;
                let week = digits(week, 2).ok_or_else(bad)?;
                week_span(year, i8::try_from(week).map_err(|_| bad())?)
            }
            Period::Month => digits(rest, 2)
                .and_then(|month| i8::try_from(month).ok())
                .filter(|month| (1..=12).contains(month))
                .map(|month| month_span(year, month)),
        };
        span.ok_or_else(bad)
    }

    /// Every day of the period from its first to `through` (or its last
    /// day, whichever is earlier), in order.
    pub fn dates_through(&self, through: &str) -> Vec<String> {
        let (Ok(first), Ok(last)) = (
            self.first_date.parse::<Date>(),
            self.last_date.parse::<Date>(),
        ) else {
            return Vec::new();
        };
        let mut dates = Vec::new();
        let mut day = first;
        while day <= last {
            let text = day.to_string();
            if text.as_str() > through {
                break;
            }
            dates.push(text);
            match day.tomorrow() {
                Ok(next) => day = next,
                Err(_) => break,
            }
        }
        dates
    }
}

fn week_span(year: i16, week: i8) -> Option<PeriodSpan> {
    let monday = ISOWeekDate::new(year, week, Weekday::Monday).ok()?;
    let sunday = ISOWeekDate::new(year, week, Weekday::Sunday).ok()?;
    Some(PeriodSpan {
        period: Period::Week,
        key: format!("{year:04}-W{week:02}"),
        first_date: monday.date().to_string(),
        last_date: sunday.date().to_string(),
    })
}

fn month_span(year: i16, month: i8) -> PeriodSpan {
    let first = Date::new(year, month, 1).unwrap_or_default();
    PeriodSpan {
        period: Period::Month,
        key: format!("{year:04}-{month:02}"),
        first_date: first.to_string(),
        last_date: first.last_of_month().to_string(),
    }
}

/// The name a period kind is stored under.
pub(super) fn period_name(period: Period) -> &'static str {
    match period {
        Period::Week => "week",
        Period::Month => "month",
    }
}

/// A finished attempt of the day being tallied, read in the day's ranking
/// order (ranked ones first among equals does not matter: unranked ones
/// take no rank).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct DayAttempt {
    pub player: PlayerId,
    pub won: bool,
    pub elapsed_ms: u64,
    pub ranked: bool,
}

/// A player's record counters at one game, as kept between tallies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct RecordCounters {
    pub days_played: u32,
    pub wins: u32,
    pub ranked_days: u32,
    pub best_rank: Option<u32>,
    pub best_time_ms: Option<u64>,
    pub play_streak: u32,
    pub best_play_streak: u32,
    pub last_played: Option<String>,
    pub win_streak: u32,
    pub best_win_streak: u32,
    pub last_won: Option<String>,
}

/// What one player's attempt adds to a period's totals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct PeriodAddition {
    pub player: PlayerId,
    pub points: u32,
    pub won: bool,
    pub win_time_ms: u64,
}

/// Everything the tally of one day writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct DayTally {
    /// Finished attempts, ranked or not.
    pub finished: u32,
    /// Ranked finished attempts.
    pub finishers: u32,
    /// Ranked winners.
    pub winners: u32,
    /// The final rank of each ranked attempt.
    pub ranks: Vec<(PlayerId, u32)>,
    /// Added to the week's and the month's totals alike.
    pub additions: Vec<PeriodAddition>,
    /// Each player's record after the day.
    pub records: Vec<(PlayerId, RecordCounters)>,
    /// The day's ISO week key.
    pub week: String,
    /// The day's month key.
    pub month: String,
}

impl DayTally {
    /// The day's week and month, as stored: kind and key.
    pub fn periods(&self) -> [(&'static str, &str); 2] {
        [
            (period_name(Period::Week), self.week.as_str()),
            (period_name(Period::Month), self.month.as_str()),
        ]
    }
}

/// The tally of `date`, whose finished `attempts` come in ranking order,
/// given the records of their players before it (`before`; a player
/// missing has none) and the game's newest day tallied before this one.
pub(super) fn tally_day(
    date: &str,
    newest_before: Option<&str>,
    attempts: &[DayAttempt],
    before: &HashMap<PlayerId, RecordCounters>,
) -> DayTally {
    let (week, month) = (
        PeriodSpan::containing(Period::Week, date).map(|span| span.key),
        PeriodSpan::containing(Period::Month, date).map(|span| span.key),
    );
    // A day older than one already tallied keeps the streaks as they are.
    let in_order = newest_before.is_none_or(|newest| newest < date);
    let mut tally = DayTally {
        week: week.unwrap_or_default(),
        month: month.unwrap_or_default(),
        ..DayTally::default()
    };
    for attempt in attempts {
        tally.finished += 1;
        let rank = attempt.ranked.then(|| {
            tally.finishers += 1;
            tally.finishers
        });
        if let Some(rank) = rank {
            tally.winners += u32::from(attempt.won);
            tally.ranks.push((attempt.player, rank));
            tally.additions.push(PeriodAddition {
                player: attempt.player,
                points: points_for(rank, attempt.won),
                won: attempt.won,
                win_time_ms: if attempt.won { attempt.elapsed_ms } else { 0 },
            });
        }
        let previous = before.get(&attempt.player).cloned().unwrap_or_default();
        let record = after_day(
            previous,
            date,
            in_order.then_some(newest_before).flatten(),
            in_order,
            rank,
            attempt.won.then_some(attempt.elapsed_ms),
        );
        tally.records.push((attempt.player, record));
    }
    tally
}

/// A record after one more day played: `rank` if ranked, `win_time_ms` if
/// won. `previous_day` is the game's tallied day before `date`.
fn after_day(
    mut record: RecordCounters,
    date: &str,
    previous_day: Option<&str>,
    in_order: bool,
    rank: Option<u32>,
    win_time_ms: Option<u64>,
) -> RecordCounters {
    record.days_played += 1;
    if let Some(rank) = rank {
        record.ranked_days += 1;
        record.best_rank = Some(record.best_rank.map_or(rank, |best| best.min(rank)));
    }
    if let Some(time) = win_time_ms {
        record.wins += 1;
        record.best_time_ms = Some(record.best_time_ms.map_or(time, |best| best.min(time)));
    }
    if !in_order {
        return record;
    }
    let followed =
        |last: &Option<String>| previous_day.is_some() && last.as_deref() == previous_day;
    record.play_streak = if followed(&record.last_played) {
        record.play_streak + 1
    } else {
        1
    };
    record.best_play_streak = record.best_play_streak.max(record.play_streak);
    record.last_played = Some(date.to_string());
    if win_time_ms.is_some() {
        record.win_streak = if followed(&record.last_won) {
            record.win_streak + 1
        } else {
            1
        };
        record.best_win_streak = record.best_win_streak.max(record.win_streak);
        record.last_won = Some(date.to_string());
    } else {
        record.win_streak = 0;
    }
    record
}

/// A streak as it stands on `through`, the game's last tallied day: 0
/// unless its last day is that day.
pub(super) fn current_streak(streak: u32, last_day: Option<&str>, through: Option<&str>) -> u32 {
    if last_day.is_some() && last_day == through {
        streak
    } else {
        0
    }
}

/// A game's record as sent: the counters, the current streaks as they
/// stand on `through` (the game's last tallied day), and the medians.
pub(super) fn game_record(
    game: GameKind,
    counters: RecordCounters,
    through: Option<&str>,
    median_rank: Option<u32>,
    median_time_ms: Option<u64>,
) -> GameRecord {
    GameRecord {
        game,
        days_played: counters.days_played,
        wins: counters.wins,
        best_rank: counters.best_rank,
        median_rank,
        best_time_ms: counters.best_time_ms,
        median_time_ms,
        play_streak: current_streak(
            counters.play_streak,
            counters.last_played.as_deref(),
            through,
        ),
        best_play_streak: counters.best_play_streak,
        win_streak: current_streak(counters.win_streak, counters.last_won.as_deref(), through),
        best_win_streak: counters.best_win_streak,
        last_played: counters.last_played,
    }
}

/// Puts a player's records in the order of [`GameKind::ALL`].
pub(super) fn sort_games(games: &mut [GameRecord]) {
    games.sort_by_key(|record| GameKind::ALL.iter().position(|game| *game == record.game));
}

/// The offset of the lower middle of `count` sorted values.
pub(super) fn lower_median_offset(count: u32) -> u32 {
    count.saturating_sub(1) / 2
}

/// One player's line of a period before it is ranked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Totals {
    pub player: PlayerId,
    pub name: String,
    pub points: u32,
    pub days: u32,
    pub wins: u32,
    pub win_time_ms: u64,
}

impl Totals {
    fn add(&mut self, addition: &PeriodAddition) {
        self.points += addition.points;
        self.days += 1;
        self.wins += u32::from(addition.won);
        self.win_time_ms += addition.win_time_ms;
    }

    pub fn row(&self, rank: u32) -> StandingRow {
        StandingRow {
            rank,
            name: self.name.clone(),
            points: self.points,
            days: self.days,
            wins: self.wins,
            win_time_ms: self.win_time_ms,
        }
    }
}

/// The live points of an open day whose ranked finished attempts come in
/// ranking order, as `(player, name, won, elapsed_ms)`.
pub(super) fn live_additions(
    ranked: &[(PlayerId, String, bool, u64)],
) -> Vec<(String, PeriodAddition)> {
    ranked
        .iter()
        .zip(1..)
        .map(|((player, name, won, elapsed_ms), rank)| {
            (
                name.clone(),
                PeriodAddition {
                    player: *player,
                    points: points_for(rank, *won),
                    won: *won,
                    win_time_ms: if *won { *elapsed_ms } else { 0 },
                },
            )
        })
        .collect()
}

/// A period's standings from its tallied totals and its open days' live
/// points: every player ranked (points, then wins, then less winning time,
/// then the lower id: registered first), the top `limit`, and `player`'s.
pub(super) fn rank_standings(
    tallied: Vec<Totals>,
    live: Vec<(String, PeriodAddition)>,
    limit: u32,
    player: Option<PlayerId>,
) -> (u32, Vec<StandingRow>, Option<StandingRow>) {
    let mut by_player: HashMap<PlayerId, Totals> = tallied
        .into_iter()
        .map(|totals| (totals.player, totals))
        .collect();
    for (name, addition) in &live {
        by_player
            .entry(addition.player)
            .or_insert_with(|| Totals {
                player: addition.player,
                name: name.clone(),
                points: 0,
                days: 0,
                wins: 0,
                win_time_ms: 0,
            })
            .add(addition);
    }
    let mut all: Vec<Totals> = by_player.into_values().collect();
    all.sort_by(|a, b| {
        b.points
            .cmp(&a.points)
            .then(b.wins.cmp(&a.wins))
            .then(a.win_time_ms.cmp(&b.win_time_ms))
            .then(a.player.cmp(&b.player))
    });
    let players = u32::try_from(all.len()).unwrap_or(u32::MAX);
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut rows = Vec::with_capacity(all.len().min(limit));
    let mut own = None;
    for (totals, rank) in all.iter().zip(1..) {
        if rows.len() < limit {
            rows.push(totals.row(rank));
        }
        if Some(totals.player) == player {
            own = Some(totals.row(rank));
        }
    }
    (players, rows, own)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn period_keys_parse_to_their_first_and_last_days() {
        let cases = [
            (Period::Week, "2026-W49", "2026-11-30", "2026-12-06"),
            (Period::Week, "2026-W01", "2025-12-29", "2026-01-04"),
            (Period::Week, "2026-W53", "2026-12-28", "2027-01-03"),
            (Period::Month, "2026-12", "2026-12-01", "2026-12-31"),
            (Period::Month, "2024-02", "2024-02-01", "2024-02-29"),
        ];
        for (period, key, first, last) in cases {
            let span = PeriodSpan::parse(period, key).expect(key);
            assert_eq!(
                (
                    span.key.as_str(),
                    span.first_date.as_str(),
                    span.last_date.as_str()
                ),
                (key, first, last)
            );
        }
        for (period, bad) in [
            (Period::Week, "2025-W53"),
            (Period::Week, "2026-W00"),
            (Period::Week, "2026-W1"),
            (Period::Week, "2026-49"),
            (Period::Week, "0999-W01"),
            (Period::Week, "+026-W01"),
            (Period::Month, "2026-13"),
            (Period::Month, "2026-00"),
            (Period::Month, "2026-1"),
            (Period::Month, "2026-W49"),
            (Period::Month, ""),
        ] {
            assert!(PeriodSpan::parse(period, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_date_lies_in_its_iso_week_and_its_month() {
        let span = PeriodSpan::containing(Period::Week, "2027-01-01").expect("a date");
        assert_eq!(span.key, "2026-W53");
        let span = PeriodSpan::containing(Period::Month, "2027-01-01").expect("a date");
        assert_eq!(span.key, "2027-01");
        let week = PeriodSpan::parse(Period::Week, "2026-W49").expect("a week");
        assert_eq!(
            week.dates_through("2026-12-02"),
            ["2026-11-30", "2026-12-01", "2026-12-02"]
        );
        assert_eq!(week.dates_through("2026-11-01"), Vec::<String>::new());
        assert_eq!(week.dates_through("2027-01-01").len(), 7);
    }

    fn attempt(player: PlayerId, won: bool, ranked: bool) -> DayAttempt {
        DayAttempt {
            player,
            won,
            elapsed_ms: 1_000 * player,
            ranked,
        }
    }

    /// Who played a day: `(player, won, ranked)`.
    type Played = (PlayerId, bool, bool);

    /// Tallies days one after the other; each day lists who played it
    /// (in ranking order) as `(player, won, ranked)`.
    fn records_after(days: &[(&str, &[Played])]) -> HashMap<PlayerId, RecordCounters> {
        let mut records = HashMap::new();
        let mut newest: Option<String> = None;
        for (date, played) in days {
            let attempts: Vec<DayAttempt> = played
                .iter()
                .map(|&(player, won, ranked)| attempt(player, won, ranked))
                .collect();
            let tally = tally_day(date, newest.as_deref(), &attempts, &records);
            records.extend(tally.records);
            if newest.as_deref().is_none_or(|newest| newest < *date) {
                newest = Some(date.to_string());
            }
        }
        records
    }

    #[test]
    fn ranks_and_points_go_to_ranked_attempts_only() {
        let attempts = [
            attempt(1, true, true),
            attempt(2, true, false),
            attempt(3, true, true),
            attempt(4, false, true),
        ];
        let tally = tally_day("2026-12-01", None, &attempts, &HashMap::new());
        assert_eq!((tally.finished, tally.finishers, tally.winners), (4, 3, 2));
        assert_eq!(tally.ranks, [(1, 1), (3, 2), (4, 3)]);
        let points: Vec<(PlayerId, u32, u64)> = tally
            .additions
            .iter()
            .map(|addition| (addition.player, addition.points, addition.win_time_ms))
            .collect();
        assert_eq!(points, [(1, 25, 1_000), (3, 18, 3_000), (4, 15, 0)]);
        assert_eq!(
            (tally.week.as_str(), tally.month.as_str()),
            ("2026-W49", "2026-12")
        );
        // The unranked winner still played and won.
        let unranked = &tally.records[1];
        assert_eq!(unranked.0, 2);
        assert_eq!(
            (
                unranked.1.days_played,
                unranked.1.wins,
                unranked.1.best_rank
            ),
            (1, 1, None)
        );
        assert_eq!(unranked.1.best_time_ms, Some(2_000));
    }

    #[test]
    fn streaks_run_over_consecutive_tallied_days() {
        let records = records_after(&[
            ("2026-12-01", &[(1, true, true), (2, true, true)]),
            ("2026-12-02", &[(1, true, true), (2, false, true)]),
            ("2026-12-03", &[(1, false, true), (2, true, true)]),
            // No day of the 4th (no deal): no break.
            ("2026-12-05", &[(1, true, true), (2, true, true)]),
            ("2026-12-06", &[(2, true, false)]),
        ]);
        let one = &records[&1];
        assert_eq!((one.days_played, one.wins), (4, 3));
        assert_eq!((one.play_streak, one.best_play_streak), (4, 4));
        assert_eq!((one.win_streak, one.best_win_streak), (1, 2));
        assert_eq!(one.last_played.as_deref(), Some("2026-12-05"));
        let two = &records[&2];
        assert_eq!((two.days_played, two.wins), (5, 4));
        assert_eq!((two.play_streak, two.best_play_streak), (5, 5));
        assert_eq!((two.win_streak, two.best_win_streak), (3, 3));
        assert_eq!((two.ranked_days, two.best_rank), (4, Some(2)));
        // Player 1 did not play the last day: no current streak.
        assert_eq!(
            current_streak(
                one.play_streak,
                one.last_played.as_deref(),
                Some("2026-12-06")
            ),
            0
        );
        assert_eq!(
            current_streak(two.win_streak, two.last_won.as_deref(), Some("2026-12-06")),
            3
        );
        // A gap of a tallied day breaks a streak.
        let broken = records_after(&[
            ("2026-12-01", &[(1, true, true)]),
            ("2026-12-02", &[(2, true, true)]),
            ("2026-12-03", &[(1, true, true)]),
        ]);
        assert_eq!(
            (broken[&1].play_streak, broken[&1].best_play_streak),
            (1, 1)
        );
        assert_eq!(broken[&1].win_streak, 1);
        // A day tallied late counts, but leaves the streaks alone.
        let late = records_after(&[
            ("2026-12-02", &[(1, true, true)]),
            ("2026-12-03", &[(1, true, true)]),
            ("2026-12-01", &[(1, true, true)]),
        ]);
        assert_eq!((late[&1].days_played, late[&1].play_streak), (3, 2));
        assert_eq!(late[&1].last_played.as_deref(), Some("2026-12-03"));
    }

    #[test]
    fn standings_break_ties_by_wins_then_time_then_registration() {
        let totals = |player, points, wins, win_time_ms| Totals {
            player,
            name: format!("p{player}"),
            points,
            days: 1,
            wins,
            win_time_ms,
        };
        let tallied = vec![
            totals(5, 30, 1, 100),
            totals(4, 30, 2, 900),
            totals(3, 30, 2, 800),
            totals(2, 40, 0, 0),
            totals(6, 30, 2, 800),
        ];
        let live = live_additions(&[(7, "p7".to_string(), true, 50)]);
        let (players, rows, own) = rank_standings(tallied, live, 3, Some(5));
        assert_eq!(players, 6);
        let names: Vec<&str> = rows.iter().map(|row| row.name.as_str()).collect();
        assert_eq!(names, ["p2", "p3", "p6"]);
        assert_eq!(
            own.map(|row| (row.rank, row.name)),
            Some((5, "p5".to_string()))
        );
        assert_eq!(lower_median_offset(4), 1);
        assert_eq!(lower_median_offset(5), 2);
        assert_eq!(lower_median_offset(1), 0);
    }
}
