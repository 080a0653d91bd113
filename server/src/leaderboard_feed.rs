//! Days followed live (`follow`): every change to a day's leaderboard, an
//! attempt begun or finished, is published here once, already encoded, and
//! each following connection takes the ones it follows.
//!
//! One bounded broadcast channel carries every day of every game: changes
//! come at the pace people start and finish attempts, far below a room's
//! moves, so a follower filtering out the days it does not follow costs
//! little, and no map of days needs keeping or pruning. A follower that
//! falls behind the channel's capacity is not waited for; it is told
//! (`Lagged`) and sends its client the whole page again.
//!
//! Each day's changes are numbered by [`events`]: the attempts begun plus
//! the attempts finished, which every change raises by exactly one. A
//! follower passes on a change only when it is the next one after what its
//! client has; a change it already has (from the page it was sent) is
//! dropped, and a gap (a change published out of order by two finishing
//! tasks, or one made on another node) is answered with the whole page.
//! So a client that applies changes as insertions never applies one twice
//! or in the wrong order.
//!
//! In a cluster, the [`cluster`](crate::cluster)'s relay takes every change
//! made here to the other nodes through Redis, and publishes theirs here
//! ([`LeaderboardFeed::publish_from_elsewhere`]): a follower at any node
//! sees every node's changes.

use std::sync::Arc;

use bytes::Bytes;
use patience_shared::game::GameKind;
use patience_shared::protocol::{self, DecodeError, LeaderboardUpdate, ServerMessage};
use tokio::sync::broadcast;

/// How many changes the channel holds for a slow follower.
const CAPACITY: usize = 256;

/// The number of a day's changes so far, from its counts: every attempt
/// begun is one (finished or still playing), every attempt finished one
/// more.
pub fn events(finishers: u32, unranked: u32, playing: u32) -> u64 {
    let finished = u64::from(finishers) + u64::from(unranked);
    finished + finished + u64::from(playing)
}

/// Where a change was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// On this node: a cluster relays it to the others.
    Here,
    /// On another node of the cluster, which relayed it here.
    Elsewhere,
}

/// One published change.
#[derive(Debug)]
pub struct Change {
    /// Where it was made.
    pub origin: Origin,
    /// The game.
    pub game: GameKind,
    /// The day, `YYYY-MM-DD`.
    pub date: String,
    /// The day's [`events`] after this change.
    pub events: u64,
    /// The `leaderboard_update` frame.
    pub frame: Bytes,
}

/// The publishing end, shared by the daily service (and, in a cluster, by
/// what brings other nodes' changes).
#[derive(Clone, Debug)]
pub struct LeaderboardFeed {
    sender: broadcast::Sender<Arc<Change>>,
}

impl Default for LeaderboardFeed {
    fn default() -> LeaderboardFeed {
        LeaderboardFeed::new()
    }
}

impl LeaderboardFeed {
    /// A feed nobody follows yet.
    pub fn new() -> LeaderboardFeed {
        let (sender, _) = broadcast::channel(CAPACITY);
        LeaderboardFeed { sender }
    }

    /// Tells every follower of the update's day. Never waits; with no
    /// follower it does nothing.
    pub fn publish(&self, update: LeaderboardUpdate) {
        self.send(Origin::Here, update);
    }

    /// Tells this node's followers of a change another node made, given as
    /// the `leaderboard_update` frame that node sent its own followers.
    pub fn publish_from_elsewhere(&self, frame: &[u8]) -> Result<(), DecodeError> {
        match protocol::decode_server(frame)? {
            ServerMessage::LeaderboardUpdate { update } => {
                self.send(Origin::Elsewhere, update);
                Ok(())
            }
            _ => Err(DecodeError::Malformed(
                "not a leaderboard_update".to_string(),
            )),
        }
    }

    fn send(&self, origin: Origin, update: LeaderboardUpdate) {
        if self.sender.receiver_count() == 0 {
            return;
        }
        let change = Change {
            origin,
            game: update.game,
            events: events(update.finishers, update.unranked, update.playing),
            date: update.date.clone(),
            frame: Bytes::from(protocol::encode(&ServerMessage::LeaderboardUpdate {
                update,
            })),
        };
        // An error means every follower left meanwhile.
        let _ = self.sender.send(Arc::new(change));
    }

    /// Every change as it is published, for the cluster's relay.
    pub fn changes(&self) -> broadcast::Receiver<Arc<Change>> {
        self.sender.subscribe()
    }

    /// A new follower, which sees the changes published from now on.
    pub fn subscribe(&self) -> Following {
        Following {
            receiver: self.sender.subscribe(),
            days: Vec::new(),
            missed: false,
        }
    }
}

/// A day followed, and how far its client is.
#[derive(Debug)]
struct FollowedDay {
    game: GameKind,
    date: String,
    /// The rows its pages are sent with, as the client asked.
    limit: Option<u32>,
    events: u64,
    /// Whether its client has been sent a page of it closed.
    closed: bool,
}

