//! The connection's tournament requests beyond one day's page: past days,
//! a player's records, and the weekly and monthly standings.
//!
//! Each asks the database thread for the days closed so far to be tallied
//! first ([`Store::tally_closed_days`](crate::store::Store::tally_closed_days),
//! which does nothing when the sweeper has been there), so an answer
//! counts every closed day whenever it is asked; then it reads the tally's
//! tables, never every day's attempts (see [`tally`](crate::store::tally)
//! for what is counted).
//!
//! - `daily_days`: the closed days of a game that had a finished attempt,
//!   newest first, each with its winners' count, podium and deal; at most
//!   `limit` (default [`DEFAULT_DAYS`], capped at `leaderboard_max_rows`)
//!   and a `more` flag; `before` a `YYYY-MM-DD` date.
//! - `player_stats`: by name (whatever its case) or, without one, the
//!   authenticated player's; an unknown name is `invalid_request`, no name
//!   without an account is `not_authenticated`.
//! - `standings`: a week (`YYYY-Www`, ISO 8601) or a month (`YYYY-MM`),
//!   the current one by default; a period not yet begun, or a key that is
//!   not one, is `invalid_request`. Its open days (today, and yesterday
//!   until it closes) count live from their rankings as they stand;
//!   `limit` rows (default [`DEFAULT_STANDING_ROWS`], capped at
//!   `leaderboard_max_rows`) and the asker's own row.

use patience_shared::game::GameKind;
use patience_shared::protocol::{self, DaysPage, ErrorCode, Period, ServerMessage, StandingsPage};

use super::Session;
use crate::daily;
use crate::store::{PeriodSpan, PlayerLookup};

/// Whose records a `player_stats` asks for.
#[derive(Clone, Debug)]
enum Asked {
    /// A player by name.
    Name(String),
    /// The authenticated player: id and name.
    Id(u64, String),
}

/// The days sent when a request names no limit.
pub const DEFAULT_DAYS: u32 = 10;

/// The standings rows sent when a request names no limit.
pub const DEFAULT_STANDING_ROWS: u32 = 20;

impl Session {
    /// The newest closed date now, for the tally to reach (`None` before
    /// any day has closed).
    fn closed_through(&self) -> Option<String> {
        daily::last_closed_date(
            self.shared.clock.now_ms(),
            self.shared.daily.time_limit_ms(),
        )
    }

    pub(super) async fn daily_days(
        &mut self,
        game: GameKind,
        before: Option<String>,
        limit: Option<u32>,
    ) {
        if let Some(text) = &before
            && daily::parse_date(text).is_none()
        {
            return self.error(
                ErrorCode::InvalidRequest,
                format!("{text:?} is not a date written YYYY-MM-DD"),
            );
        }
        let limit = limit
            .unwrap_or(DEFAULT_DAYS)
            .min(self.shared.config.leaderboard_max_rows);
        let through = self.closed_through();
        let answer = self
            .shared
            .database
            .call(move |store| {
                if let Some(through) = &through {
                    store.tally_closed_days(through)?;
                }
                store.daily_days(game, before.as_deref(), limit)
            })
            .await;
        match answer {
            Ok(found) => self.reply(&ServerMessage::DaysPage {
                page: DaysPage {
                    game,
                    days: found.days,
                    more: found.more,
                },
            }),
            Err(error) => self.storage_failed(&error),
        }
    }

    pub(super) async fn player_stats(&mut self, name: Option<String>) {
        let asked = match (name, &self.player) {
            (Some(name), _) => {
                // A name no account may have names nobody: no need to ask.
                if !protocol::valid_player_name(&name) {
                    return self.no_such_player(&name);
                }
                Asked::Name(name)
            }
            (None, Some(player)) => Asked::Id(player.id, player.name.clone()),
            (None, None) => {
                return self.error(
                    ErrorCode::NotAuthenticated,
                    "name a player, or register or authenticate to see your own records",
                );
            }
        };
        let through = self.closed_through();
        let lookup = asked.clone();
        let answer = self
            .shared
            .database
            .call(move |store| {
                if let Some(through) = &through {
                    store.tally_closed_days(through)?;
                }
                store.player_record(match &lookup {
                    Asked::Name(name) => PlayerLookup::Name(name),
                    Asked::Id(id, _) => PlayerLookup::Id(*id),
                })
            })
            .await;
        match answer {
            Ok(Some(record)) => self.reply(&ServerMessage::PlayerRecord { record }),
            Ok(None) => match &asked {
                Asked::Name(name) | Asked::Id(_, name) => self.no_such_player(name),
            },
            Err(error) => self.storage_failed(&error),
        }
    }

    fn no_such_player(&self, name: &str) {
        self.error(
            ErrorCode::PlayerNotFound,
            format!("no player is called {name:?}"),
        );
    }

    pub(super) async fn standings(
        &mut self,
        game: GameKind,
        period: Period,
        key: Option<String>,
        limit: Option<u32>,
    ) {
        let now = self.shared.clock.now_ms();
        let Some(today) = daily::date_of(now) else {
            return self.storage_failed(&"the server's clock is out of range");
        };
        let span = match key {
            Some(key) => match PeriodSpan::parse(period, &key) {
                Ok(span) => span,
                Err(message) => return self.error(ErrorCode::InvalidRequest, message),
            },
            None => match PeriodSpan::containing(period, &today) {
                Some(span) => span,
                None => return self.storage_failed(&"the server's clock is out of range"),
            },
        };
        // Dates in `YYYY-MM-DD` order as text does.
        if span.first_date > today {
            return self.error(
                ErrorCode::InvalidRequest,
                format!("{} has not begun (UTC)", span.key),
            );
        }
        let limit = limit
            .unwrap_or(DEFAULT_STANDING_ROWS)
            .min(self.shared.config.leaderboard_max_rows);
        let time_limit_ms = self.shared.daily.time_limit_ms();
        // Live while a day of it up to today is still open.
        let live = span
            .dates_through(&today)
            .iter()
            .any(|date| !daily::day_closed(date, now, time_limit_ms));
        let player = self.player.as_ref().map(|player| player.id);
        let through = self.closed_through();
        let query_span = span.clone();
        let answer = self
            .shared
            .database
            .call(move |store| {
                if let Some(through) = &through {
                    store.tally_closed_days(through)?;
                }
                store.standings(game, &query_span, &today, limit, player)
            })
            .await;
        match answer {
            Ok(standings) => self.reply(&ServerMessage::StandingsPage {
                page: StandingsPage {
                    game,
                    period,
                    key: span.key,
                    first_date: span.first_date,
                    last_date: span.last_date,
                    live,
                    players: standings.players,
                    rows: standings.rows,
                    own: standings.own,
                },
            }),
            Err(error) => self.storage_failed(&error),
        }
    }
}
