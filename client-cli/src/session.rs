//! An online session: connect (signed in as the account stored for the
//! server, if any), take back a saved seat or enter a room, keep the resume
//! token in the config directory, and reconnect after a drop.
//!
//! Layout: [`Session::start`] opens the connection and enters the room;
//! from then on the connection belongs to a task of its own (a `Link`),
//! which reads the server, applies each message to its copy of the
//! [`RaceState`], saves the rotated resume token, and reconnects and
//! resumes after a drop (or a resumable kick: `too_slow`, `idle_timeout`,
//! or the server stopping mid-race, which keeps the race: `shutting_down`)
//! with nobody asking it to; a watcher sends `spectate` again instead. It
//! tries on a `ReconnectSchedule`: for the seat's grace period after the
//! drop, and on while the server is seen restarting, with each failed try
//! a line for the front end. The front end talks to it through two bounded
//! channels: [`Session::send`] queues a message, [`Session::recv`] takes
//! the next message with its lines and applies it to [`Session::state`],
//! and [`Session::take_connection_notes`] the lines about the connection.
//!
//! A seat is taken back by [`Session::start`] only for `join` with the code
//! of the saved seat: the front end asks before any other command takes
//! the seat's place (`crate::app`). A session keeps its seat in one of two
//! places ([`SeatSlot`]): the player's, or the bot's that `play --bot`
//! started beside it, so both come back after a restart.
//!
//! A server of a cluster may answer `join_room`, `spectate`, `resume` or
//! `quick_race` with `redirect`: the room is on another node. The session
//! follows it transparently (connect to the URL, `hello`, sign in if an
//! account is stored for that URL, send the same request again), at most
//! [`MAX_REDIRECTS`] times for one request, then fails with
//! [`NetError::TooManyRedirects`]. The seat saved after that names the
//! node the room is on, so a reconnection goes straight there.
//!
//! Cancel safety: [`Session::recv`] and [`Session::send`] are cancel-safe,
//! so a front end may `select!` them against its input and its clock: the
//! reconnection runs in the link's task, which nothing cancels but the
//! runtime's end (a process that exits mid-resume loses that resume's new
//! token). [`Session::leave`] and [`Session::close`] hand their work to the
//! link too, so dropped early it still happens. Only [`Session::start`]
//! (and [`Session::start_in_slot`]) is not: dropped between sending a request and
//! reading its answer (a join, a resume, a hop of a redirect), the
//! connection is dropped with it, and a seat it took is held for the grace
//! period with its token lost, or a resume's new token is lost. Let it run
//! to the end; a caller that needs a time limit wraps the whole call and
//! accepts that loss. Each hop is one connection attempt and one answer,
//! neither with a time limit of its own.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use patience_shared::bot::BotLevel;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    BotSeat, ClientMessage, ErrorCode, Phase, RoomOptions, ServerMessage,
};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant as TokioInstant;

use crate::config::{SavedSeat, Settings, Store};
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
        /// Seats for bots the server runs.
        bots: Vec<BotSeat>,
    },
    /// A room by its code: takes back the saved seat if it is in this room.
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
                bots,
            } => ClientMessage::CreateRoom {
                game,
                max_players: players,
                public,
                options,
                bots,
            },
            Entry::Join(code) => ClientMessage::JoinRoom { code },
            Entry::Watch(code) => ClientMessage::Spectate { code },
        }
    }
}

/// Where a session keeps its seat in the settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeatSlot {
    /// The player's own seat ([`Settings::seat`]).
    Player,
    /// The seat of a bot started by `play --bot` ([`Settings::bot_seat`]),
    /// racing one move per `pace_ms` milliseconds at `level`.
    Bot {
        /// The bot's pace, saved with its seat.
        pace_ms: u64,
        /// The bot's level, saved with its seat.
        level: BotLevel,
    },
}

impl SeatSlot {
    fn of(self, settings: &mut Settings) -> &mut Option<SavedSeat> {
        match self {
            SeatSlot::Player => &mut settings.seat,
            SeatSlot::Bot { .. } => &mut settings.bot_seat,
        }
    }

    /// The seat saved in this slot.
    pub fn load(self, store: &Store) -> Option<SavedSeat> {
        self.of(&mut store.load()).take()
    }
}

/// The wait before the first reconnection try; it doubles up to
/// [`RECONNECT_MAX_DELAY`].
const RECONNECT_FIRST_DELAY: Duration = Duration::from_millis(250);

/// The longest wait between two reconnection tries.
const RECONNECT_MAX_DELAY: Duration = Duration::from_secs(4);

/// How long the link keeps trying after the connection is lost: the
/// server's grace period (60 s unless its operator changed it), for which
/// it holds a dropped player's seat.
const RECONNECT_WINDOW: Duration = Duration::from_secs(60);

/// The longest the link keeps trying in all. A server that is seen
/// restarting (nothing listens at its address, or it says it is stopping)
/// holds every running race's seats until a grace period after it is back,
/// however long it was away, so each such try moves the end of the
/// [`RECONNECT_WINDOW`] on; a server away longer than this is not coming
/// back soon, and a person is told how to take the seat back later.
const RECONNECT_LONGEST: Duration = Duration::from_secs(10 * 60);

