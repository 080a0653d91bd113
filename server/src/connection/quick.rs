//! A quick racer waiting alone in the room it opened: told of its wait at
//! each step of its rating window ([`ServerMessage::QuickRaceWait`]),
//! moved into an older waiter's room once their windows meet, and offered
//! a marked bot after `quick_race_bot_offer_ms` (by default
//! [`matchmaking::BOT_OFFER_AFTER_MS`]; the rule is [`crate::matchmaking`]'s).
//!
//! A move is the waiter leaving its own room (`left`) and joining the
//! other (`room_joined`); the two rooms answer each on their own, so a
//! client may hear them in either order. Of two waiters who meet, the one
//! who began waiting later moves, so that they never cross.

use patience_shared::game::GameKind;
use patience_shared::protocol::{BotLevel, BotSeat, ErrorCode, RoomOptions, ServerMessage};

use super::Session;
use crate::cluster::Owner;
use crate::matchmaking::{self, Waiter};
use crate::registry::PlayerCounts;
use crate::room_handle::Command;

/// The level of the bot a waiting quick racer is offered.
const OFFERED_BOT: BotLevel = BotLevel::Normal;

/// A quick racer's wait, while it is alone in its room.
#[derive(Clone, Copy, Debug)]
pub(super) struct QuickWait {
    game: GameKind,
    waiter: Waiter,
    /// When the bot is offered (again, after the player kept waiting).
    offer_at_ms: u64,
    /// Whether the bot is offered now.
    offered: bool,
    /// The next step of the window.
    next_step_ms: u64,
}

impl Session {
    /// The estimate quick race matches this connection's player on: its
    /// rating's `mu` at `game` now (after idle time), or a new player's.
    pub(super) async fn quick_estimate(&self, game: GameKind) -> f64 {
        let player = self.player.as_ref().map(|player| player.id);
        let ratings = &self.shared.config.ratings;
        if ratings.are_given() {
            return ratings
                .given(player, &self.name, game)
                .unwrap_or(matchmaking::UNRATED_MU);
        }
        let Some(player) = player else {
            return matchmaking::UNRATED_MU;
        };
        let now_ms = self.shared.clock.now_ms();
        let stored = self
            .shared
            .database
            .call(move |store| store.ratings_of(game, &[player]))
            .await;
        match stored {
            Ok(rows) => rows
                .first()
                .map(|row| row.rating.at(row.last_race_ms, now_ms).mu)
                .filter(|mu| mu.is_finite())
                .unwrap_or(matchmaking::UNRATED_MU),
            Err(error) => {
                // A quick race still finds a rival: as a new player.
                tracing::warn!(%error, "a quick racer's rating could not be read");
                matchmaking::UNRATED_MU
            }
        }
    }

    /// Begins the wait of a quick racer alone in the room it just opened,
    /// waiting since `waiter.since_ms` (earlier than now if it waited in
    /// another room before).
    pub(super) async fn begin_quick_wait(&mut self, game: GameKind, waiter: Waiter) {
        let Some(room) = &self.room else {
            return;
        };
        room.summary.set_waiter(Some(waiter));
        let now = self.shared.clock.now_ms();
        self.quick_wait = Some(Box::new(QuickWait {
            game,
            waiter,
            offer_at_ms: waiter
                .since_ms
                .saturating_add(self.shared.config.quick_race_bot_offer_ms),
            offered: false,
            next_step_ms: matchmaking::next_step_ms(waiter.since_ms, now),
        }));
        self.tell_quick_wait(now).await;
    }

    /// Takes back the wait of a quick racer who resumed its seat in the
    /// room it waits in alone (a reload, a dropped socket, or the page
    /// going from its launcher to the room's page).
    pub(super) async fn resume_quick_wait(&mut self) {
        let resumed = self.room.as_ref().and_then(|room| {
            let alone = room.summary.is_waiting() && room.summary.players() <= 1;
            room.summary
                .waiter()
                .filter(|_| alone)
                .map(|waiter| (room.summary.game, waiter))
        });
        if let Some((game, waiter)) = resumed {
            self.begin_quick_wait(game, waiter).await;
        }
    }

    /// When the wait next needs a look: its window's next step, or the
    /// bot's offer.
    pub(super) fn quick_look_at(&self) -> Option<u64> {
        self.quick_wait.as_deref().map(|wait| {
            if wait.offered {
                wait.next_step_ms
            } else {
                wait.next_step_ms.min(wait.offer_at_ms)
            }
        })
    }

    /// A look at the wait: over if someone joined, a move if an older
    /// waiter now meets this one, else the offer and the wait told.
    pub(super) async fn on_quick_look(&mut self) {
        let Some(wait) = self.quick_wait.as_deref().copied() else {
            return;
        };
        if !self.waits_alone() {
            self.end_quick_wait();
            return;
        }
        let now = self.shared.clock.now_ms();
        if self.move_to_a_match(&wait, now).await {
            return;
        }
        self.advertise_if_unadvertised(&wait).await;
        if let Some(wait) = self.quick_wait.as_deref_mut() {
            if now >= wait.offer_at_ms {
                wait.offered = true;
            }
            if now >= wait.next_step_ms {
                wait.next_step_ms = matchmaking::next_step_ms(wait.waiter.since_ms, now);
            }
        }
        self.tell_quick_wait(now).await;
    }