/// What a connection follows: at most one day per game.
#[derive(Debug)]
pub struct Following {
    receiver: broadcast::Receiver<Arc<Change>>,
    days: Vec<FollowedDay>,
    /// A change could not be queued for the client: it is to be sent
    /// every page again, once its queue has room.
    missed: bool,
}

/// What a follower does next.
#[derive(Debug)]
pub enum Next {
    /// Send this frame: the next change of a followed day.
    Send(Bytes),
    /// Send the whole page of this day again: its client missed changes.
    Page(GameKind, String),
    /// Send every followed day's page again: the follower fell behind.
    AllPages,
}

impl Following {
    /// Follows `game`'s `date` (instead of any other day of the game), whose
    /// pages have `limit` rows; its client is yet to be sent one.
    pub fn follow(&mut self, game: GameKind, date: String, limit: Option<u32>) {
        self.days.retain(|day| day.game != game);
        self.days.push(FollowedDay {
            game,
            date,
            limit,
            events: 0,
            closed: false,
        });
    }

    /// The rows `game`'s pages are sent with.
    pub fn limit(&self, game: GameKind) -> Option<u32> {
        self.days
            .iter()
            .find(|day| day.game == game)
            .and_then(|day| day.limit)
    }

    /// A change could not be queued for the client: until it is sent every
    /// page again, changes are not passed on.
    pub fn missed_one(&mut self) {
        self.missed = true;
    }

    /// Whether the client missed a change and is to be sent every page.
    pub fn has_missed(&self) -> bool {
        self.missed
    }

    /// The client is being sent every page again.
    pub fn caught_up(&mut self) {
        self.missed = false;
    }

    /// The client has been sent a page of `game`'s `date` with `events`
    /// changes, of the day closed or not.
    pub fn sent_page(&mut self, game: GameKind, date: &str, events: u64, closed: bool) {
        if let Some(day) = self.day_mut(game, date) {
            day.events = day.events.max(events);
            day.closed |= closed;
        }
    }

    /// The followed day of `game`, which has closed: its client is to be
    /// sent the final page once (should that fail, it is not tried again).
    pub fn closed_day(&mut self, game: GameKind) -> Option<String> {
        let day = self.days.iter_mut().find(|day| day.game == game)?;
        day.closed = true;
        Some(day.date.clone())
    }

    /// The first of the followed days still open to their clients, and when
    /// it closes (by `close_time`, in the server clock's milliseconds): its
    /// client is then sent the final page, with the deal revealed.
    pub fn next_close(&self, close_time: impl Fn(&str) -> Option<u64>) -> Option<(GameKind, u64)> {
        self.days
            .iter()
            .filter(|day| !day.closed)
            .filter_map(|day| Some((day.game, close_time(&day.date)?)))
            .min_by_key(|&(_, at)| at)
    }

    /// Stops following `game`.
    pub fn unfollow(&mut self, game: GameKind) {
        self.days.retain(|day| day.game != game);
    }

    /// Whether any day is followed.
    pub fn is_following(&self) -> bool {
        !self.days.is_empty()
    }

    /// The days followed.
    pub fn days(&self) -> impl Iterator<Item = (GameKind, &str)> {
        self.days.iter().map(|day| (day.game, day.date.as_str()))
    }

    fn day_mut(&mut self, game: GameKind, date: &str) -> Option<&mut FollowedDay> {
        self.days
            .iter_mut()
            .find(|day| day.game == game && day.date == date)
    }

    /// What to send next, once a change of a followed day comes (cancel
    /// safe: nothing is lost if the future is dropped before it is ready).
    pub async fn next(&mut self) -> Next {
        loop {
            let change = match self.receiver.recv().await {
                Ok(change) => change,
                Err(broadcast::error::RecvError::Lagged(_)) => return Next::AllPages,
                // The feed lives as long as the server: nothing more comes.
                Err(broadcast::error::RecvError::Closed) => std::future::pending().await,
            };
            if let Some(next) = self.take(&change) {
                return next;
            }
        }
    }