/// When the link tries to reconnect and when it gives up: waits from
/// [`RECONNECT_FIRST_DELAY`] doubling to [`RECONNECT_MAX_DELAY`], for
/// [`RECONNECT_WINDOW`] after the connection was lost or after the last
/// try that found the server restarting, whichever ends later, never
/// longer than [`RECONNECT_LONGEST`] in all. Sans I/O: the time is an
/// argument (tokio's clock, so tests may pause it).
#[derive(Clone, Debug)]
struct ReconnectSchedule {
    lost_at: TokioInstant,
    /// The window ends here unless a try finds the server restarting.
    window_ends: TokioInstant,
    tries: u32,
    delay: Duration,
}

impl ReconnectSchedule {
    fn new(lost_at: TokioInstant) -> ReconnectSchedule {
        ReconnectSchedule {
            lost_at,
            window_ends: lost_at + RECONNECT_WINDOW,
            tries: 0,
            delay: RECONNECT_FIRST_DELAY,
        }
    }

    /// The wait before the next try, counted from `now`; `None` when that
    /// try would come after the window: time to give up.
    fn next_wait(&mut self, now: TokioInstant) -> Option<Duration> {
        let wait = self.delay;
        let ends = self.window_ends.min(self.lost_at + RECONNECT_LONGEST);
        if now + wait > ends {
            return None;
        }
        self.tries += 1;
        self.delay = (self.delay * 2).min(RECONNECT_MAX_DELAY);
        Some(wait)
    }

    /// A try failed at `now`; `server_restarting` when it found the server
    /// away or stopping, which means the seat is not counting down.
    fn failed(&mut self, now: TokioInstant, server_restarting: bool) {
        if server_restarting {
            self.window_ends = self.window_ends.max(now + RECONNECT_WINDOW);
        }
    }

    /// Tries made so far (counting the one under way).
    fn tries(&self) -> u32 {
        self.tries
    }
}

/// Whether a failed reconnection try found the server away or stopping
/// (see [`ReconnectSchedule::failed`]): nothing listens at its address, or
/// it refused us because it is shutting down.
fn server_restarting(error: &NetError) -> bool {
    matches!(
        error,
        NetError::Unreachable { .. }
            | NetError::Refused {
                code: ErrorCode::ShuttingDown,
                ..
            }
    )
}

/// Whether a server's answer to `resume` or `spectate` may change if asked
/// again: it is stopping, busy, or its store is out of reach for now.
fn worth_asking_again(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::ShuttingDown
            | ErrorCode::ServerFull
            | ErrorCode::RateLimited
            | ErrorCode::Internal
    )
}

/// A failed try in a few words, for the line that says so.
fn brief(error: &NetError) -> String {
    match error {
        NetError::Unreachable { server } => format!("nothing listens at {server} yet"),
        other => other.to_string(),
    }
}

/// Room for messages each way between the front end and the link: a
/// person's keys and a room's events fit many times over.
const CHANNEL_CAPACITY: usize = 64;

/// Redirects followed for one request before giving up: a room is on one
/// node, so one hop suffices but for quick races, whose rooms can fill
/// while a player is on its way.
pub const MAX_REDIRECTS: usize = 3;

/// One client's life in one room, as its front end holds it.
pub struct Session {
    /// The room and race as seen so far.
    pub state: RaceState,
    /// The last message received ended the replay of a resume.
    caught_up: bool,
    /// The seat was taken back (not entered anew) by [`Session::start`].
    resumed: bool,
    /// Lines about the connection itself (lost, reconnecting) not yet
    /// taken by [`Session::take_connection_notes`].
    connection_notes: Vec<String>,
    commands: mpsc::Sender<Command>,
    events: mpsc::Receiver<LinkEvent>,
}

/// What the front end asks of the link.
enum Command {
    /// Send this message (after reconnecting, if need be).
    Send(ClientMessage),
    /// Leave the room (resigning a race), forget the seat, close; then say so.
    Leave(oneshot::Sender<()>),
    /// Close the connection, keeping the seat; then say so.
    Close(oneshot::Sender<()>),
}

/// How one reconnection try failed.
enum TryFailed {
    /// Worth another try: the server is away, busy or stopping.
    ForNow(NetError),
    /// The server said no for good: the seat or the room is gone.
    ForGood(NetError),
}

/// What the link tells the front end.
enum LinkEvent {
    /// A message, applied to the link's state, and whether it ended the
    /// replay of a resume.
    Message {
        /// Boxed: a room's messages are far larger than the other events.
        message: Box<ServerMessage>,
        notes: Vec<String>,
        caught_up: bool,
    },
    /// A line about the connection.
    Note(String),
    /// The connection is gone for good; the link has ended.
    Failed(NetError),
}

/// The connection and everything needed to keep it: owned by
/// [`Session::start`] while it enters the room, then by the link's task.
struct Link {
    connection: Connection,
    /// The room and race as the link sees them: its resume token, whether
    /// the race is over.
    state: RaceState,
    name: String,
    store: Store,
    slot: SeatSlot,
    /// After a resume: the room's latest event when the seat was taken back.
    /// Events up to it are history being replayed, applied quietly.
    replay_until: Option<u64>,
    /// The server the session was started with, which may have sent it to
    /// another node of its cluster: a reconnection that cannot reach that
    /// node tries this one too, which sends it on to wherever the room is
    /// now (after a failover, say).
    first_server: String,
    /// Commands taken from the channel while the link waited to hand the
    /// front end an event, or while it reconnected: done next, in order.
    pending: VecDeque<Command>,
    /// The room's code when the session watches it: a watcher has no seat
    /// to resume, and watches again after a drop.
    watching: Option<String>,
    /// The token of the seat of a rematch every racer accepted, until the
    /// link takes it (leaving the finished room).
    rematch_token: Option<String>,
}

