//! What the store keeps, read back: a day's leaderboard page (with the
//! deal revealed once the day is closed) and a stored race's replay (a
//! daily attempt's only once its day is closed, but for the player's own,
//! as they saw it).

use patience_shared::game::GameKind;
use patience_shared::protocol::{
    ErrorCode, LeaderboardPage, OwnAttempt, RaceRecord, Reveal, ServerMessage,
};

use super::Session;
use crate::daily;

/// The leaderboard rows sent when a request names no limit.
const DEFAULT_LEADERBOARD_ROWS: u32 = 20;

impl Session {
    pub(super) async fn leaderboard(
        &mut self,
        game: GameKind,
        date: Option<String>,
        limit: Option<u32>,
    ) {
        let Some(date) = self.requested_day(date) else {
            return;
        };
        if let Some(page) = self.leaderboard_page(game, date, limit).await {
            self.reply(&ServerMessage::LeaderboardPage { page });
        }
    }

    /// The day a request names, `None` for today; a date that is not one,
    /// or has not begun, is refused here (and `None` returned).
    pub(super) fn requested_day(&self, date: Option<String>) -> Option<String> {
        let now = self.shared.clock.now_ms();
        let date = match date {
            Some(text) => match daily::parse_date(&text) {
                Some(date) => date,
                None => {
                    self.error(
                        ErrorCode::InvalidRequest,
                        format!("{text:?} is not a date written YYYY-MM-DD"),
                    );
                    return None;
                }
            },
            None => match daily::date_of(now) {
                Some(date) => date,
                None => {
                    self.storage_failed(&"the server's clock is out of range");
                    return None;
                }
            },
        };
        // Dates in `YYYY-MM-DD` order as text does.
        if daily::date_of(now).is_some_and(|today| date > today) {
            self.error(
                ErrorCode::InvalidRequest,
                format!("{date} has not begun (UTC)"),
            );
            return None;
        }
        Some(date)
    }

    /// A day's page of `game`, or `None` (the client told why) if the store
    /// failed.
    pub(super) async fn leaderboard_page(
        &mut self,
        game: GameKind,
        date: String,
        limit: Option<u32>,
    ) -> Option<LeaderboardPage> {
        let now = self.shared.clock.now_ms();
        let limit = limit
            .unwrap_or(DEFAULT_LEADERBOARD_ROWS)
            .min(self.shared.config.leaderboard_max_rows);
        let player = self.player.as_ref().map(|player| player.id);
        let day_over = daily::day_closed(&date, now, self.shared.daily.time_limit_ms());
        let query_date = date.clone();
        let answer = self
            .shared
            .database
            .call(move |store| {
                let board = store.leaderboard(game, &query_date, limit, player)?;
                let deal = if day_over {
                    store.daily_deal(game, &query_date)?
                } else {
                    None
                };
                Ok((board, deal))
            })
            .await;
        match answer {
            Ok((board, deal)) => Some(LeaderboardPage {
                game,
                date,
                day_over,
                finishers: board.finishers,
                unranked: board.unranked,
                playing: board.playing,
                rows: board.rows,
                own: board.own,
                reveal: deal.map(|deal| Reveal {
                    game,
                    seed: deal.seed,
                    salt: deal.salt,
                }),
            }),
            Err(error) => {
                self.storage_failed(&error);
                None
            }
        }
    }

    /// A stored race. A daily attempt's record holds the day's seed and
    /// salt: until the day is closed it goes to nobody, and the attempt's
    /// own player gets only what they saw
    /// ([`OwnAttempt`](patience_shared::protocol::OwnAttempt)).
    pub(super) async fn replay(&mut self, race_id: u64) {
        match self.replay_answer(race_id).await {
            Some(ReplayAnswer::Race(race)) => self.reply(&ServerMessage::ReplayData { race }),
            Some(ReplayAnswer::Own(attempt)) => {
                self.reply(&ServerMessage::AttemptReplay { attempt });
            }
            None => {}
        }
    }

    /// What the asker may have of a stored race, or `None` with the
    /// refusal sent.
    pub(super) async fn replay_answer(&mut self, race_id: u64) -> Option<ReplayAnswer> {
        let player = self.player.as_ref().map(|player| player.id);
        let time_limit_ms = self.shared.daily.time_limit_ms();
        let now = self.shared.clock.now_ms();
        let answer = self
            .shared
            .database
            .call(move |store| {
                let Some(race) = store.race(race_id)? else {
                    return Ok(None);
                };
                let open_day = race
                    .daily
                    .as_deref()
                    .is_some_and(|date| !daily::day_closed(date, now, time_limit_ms));
                let key = if open_day {
                    store.attempt_of_race(race_id)?
                } else {
                    None
                };
                Ok(Some((race, open_day, key)))
            })
            .await;
        match answer {
            Ok(Some((race, false, _))) => Some(ReplayAnswer::Race(race)),
            Ok(Some((race, true, Some(key)))) if Some(key.player) == player => {
                match daily::own_attempt(&race, &key) {
                    Ok(attempt) => Some(ReplayAnswer::Own(attempt)),
                    Err(error) => {
                        self.storage_failed(&error);
                        None
                    }
                }
            }
            Ok(Some((_, true, _))) => {
                self.error(
                    ErrorCode::ReplayNotYet,
                    "that is another player's daily attempt, and its day is not over: it can be watched once the day is closed for everyone",
                );
                None
            }
            Ok(None) => {
                self.error(
                    ErrorCode::RaceNotFound,
                    format!("no finished race has the id {race_id}"),
                );
                None
            }
            Err(error) => {
                self.storage_failed(&error);
                None
            }
        }
    }
}

/// What a replay request may be answered with.
pub(super) enum ReplayAnswer {
    /// The whole race: a room's, or a daily attempt of a closed day.
    Race(RaceRecord),
    /// The asker's own attempt at an open day, as the player saw it.
    Own(OwnAttempt),
}
