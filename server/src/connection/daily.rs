//! The daily attempt's shell: opened (or taken up again, from another
//! connection too: the newest plays it) for an authenticated player, then
//! played as a room of one seat on the room core
//! ([`patience_room_core::daily::DailyCore`]), which judges its moves and
//! keeps its time. This file feeds the core the player's messages, the
//! clock's wake-up and the store's answers, and carries its outputs out:
//! frames to the player, the daily's store calls, the registry's release.
//! One connection plays an attempt at a time, tracked in the registry.

use std::sync::Arc;

use patience_room_core::daily::{CloseAnswer, DailyInput, DailyOutput, Written};
use patience_shared::game::GameKind;
use patience_shared::protocol::{ErrorCode, PlayerStatus, ServerMessage, Unranked};

use super::Session;
use crate::daily::{DailyError, Play};
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
        let metrics = Arc::clone(&self.shared.metrics);
        match self.shared.daily.open(&player, game, now, metrics).await {
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

    /// A move on the open daily attempt.
    pub(super) async fn daily_move(&mut self, text: String, seat: Option<u8>) {
        self.daily_input(Some(DailyInput::Move { text, seat }))
            .await;
    }

    /// A take-back asked of the open daily attempt (refused: none allowed).
    pub(super) async fn daily_undo(&mut self) {
        self.daily_input(Some(DailyInput::Undo)).await;
    }

    /// The player gives up the open daily attempt.
    pub(super) async fn daily_resign(&mut self) {
        self.daily_input(Some(DailyInput::Resign)).await;
    }

    /// The server's clock reached the attempt's deadline.
    pub(super) async fn daily_timeout(&mut self) {
        self.daily_input(None).await;
    }

    /// Hands the open attempt's core `input` (or the clock's wake-up) at
    /// the server's time, then carries out what it asks, in order, feeding
    /// each store call's answer back before the next output.
    async fn daily_input(&mut self, input: Option<DailyInput>) {
        let Some(mut play) = self.daily.take() else {
            return;
        };
        let now = self.shared.clock.now_ms();
        match input {
            Some(input) => play.core.handle(now, input),
            None => play.core.on_timeout(now),
        }
        let (mut released, mut reopen) = (false, false);
        while let Some(output) = play.core.poll_output() {
            match output {
                DailyOutput::Send(message) => self.reply(&message),
                DailyOutput::WriteMove(write) => {
                    let written = self.write_daily_move(&play, write).await;
                    play.core.handle(self.shared.clock.now_ms(), written);
                }
                DailyOutput::Close { status, at_ms } => {
                    let closed = self.close_daily(&play, status, at_ms).await;
                    play.core.handle(self.shared.clock.now_ms(), closed);
                }
                DailyOutput::Release => {
                    self.shared
                        .registry
                        .release_daily(&play.key, self.handle.id);
                    released = true;
                }
                DailyOutput::Reopen => reopen = true,
            }
        }
        if !play.core.is_over() {
            self.daily = Some(play);
            return;
        }
        if !released {
            self.shared
                .registry
                .release_daily(&play.key, self.handle.id);
        }
        if reopen {
            // The player gets the attempt as stored.
            Box::pin(self.daily_play(play.key.game)).await;
        }
    }

    /// Stores the attempt's accepted move, and says how that went in the
    /// core's terms.
    async fn write_daily_move(
        &self,
        play: &Play,
        write: patience_room_core::daily::MoveWrite,
    ) -> DailyInput {
        let written = match self.shared.daily.record_move(&play.key, write).await {
            Ok(()) => Written::Committed,
            // Another connection of this player wrote a move in the
            // moment before it took the attempt over: this copy is stale.
            Err(DailyError::Store(StoreError::MoveConflict(_))) => Written::MovedOn,
            // The sweeper closed it: its time was up.
            Err(DailyError::Store(StoreError::AttemptNotOpen)) => Written::NotOpen,
            Err(error) => {
                tracing::error!(%error, "a daily move could not be saved");
                Written::Failed {
                    message: self.storage_down_or("try the move again"),
                }
            }
        };
        DailyInput::Written(written)
    }

    /// Closes the attempt as `status` and stores its result, and says how
    /// that went in the core's terms.
    async fn close_daily(&self, play: &Play, status: PlayerStatus, at_ms: u64) -> DailyInput {
        let answer = match self.shared.daily.finish(play, status, at_ms).await {
            Ok(result) => {
                tracing::info!(?status, rank = result.rank, "daily attempt finished");
                CloseAnswer::Committed(Box::new(result))
            }
            // The sweeper closed it first (its time was up).
            Err(DailyError::Store(StoreError::AttemptNotOpen)) => CloseAnswer::NotOpen,
            Err(error) => {
                tracing::error!(%error, "storage failed");
                CloseAnswer::Failed {
                    message: self.storage_down_or("try again"),
                }
            }
        };
        DailyInput::Closed(answer)
    }

    /// When the open daily attempt next needs waking on the server's clock
    /// (its time limit), which wakes the reader loop then (a virtual clock
    /// as soon as it is moved past it).
    pub(super) fn daily_deadline(&self) -> Option<u64> {
        self.daily.as_ref()?.core.poll_timeout()
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
