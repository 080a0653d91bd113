//! The daily attempt: opened (or taken up again, from another connection
//! too: the newest plays it) for an authenticated player, its moves judged
//! and stored one by one, and finished (won, stuck, resigned, or out of
//! time). One connection plays an attempt at a time, tracked in the
//! registry.

use patience_room_core::judge::Refused;
use patience_shared::game::GameKind;
use patience_shared::protocol::{ErrorCode, PlayerStatus, ServerMessage, Unranked};

use super::Session;
use crate::daily::DailyError;
use crate::metrics::bump;
use crate::store::StoreError;

/// The time of a result, for people: `m:ss.t`.
fn clock(ms: u64) -> String {
    format!("{}:{:02}.{}", ms / 60_000, ms / 1000 % 60, ms / 100 % 10)
}

impl Session {
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
            Err(Refused {
                code,
                reason,
                message,
            }) => return reject(self, text, code, reason, message),
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

    /// When the open daily attempt's time is up, on the server's clock,
    /// which wakes the reader loop then (a virtual clock as soon as it is
    /// moved past it).
    pub(super) fn daily_deadline(&self) -> Option<u64> {
        Some(self.daily.as_ref()?.deadline_ms)
    }

    /// Whether the open daily attempt's time is up on the server's clock.
    pub(super) fn daily_time_is_up(&self) -> bool {
        self.daily
            .as_ref()
            .is_some_and(|play| self.shared.clock.now_ms() >= play.deadline_ms)
    }
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
