//! An online session: connect (signed in as the account stored for the
//! server, if any), take back a saved seat or enter a room, keep the resume
//! token in the config directory, and reconnect after a drop.
//!
//! The front ends (`--plain`, the terminal UI) own the loop; this module
//! gives them [`Session::start`], [`Session::recv`] (which applies each
//! message to the [`RaceState`] and reconnects transparently while a seat
//! is held) and [`Session::send`].
//!
//! A server of a cluster may answer `join_room`, `spectate`, `resume` or
//! `quick_race` with `redirect`: the room is on another node. The session
//! follows it transparently (connect to the URL, `hello`, sign in if an
//! account is stored for that URL, send the same request again), at most
//! [`MAX_REDIRECTS`] times for one request, then fails with
//! [`NetError::TooManyRedirects`]. The seat saved after that names the
//! node the room is on, so a reconnection goes straight there.
//!
//! Cancel safety: [`Session::start`] and the reconnection inside
//! [`Session::send`] and [`Session::recv`] are **not** cancel-safe while
//! they follow a redirect. Dropped between sending the request to the new
//! node and reading its answer, the new connection is dropped with them:
//! if the request was a join, the seat it took is held for the grace
//! period and the token that opens it is lost, and a resume may have used
//! up its token (the server issues a new one in `resumed`, which is lost).
//! Let them run to the end. Each hop is one connection attempt and one
//! answer, neither with a time limit of its own; a caller that needs one
//! wraps the whole call in a timeout and accepts the loss above. Before a
//! redirect is followed, or once its answer is read, nothing is lost.

use std::time::{Duration, Instant};

use patience_shared::game::GameKind;
use patience_shared::protocol::{ClientMessage, Phase, RoomOptions, ServerMessage};

use crate::config::{SavedSeat, Store};
use crate::net::{Connection, NetError, seq_of};
use crate::race::RaceState;

/// How a session enters a room.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// Quick race: any public room of the game.
    Quick(GameKind),
    /// A new room.
    Create {
        /// The game.
        game: GameKind,
        /// Seats, 2 to 8.
        players: u8,
        /// Whether quick race may fill it.
        public: bool,
        /// Undo and time limit.
        options: RoomOptions,
    },
    /// A room by its code.
    Join(String),
    /// Watch a room by its code.
    Watch(String),
}

impl Entry {
    fn message(&self) -> ClientMessage {
        match self.clone() {
            Entry::Quick(game) => ClientMessage::QuickRace { game },
            Entry::Create {
                game,
                players,
                public,
                options,
            } => ClientMessage::CreateRoom {
                game,
                max_players: players,
                public,
                options,
            },
            Entry::Join(code) => ClientMessage::JoinRoom { code },
            Entry::Watch(code) => ClientMessage::Spectate { code },
        }
    }
}

/// Attempts to reconnect after a drop before giving up.
const RECONNECT_ATTEMPTS: u32 = 6;

/// Redirects followed for one request before giving up: a room is on one
/// node, so one hop suffices but for quick races, whose rooms can fill
/// while a player is on its way.
pub const MAX_REDIRECTS: usize = 3;

/// One client's life in one room.
pub struct Session {
    connection: Connection,
    /// The room and race as seen so far.
    pub state: RaceState,
    name: String,
    store: Store,
    /// After a resume: the room's latest event when the seat was taken back.
    /// Events up to it are history being replayed, applied quietly.
    replay_until: Option<u64>,
    /// The replay just ended with the last message received.
    caught_up: bool,
    /// The server the session was started with, which may have sent it to
    /// another node of its cluster: a reconnection that cannot reach that
    /// node tries this one too, which sends it on to wherever the room is
    /// now (after a failover, say).
    first_server: String,
}

impl Session {
    /// Connects, takes back the saved seat if the config holds one for this
    /// server (and, for `join`, this room), or else enters as `entry` asks
    /// and waits for the room to take us in. Returns the session and the
    /// lines to show so far; a room that refuses us is
    /// [`NetError::NotAdmitted`].
    pub async fn start(
        server: &str,
        name: &str,
        entry: Entry,
        store: Store,
    ) -> Result<(Session, Vec<String>), NetError> {
        let mut connection = Connection::open(server, name).await?;
        let mut notes = Vec::new();
        // A registered player races as itself, so its races are kept as its own.
        if let Some(account) = store.account(server) {
            match crate::account::authenticate(&mut connection, &account, &store).await {
                Ok(()) => notes.push(format!("signed in as {}", account.name)),
                Err(crate::account::AccountError::Net(error)) => return Err(error),
                Err(error) => notes.push(format!("racing unregistered: {error}")),
            }
        }
        let mut session = Session {
            connection,
            state: RaceState::default(),
            name: name.to_string(),
            store,
            replay_until: None,
            first_server: server.to_string(),
            caught_up: false,
        };
        let saved = session.store.load().seat.filter(|seat| {
            seat.server == server
                && match &entry {
                    Entry::Join(code) => seat.code.eq_ignore_ascii_case(code),
                    Entry::Watch(_) => false,
                    _ => true,
                }
        });
        if let Some(saved) = saved {
            let resume = ClientMessage::Resume {
                token: saved.token.clone(),
                last_seq: 0,
            };
            let reply = session.ask(&resume).await?;
            if matches!(reply, ServerMessage::Resumed { .. }) {
                notes.extend(session.absorb(reply));
                return Ok((session, notes));
            }
            notes.push(format!(
                "the race in room {} is no longer open to us",
                saved.code
            ));
            session.forget_seat();
        }
        // The room's answer decides whether there is a session at all: a
        // refusal ends it here, with the server's words, instead of leaving
        // the front end waiting on a room that never comes.
        let mut reply = session.ask(&entry.message()).await?;
        loop {
            match reply {
                ServerMessage::Error { code, message } => {
                    return Err(NetError::NotAdmitted { code, message });
                }
                message => {
                    let joined = matches!(message, ServerMessage::RoomJoined { .. });
                    notes.extend(session.absorb(message));
                    if joined {
                        return Ok((session, notes));
                    }
                }
            }
            reply = session.connection.recv().await?;
        }
    }

