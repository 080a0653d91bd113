//! The requests of a connection that are not room business: accounts, the
//! daily attempt, leaderboards and replays. Each awaits the database thread
//! (never the disk on this task), and answers only once what it changed is
//! committed.

use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, ErrorCode, LeaderboardPage, OwnAttempt, PlayerStatus, RaceRecord, Reveal, ServerMessage,
    Unranked,
};

use super::Session;
use crate::daily::{self, DailyError, Refused};
use crate::metrics::bump;
use crate::secrets::{new_secret, new_sign_in_code, token_hash};
use crate::store::StoreError;

/// The leaderboard rows sent when a request names no limit.
const DEFAULT_LEADERBOARD_ROWS: u32 = 20;

/// The time of a result, for people: `m:ss.t`.
fn clock(ms: u64) -> String {
    format!("{}:{:02}.{}", ms / 60_000, ms / 1000 % 60, ms / 100 % 10)
}

impl Session {
    /// Answers a failed database call: the client hears `internal`, the
    /// log and `/metrics` hear the cause.
    pub(super) fn storage_failed(&self, error: &dyn std::fmt::Display) {
        tracing::error!(%error, "storage failed");
        bump(&self.shared.metrics.storage_errors);
        self.error(ErrorCode::Internal, self.storage_down_or("try again"));
    }

    /// What to tell a client whose request could not be stored: that
    /// trying again is no use while the database is down, else `retry`.
    fn storage_down_or(&self, retry: &str) -> String {
        if self.shared.database.is_up() {
            format!("the server could not reach its database; nothing changed, {retry}")
        } else {
            format!(
                "the server's database is down: {}",
                self.shared.database.down_reason()
            )
        }
    }

    pub(super) async fn register(&mut self, name: String) {
        if let Some(player) = &self.player {
            let message = format!("this connection is already {}", player.name);
            return self.error(ErrorCode::InvalidRequest, message);
        }
        if !protocol::valid_player_name(&name) {
            return self.error(
                ErrorCode::InvalidName,
                format!(
                    "a player's name has 3 to {} characters: letters, digits, _ and -, starting with a letter",
                    protocol::MAX_PLAYER_NAME_CHARS
                ),
            );
        }
        let now = self.shared.clock.now_ms();
        // Counted before the database is asked, so that a refused name costs
        // a registration too: the limit is on tries, not only on accounts.
        let bucket = match self.shared.signups.take_counted(self.peer.ip(), now) {
            Ok(bucket) => bucket,
            Err(wait_ms) => {
                bump(&self.shared.metrics.registrations_refused);
                tracing::info!(wait_ms, "registration refused: too many from this address");
                return self.error(
                ErrorCode::RegistrationLimited,
                format!(
                    "too many accounts were registered from your address lately; try again in {} minutes",
                    wait_ms.div_ceil(60_000)
                ),
            );
            }
        };
        let token = new_secret(24);
        let hash = token_hash(&token);
        let stored_name = name.clone();
        // The bucket is kept before the account is made, so that a restart
        // remembers the try whether or not the name was free.
        match self
            .shared
            .database
            .call(move |store| {
                store.save_registration_bucket(&bucket)?;
                store.register(&stored_name, &hash, now)
            })
            .await
        {
            Ok(player) => {
                tracing::info!(player = player.id, "player registered");
                self.name = player.name.clone();
                self.reply(&ServerMessage::Registered {
                    player: player.id,
                    name: player.name.clone(),
                    token,
                });
                self.player = Some(player);
                self.signed_in_with = Some(hash);
            }
            Err(StoreError::NameTaken(_)) => self.error(
                ErrorCode::NameTaken,
                format!("another player is called {name}"),
            ),
            Err(error) => self.storage_failed(&error),
        }
    }

    pub(super) async fn authenticate(&mut self, token: &str) {
        if self.daily.is_some() {
            return self.error(
                ErrorCode::InvalidRequest,
                "finish your daily attempt before changing players",
            );
        }
        let hash = token_hash(token);
        match self
            .shared
            .database
            .call(move |store| store.player_by_token(&hash))
            .await
        {
            Ok(Some(player)) => {
                self.name = player.name.clone();
                self.reply(&ServerMessage::Authenticated {
                    player: player.id,
                    name: player.name.clone(),
                });
                self.player = Some(player);
                self.signed_in_with = Some(hash);
            }
            Ok(None) => self.error(ErrorCode::InvalidToken, "no player has that token"),
            Err(error) => self.storage_failed(&error),
        }
    }