impl Session {
    /// Connects, takes back the seat saved in `slot` if `entry` joins its
    /// room on this server, or else enters as `entry` asks and waits for the
    /// room to take us in; then hands the connection to the link's task.
    /// Returns the session and the lines to show so far; a room that
    /// refuses us is [`NetError::NotAdmitted`]. The seat is the player's
    /// ([`SeatSlot::Player`]); see [`Session::start_in_slot`].
    ///
    /// Not cancel-safe: see the module's doc.
    pub async fn start(
        server: &str,
        name: &str,
        entry: Entry,
        store: Store,
    ) -> Result<(Session, Vec<String>), NetError> {
        Session::start_in_slot(server, name, entry, store, SeatSlot::Player).await
    }

    /// [`Session::start`], keeping the seat in `slot`.
    ///
    /// Not cancel-safe: see the module's doc.
    pub async fn start_in_slot(
        server: &str,
        name: &str,
        entry: Entry,
        store: Store,
        slot: SeatSlot,
    ) -> Result<(Session, Vec<String>), NetError> {
        let mut connection = Connection::open(server, name).await?;
        let mut notes = Vec::new();
        // A registered player races as itself, so its races are kept as its
        // own; a bot races unregistered.
        if let (SeatSlot::Player, Some(account)) = (slot, store.account(server)) {
            match crate::account::authenticate(&mut connection, &account, &store).await {
                Ok(()) => notes.push(format!("signed in as {}", account.name)),
                Err(crate::account::AccountError::Net(error)) => return Err(error),
                Err(error) => notes.push(format!("racing unregistered: {error}")),
            }
        }
        let mut link = Link {
            connection,
            state: RaceState::on_server(server),
            name: name.to_string(),
            store,
            slot,
            replay_until: None,
            first_server: server.to_string(),
            pending: VecDeque::new(),
            watching: match &entry {
                Entry::Watch(code) => Some(code.clone()),
                _ => None,
            },
            rematch_token: None,
        };
        let saved = slot.load(&link.store).filter(|seat| {
            seat.server == server
                && matches!(&entry, Entry::Join(code) if seat.code.eq_ignore_ascii_case(code))
        });
        let mut resumed = false;
        let mut caught_up = false;
        if let Some(saved) = saved {
            let resume = ClientMessage::Resume {
                token: saved.token.clone(),
                last_seq: 0,
            };
            let reply = link.ask(&resume).await?;
            if matches!(reply, ServerMessage::Resumed { .. }) {
                let (more, _) = link.absorb(reply);
                notes.extend(more);
                resumed = true;
            } else {
                notes.push(format!(
                    "the race in room {} is no longer open to us",
                    saved.code
                ));
                link.forget_seat();
            }
        }
        if !resumed {
            // The room's answer decides whether there is a session at all: a
            // refusal ends it here, with the server's words, instead of
            // leaving the front end waiting on a room that never comes.
            let mut reply = link.ask(&entry.message()).await?;
            loop {
                match reply {
                    ServerMessage::Error { code, message } => {
                        return Err(NetError::NotAdmitted { code, message });
                    }
                    ServerMessage::RoomClosed { code, race_id } => {
                        let page = crate::race::page_address(server)
                            .map(|address| format!("{address}/race/{race_id}"));
                        let message =
                            crate::race::closed_room_text(&code, race_id, page.as_deref());
                        return Err(NetError::RoomClosed { race_id, message });
                    }
                    message => {
                        let joined = matches!(message, ServerMessage::RoomJoined { .. });
                        let (more, replayed) = link.absorb(message);
                        notes.extend(more);
                        caught_up = replayed;
                        if joined {
                            break;
                        }
                    }
                }
                reply = link.connection.recv().await?;
            }
        }
        let state = link.state.clone();
        let (commands, command_receiver) = mpsc::channel(CHANNEL_CAPACITY);
        let (event_sender, events) = mpsc::channel(CHANNEL_CAPACITY);
        tokio::spawn(link.run(command_receiver, event_sender));
        let session = Session {
            state,
            caught_up,
            resumed,
            connection_notes: Vec::new(),
            commands,
            events,
        };
        Ok((session, notes))
    }

    /// Queues a message for the server; the link sends it, reconnecting
    /// first if the connection dropped. An error means the link has ended
    /// (the connection is gone for good, see [`Session::recv`]).
    ///
    /// Cancel-safe: dropped before it returns, the message was not queued.
    pub async fn send(&mut self, message: &ClientMessage) -> Result<(), NetError> {
        self.commands
            .send(Command::Send(message.clone()))
            .await
            .map_err(|_| NetError::Closed)
    }

