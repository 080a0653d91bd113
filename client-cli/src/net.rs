//! The protocol client: one WebSocket to the race server, speaking the
//! MessagePack messages of `patience_shared::protocol`.
//!
//! [`Connection`] does the handshake (`hello`, `welcome`), sends
//! [`ClientMessage`]s, and yields [`ServerMessage`]s while keeping the
//! largest room event number seen, which a resume needs. It is used alike by
//! the terminal UI, the `--plain` mode, the bots and the tests.
//! [`Connection::recv`] is cancel-safe, so callers `select!` it against
//! their own input; [`Connection::send`] is not (each public `async fn`
//! says which it is).

use futures::{SinkExt as _, StreamExt as _};
use patience_shared::protocol::{self, ClientMessage, ErrorCode, PROTOCOL_VERSION, ServerMessage};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The server a client talks to when none is given.
pub const DEFAULT_SERVER: &str = "ws://127.0.0.1:7878";

/// Why talking to the server failed.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// Nothing listens at the server's address.
    #[error(
        "no server is listening at {server}; start one with \
         `cargo run --release -p patience-server` (or `patience-server`)"
    )]
    Unreachable {
        /// The URL tried.
        server: String,
    },
    /// The WebSocket could not be opened or broke. The cause is part of the
    /// message, not a `source`, so a chain of causes shows it once.
    #[error("connection to the server failed: {0}")]
    Socket(tokio_tungstenite::tungstenite::Error),
    /// The server closed the connection.
    #[error("the server closed the connection")]
    Closed,
    /// The server sent a frame that is not a message of this protocol.
    #[error("the server sent something unreadable: {0}")]
    Protocol(#[from] protocol::DecodeError),
    /// The server refused the handshake.
    #[error("the server refused us: {message}")]
    Refused {
        /// Its code.
        code: ErrorCode,
        /// Its words.
        message: String,
    },
    /// The server did not let us into the room (no room has the code, the
    /// room is full, its race has started): its words, which name the room.
    #[error("{message}")]
    NotAdmitted {
        /// Its code.
        code: ErrorCode,
        /// Its words.
        message: String,
    },
    /// The room has closed after its race, which the server keeps: its
    /// words say where its results and replay stay
    /// ([`crate::race::closed_room_text`]).
    #[error("{message}")]
    RoomClosed {
        /// The race, for `patience replay`.
        race_id: u64,
        /// What to tell the player.
        message: String,
    },
    /// The server answered the handshake with something else.
    #[error("the server answered hello with {0}")]
    Unexpected(String),
    /// The servers of a cluster sent us from one to another more times
    /// than a client follows (`session::MAX_REDIRECTS`).
    #[error("the servers redirected us {hops} times, the last to {url}; giving up")]
    TooManyRedirects {
        /// Redirects followed.
        hops: usize,
        /// Where the last one pointed.
        url: String,
    },
}

impl From<tokio_tungstenite::tungstenite::Error> for NetError {
    fn from(error: tokio_tungstenite::tungstenite::Error) -> NetError {
        NetError::Socket(error)
    }
}

/// One connection to the race server, past the handshake.
pub struct Connection {
    socket: WebSocketStream<MaybeTlsStream<TcpStream>>,
    last_seq: u64,
    server: String,
}

impl Connection {
    /// Connects to `server` (a `ws://` URL) and says hello as `name`.
    ///
    /// Cancel-safe in effect: dropped early, the half-open connection is
    /// dropped with it and nothing was asked of the server yet.
    pub async fn open(server: &str, name: &str) -> Result<Connection, NetError> {
        let (socket, _) = tokio_tungstenite::connect_async(server)
            .await
            .map_err(|error| match error {
                tokio_tungstenite::tungstenite::Error::Io(io)
                    if io.kind() == std::io::ErrorKind::ConnectionRefused =>
                {
                    NetError::Unreachable {
                        server: server.to_string(),
                    }
                }
                other => NetError::Socket(other),
            })?;
        let mut connection = Connection {
            socket,
            last_seq: 0,
            server: server.to_string(),
        };
        connection
            .send(&ClientMessage::Hello {
                version: PROTOCOL_VERSION,
                name: name.to_string(),
            })
            .await?;
        match connection.recv().await? {
            ServerMessage::Welcome { .. } => Ok(connection),
            ServerMessage::Error { code, message } => Err(NetError::Refused { code, message }),
            other => Err(NetError::Unexpected(message_name(&other).to_string())),
        }
    }

    /// The URL this connection went to.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The largest room event number seen on this connection, or given by
    /// [`Connection::set_last_seq`].
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Carries the event number over from an earlier connection (for resume).
    pub fn set_last_seq(&mut self, seq: u64) {
        self.last_seq = seq;
    }

    /// Sends one message.
    ///
    /// Not cancel-safe: dropped midway, the frame may be half written, and
    /// the connection must be dropped too. `crate::session` never cancels it.
    pub async fn send(&mut self, message: &ClientMessage) -> Result<(), NetError> {
        self.socket
            .send(Message::Binary(protocol::encode(message).into()))
            .await?;
        Ok(())
    }

