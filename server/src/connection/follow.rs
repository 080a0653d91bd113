//! Days followed live (`follow`, `unfollow`, and the changes the
//! [`LeaderboardFeed`](crate::leaderboard_feed) brings), and a finished
//! race's boards for clients without a rules engine (`replay_boards`).

use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::protocol::{BoardsReplay, RaceRecord, SeatReplay, ServerMessage};
use patience_shared::replay;

use super::Session;
use super::records::ReplayAnswer;
use crate::daily;
use crate::leaderboard_feed::{Next, events};
use crate::metrics::bump;
use crate::outbox::SendFailure;

impl Session {
    /// Sends the day's page, then follows it: the subscription comes first,
    /// so no change made while the page is read is lost (one already in
    /// the page is dropped by its number).
    pub(super) async fn follow(
        &mut self,
        game: GameKind,
        date: Option<String>,
        limit: Option<u32>,
    ) {
        let Some(date) = self.requested_day(date) else {
            return;
        };
        self.following
            .get_or_insert_with(|| Box::new(self.shared.daily.feed().subscribe()))
            .follow(game, date.clone(), limit);
        self.send_page(game, date).await;
    }

    pub(super) fn unfollow(&mut self, game: GameKind) {
        if let Some(following) = &mut self.following {
            following.unfollow(game);
            if !following.is_following() {
                self.following = None;
            }
        }
    }

    /// Sends the page of a followed day, and notes how far it goes.
    async fn send_page(&mut self, game: GameKind, date: String) {
        let limit = self
            .following
            .as_ref()
            .and_then(|following| following.limit(game));
        let Some(page) = self.leaderboard_page(game, date, limit).await else {
            return;
        };
        if let Some(following) = &mut self.following {
            let sent = events(page.finishers, page.unranked, page.playing);
            following.sent_page(game, &page.date, sent, page.day_over);
        }
        self.reply(&ServerMessage::LeaderboardPage { page });
    }

    /// Carries out what the feed says to send. A follower is not kicked for
    /// being slow: a change that does not fit its queue is dropped, and at
    /// a later change, once the queue has room, it is sent every page.
    pub(super) async fn on_feed(&mut self, next: Next) {
        let Some(following) = &mut self.following else {
            return;
        };
        if following.has_missed() {
            if self.handle.has_room_to_catch_up() {
                self.send_every_page().await;
            }
            return;
        }
        match next {
            Next::Send(frame) => {
                if self.handle.send(frame) == Err(SendFailure::Full) {
                    bump(&self.shared.metrics.send_queue_drops);
                    following.missed_one();
                }
            }
            Next::Page(game, date) => self.send_page(game, date).await,
            Next::AllPages => self.send_every_page().await,
        }
    }

    /// When the next followed day closes, on the server's clock, and for
    /// which game: its client is then sent the final page.
    pub(super) fn next_close(&self) -> Option<(GameKind, u64)> {
        let time_limit_ms = self.shared.daily.time_limit_ms();
        self.following
            .as_ref()?
            .next_close(|date| daily::close_time(date, time_limit_ms))
    }

    /// Sends the final page of `game`'s followed day, if it is closed.
    pub(super) async fn send_final_page(&mut self, game: GameKind) {
        let day = self
            .following
            .as_mut()
            .and_then(|following| following.closed_day(game));
        if let Some(date) = day {
            self.send_page(game, date).await;
        }
    }

    /// Sends every followed day's page again.
    async fn send_every_page(&mut self) {
        let Some(following) = &mut self.following else {
            return;
        };
        following.caught_up();
        let days: Vec<(GameKind, String)> = following
            .days()
            .map(|(game, date)| (game, date.to_string()))
            .collect();
        for (game, date) in days {
            self.send_page(game, date).await;
        }
    }

    /// A finished race's boards after every move. The asker's own attempt at
    /// an open day is answered as `replay` answers it (what the player saw);
    /// anyone else's attempt at an open day is refused the same way.
    pub(super) async fn replay_boards(&mut self, race_id: u64) {
        match self.replay_answer(race_id).await {
            Some(ReplayAnswer::Race(race)) => match boards_replay(&race) {
                Ok(replay) => self.reply(&ServerMessage::BoardsReplay { replay }),
                Err(error) => self.storage_failed(&error),
            },
            Some(ReplayAnswer::Own(attempt)) => {
                self.reply(&ServerMessage::AttemptReplay { attempt });
            }
            None => {}
        }
    }
}

/// Every seat's boards of a stored race, replayed from its revealed deal.
fn boards_replay(race: &RaceRecord) -> Result<BoardsReplay, String> {
    let reveal = &race.result.reveal;
    let deal = AnyGame::deal(reveal.game, reveal.seed);
    let mut logs: Vec<_> = race.result.logs.iter().collect();
    logs.sort_by_key(|log| log.seat);
    let seats = logs
        .into_iter()
        .map(|log| {
            let standing = race
                .result
                .standings
                .iter()
                .find(|standing| standing.seat == log.seat)
                .ok_or_else(|| {
                    format!("race {}: seat {} has no standing", race.race_id, log.seat)
                })?;
            let boards = replay::boards(deal.clone(), &log.moves).map_err(|(index, error)| {
                format!(
                    "race {}: seat {} move {index} does not replay: {error}",
                    race.race_id, log.seat
                )
            })?;
            Ok(SeatReplay {
                seat: log.seat,
                name: standing.name.clone(),
                rank: standing.rank,
                status: standing.status,
                moves: log.moves.clone(),
                boards,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(BoardsReplay {
        race_id: race.race_id,
        daily: race.daily.clone(),
        reveal: reveal.clone(),
        seats,
    })
}
