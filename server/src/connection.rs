//! One client's connection, split as mini-redis splits its server: the
//! transport, one dispatcher, and one handler module per area. Nothing here
//! blocks on another client: rooms push frames into the connection's
//! bounded outbox with `try_send`, and a connection's errors close that
//! connection only.
//!
//! - `transport`: the socket. The request head (a page request is answered
//!   there), the WebSocket handshake, the reader loop (frames in, the hello
//!   deadline, the idle timeout, rate limits) and the writer task that
//!   drains the outbox (batching, pings, the write timeout that marks a
//!   stalled socket, the farewell error and close code).
//! - `dispatch`: decodes a frame and routes each client message to its
//!   handler; it decides nothing else.
//! - `rooms`: creating, joining, spectating, resuming and leaving rooms,
//!   quick race, and the room business forwarded to the room's actor.
//! - `quick`: a quick racer waiting alone: the rating window's steps, the
//!   move to a waiter it now meets, the bot offer and its answer.
//! - `lookup`: where a room code or a resume token leads in a cluster: a
//!   room here, one taken over here, or a `redirect` to the node that has
//!   it.
//! - `accounts`: register, authenticate, sign-in codes, sign out.
//! - `daily`: the daily attempt.
//! - `records`: a day's leaderboard page and a stored race's replay.
//! - `follow`: days followed live, and a finished race's boards.
//! - `lobby`: the open public rooms, and a racer's answer to a rematch.
//! - `ratings`: a game's rating list and a player's rating history.
//! - `tournament`: past days, a player's records, weekly and monthly
//!   standings.
//!
//! Every handler is a method of `Session`, what the connection knows about
//! its client; the handlers' answers and errors go through `reply` and
//! `error` here.

use std::net::SocketAddr;
use std::sync::Arc;

use patience_shared::game::GameKind;
use patience_shared::protocol::{ErrorCode, ServerMessage};

use crate::leaderboard_feed::Following;
use crate::metrics::bump;
use crate::outbox::{ConnectionHandle, SendFailure};
use crate::room_handle::RoomHandle;
use crate::state::Shared;
use crate::store::Player;

mod accounts;
mod daily;
mod dispatch;
mod follow;
mod lobby;
mod lookup;
mod quick;
mod ratings;
mod records;
mod rooms;
mod tournament;
mod transport;

pub use transport::{serve, websocket_config};

use transport::TokenBucket;

/// What the reader loop knows about its client.
struct Session {
    shared: Arc<Shared>,
    handle: ConnectionHandle,
    /// The client's address, for the per-address registration limit.
    peer: SocketAddr,
    greeted: bool,
    name: String,
    /// The registered player this connection is, once it says so.
    player: Option<Player>,
    /// The hash of the token `player` signed in with, which `sign_out`
    /// revokes.
    signed_in_with: Option<crate::secrets::TokenHash>,
    room: Option<RoomHandle>,
    /// The daily attempt this connection plays, if any (boxed: it holds
    /// a whole game, and most connections never play one).
    daily: Option<Box<crate::daily::Play>>,
    /// The days this connection follows live, once it follows one (boxed:
    /// most connections never do).
    following: Option<Box<Following>>,
    messages: TokenBucket,
    moves: TokenBucket,
    /// While this connection waits alone in the quick race's room it
    /// opened (boxed: most connections never do).
    quick_wait: Option<Box<quick::QuickWait>>,
}

impl Session {
    fn new(shared: Arc<Shared>, handle: ConnectionHandle, peer: SocketAddr) -> Session {
        let config = &shared.config;
        let messages = TokenBucket::new(config.messages_per_second, config.message_burst);
        let moves = TokenBucket::new(config.moves_per_second, config.move_burst);
        Session {
            shared,
            handle,
            peer,
            greeted: false,
            name: String::new(),
            player: None,
            signed_in_with: None,
            room: None,
            daily: None,
            following: None,
            messages,
            moves,
            quick_wait: None,
        }
    }

    fn reply(&self, message: &ServerMessage) {
        if self.handle.send_message(message) == Err(SendFailure::Full) {
            bump(&self.shared.metrics.send_queue_drops);
            self.handle
                .kick(ErrorCode::TooSlow, "too many messages waiting to be sent");
        }
    }

    fn error(&self, code: ErrorCode, message: impl Into<String>) {
        let message = message.into();
        if code.is_fatal() {
            self.handle.kick(code, message);
        } else {
            self.reply(&ServerMessage::Error { code, message });
        }
    }

    /// Refuses a game this server does not deal, naming the ones it does.
    fn game_unavailable(&self, game: &str) {
        let offered: Vec<&str> = GameKind::ALL
            .into_iter()
            .filter(|&kind| self.shared.pool.deals(kind))
            .map(GameKind::slug)
            .collect();
        self.error(
            ErrorCode::GameUnavailable,
            format!(
                "this server does not deal {game}; it deals {}",
                offered.join(", ")
            ),
        );
    }

    /// Answers a failed database call: the client hears `internal`, the
    /// log and `/metrics` hear the cause.
    fn storage_failed(&self, error: &dyn std::fmt::Display) {
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
}