    pub(super) async fn request_sign_in_code(&mut self) {
        let Some(player) = &self.player else {
            return self.error(
                ErrorCode::NotAuthenticated,
                "sign in first: a sign-in code carries the account you are signed in as",
            );
        };
        let player = player.id;
        let code = new_sign_in_code();
        let hash = token_hash(&code);
        let now = self.shared.clock.now_ms();
        let expires_at = now.saturating_add(protocol::SIGN_IN_CODE_MS);
        match self
            .shared
            .database
            .call(move |store| store.save_sign_in_code(player, &hash, now, expires_at))
            .await
        {
            Ok(()) => self.reply(&ServerMessage::SignInCode {
                code: protocol::show_sign_in_code(&code),
                expires_in_ms: protocol::SIGN_IN_CODE_MS,
            }),
            Err(error) => self.storage_failed(&error),
        }
    }

    pub(super) async fn redeem_sign_in_code(&mut self, typed: &str) {
        if self.daily.is_some() {
            return self.error(
                ErrorCode::InvalidRequest,
                "finish your daily attempt before changing players",
            );
        }
        let now = self.shared.clock.now_ms();
        // Counted before anything else, right or wrong, well formed or not:
        // the limit is on tries, which is what makes guessing hopeless.
        if let Err(wait_ms) = self.shared.sign_ins.take(self.peer.ip(), now) {
            tracing::info!(
                wait_ms,
                "sign-in code refused: too many tries from this address"
            );
            return self.error(
                ErrorCode::SignInLimited,
                format!(
                    "too many sign-in codes were tried from your address lately; try again in {} minutes",
                    wait_ms.div_ceil(60_000)
                ),
            );
        }
        let invalid = "that sign-in code is unknown, used already, or expired";
        let Some(code) = protocol::normalize_sign_in_code(typed) else {
            return self.error(ErrorCode::InvalidSignInCode, invalid);
        };
        let code_hash = token_hash(&code);
        let token = new_secret(24);
        let hash = token_hash(&token);
        match self
            .shared
            .database
            .call(move |store| store.redeem_sign_in_code(&code_hash, &hash, now))
            .await
        {
            Ok(Some(player)) => {
                tracing::info!(player = player.id, "signed in with a code");
                self.name = player.name.clone();
                self.reply(&ServerMessage::SignedIn {
                    player: player.id,
                    name: player.name.clone(),
                    token,
                });
                self.player = Some(player);
                self.signed_in_with = Some(hash);
            }
            Ok(None) => self.error(ErrorCode::InvalidSignInCode, invalid),
            Err(error) => self.storage_failed(&error),
        }
    }

    pub(super) async fn sign_out(&mut self) {
        let Some(hash) = self.signed_in_with.filter(|_| self.player.is_some()) else {
            return self.error(ErrorCode::NotAuthenticated, "you are not signed in");
        };
        if self.daily.is_some() {
            return self.error(
                ErrorCode::InvalidRequest,
                "finish your daily attempt before signing out",
            );
        }
        match self
            .shared
            .database
            .call(move |store| store.revoke_token(&hash))
            .await
        {
            // Revoked now or by another connection before: out either way.
            Ok(_) => {
                self.player = None;
                self.signed_in_with = None;
                self.reply(&ServerMessage::SignedOut);
            }
            Err(error) => self.storage_failed(&error),
        }
    }

    pub(super) async fn daily_play(&mut self, game: GameKind) {
        let Some(player) = self.player.clone() else {
            return self.error(
                ErrorCode::NotAuthenticated,
                "register or authenticate to play the daily deal",
            );
        };
        if !self.shared.pool.deals(game) {
            return self.game_unavailable(game.slug());
        }
        // An attempt already open here (this game's, or another's, whose
        // clock keeps running) is let go: this request opens the one asked.
        self.leave_daily();
        if !self.not_in_room() {
            return;
        }
        let now = self.shared.clock.now_ms();
        match self.shared.daily.open(&player, game, now).await {
            Ok((play, resumed)) => {
                let attempt = play.attempt(now, self.shared.daily.time_limit_ms(), resumed);
                // One connection plays an attempt at a time: the newest.
                if let Some(previous) = self
                    .shared
                    .registry
                    .claim_daily(play.key.clone(), self.handle.clone())
                {
                    previous.kick(
                        ErrorCode::Replaced,
                        "your daily attempt was taken up by another connection",
                    );
                }
                tracing::info!(player = player.id, %game, date = %play.key.date, resumed, "daily attempt open");
                self.daily = Some(Box::new(play));
                self.reply(&ServerMessage::DailyStarted { attempt });
            }
            Err(DailyError::AlreadyPlayed(result)) => self.error(
                ErrorCode::DailyAlreadyPlayed,
                format!(
                    "you have played {}'s {game}: {} with {} moves in {}, {} (race {})",
                    result.date,
                    status_word(result.status),
                    result.progress.moves,
                    clock(result.progress.elapsed_ms),
                    match result.unranked {
                        None => format!("rank {} of {}", result.rank, result.finishers),
                        Some(unranked) => format!("unranked ({})", unranked_word(unranked)),
                    },
                    result.race_id
                ),
            ),
            Err(error) => self.storage_failed(&error),
        }
    }

