//! Days followed live (`follow`, `unfollow`, and the changes the
//! [`LeaderboardFeed`](crate::leaderboard_feed) brings), and a finished
//! race's boards for clients without a rules engine (`replay_boards`).

use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::protocol::{BoardsReplay, RaceRecord, SeatReplay, ServerMessage};
use patience_shared::replay;

use super::Session;
use super::accounts::ReplayAnswer;
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
        let following = self
            .following
            .get_or_insert_with(|| self.shared.daily.feed().subscribe());
        following.follow(game, date.clone(), 0);
        self.follow_limits.retain(|(followed, _)| *followed != game);
        self.follow_limits.push((game, limit));
        self.send_page(game, date).await;
    }

    pub(super) fn unfollow(&mut self, game: GameKind) {
        self.follow_limits.retain(|(followed, _)| *followed != game);
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
            .follow_limits
            .iter()
            .find(|(followed, _)| *followed == game)
            .and_then(|(_, limit)| *limit);
        let Some(page) = self.leaderboard_page(game, date, limit).await else {
            return;
        };
        if let Some(following) = &mut self.following {
            let sent = events(page.finishers, page.unranked, page.playing);
            following.sent_page(game, &page.date, sent);
        }
        self.reply(&ServerMessage::LeaderboardPage { page });
    }

    /// Carries out what the feed says to send.
    pub(super) async fn on_feed(&mut self, next: Next) {
        if self.resend_pages_when_drained {
            if self.handle.has_room_to_catch_up() {
                self.send_every_page().await;
            }
            return;
        }
        match next {
            Next::Send(frame) => {
                if self.handle.send(frame) == Err(SendFailure::Full) {
                    // A follower is not kicked for being slow: it is sent
                    // the whole page once it has room again.
                    bump(&self.shared.metrics.send_queue_drops);
                    self.resend_pages_when_drained = true;
                }
            }
            Next::Page(game, date) => self.send_page(game, date).await,
            Next::AllPages => self.send_every_page().await,
        }
    }

    /// Sends every followed day's page again.
    pub(super) async fn send_every_page(&mut self) {
        self.resend_pages_when_drained = false;
        let days: Vec<(GameKind, String)> = self
            .following
            .iter()
            .flat_map(|following| following.days())
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