    /// The answer to the bot's offer: a private room with the bot, or the
    /// offer withdrawn until the offer's wait has passed again.
    pub(super) async fn quick_race_answer(&mut self, bot: bool) {
        let offered = self
            .quick_wait
            .as_deref()
            .filter(|wait| wait.offered)
            .copied();
        let Some(wait) = offered.filter(|_| self.waits_alone()) else {
            return self.error(
                ErrorCode::InvalidRequest,
                "no bot is offered: you are not waiting alone for a quick race",
            );
        };
        let now = self.shared.clock.now_ms();
        if !bot {
            if let Some(wait) = self.quick_wait.as_deref_mut() {
                wait.offered = false;
                wait.offer_at_ms = now.saturating_add(self.shared.config.quick_race_bot_offer_ms);
            }
            return self.tell_quick_wait(now).await;
        }
        self.leave_waiting_room().await;
        let bots = vec![BotSeat {
            level: OFFERED_BOT,
            pace_ms: None,
        }];
        self.open_new_room(wait.game, 2, false, RoomOptions::default(), false, bots)
            .await;
    }

    /// Whether this connection is still alone in its quick race's room,
    /// before any countdown.
    fn waits_alone(&mut self) -> bool {
        let alone = self.room.as_ref().is_some_and(|room| {
            !room.commands.is_closed() && room.summary.is_waiting() && room.summary.players() <= 1
        });
        alone && self.quick_wait.is_some()
    }

    /// Stops waiting: someone joined, or the player left.
    pub(super) fn end_quick_wait(&mut self) {
        if self.quick_wait.take().is_some()
            && let Some(room) = &self.room
        {
            room.summary.set_waiter(None);
        }
    }

    /// Leaves the waiting room for another: the room answers `left`.
    ///
    /// The room keeps its waiter's window until it closes: a waiter who
    /// looks at the same moment must not take the room being left for one
    /// open to anyone and move into it, while this one moves into theirs.
    async fn leave_waiting_room(&mut self) {
        self.quick_wait = None;
        if let Some(room) = self.room.take() {
            let conn_id = self.handle.id;
            let _ = room.commands.send(Command::Leave { conn_id }).await;
        }
    }

    /// Moves into the room of a waiter who began earlier and whose window
    /// now meets this one's (or a public room opened since without a
    /// window); whether it moved.
    async fn move_to_a_match(&mut self, wait: &QuickWait, now: u64) -> bool {
        let Some(own) = self.room.clone() else {
            return false;
        };
        let me = wait.waiter;
        let target = self
            .shared
            .registry
            .quick_race_candidates(wait.game)
            .into_iter()
            .filter(|room| room.code != own.code)
            .find(|room| match room.summary.waiter() {
                Some(other) => {
                    (other.since_ms, &*room.code) < (me.since_ms, &*own.code)
                        && other.meets(&me, now)
                }
                None => true,
            });
        let Some(target) = target else {
            return false;
        };
        self.leave_waiting_room().await;
        if self.try_enter(&target, self.join_command()).await.is_ok() {
            self.room = Some(target);
            return true;
        }
        // It filled meanwhile: wait on, in a room of this player's own.
        self.find_quick_race_since(wait.game, me.since_ms).await;
        true
    }

    /// In a cluster, advertises the waiter's room if the game has no live
    /// advertisement (none, its node gone, or its room here no longer
    /// open for quick races): the waiters left behind when the advertised
    /// room filled are found again by quick races asked at any node.
    async fn advertise_if_unadvertised(&mut self, wait: &QuickWait) {
        let (Some(cluster), Some(own)) = (self.shared.cluster.clone(), self.room.clone()) else {
            return;
        };
        let stale = match cluster.advertised(wait.game).await {
            Ok(None) => None,
            Ok(Some(advert)) => {
                let live = match advert.owner {
                    Owner::Here => self
                        .shared
                        .registry
                        .room(&advert.code)
                        .is_some_and(|room| room.summary.open_for_quick_race(wait.game)),
                    Owner::Elsewhere { .. } => true,
                    Owner::Nobody => false,
                };
                if live || advert.code == *own.code {
                    return;
                }
                Some(advert.code)
            }
            Err(error) => {
                tracing::warn!(%error, "the quick-race advertisement could not be read");
                return;
            }
        };
        if let Err(error) = cluster
            .advertise(wait.game, &own.code, stale.as_deref(), &wait.waiter)
            .await
        {
            tracing::warn!(%error, "a waiting quick-race room could not be advertised");
        }
    }

    /// Tells the waiter its wait, its window, the offer and the counts.
    async fn tell_quick_wait(&mut self, now: u64) {
        let Some(wait) = self.quick_wait.as_deref().copied() else {
            return;
        };
        let counts = self.players_of(wait.game).await;
        let waited_ms = now.saturating_sub(wait.waiter.since_ms);
        self.reply(&ServerMessage::QuickRaceWait {
            game: wait.game,
            waited_ms,
            window: matchmaking::shown_window(waited_ms),
            bot_offer: wait.offered,
            // The recipient waits, even if its room's summary has not yet
            // caught up with the seat it just took.
            waiting: counts.waiting.max(1),
            racing: counts.racing,
        });
    }

    /// Players waiting for and racing `game`: this node's, and in a
    /// cluster every node's as last published (a renewal old at most).
    async fn players_of(&self, game: GameKind) -> PlayerCounts {
        let here = self.shared.registry.players_of(game);
        match &self.shared.cluster {
            None => here,
            Some(cluster) => match cluster.players_elsewhere(game).await {
                Ok(elsewhere) => here.plus(elsewhere),
                Err(error) => {
                    tracing::warn!(%error, "other nodes' player counts could not be read");
                    here
                }
            },
        }
    }
}