    /// Sends a move in notation. Not cancel-safe, as [`Connection::send`].
    pub async fn send_move(&mut self, text: &str) -> Result<(), NetError> {
        self.send(&ClientMessage::Move {
            text: text.to_string(),
            seat: None,
        })
        .await
    }

    /// The next message from the server.
    ///
    /// Cancel-safe: dropped before it returns, no frame was taken.
    pub async fn recv(&mut self) -> Result<ServerMessage, NetError> {
        loop {
            match self.socket.next().await {
                Some(Ok(Message::Binary(bytes))) => {
                    let message = protocol::decode_server(&bytes)?;
                    if let Some(seq) = seq_of(&message) {
                        self.last_seq = self.last_seq.max(seq);
                    }
                    return Ok(message);
                }
                Some(Ok(Message::Close(_))) | None => return Err(NetError::Closed),
                // Pings are answered by tungstenite as the stream is read.
                Some(Ok(_)) => {}
                Some(Err(error)) => return Err(error.into()),
            }
        }
    }

    /// Closes the connection politely. Cancel-safe in effect: dropped
    /// early, the connection is dropped, which closes it too.
    pub async fn close(mut self) {
        self.close_in_place().await;
    }

    /// Closes the connection politely, for an owner that keeps it (a
    /// closed connection's `recv` fails). Cancel-safe in effect, as
    /// [`Connection::close`].
    pub async fn close_in_place(&mut self) {
        let _ = self.socket.close(None).await;
    }
}

/// The `seq` of a room event, `None` for replies that change nothing.
pub fn seq_of(message: &ServerMessage) -> Option<u64> {
    match *message {
        ServerMessage::RoomJoined { seq, .. }
        | ServerMessage::RoomUpdate { seq, .. }
        | ServerMessage::Countdown { seq, .. }
        | ServerMessage::RaceStarted { seq, .. }
        | ServerMessage::MoveAccepted { seq, .. }
        | ServerMessage::Progress { seq, .. }
        | ServerMessage::Finished { seq, .. }
        | ServerMessage::Stuck { seq }
        | ServerMessage::RaceEnded { seq, .. }
        | ServerMessage::Snapshot { seq, .. }
        | ServerMessage::Resumed { seq, .. }
        | ServerMessage::RematchOffer { seq, .. }
        | ServerMessage::RematchReady { seq, .. } => Some(seq),
        _ => None,
    }
}

/// The wire name of a message, for error messages and logs.
pub fn message_name(message: &ServerMessage) -> &'static str {
    match message {
        ServerMessage::Welcome { .. } => "welcome",
        ServerMessage::Error { .. } => "error",
        ServerMessage::RoomJoined { .. } => "room_joined",
        ServerMessage::RoomClosed { .. } => "room_closed",
        ServerMessage::RoomUpdate { .. } => "room_update",
        ServerMessage::Countdown { .. } => "countdown",
        ServerMessage::RaceStarted { .. } => "race_started",
        ServerMessage::MoveAccepted { .. } => "move_accepted",
        ServerMessage::MoveRejected { .. } => "move_rejected",
        ServerMessage::Progress { .. } => "progress",
        ServerMessage::Finished { .. } => "finished",
        ServerMessage::Stuck { .. } => "stuck",
        ServerMessage::RaceEnded { .. } => "race_ended",
        ServerMessage::Snapshot { .. } => "snapshot",
        ServerMessage::Resumed { .. } => "resumed",
        ServerMessage::Left { .. } => "left",
        ServerMessage::ShuttingDown { .. } => "shutting_down",
        ServerMessage::Redirect { .. } => "redirect",
        ServerMessage::Registered { .. } => "registered",
        ServerMessage::Authenticated { .. } => "authenticated",
        ServerMessage::DailyStarted { .. } => "daily_started",
        ServerMessage::DailyFinished { .. } => "daily_finished",
        ServerMessage::LeaderboardPage { .. } => "leaderboard_page",
        ServerMessage::ReplayData { .. } => "replay_data",
        ServerMessage::AttemptReplay { .. } => "attempt_replay",
        ServerMessage::LeaderboardUpdate { .. } => "leaderboard_update",
        ServerMessage::DaysPage { .. } => "days_page",
        ServerMessage::PlayerRecord { .. } => "player_record",
        ServerMessage::StandingsPage { .. } => "standings_page",
        ServerMessage::BoardsReplay { .. } => "boards_replay",
        ServerMessage::SignInCode { .. } => "sign_in_code",
        ServerMessage::SignedIn { .. } => "signed_in",
        ServerMessage::SignedOut => "signed_out",
        ServerMessage::LobbyPage { .. } => "lobby_page",
        ServerMessage::RematchOffer { .. } => "rematch_offer",
        ServerMessage::RematchReady { .. } => "rematch_ready",
        ServerMessage::QuickRaceWait { .. } => "quick_race_wait",
        ServerMessage::RatingsPage { .. } => "ratings_page",
        ServerMessage::RatingHistoryPage { .. } => "rating_history_page",
    }
}