    /// The next message, already applied to [`Session::state`], with the
    /// lines to show. The link reconnects and resumes by itself while a
    /// seat is held, meanwhile keeping lines about it for
    /// [`Session::take_connection_notes`]; an error means it could not, or
    /// the race is over and the server closed.
    ///
    /// Cancel-safe: dropped before it returns, no message was taken (lines
    /// about the connection it read are kept); the reconnection it may be
    /// waiting on goes on in the link's task.
    pub async fn recv(&mut self) -> Result<(ServerMessage, Vec<String>), NetError> {
        loop {
            match self.events.recv().await {
                Some(LinkEvent::Message {
                    message,
                    notes,
                    caught_up,
                }) => {
                    self.state.apply((*message).clone(), Instant::now());
                    self.caught_up = caught_up;
                    return Ok((*message, notes));
                }
                Some(LinkEvent::Note(note)) => self.connection_notes.push(note),
                Some(LinkEvent::Failed(error)) => return Err(error),
                None => return Err(NetError::Closed),
            }
        }
    }

    /// Lines about the connection (lost, reconnecting) read by
    /// [`Session::recv`] since the last call: a front end shows them while
    /// it waits, as `recv` returns only with a message.
    pub fn take_connection_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.connection_notes)
    }

    /// Leaves the room (resigning a race), forgets the seat and closes the
    /// connection, waiting up to 2 s for the server's `left`.
    ///
    /// Cancel-safe in effect: dropped early, the leave goes on in the
    /// link's task while the runtime runs; only the wait for it is lost.
    pub async fn leave(self) {
        let (done, finished) = oneshot::channel();
        if self.commands.send(Command::Leave(done)).await.is_ok() {
            let _ = finished.await;
        }
    }

    /// Closes the connection, keeping the saved seat if the race goes on.
    ///
    /// Cancel-safe in effect, as [`Session::leave`].
    pub async fn close(self) {
        let (done, finished) = oneshot::channel();
        if self.commands.send(Command::Close(done)).await.is_ok() {
            let _ = finished.await;
        }
    }

    /// Whether the last message received ended the replay of a resume: the
    /// state is whole again (a front end shows the board then).
    pub fn caught_up(&self) -> bool {
        self.caught_up
    }

    /// Whether [`Session::start`] took a saved seat back.
    pub fn resumed(&self) -> bool {
        self.resumed
    }
}