    /// Stops playing the daily attempt on this connection (it stays open).
    pub(super) fn leave_daily(&mut self) {
        if let Some(play) = self.daily.take() {
            self.shared
                .registry
                .release_daily(&play.key, self.handle.id);
        }
    }

    pub(super) async fn daily_move(&mut self, text: String, seat: Option<u8>) {
        let reject = |session: &Session, text: String, code, reason, message: String| {
            bump(&session.shared.metrics.moves_rejected);
            session.reply(&ServerMessage::MoveRejected {
                text,
                code,
                reason,
                message,
            });
        };
        if let Some(seat) = seat.filter(|&seat| seat != 0) {
            let message = format!("a daily attempt has one board, seat 0, not seat {seat}");
            return reject(self, text, ErrorCode::NotYourBoard, None, message);
        }
        let now = self.shared.clock.now_ms();
        if self
            .daily
            .as_ref()
            .is_some_and(|play| now >= play.deadline_ms)
        {
            let message = "your time is up".to_string();
            reject(self, text, ErrorCode::RaceOver, None, message);
            return self.finish_daily(PlayerStatus::OutOfTime).await;
        }
        let Some(play) = self.daily.as_mut() else {
            return;
        };
        let accepted = match play.play(&text, now) {
            Ok(accepted) => accepted,
            Err(Refused::Notation(message)) => {
                return reject(self, text, ErrorCode::BadNotation, None, message);
            }
            Err(Refused::Illegal(error)) => {
                let message = error.to_string();
                return reject(self, text, ErrorCode::IllegalMove, Some(error), message);
            }
        };
        if let Err(error) = self.shared.daily.record_move(play).await {
            play.take_back(accepted);
            let game = play.key.game;
            return match error {
                // Another connection of this player wrote a move in the
                // moment before it took the attempt over: this copy is
                // stale. The player gets the attempt as stored.
                DailyError::Store(StoreError::MoveConflict(_)) => {
                    let message = "your attempt moved on elsewhere; here it is as stored";
                    reject(self, text, ErrorCode::Internal, None, message.to_string());
                    self.daily_play(game).await;
                }
                // The sweeper closed it: its time was up.
                DailyError::Store(StoreError::AttemptNotOpen) => {
                    self.leave_daily();
                    let message = "your daily attempt is over".to_string();
                    reject(self, text, ErrorCode::RaceOver, None, message);
                }
                error => {
                    tracing::error!(%error, "a daily move could not be saved");
                    bump(&self.shared.metrics.storage_errors);
                    let message = self.storage_down_or("try the move again");
                    reject(self, text, ErrorCode::Internal, None, message);
                }
            };
        }
        bump(&self.shared.metrics.moves_accepted);
        let progress = play.progress(now);
        let ended = play.ended();
        let accepted = ServerMessage::MoveAccepted {
            seq: u64::from(progress.moves),
            text: accepted.text,
            effects: accepted.effects,
            board: play.view(),
            progress,
        };
        self.reply(&accepted);
        if let Some(status) = ended {
            self.finish_daily(status).await;
        }
    }

    /// Ends the daily attempt as `status`, and tells the player once the
    /// result is committed.
    pub(super) async fn finish_daily(&mut self, status: PlayerStatus) {
        let Some(play) = self.daily.as_ref() else {
            return;
        };
        let now = self.shared.clock.now_ms();
        match self.shared.daily.finish(play, status, now).await {
            Ok(result) => {
                tracing::info!(?status, rank = result.rank, "daily attempt finished");
                self.leave_daily();
                self.reply(&ServerMessage::DailyFinished { result });
            }
            // The sweeper closed it first (its time was up): say so.
            Err(DailyError::Store(StoreError::AttemptNotOpen)) => {
                self.leave_daily();
                self.error(ErrorCode::RaceOver, "your daily attempt is over");
            }
            Err(error) => self.storage_failed(&error),
        }
    }

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

fn unranked_word(unranked: Unranked) -> &'static str {
    match unranked {
        Unranked::NewAccount => "your account was registered on the day",
        Unranked::Review => "moves faster than a person plays; held for review",
    }
}

fn status_word(status: PlayerStatus) -> &'static str {
    match status {
        PlayerStatus::Won => "won",
        PlayerStatus::Resigned => "resigned",
        PlayerStatus::Stuck => "stuck",
        PlayerStatus::OutOfTime => "out of time",
        PlayerStatus::Left => "left",
        PlayerStatus::Waiting | PlayerStatus::Racing => "still open",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_clocks_read_minutes_seconds_and_tenths() {
        assert_eq!(clock(0), "0:00.0");
        assert_eq!(clock(184_020), "3:04.0");
        assert_eq!(clock(3_599_999), "59:59.9");
    }
}