    /// Sends `request` and returns the first answer that is not a
    /// `redirect`, following redirects to other nodes (see the module's
    /// doc, and its note on cancel safety).
    async fn ask(&mut self, request: &ClientMessage) -> Result<ServerMessage, NetError> {
        self.connection.send(request).await?;
        let mut hops = 0;
        loop {
            let url = match self.connection.recv().await? {
                ServerMessage::Redirect { url } => url,
                answer => return Ok(answer),
            };
            hops += 1;
            if hops > MAX_REDIRECTS {
                return Err(NetError::TooManyRedirects { hops, url });
            }
            let connection = self.open_redirected(&url).await?;
            let previous = std::mem::replace(&mut self.connection, connection);
            previous.close().await;
            self.connection.send(request).await?;
        }
    }

    /// A connection to the node at `url`, signed in as the account stored
    /// for it if there is one, carrying on the event numbers seen.
    async fn open_redirected(&self, url: &str) -> Result<Connection, NetError> {
        let mut connection = Connection::open(url, &self.name).await?;
        if let Some(account) = self.store.account(url) {
            match crate::account::authenticate(&mut connection, &account, &self.store).await {
                Ok(()) => {}
                Err(crate::account::AccountError::Net(error)) => return Err(error),
                // Racing unregistered there, as `start` does when signing in fails.
                Err(_) => {}
            }
        }
        connection.set_last_seq(self.connection.last_seq());
        Ok(connection)
    }

    /// Sends a message, reconnecting first if the connection dropped.
    pub async fn send(&mut self, message: &ClientMessage) -> Result<(), NetError> {
        match self.connection.send(message).await {
            Ok(()) => Ok(()),
            Err(error) => {
                self.reconnect(error).await?;
                self.connection.send(message).await
            }
        }
    }

    /// The next message, already applied to [`Session::state`], with the
    /// lines to show. Reconnects and resumes while a seat is held.
    pub async fn recv(&mut self) -> Result<(ServerMessage, Vec<String>), NetError> {
        loop {
            match self.connection.recv().await {
                Ok(message) => {
                    let notes = self.absorb(message.clone());
                    return Ok((message, notes));
                }
                Err(error) => {
                    if self.state.closed.is_some() || self.state.result.is_some() {
                        return Err(error);
                    }
                    self.reconnect(error).await?;
                }
            }
        }
    }