impl Link {
    /// Sends `request` and returns the first answer that is not a
    /// `redirect`, following redirects to other nodes (see the module's
    /// doc). Not cancel-safe, and never cancelled: only `start` and the
    /// link's task call it.
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
        if let (SeatSlot::Player, Some(account)) = (self.slot, self.store.account(url)) {
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

    /// Whether the race is over for this session: nothing left to resume.
    fn over(&self) -> bool {
        self.state.result.is_some()
            || self.state.closed.is_some()
            || self.state.phase() == Some(Phase::Finished)
    }

    /// The link's task: reads the server and the front end's commands until
    /// the front end leaves, closes or goes away, or the connection is lost
    /// for good.
    async fn run(mut self, mut commands: mpsc::Receiver<Command>, events: mpsc::Sender<LinkEvent>) {
        loop {
            let step = match self.pending.pop_front() {
                Some(command) => Some(Ok(command)),
                None => tokio::select! {
                    command = commands.recv() => command.map(Ok),
                    received = self.connection.recv() => Some(Err(received)),
                },
            };
            let outcome = match step {
                // The front end is gone (dropped without a word): keep the seat.
                None => {
                    self.connection.close_in_place().await;
                    return;
                }
                Some(Ok(Command::Send(message))) => match self.connection.send(&message).await {
                    Ok(()) => Ok(()),
                    Err(error) => match self.reconnect(error, &mut commands, &events).await {
                        Ok(()) => self.connection.send(&message).await,
                        Err(error) => Err(error),
                    },
                },
                Some(Ok(Command::Leave(done))) => {
                    self.leave().await;
                    let _ = done.send(());
                    return;
                }
                Some(Ok(Command::Close(done))) => {
                    self.connection.close_in_place().await;
                    let _ = done.send(());
                    return;
                }
                Some(Err(Ok(message))) => {
                    let (notes, caught_up) = self.absorb(message.clone());
                    let event = LinkEvent::Message {
                        message: Box::new(message),
                        notes,
                        caught_up,
                    };
                    if !self.deliver(event, &mut commands, &events).await {
                        self.connection.close_in_place().await;
                        return;
                    }
                    match self.rematch_token.take() {
                        Some(token) => self.take_rematch_seat(token).await,
                        None => Ok(()),
                    }
                }
                Some(Err(Err(error))) if self.over() => Err(error),
                Some(Err(Err(error))) => self.reconnect(error, &mut commands, &events).await,
            };
            if let Err(error) = outcome {
                // A leave or close asked for while reconnecting is done
                // as well as a dead connection allows.
                while let Some(command) = self.pending.pop_front() {
                    match command {
                        Command::Send(_) => {}
                        Command::Leave(done) => {
                            self.forget_seat();
                            let _ = done.send(());
                            return;
                        }
                        Command::Close(done) => {
                            let _ = done.send(());
                            return;
                        }
                    }
                }
                let _ = self
                    .deliver(LinkEvent::Failed(error), &mut commands, &events)
                    .await;
                return;
            }
        }
    }

    /// Hands `event` to the front end, taking its commands meanwhile so
    /// that neither waits on the other with both channels full. Returns
    /// false when the front end is gone.
    async fn deliver(
        &mut self,
        event: LinkEvent,
        commands: &mut mpsc::Receiver<Command>,
        events: &mpsc::Sender<LinkEvent>,
    ) -> bool {
        let mut sending = std::pin::pin!(events.send(event));
        loop {
            tokio::select! {
                sent = &mut sending => return sent.is_ok(),
                command = commands.recv() => match command {
                    Some(command) => self.pending.push_back(command),
                    None => return false,
                },
            }
        }
    }

    /// Applies a message to the link's state, saves or forgets the seat,
    /// and returns the lines to show and whether it ended the replay of a
    /// resume.
    fn absorb(&mut self, message: ServerMessage) -> (Vec<String>, bool) {
        let token_before = self.state.resume_token.clone();
        let seq = seq_of(&message);
        let rematch_seat = match &message {
            ServerMessage::RematchReady {
                code, resume_token, ..
            } => Some((code.clone(), resume_token.clone())),
            _ => None,
        };
        let resumed = match message {
            ServerMessage::Resumed { seq, .. } => Some(seq),
            _ => None,
        };
        if let ServerMessage::RoomJoined { seq, .. } = &message {
            // A quick racer moved to a rival's room: its events are
            // numbered afresh, and a resume asks from there.
            self.connection.set_last_seq(*seq);
        }
        let mut notes = self.state.apply(message, Instant::now());
        let mut caught_up = false;
        if let Some(resumed) = resumed {
            self.replay_until = Some(resumed);
        } else if let (Some(until), Some(seq)) = (self.replay_until, seq) {
            // History the resume replays: the state takes it in, people have
            // seen it already.
            notes.clear();
            if seq >= until {
                self.replay_until = None;
                caught_up = true;
                notes.push("caught up with the race".into());
            }
        }
        if let Some((code, token)) = rematch_seat {
            // The rematch's seat: out of the finished room, into the new
            // one, whose events are numbered afresh.
            notes.push(format!("taking the rematch's seat in room {code}"));
            self.rematch_token = Some(token);
        }
        if self.over() {
            self.forget_seat();
        } else if self.state.resume_token != token_before
            && let (Some(token), Some(room)) = (&self.state.resume_token, &self.state.room)
        {
            let seat = SavedSeat {
                server: self.connection.server().to_string(),
                code: room.code.clone(),
                token: token.clone(),
                last_seq: self.connection.last_seq(),
                game: Some(room.game),
                pace_ms: match self.slot {
                    SeatSlot::Player => None,
                    SeatSlot::Bot { pace_ms, .. } => Some(pace_ms),
                },
                level: match self.slot {
                    SeatSlot::Player => None,
                    SeatSlot::Bot { level, .. } => Some(level),
                },
            };
            let (name, slot) = (self.name.clone(), self.slot);
            let _ = self.store.update(|settings| {
                *slot.of(settings) = Some(seat);
                if slot == SeatSlot::Player {
                    settings.name = Some(name);
                }
            });
        }
        (notes, caught_up)
    }

    /// Leaves the finished room and takes the rematch's seat with its
    /// token: the server answers `left`, then `resumed` in the new room.
    async fn take_rematch_seat(&mut self, token: String) -> Result<(), NetError> {
        self.connection.send(&ClientMessage::Leave).await?;
        // The new room numbers its events from the start.
        self.connection.set_last_seq(0);
        self.connection
            .send(&ClientMessage::Resume { token, last_seq: 0 })
            .await
    }

    fn forget_seat(&mut self) {
        // A watcher took no seat: the one saved is another room's.
        if self.watching.is_some() {
            return;
        }
        let slot = self.slot;
        if slot.load(&self.store).is_some() {
            let _ = self.store.update(|settings| *slot.of(settings) = None);
        }
    }

    /// Leaves the room and closes, waiting up to 2 s for `left` so the
    /// resignation lands.
    async fn leave(&mut self) {
        let _ = self.connection.send(&ClientMessage::Leave).await;
        let connection = &mut self.connection;
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            while let Ok(message) = connection.recv().await {
                if matches!(message, ServerMessage::Left { .. }) {
                    break;
                }
            }
        })
        .await;
        self.forget_seat();
        self.connection.close_in_place().await;
    }

    /// Reconnects and resumes the seat (or, for a watcher, watches
    /// again), telling the front end each try that fails, on the
    /// [`ReconnectSchedule`]. Commands that come meanwhile wait in
    /// `pending`; a leave or a close among them stops the tries.
    async fn reconnect(
        &mut self,
        error: NetError,
        commands: &mut mpsc::Receiver<Command>,
        events: &mpsc::Sender<LinkEvent>,
    ) -> Result<(), NetError> {
        let request = match (&self.state.resume_token, &self.watching) {
            (Some(token), _) => ClientMessage::Resume {
                token: token.clone(),
                last_seq: self.connection.last_seq(),
            },
            (None, Some(code)) => ClientMessage::Spectate { code: code.clone() },
            (None, None) => return Err(error),
        };
        let note = if self.state.server_restarting {
            "reconnecting while the server restarts…".to_string()
        } else {
            format!("connection lost ({error}); reconnecting…")
        };
        if !self.deliver(LinkEvent::Note(note), commands, events).await {
            return Err(error);
        }
        let mut servers = vec![self.connection.server().to_string()];
        if servers[0] != self.first_server {
            servers.push(self.first_server.clone());
        }
        let last_seq = self.connection.last_seq();
        let mut schedule = ReconnectSchedule::new(TokioInstant::now());
        if self.state.server_restarting {
            schedule.failed(TokioInstant::now(), true);
        }
        let mut last_error = error;
        loop {
            let Some(wait) = schedule.next_wait(TokioInstant::now()) else {
                return Err(self.give_up(last_error, &schedule, commands, events).await);
            };
            let server = servers[schedule.tries() as usize % servers.len()].clone();
            if !self.wait(wait, commands).await {
                return Err(last_error);
            }
            let error = match self.try_once(&server, &request, last_seq).await {
                Ok(message) => {
                    let (notes, caught_up) = self.absorb(message.clone());
                    let event = LinkEvent::Message {
                        message: Box::new(message),
                        notes,
                        caught_up,
                    };
                    if !self.deliver(event, commands, events).await {
                        return Err(NetError::Closed);
                    }
                    return Ok(());
                }
                Err(TryFailed::ForGood(error)) => return Err(error),
                Err(TryFailed::ForNow(error)) => error,
            };
            schedule.failed(TokioInstant::now(), server_restarting(&error));
            let note = match schedule.clone().next_wait(TokioInstant::now()) {
                Some(next) => format!(
                    "reconnecting: try {} failed ({}); next try in {:.1} s",
                    schedule.tries(),
                    brief(&error),
                    next.as_secs_f64()
                ),
                None => format!(
                    "reconnecting: try {} failed ({})",
                    schedule.tries(),
                    brief(&error)
                ),
            };
            if !self.deliver(LinkEvent::Note(note), commands, events).await {
                return Err(error);
            }
            last_error = error;
        }
    }

    /// One reconnection try: connects to `server` (following redirects)
    /// and sends `request`; the answer that takes us back in.
    async fn try_once(
        &mut self,
        server: &str,
        request: &ClientMessage,
        last_seq: u64,
    ) -> Result<ServerMessage, TryFailed> {
        let mut connection = Connection::open(server, &self.name)
            .await
            .map_err(TryFailed::ForNow)?;
        connection.set_last_seq(last_seq);
        // The old connection is dead; the new one may redirect us to the
        // node the room is on now.
        self.connection = connection;
        // A node it was sent to may be the one that went away.
        let answer = self.ask(request).await.map_err(TryFailed::ForNow)?;
        match answer {
            message @ (ServerMessage::Resumed { .. } | ServerMessage::RoomJoined { .. }) => {
                Ok(message)
            }
            ServerMessage::Error { code, message } if worth_asking_again(code) => {
                Err(TryFailed::ForNow(NetError::Refused { code, message }))
            }
            ServerMessage::Error { code, message } => {
                // The seat is gone (given up, or the race was not kept), or
                // the room is: nothing to come back to.
                self.forget_seat();
                Err(TryFailed::ForGood(NetError::Refused { code, message }))
            }
            other => Err(TryFailed::ForNow(NetError::Unexpected(
                crate::net::message_name(&other).to_string(),
            ))),
        }
    }

    /// Stops trying: tells the front end where that leaves the seat, and
    /// returns the error the session ends with.
    async fn give_up(
        &mut self,
        last_error: NetError,
        schedule: &ReconnectSchedule,
        commands: &mut mpsc::Receiver<Command>,
        events: &mpsc::Sender<LinkEvent>,
    ) -> NetError {
        let seconds = TokioInstant::now()
            .saturating_duration_since(schedule.lost_at)
            .as_secs();
        let mut note = format!(
            "gave up reconnecting after {} tries in {seconds} s",
            schedule.tries()
        );
        if let (Some(_), Some(room)) = (&self.state.resume_token, &self.state.room) {
            note.push_str(&format!(
                "; the seat is kept while the server holds it: `patience join {}` takes it back",
                room.code
            ));
        }
        let _ = self.deliver(LinkEvent::Note(note), commands, events).await;
        last_error
    }

    /// Waits `delay`, keeping the front end's commands; false when one of
    /// them is a leave or a close (or the front end is gone), which ends
    /// the reconnection.
    async fn wait(&mut self, delay: Duration, commands: &mut mpsc::Receiver<Command>) -> bool {
        let mut sleep = std::pin::pin!(tokio::time::sleep(delay));
        loop {
            tokio::select! {
                () = &mut sleep => return true,
                command = commands.recv() => match command {
                    Some(command) => {
                        let stops = !matches!(command, Command::Send(_));
                        self.pending.push_back(command);
                        if stops {
                            return false;
                        }
                    }
                    None => return false,
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::fake_server::Reply;

    /// Follows the [`ReconnectSchedule`] through a lost connection whose
    /// tries all fail, each finding the server restarting while less than
    /// `restarting_for` has passed since the loss: checks the time of the
    /// last try and the number of tries.
    fn check(restarting_for: Duration, last_try: Duration, tries: u32) {
        let lost_at = TokioInstant::from_std(std::time::Instant::now());
        let mut schedule = ReconnectSchedule::new(lost_at);
        let mut now = lost_at;
        let mut times = Vec::new();
        while let Some(wait) = schedule.next_wait(now) {
            now += wait;
            times.push(now - lost_at);
            schedule.failed(now, now - lost_at < restarting_for);
        }
        assert_eq!(
            (times.last().copied(), schedule.tries()),
            (Some(last_try), tries),
            "restarting for {restarting_for:?}: tries at {times:?}"
        );
        let waits: Vec<Duration> = times.windows(2).map(|pair| pair[1] - pair[0]).collect();
        assert!(
            waits.iter().all(|&wait| wait <= RECONNECT_MAX_DELAY),
            "{waits:?}"
        );
        assert_eq!(times[..3], [250, 750, 1750].map(Duration::from_millis));
    }

    #[test]
    fn the_link_keeps_trying_for_the_grace_period_and_while_the_server_restarts() {
        let seconds = |s: f64| Duration::from_secs_f64(s);
        // Away for good (a network that is down): tries for the 60 s the
        // server holds the seat, the last at 59.75 s; 18 tries, not 6.
        check(Duration::ZERO, seconds(59.75), 18);
        // A server restarting for 90 s: it holds the seat for 60 s after it
        // is back, so the tries go on 60 s past the last one that found it
        // away (87.75 s).
        check(seconds(90.0), seconds(147.75), 40);
        // A server that never comes back: ten minutes in all.
        check(Duration::MAX, seconds(599.75), 153);
    }

    /// A session whose server is away for longer than
    /// 12 s (ten tries refused with `shutting_down`, on tokio's paused
    /// clock) keeps trying, says so each time, and takes its seat back.
    #[tokio::test(start_paused = true)]
    async fn a_seat_is_taken_back_after_an_outage_of_ten_failed_tries() {
        let refused = Arc::new(Mutex::new(0u32));
        let counted = Arc::clone(&refused);
        let room = |phase| patience_shared::protocol::RoomInfo {
            code: "K7PQ3M".into(),
            game: GameKind::ThreeBlindMice,
            max_players: 2,
            public: false,
            options: RoomOptions::default(),
            owner: Some(0),
            phase,
            players: Vec::new(),
            spectators: 0,
            series: None,
        };
        let (url, _) = crate::fake_server::start_scripted(move |message| match message {
            ClientMessage::JoinRoom { .. } => Reply {
                messages: vec![
                    ServerMessage::RoomJoined {
                        seq: 1,
                        room: room(Phase::Racing),
                        seat: Some(0),
                        resume_token: Some("first".into()),
                    },
                    ServerMessage::ShuttingDown {
                        message: "the server is restarting".into(),
                    },
                ],
                then_drop: true,
            },
            ClientMessage::Resume { .. } => {
                let mut refused = counted.lock().expect("not poisoned");
                if *refused < 10 {
                    *refused += 1;
                    return Reply {
                        messages: vec![ServerMessage::Error {
                            code: ErrorCode::ShuttingDown,
                            message: "the server is shutting down".into(),
                        }],
                        then_drop: true,
                    };
                }
                Reply {
                    messages: vec![ServerMessage::Resumed {
                        seq: 1,
                        room: room(Phase::Racing),
                        seat: 0,
                        resume_token: "second".into(),
                        elapsed_ms: Some(1_000),
                    }],
                    then_drop: false,
                }
            }
            _ => Reply::default(),
        })
        .await;
        let started = TokioInstant::now();
        let (mut session, _) =
            Session::start(&url, "ada", Entry::Join("K7PQ3M".into()), Store::none())
                .await
                .expect("seated");
        let mut lines = Vec::new();
        loop {
            let (message, notes) = session.recv().await.expect("the session goes on");
            lines.extend(session.take_connection_notes());
            lines.extend(notes);
            if matches!(message, ServerMessage::Resumed { .. }) {
                break;
            }
        }
        assert_eq!(*refused.lock().expect("not poisoned"), 10);
        assert!(started.elapsed() > Duration::from_secs(12), "{lines:#?}");
        assert!(session.state.closed.is_none() && session.state.seat == Some(0));
        let text = lines.join("\n");
        assert!(text.contains("the race is paused, not over"), "{text}");
        assert!(text.contains("reconnecting: try 10 failed"), "{text}");
        assert!(text.contains("back in room K7PQ3M"), "{text}");
        session.close().await;
    }

    /// A watcher whose connection breaks watches again: it has no seat,
    /// so it asks to `spectate` the room anew.
    #[tokio::test]
    async fn a_watcher_watches_again_after_a_broken_connection() {
        let watched = Arc::new(Mutex::new(0u32));
        let counted = Arc::clone(&watched);
        let (url, _) = crate::fake_server::start_scripted(move |message| match message {
            ClientMessage::Spectate { code } => {
                let mut watched = counted.lock().expect("not poisoned");
                *watched += 1;
                Reply {
                    messages: vec![ServerMessage::RoomJoined {
                        seq: 1,
                        room: patience_shared::protocol::RoomInfo {
                            code: code.clone(),
                            game: GameKind::ThreeBlindMice,
                            max_players: 2,
                            public: false,
                            options: RoomOptions::default(),
                            owner: Some(0),
                            phase: Phase::Racing,
                            players: Vec::new(),
                            spectators: *watched,
                            series: None,
                        },
                        seat: None,
                        resume_token: None,
                    }],
                    // The first connection breaks at once.
                    then_drop: *watched == 1,
                }
            }
            _ => Reply::default(),
        })
        .await;
        let (mut session, _) =
            Session::start(&url, "eve", Entry::Watch("K7PQ3M".into()), Store::none())
                .await
                .expect("watching");
        let again = async {
            loop {
                let (message, _) = session.recv().await.expect("the session goes on");
                if matches!(message, ServerMessage::RoomJoined { .. }) {
                    return;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(20), again)
            .await
            .expect("watching again within the test's patience");
        assert_eq!(*watched.lock().expect("not poisoned"), 2);
        session.close().await;
    }

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

    #[tokio::test]
    async fn a_bad_code_ends_join_and_watch_at_once_with_the_servers_words() {
        let (url, _) = crate::fake_server::start(|message| match message {
            ClientMessage::JoinRoom { code } | ClientMessage::Spectate { code } => {
                vec![ServerMessage::Error {
                    code: patience_shared::protocol::ErrorCode::RoomNotFound,
                    message: format!("no room has the code {code}"),
                }]
            }
            _ => Vec::new(),
        })
        .await;
        for entry in [Entry::Join("BADCOD".into()), Entry::Watch("BADCOD".into())] {
            match Session::start(&url, "ada", entry.clone(), Store::none()).await {
                Err(NetError::NotAdmitted { message, .. }) => {
                    assert_eq!(message, "no room has the code BADCOD", "{entry:?}");
                }
                Err(other) => panic!("{entry:?}: expected a refusal, got {other}"),
                Ok(_) => panic!("{entry:?}: expected a refusal, got a session"),
            }
        }
    }

    #[tokio::test]
    async fn a_closed_rooms_join_and_watch_end_at_once_naming_its_race_and_its_page() {
        let (url, _) = crate::fake_server::start(|message| match message {
            ClientMessage::JoinRoom { code } | ClientMessage::Spectate { code } => {
                vec![ServerMessage::RoomClosed {
                    code: code.to_string(),
                    race_id: 731,
                }]
            }
            _ => Vec::new(),
        })
        .await;
        let page = crate::race::page_address(&url).expect("a ws:// address has a page");
        for entry in [Entry::Join("K7PQ3M".into()), Entry::Watch("K7PQ3M".into())] {
            match Session::start(&url, "ada", entry.clone(), Store::none()).await {
                Err(NetError::RoomClosed { race_id, message }) => {
                    assert_eq!(race_id, 731, "{entry:?}");
                    assert_eq!(
                        message,
                        format!(
                            "room K7PQ3M has closed after its race; its results and replay \
                             stay at {page}/race/731 and in `patience replay 731`"
                        ),
                        "{entry:?}"
                    );
                }
                Err(other) => panic!("{entry:?}: expected the closed room's race, got {other}"),
                Ok(_) => panic!("{entry:?}: expected the closed room's race, got a session"),
            }
        }
    }

    #[tokio::test]
    async fn a_bots_seat_is_kept_apart_from_the_players_and_taken_back_after_a_restart() {
        let (url, received) = crate::fake_server::start(|message| match message {
            ClientMessage::JoinRoom { code } => vec![ServerMessage::RoomJoined {
                seq: 1,
                room: patience_shared::protocol::RoomInfo {
                    code: code.clone(),
                    game: GameKind::Indian,
                    max_players: 2,
                    public: false,
                    options: RoomOptions::default(),
                    owner: Some(0),
                    phase: Phase::Lobby,
                    players: Vec::new(),
                    spectators: 0,
                    series: None,
                },
                seat: Some(1),
                resume_token: Some("bot-token".into()),
            }],
            ClientMessage::Resume { .. } => vec![ServerMessage::Error {
                code: patience_shared::protocol::ErrorCode::InvalidResumeToken,
                message: "that seat is gone".into(),
            }],
            _ => Vec::new(),
        })
        .await;
        let directory =
            std::env::temp_dir().join(format!("patience-bot-seat-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&directory);
        let store = Store::in_directory(&directory);
        let bot = SeatSlot::Bot {
            pace_ms: 1500,
            level: BotLevel::Easy,
        };
        let join = Entry::Join("K7PQ3M".into());
        let (session, _) = Session::start_in_slot(&url, "bot", join.clone(), store.clone(), bot)
            .await
            .expect("seated");
        let settings = store.load();
        assert_eq!(settings.seat, None, "the player's seat is not the bot's");
        let saved = settings.bot_seat.expect("the bot's seat is saved");
        assert_eq!(
            (
                saved.code.as_str(),
                saved.token.as_str(),
                saved.pace_ms,
                saved.level,
                saved.game
            ),
            (
                "K7PQ3M",
                "bot-token",
                Some(1500),
                Some(BotLevel::Easy),
                Some(GameKind::Indian)
            )
        );
        // The client dies; started again, the bot asks for its seat back.
        drop(session);
        let (_, notes) = Session::start_in_slot(&url, "bot", join, store.clone(), bot)
            .await
            .expect("seated anew after the refused resume");
        assert!(
            notes.iter().any(|note| note.contains("no longer open")),
            "{notes:?}"
        );
        let resumed = received
            .lock()
            .expect("not poisoned")
            .iter()
            .any(|message| {
                matches!(message, ClientMessage::Resume { token, .. } if token == "bot-token")
            });
        assert!(resumed, "the bot resumed with its saved token");
        let _ = std::fs::remove_dir_all(&directory);
    }
}