    /// What a change means to this follower, if anything.
    fn take(&mut self, change: &Change) -> Option<Next> {
        let day = self.day_mut(change.game, &change.date)?;
        if change.events <= day.events {
            return None;
        }
        if change.events == day.events + 1 {
            day.events = change.events;
            return Some(Next::Send(change.frame.clone()));
        }
        Some(Next::Page(change.game, change.date.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(game: GameKind, date: &str, counts: (u32, u32, u32)) -> LeaderboardUpdate {
        LeaderboardUpdate {
            game,
            date: date.to_string(),
            row: None,
            finishers: counts.0,
            unranked: counts.1,
            playing: counts.2,
        }
    }

    #[test]
    fn every_begin_and_every_finish_is_one_event() {
        // (finishers, unranked, playing) before and after, and the change.
        let steps = [
            ((0, 0, 0), (0, 0, 1), "an attempt begins"),
            ((0, 0, 1), (1, 0, 0), "it finishes on the ranking"),
            ((1, 0, 0), (1, 0, 1), "another begins"),
            ((1, 0, 1), (1, 1, 0), "it finishes off the ranking"),
        ];
        for (before, after, what) in steps {
            assert_eq!(
                events(after.0, after.1, after.2),
                events(before.0, before.1, before.2) + 1,
                "{what}"
            );
        }
    }

    /// A change of a game's day, with the day's counts after it.
    type Made<'a> = (GameKind, &'a str, (u32, u32, u32));

    /// What a follower at 2 changes of a Three Blind Mice day does with
    /// changes of the given days and counts, in order.
    fn taken(changes: &[Made<'_>]) -> Vec<&'static str> {
        let feed = LeaderboardFeed::new();
        let mut following = feed.subscribe();
        following.follow(GameKind::ThreeBlindMice, "2026-12-02".to_string(), None);
        following.sent_page(GameKind::ThreeBlindMice, "2026-12-02", 2, false);
        changes
            .iter()
            .map(|&(game, date, counts)| {
                let update = update(game, date, counts);
                let change = Change {
                    origin: Origin::Here,
                    game,
                    date: date.to_string(),
                    events: events(update.finishers, update.unranked, update.playing),
                    frame: Bytes::new(),
                };
                match following.take(&change) {
                    None => "drop",
                    Some(Next::Send(_)) => "send",
                    Some(Next::Page(..)) => "page",
                    Some(Next::AllPages) => "all",
                }
            })
            .collect()
    }

    #[test]
    fn a_follower_passes_on_the_next_change_only() {
        let tbm = GameKind::ThreeBlindMice;
        let cases: [(&str, Vec<Made<'_>>, Vec<&str>); 5] = [
            (
                "in order",
                vec![
                    (tbm, "2026-12-02", (1, 0, 1)),
                    (tbm, "2026-12-02", (2, 0, 0)),
                ],
                vec!["send", "send"],
            ),
            (
                "already in the page",
                vec![
                    (tbm, "2026-12-02", (1, 0, 0)),
                    (tbm, "2026-12-02", (0, 0, 2)),
                ],
                vec!["drop", "drop"],
            ),
            (
                "a gap, then the late one",
                vec![
                    (tbm, "2026-12-02", (2, 0, 0)),
                    (tbm, "2026-12-02", (1, 0, 1)),
                ],
                vec!["page", "send"],
            ),
            (
                "another day",
                vec![(tbm, "2026-12-01", (1, 0, 1))],
                vec!["drop"],
            ),
            (
                "another game",
                vec![(GameKind::Indian, "2026-12-02", (1, 0, 1))],
                vec!["drop"],
            ),
        ];
        for (what, changes, expected) in cases {
            assert_eq!(taken(&changes), expected, "{what}");
        }
    }

    #[test]
    fn the_next_close_is_the_first_of_the_days_not_yet_sent_closed() {
        let feed = LeaderboardFeed::new();
        let mut following = feed.subscribe();
        // Closes at the day's number.
        let close_time = |date: &str| date.parse::<u64>().ok();
        assert_eq!(following.next_close(close_time), None);
        following.follow(GameKind::ThreeBlindMice, "20".to_string(), None);
        following.follow(GameKind::Indian, "10".to_string(), None);
        following.follow(GameKind::VirginiaReel, "not a date".to_string(), None);
        assert_eq!(
            following.next_close(close_time),
            Some((GameKind::Indian, 10))
        );
        following.sent_page(GameKind::Indian, "10", 0, true);
        assert_eq!(
            following.next_close(close_time),
            Some((GameKind::ThreeBlindMice, 20))
        );
        following.sent_page(GameKind::ThreeBlindMice, "20", 0, false);
        assert_eq!(
            following.next_close(close_time),
            Some((GameKind::ThreeBlindMice, 20)),
            "a page of the day still open"
        );
        following.follow(GameKind::ThreeBlindMice, "30".to_string(), None);
        assert_eq!(
            following.next_close(close_time),
            Some((GameKind::ThreeBlindMice, 30)),
            "another day of the game replaces it"
        );
    }

    #[tokio::test]
    async fn a_follower_that_falls_behind_is_told_to_send_every_page() {
        let feed = LeaderboardFeed::new();
        let mut following = feed.subscribe();
        following.follow(GameKind::ThreeBlindMice, "2026-12-02".to_string(), None);
        for playing in 1..=u32::try_from(CAPACITY + 1).unwrap_or(u32::MAX) {
            feed.publish(update(
                GameKind::ThreeBlindMice,
                "2026-12-02",
                (0, 0, playing),
            ));
        }
        assert!(matches!(following.next().await, Next::AllPages));
    }

    #[tokio::test]
    async fn a_follower_is_sent_what_is_published_after_it_subscribed() {
        let feed = LeaderboardFeed::new();
        feed.publish(update(GameKind::ThreeBlindMice, "2026-12-02", (0, 0, 1)));
        let mut following = feed.subscribe();
        following.follow(GameKind::ThreeBlindMice, "2026-12-02".to_string(), None);
        following.sent_page(GameKind::ThreeBlindMice, "2026-12-02", 1, false);
        feed.publish(update(GameKind::ThreeBlindMice, "2026-12-02", (0, 0, 2)));
        assert!(matches!(following.next().await, Next::Send(frame) if !frame.is_empty()));
    }
}