    /// Leaves the room (resigning a race) and closes the connection.
    pub async fn leave(mut self) {
        let _ = self.connection.send(&ClientMessage::Leave).await;
        // Wait briefly for the server's `left`, so the resignation lands.
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            while let Ok(message) = self.connection.recv().await {
                if matches!(message, ServerMessage::Left { .. }) {
                    break;
                }
            }
        })
        .await;
        self.forget_seat();
        self.connection.close().await;
    }

    /// Closes the connection, keeping the saved seat if the race goes on.
    pub async fn close(self) {
        self.connection.close().await;
    }

    /// Whether the last message received ended the replay of a resume: the
    /// state is whole again (a front end shows the board then).
    pub fn caught_up(&self) -> bool {
        self.caught_up
    }

    fn absorb(&mut self, message: ServerMessage) -> Vec<String> {
        let token_before = self.state.resume_token.clone();
        let seq = seq_of(&message);
        let resumed = match message {
            ServerMessage::Resumed { seq, .. } => Some(seq),
            _ => None,
        };
        let mut notes = self.state.apply(message, Instant::now());
        self.caught_up = false;
        if let Some(resumed) = resumed {
            self.replay_until = Some(resumed);
        } else if let (Some(until), Some(seq)) = (self.replay_until, seq) {
            // History the resume replays: the state takes it in, people have
            // seen it already.
            notes.clear();
            if seq >= until {
                self.replay_until = None;
                self.caught_up = true;
                notes.push("caught up with the race".into());
            }
        }
        let over = self.state.result.is_some()
            || self.state.closed.is_some()
            || self.state.phase() == Some(Phase::Finished);
        if over {
            self.forget_seat();
        } else if self.state.resume_token != token_before
            && let (Some(token), Some(room)) = (&self.state.resume_token, &self.state.room)
        {
            let seat = SavedSeat {
                server: self.connection.server().to_string(),
                code: room.code.clone(),
                token: token.clone(),
                last_seq: self.connection.last_seq(),
            };
            let name = self.name.clone();
            let _ = self.store.update(|settings| {
                settings.seat = Some(seat);
                settings.name = Some(name);
            });
        }
        notes
    }

    fn forget_seat(&mut self) {
        if self.store.load().seat.is_some() {
            let _ = self.store.update(|settings| settings.seat = None);
        }
    }

    async fn reconnect(&mut self, error: NetError) -> Result<(), NetError> {
        let Some(token) = self.state.resume_token.clone() else {
            return Err(error);
        };
        let mut servers = vec![self.connection.server().to_string()];
        if servers[0] != self.first_server {
            servers.push(self.first_server.clone());
        }
        let last_seq = self.connection.last_seq();
        let mut delay = Duration::from_millis(250);
        let mut last_error = error;
        for attempt in 0..RECONNECT_ATTEMPTS {
            let server = &servers[attempt as usize % servers.len()];
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(4));
            let mut connection = match Connection::open(server, &self.name).await {
                Ok(connection) => connection,
                Err(error) => {
                    last_error = error;
                    continue;
                }
            };
            connection.set_last_seq(last_seq);
            // The old connection is dead; the new one may redirect us to
            // the node the room is on now.
            self.connection = connection;
            let resume = ClientMessage::Resume {
                token: token.clone(),
                last_seq,
            };
            let answer = match self.ask(&resume).await {
                Ok(answer) => answer,
                // A node it was sent to may be the one that went away.
                Err(error) => {
                    last_error = error;
                    continue;
                }
            };
            match answer {
                message @ ServerMessage::Resumed { .. } => {
                    self.absorb(message);
                    return Ok(());
                }
                ServerMessage::Error { message, code } => {
                    self.forget_seat();
                    return Err(NetError::Refused { code, message });
                }
                _ => continue,
            }
        }
        Err(last_error)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A fake server that answers `join_room` with `redirect` to `target`
    /// (its own URL once known, so it sends the client round in circles).
    async fn redirecting(target: Arc<Mutex<String>>) -> (String, crate::fake_server::Received) {
        crate::fake_server::start(move |message| match message {
            ClientMessage::JoinRoom { .. } => vec![ServerMessage::Redirect {
                url: target.lock().map(|url| url.clone()).unwrap_or_default(),
            }],
            _ => Vec::new(),
        })
        .await
    }

    #[tokio::test]
    async fn redirects_are_followed_a_bounded_number_of_times_then_reported() {
        let target = Arc::new(Mutex::new(String::new()));
        let (url, received) = redirecting(Arc::clone(&target)).await;
        *target.lock().expect("not poisoned") = url.clone();
        let outcome =
            Session::start(&url, "ada", Entry::Join("K7PQ3M".into()), Store::none()).await;
        match outcome {
            Err(NetError::TooManyRedirects { hops, url: last }) => {
                assert_eq!((hops, last.as_str()), (MAX_REDIRECTS + 1, url.as_str()));
            }
            Err(other) => panic!("expected too many redirects, got {other}"),
            Ok(_) => panic!("expected too many redirects, got a session"),
        }
        let joins = received
            .lock()
            .expect("not poisoned")
            .iter()
            .filter(|message| matches!(message, ClientMessage::JoinRoom { .. }))
            .count();
        assert_eq!(joins, MAX_REDIRECTS + 1, "the request, then once per hop");
    }

    #[tokio::test]
    async fn a_redirect_is_followed_to_the_node_that_seats_us() {
        // The owner: seats whoever joins.
        let (owner, _) = crate::fake_server::start(|message| match message {
            ClientMessage::JoinRoom { code } => vec![ServerMessage::Error {
                code: patience_shared::protocol::ErrorCode::RoomFull,
                message: format!("room {code} is full"),
            }],
            _ => Vec::new(),
        })
        .await;
        let target = Arc::new(Mutex::new(owner.clone()));
        let (first, _) = redirecting(target).await;
        // The owner's refusal comes back as the session's answer: the
        // request reached it, through the redirect.
        let outcome =
            Session::start(&first, "ada", Entry::Join("K7PQ3M".into()), Store::none()).await;
        match outcome {
            Err(NetError::NotAdmitted { message, .. }) => {
                assert_eq!(message, "room K7PQ3M is full");
            }
            Err(other) => panic!("expected the owner's refusal, got {other}"),
            Ok(_) => panic!("expected the owner's refusal, got a session"),
        }
    }
}
