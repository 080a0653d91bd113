//! Helpers for the end-to-end tests: locating (and if need be building) the
//! real binaries, and running them as a person or a script would.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Mutex, PoisonError};

/// The workspace's target directory, found from the running test binary
/// (`target/<profile>/deps/integration-…`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    exe.parent()
        .and_then(|deps| deps.parent())
        .map(PathBuf::from)
        .expect("test binaries live in target/<profile>/deps")
}

/// The path of a workspace binary, built once per test run (each binary
/// once, whichever a test asks for first) with the same cargo and profile
/// that built the tests, so the tests always run the current code.
pub fn binary(package: &str, name: &str) -> PathBuf {
    static BUILT: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    if !built.contains(name) {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let release = profile_dir().ends_with("release");
        let mut command = Command::new(cargo);
        command.args(["build", "--quiet", "--package", package, "--bin", name]);
        if release {
            command.arg("--release");
        }
        let status = command.status().expect("cargo runs");
        assert!(status.success(), "building {name} failed");
        built.insert(name.to_string());
    }
    profile_dir().join(name)
}

/// Starts `patience` with `args`, `config` as its config directory, no
/// server from the environment, and every standard stream piped: the
/// one way the tests run the client as a person would.
pub fn spawn_patience(config: &std::path::Path, args: &[&str]) -> std::process::Child {
    Command::new(binary("patience-cli", "patience"))
        .args(args)
        .env("PATIENCE_CONFIG_DIR", config)
        .env_remove("PATIENCE_SERVER")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("patience runs")
}

/// Runs `patience` with `args` and returns what it printed and its status.
pub fn patience(args: &[&str]) -> Output {
    Command::new(binary("patience-cli", "patience"))
        .args(args)
        .output()
        .expect("patience runs")
}

/// Standard output of a run, as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard error of a run, as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

// ----- The race server, in-process, and WebSocket clients -----

use std::net::SocketAddr;
use std::time::Duration;

use futures::{SinkExt as _, StreamExt as _};
use patience_server::{Config, Server};
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, ClientMessage, DailyAttempt, ErrorCode, PROTOCOL_VERSION, PlayerStatus, RoomOptions,
    ServerMessage,
};
use patience_shared::solver::Budget;
use patience_shared::solver::any::{first_winnable_deal, solve_deal};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Where the test servers' seed streams start: a large number, so that the
/// seed cannot be mistaken for any other integer on the wire.
pub const SEED_START: u64 = 0x5eed_c0de_0000_0000;

/// The solver budget of the test servers (and of the tests' own proofs).
pub const SOLVER_BUDGET: u64 = 200_000;

/// Settings for a test server: ephemeral ports, Three Blind Mice only (its
/// proofs take milliseconds), a fixed seed stream and short timings.
pub fn test_config() -> Config {
    Config {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        admin_listen: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        countdown_ms: 10,
        // The tests' bots play as fast as the socket goes; the rate limit
        // has its own test.
        messages_per_second: 10_000,
        message_burst: 10_000,
        moves_per_second: 10_000,
        move_burst: 10_000,
        // Every test client comes from 127.0.0.1; the registration limit
        // has its own test.
        registrations_per_hour: 10_000,
        registration_burst: 10_000,
        deal_games: vec![GameKind::ThreeBlindMice],
        deal_pool_size: 2,
        deal_seed_start: Some(SEED_START),
        solver_budget_positions: SOLVER_BUDGET,
        finished_room_linger_ms: 5_000,
        shutdown_grace_ms: 1_000,
        // In memory unless a test gives a directory: tests that check
        // persistence use their own temporary directory.
        data_dir: None,
        ..Config::default()
    }
}

/// The address a server process prints as the first line of its stdout
/// (`… ws://ADDRESS`): patience-server's and patience-echo's.
pub fn read_printed_address(stdout: &mut impl std::io::BufRead) -> SocketAddr {
    let mut line = String::new();
    stdout
        .read_line(&mut line)
        .expect("the server prints its address");
    line.trim()
        .rsplit("ws://")
        .next()
        .and_then(|address| address.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
}

/// Starts a server on 127.0.0.1:0 with `test_config` changed by `tweak`.
pub async fn start_server(tweak: impl FnOnce(&mut Config)) -> Server {
    let mut config = test_config();
    tweak(&mut config);
    patience_server::start(config)
        .await
        .expect("the server starts")
}

/// The first Three Blind Mice seed a test server deals, and the solver's
/// winning line for it in notation: computed here, never sent by the server.
pub fn first_deal() -> (u64, Vec<String>) {
    first_proved_from(SEED_START)
}

/// The first Three Blind Mice seed from `start` up that the solver proves
/// winnable at the test servers' budget, as a server finds it, and its line.
fn first_proved_from(start: u64) -> (u64, Vec<String>) {
    let deal = first_winnable_deal(
        GameKind::ThreeBlindMice,
        start..,
        Budget::positions(SOLVER_BUDGET),
    )
    .expect("the solver's line replays")
    .expect("a winnable deal exists");
    let report = solve_deal(
        GameKind::ThreeBlindMice,
        deal.seed,
        Budget::positions(SOLVER_BUDGET),
    )
    .expect("the solver's line replays");
    (deal.seed, report.solution)
}

/// Longest a test waits for any one message: a safety net for a broken
/// server, never a way to let time pass.
const PATIENCE: Duration = Duration::from_secs(20);

/// A WebSocket client speaking the race protocol, recording every frame.
pub struct Client {
    socket: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// Every binary frame received, in order.
    pub frames: Vec<Vec<u8>>,
    /// The largest `seq` seen.
    pub last_seq: u64,
}

/// What the server did when a client waited for it to close.
#[derive(Debug)]
pub struct Closed {
    /// The messages received before the close.
    pub messages: Vec<ServerMessage>,
    /// The close frame, if one came.
    pub frame: Option<CloseFrame>,
}

impl Client {
    /// Opens a WebSocket to the server.
    pub async fn connect(server: &Server) -> Client {
        Client::connect_to(server.address()).await
    }

    /// Opens a WebSocket to a server at `address` (one in another process).
    pub async fn connect_to(address: SocketAddr) -> Client {
        let url = format!("ws://{address}/");
        let (socket, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("websocket connects");
        Client {
            socket,
            frames: Vec::new(),
            last_seq: 0,
        }
    }

    /// Opens a WebSocket whose kernel receive buffer is small, for clients
    /// that stop reading.
    pub async fn connect_with_small_buffer(server: &Server) -> Client {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket.set_recv_buffer_size(4096).expect("buffer size");
        let stream = socket.connect(server.address()).await.expect("connects");
        let url = format!("ws://{}/", server.address());
        let (socket, _) = tokio_tungstenite::client_async(url, MaybeTlsStream::Plain(stream))
            .await
            .expect("websocket handshake");
        Client {
            socket,
            frames: Vec::new(),
            last_seq: 0,
        }
    }

    /// Says hello as `name` and waits for the welcome.
    pub async fn say_hello(&mut self, name: &str) {
        self.send(&ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name: name.to_string(),
        })
        .await;
        match self.recv().await {
            ServerMessage::Welcome { version, .. } => assert_eq!(version, PROTOCOL_VERSION),
            other => panic!("expected welcome, got {other:?}"),
        }
    }

    /// Every message received so far, decoded again from the recorded frames.
    pub fn received(&self) -> Vec<ServerMessage> {
        self.frames
            .iter()
            .filter_map(|frame| protocol::decode_server(frame).ok())
            .collect()
    }

    /// Connects and says hello as `name`.
    pub async fn hello(server: &Server, name: &str) -> Client {
        Client::hello_to(server.address(), name).await
    }

    /// Connects to `address` and says hello as `name`.
    pub async fn hello_to(address: SocketAddr, name: &str) -> Client {
        let mut client = Client::connect_to(address).await;
        client
            .send(&ClientMessage::Hello {
                version: PROTOCOL_VERSION,
                name: name.to_string(),
            })
            .await;
        match client.recv().await {
            ServerMessage::Welcome { version, .. } => assert_eq!(version, PROTOCOL_VERSION),
            other => panic!("expected welcome, got {other:?}"),
        }
        client
    }

    /// Sends a message.
    pub async fn send(&mut self, message: &ClientMessage) {
        self.send_raw(protocol::encode(message)).await;
    }

    /// Sends raw bytes as one binary frame.
    pub async fn send_raw(&mut self, bytes: Vec<u8>) {
        self.socket
            .send(Message::Binary(bytes.into()))
            .await
            .expect("send");
    }

    /// Sends any WebSocket message.
    pub async fn send_frame(&mut self, message: Message) {
        self.socket.send(message).await.expect("send");
    }

    /// Sends WebSocket messages written out together, so that all of them
    /// are on their way before the server can answer the first.
    pub async fn send_frames(&mut self, messages: impl IntoIterator<Item = Message>) {
        for message in messages {
            self.socket.feed(message).await.expect("send");
        }
        self.socket.flush().await.expect("send");
    }

    /// Sends a move.
    pub async fn play(&mut self, text: &str) {
        self.send(&ClientMessage::Move {
            text: text.to_string(),
            seat: None,
        })
        .await;
    }

    /// The next message; panics if the connection closes first.
    pub async fn recv(&mut self) -> ServerMessage {
        // One deadline for the whole wait: the server's pings, skipped
        // here, must not keep a test waiting for ever.
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let next = tokio::time::timeout_at(deadline, self.socket.next())
                .await
                .expect("a message within the test's patience");
            match next {
                Some(Ok(Message::Binary(bytes))) => {
                    let message = protocol::decode_server(&bytes)
                        .expect("the server sends protocol messages");
                    self.frames.push(bytes.to_vec());
                    if let Some(seq) = seq_of(&message) {
                        self.last_seq = self.last_seq.max(seq);
                    }
                    return message;
                }
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                other => panic!("expected a binary frame, got {other:?}"),
            }
        }
    }

    /// Skips messages until one matches, and returns it.
    pub async fn recv_until(&mut self, wanted: impl Fn(&ServerMessage) -> bool) -> ServerMessage {
        loop {
            let message = self.recv().await;
            if wanted(&message) {
                return message;
            }
        }
    }

    /// Reads until the server closes the connection.
    pub async fn closed(&mut self) -> Closed {
        let mut messages = Vec::new();
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let next = tokio::time::timeout_at(deadline, self.socket.next())
                .await
                .expect("the server closes within the test's patience");
            match next {
                Some(Ok(Message::Binary(bytes))) => {
                    messages.push(protocol::decode_server(&bytes).expect("protocol message"));
                }
                Some(Ok(Message::Close(frame))) => return Closed { messages, frame },
                Some(Ok(_)) => {}
                None | Some(Err(_)) => {
                    return Closed {
                        messages,
                        frame: None,
                    };
                }
            }
        }
    }

    /// Closes the connection abruptly, as a dropped network would.
    pub fn drop_connection(self) {
        drop(self.socket);
    }

    /// Creates a room and returns its code and this client's resume token.
    pub async fn create_room(&mut self, max_players: u8, options: RoomOptions) -> (String, String) {
        self.send(&ClientMessage::CreateRoom {
            game: GameKind::ThreeBlindMice,
            max_players,
            public: false,
            options,
            bots: Vec::new(),
        })
        .await;
        self.joined().await
    }

    /// Joins a room by code and returns its code and this client's resume token.
    pub async fn join_room(&mut self, code: &str) -> (String, String) {
        self.send(&ClientMessage::JoinRoom {
            code: code.to_string(),
        })
        .await;
        self.joined().await
    }

    async fn joined(&mut self) -> (String, String) {
        match self.recv().await {
            ServerMessage::RoomJoined {
                room,
                resume_token: Some(token),
                seat: Some(_),
                ..
            } => (room.code, token),
            other => panic!("expected room_joined, got {other:?}"),
        }
    }

    /// Waits for the race to start and returns its commitment.
    pub async fn race_started(&mut self) -> String {
        match self
            .recv_until(|message| matches!(message, ServerMessage::RaceStarted { .. }))
            .await
        {
            ServerMessage::RaceStarted { commitment, .. } => commitment,
            _ => unreachable!("recv_until returned another message"),
        }
    }

    /// Skips messages until an error or a refused move, and returns its code.
    pub async fn next_error(&mut self) -> ErrorCode {
        match self
            .recv_until(|message| {
                matches!(
                    message,
                    ServerMessage::Error { .. } | ServerMessage::MoveRejected { .. }
                )
            })
            .await
        {
            ServerMessage::Error { code, .. } | ServerMessage::MoveRejected { code, .. } => code,
            _ => unreachable!("recv_until returned another message"),
        }
    }

    /// Registers a player named `name`: its id and secret token.
    pub async fn register(&mut self, name: &str) -> (u64, String) {
        self.send(&ClientMessage::Register {
            name: name.to_string(),
        })
        .await;
        match self.recv().await {
            ServerMessage::Registered { player, token, .. } => (player, token),
            other => panic!("expected registered, got {other:?}"),
        }
    }

    /// Becomes the player with this token.
    pub async fn authenticate(&mut self, token: &str) -> u64 {
        self.send(&ClientMessage::Authenticate {
            token: token.to_string(),
        })
        .await;
        match self.recv().await {
            ServerMessage::Authenticated { player, .. } => player,
            other => panic!("expected authenticated, got {other:?}"),
        }
    }

    /// Opens (or takes back) today's Three Blind Mice attempt.
    pub async fn daily_play(&mut self) -> DailyAttempt {
        self.send(&ClientMessage::DailyPlay {
            game: GameKind::ThreeBlindMice,
        })
        .await;
        match self.recv().await {
            ServerMessage::DailyStarted { attempt } => attempt,
            other => panic!("expected daily_started, got {other:?}"),
        }
    }

    /// Plays `moves`, each answered before the next is sent.
    pub async fn play_all(&mut self, moves: &[String]) {
        for text in moves {
            self.play(text).await;
            let answer = self.move_answer().await;
            assert!(
                matches!(&answer, ServerMessage::MoveAccepted { text: played, .. } if played == text),
                "{text}: {answer:?}"
            );
        }
    }

    /// Checks that this (signed-in) client's won daily attempt of Three
    /// Blind Mice, stored as race `race_id` with the moves `line`, is kept:
    /// it is not granted again, it ranks first as won, and its replay (the
    /// day still open) is the player's own attempt.
    pub async fn assert_daily_win_kept(&mut self, race_id: u64, line: &[String]) {
        self.send(&ClientMessage::DailyPlay {
            game: GameKind::ThreeBlindMice,
        })
        .await;
        assert_eq!(self.next_error().await, ErrorCode::DailyAlreadyPlayed);
        self.send(&ClientMessage::Leaderboard {
            game: GameKind::ThreeBlindMice,
            date: None,
            limit: None,
        })
        .await;
        match self.recv().await {
            ServerMessage::LeaderboardPage { page } => {
                let own = page.own.expect("the player's row");
                assert_eq!(
                    (own.rank, own.status, own.race_id),
                    (1, PlayerStatus::Won, race_id)
                );
            }
            other => panic!("expected leaderboard_page, got {other:?}"),
        }
        self.send(&ClientMessage::Replay { race_id }).await;
        match self.recv().await {
            ServerMessage::AttemptReplay { attempt } => assert_eq!(attempt.moves, line),
            other => panic!("expected attempt_replay, got {other:?}"),
        }
    }

    /// Waits for the answer to this client's move: accepted or rejected.
    pub async fn move_answer(&mut self) -> ServerMessage {
        self.recv_until(|message| {
            matches!(
                message,
                ServerMessage::MoveAccepted { .. } | ServerMessage::MoveRejected { .. }
            )
        })
        .await
    }
}

/// The `seq` of a room event.
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
        | ServerMessage::Resumed { seq, .. } => Some(seq),
        _ => None,
    }
}

/// A spectator of room `code` on a small receive buffer, once it has its
/// snapshot and `player` has seen it arrive: a test then stops reading it
/// to make it fall behind.
pub async fn lazy_spectator(server: &Server, code: String, player: &mut Client) -> Client {
    let mut lazy = Client::connect_with_small_buffer(server).await;
    lazy.say_hello("lazy").await;
    lazy.send(&ClientMessage::Spectate { code }).await;
    lazy.recv_until(|message| matches!(message, ServerMessage::Snapshot { .. }))
        .await;
    player
        .recv_until(
            |message| matches!(message, ServerMessage::RoomUpdate { room, .. } if room.spectators == 1),
        )
        .await;
    lazy
}

/// `player` plays `first_move` and takes it back, each answered.
pub async fn play_and_take_back(player: &mut Client, first_move: &str) {
    player.play(first_move).await;
    assert!(matches!(
        player.move_answer().await,
        ServerMessage::MoveAccepted { .. }
    ));
    player.send(&ClientMessage::Undo).await;
    assert!(matches!(
        player.move_answer().await,
        ServerMessage::MoveAccepted { .. }
    ));
}

/// How often the server has counted a spectator falling behind.
fn spectators_coalesced(server: &Server) -> u64 {
    server
        .metrics()
        .spectators_coalesced
        .load(std::sync::atomic::Ordering::Relaxed)
}

/// A stalled spectator is kept and catches up with one snapshot: `lazy`
/// (from [`lazy_spectator`], in `player`'s race, which allows undo) reads
/// nothing while `player` plays `first_move` and takes it back, until the
/// server has counted a spectator falling behind. (Not until any frame was
/// refused: a rival who does not read either can be the one refused, and
/// then the spectator never needed catching up.) Then `lazy` reads again:
/// after the frames already sent, one snapshot of the latest state, and
/// from there it follows live.
pub async fn a_lazy_spectator_catches_up(
    server: &Server,
    player: &mut Client,
    lazy: Client,
    first_move: &str,
) {
    let mut rounds = 0;
    while spectators_coalesced(server) == 0 {
        rounds += 1;
        assert!(rounds < 20_000, "the spectator never fell behind");
        play_and_take_back(player, first_move).await;
    }
    // The player plays on while the spectator reads, so that there is a
    // next event to bring the snapshot.
    let catching_up = tokio::spawn(async move {
        let mut lazy = lazy;
        let snapshot = lazy
            .recv_until(|message| matches!(message, ServerMessage::Snapshot { race: Some(_), .. }))
            .await;
        (lazy, snapshot)
    });
    let mut more = 0;
    while !catching_up.is_finished() {
        more += 1;
        assert!(more < 20_000, "the spectator never caught up");
        play_and_take_back(player, first_move).await;
    }
    let (mut lazy, snapshot) = catching_up.await.expect("the spectator task joins");
    let ServerMessage::Snapshot {
        race: Some(race),
        room,
        ..
    } = snapshot
    else {
        unreachable!("recv_until returned another message")
    };
    assert_eq!(room.spectators, 1, "the spectator was kept");
    assert!(race.boards[0].progress.moves >= 2 * rounds);
    player.play(first_move).await;
    player.move_answer().await;
    lazy.recv_until(|message| matches!(message, ServerMessage::Progress { .. }))
        .await;
}

/// Two players in a two-seat room, the race started: (owner, guest, code,
/// owner's token, guest's token).
pub async fn two_player_race(
    server: &Server,
    options: RoomOptions,
) -> (Client, Client, String, String, String) {
    let mut ada = Client::hello(server, "ada").await;
    let mut bob = Client::hello(server, "bob").await;
    let (code, ada_token) = ada.create_room(2, options).await;
    let (_, bob_token) = bob.join_room(&code).await;
    ada.race_started().await;
    bob.race_started().await;
    (ada, bob, code, ada_token, bob_token)
}

// ----- Daily deals -----

/// The daily secret of the test servers, so that tests can find the day's
/// deal as the server does (a real server's secret is known to no client).
pub const DAILY_SECRET: [u8; 32] = [0x5a; 32];

/// [`DAILY_SECRET`] as the configuration writes it.
pub fn daily_secret_hex() -> String {
    protocol::to_hex(&DAILY_SECRET)
}

/// The Three Blind Mice daily deal of `date` on a test server, and the
/// solver's winning line for it: computed here, never sent by the server.
pub fn daily_deal(date: &str) -> (u64, Vec<String>) {
    first_proved_from(patience_server::daily::stream_start(
        &DAILY_SECRET,
        GameKind::ThreeBlindMice,
        date,
    ))
}

/// An hour in milliseconds.
pub const HOUR: u64 = 60 * 60 * 1000;
/// The daily tests' day on a virtual clock: 2026-12-01 (UTC), which
/// begins at [`DAY_START`].
pub const DAY: &str = "2026-12-01";
/// 2026-12-01T00:00:00Z in Unix milliseconds.
pub const DAY_START: u64 = 1_796_083_200_000;
/// The next day's start: the day is closed an attempt's time limit later.
pub const NEXT_DAY: u64 = DAY_START + 24 * HOUR;
/// Noon of the day before: when accounts that rank on the day register.
pub const DAY_BEFORE_NOON: u64 = DAY_START - 12 * HOUR;
/// 09:00 on the day: when it is played.
pub const DAY_MORNING: u64 = DAY_START + 9 * HOUR;

// ----- The server as a process -----

/// A `patience-server` process, killed when dropped.
pub struct ServerProcess {
    child: std::process::Child,
    /// Where it listens.
    pub address: SocketAddr,
}

impl ServerProcess {
    /// Starts the real binary on 127.0.0.1:0 with the test settings, the
    /// data directory `data` and `extra` flags, and waits for its address.
    pub fn start(data: &std::path::Path, extra: &[&str]) -> ServerProcess {
        ServerProcess::launch(data, extra, false).0
    }

    /// As [`ServerProcess::start`], under a soft and hard limit of
    /// `open_files` open files (`ulimit -n` in a shell that then execs the
    /// server), as on a host whose operator never raised it.
    pub fn start_with_open_files_limit(
        data: &std::path::Path,
        open_files: u64,
        extra: &[&str],
    ) -> ServerProcess {
        let settings = data.with_extension("toml");
        ServerProcess::spawn_limited(
            &settings,
            [std::ffi::OsStr::new("--data"), data.as_os_str()],
            extra,
            false,
            Some(open_files),
        )
        .0
    }

    /// As [`ServerProcess::start`], with the admin port on 127.0.0.1:0:
    /// also returns the admin address.
    pub fn start_with_admin(data: &std::path::Path, extra: &[&str]) -> (ServerProcess, SocketAddr) {
        let (server, admin) = ServerProcess::launch(data, extra, true);
        (server, admin.expect("the server prints its admin address"))
    }

    fn launch(
        data: &std::path::Path,
        extra: &[&str],
        admin: bool,
    ) -> (ServerProcess, Option<SocketAddr>) {
        let settings = data.with_extension("toml");
        ServerProcess::spawn(
            &settings,
            [std::ffi::OsStr::new("--data"), data.as_os_str()],
            extra,
            admin,
        )
    }

    /// Starts the real binary as [`ServerProcess::start`] does, keeping its
    /// data in the PostgreSQL database `database_url` (`--database-url`)
    /// and its settings file in `directory`.
    pub fn start_on_postgres(
        directory: &std::path::Path,
        database_url: &str,
        extra: &[&str],
    ) -> ServerProcess {
        let settings = directory.join("server.toml");
        ServerProcess::spawn(
            &settings,
            [
                std::ffi::OsStr::new("--database-url"),
                std::ffi::OsStr::new(database_url),
            ],
            extra,
            false,
        )
        .0
    }

    /// Writes the test settings to `settings` and starts the binary with
    /// them, the flags that say where the data lives, and `extra`; with
    /// `admin`, an admin port too, whose address it returns.
    fn spawn(
        settings: &std::path::Path,
        storage: [&std::ffi::OsStr; 2],
        extra: &[&str],
        admin: bool,
    ) -> (ServerProcess, Option<SocketAddr>) {
        ServerProcess::spawn_limited(settings, storage, extra, admin, None)
    }

    /// [`ServerProcess::spawn`], under an open-files limit if one is given.
    fn spawn_limited(
        settings: &std::path::Path,
        storage: [&std::ffi::OsStr; 2],
        extra: &[&str],
        admin: bool,
        open_files: Option<u64>,
    ) -> (ServerProcess, Option<SocketAddr>) {
        use std::io::BufRead as _;
        std::fs::write(
            settings,
            format!(
                "listen = \"127.0.0.1:0\"\n\
                 countdown_ms = 10\n\
                 messages_per_second = 10000\n\
                 message_burst = 10000\n\
                 moves_per_second = 10000\n\
                 move_burst = 10000\n\
                 deal_games = [\"three-blind-mice\"]\n\
                 deal_pool_size = 2\n\
                 deal_seed_start = {SEED_START}\n\
                 solver_budget_positions = {SOLVER_BUDGET}\n\
                 daily_secret = \"{}\"\n",
                daily_secret_hex()
            ),
        )
        .expect("the settings file is written");
        let server = binary("patience-server", "patience-server");
        let mut command = match open_files {
            Some(limit) => {
                let mut shell = Command::new("sh");
                shell
                    .arg("-c")
                    .arg(format!("ulimit -n {limit} && exec \"$0\" \"$@\""))
                    .arg(server);
                shell
            }
            None => Command::new(server),
        };
        let mut child = command
            .arg("--config")
            .arg(settings)
            .args(storage)
            .args(if admin {
                vec!["--admin-listen", "127.0.0.1:0"]
            } else {
                vec!["--no-admin"]
            })
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("patience-server starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut stdout = std::io::BufReader::new(stdout);
        let address = read_printed_address(&mut stdout);
        let admin = admin.then(|| {
            let mut line = String::new();
            stdout
                .read_line(&mut line)
                .expect("the server prints its admin address");
            line.trim()
                .strip_prefix("admin: http://")
                .and_then(|rest| rest.split('/').next())
                .and_then(|address| address.parse().ok())
                .unwrap_or_else(|| panic!("no admin address in {line:?}"))
        });
        (ServerProcess { child, address }, admin)
    }

    /// Asks the process to stop with SIGTERM, as a deploy would, and waits
    /// for it to exit; returns whether it exited successfully.
    pub fn terminate(mut self) -> bool {
        let sent = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .expect("kill runs");
        assert!(sent.success(), "SIGTERM is delivered");
        self.child.wait().expect("the server is reaped").success()
    }

    /// Kills the process with SIGKILL, as a crash or `kill -9` would, and
    /// waits for it to be gone.
    pub fn kill(mut self) {
        self.child.kill().expect("the server is killed");
        self.child.wait().expect("the server is reaped");
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ----- Redis, for the cluster tests -----

/// A throwaway `redis-server` on a Unix socket in a directory of its own,
/// with nothing saved to disk; killed when dropped.
pub struct RedisProcess {
    child: Option<std::process::Child>,
    directory: tempfile::TempDir,
}

impl RedisProcess {
    /// Starts one and waits (with a deadline) until it answers `PING`.
    /// Fails the test if `redis-server` is not installed: the cluster
    /// tests must not pass without it.
    pub fn start() -> RedisProcess {
        let directory = tempfile::tempdir().expect("a temporary directory");
        let mut redis = RedisProcess {
            child: None,
            directory,
        };
        redis.launch();
        redis
    }

    /// Starts `redis-server` on this directory's socket, empty, and waits
    /// (with a deadline) until it answers `PING`.
    fn launch(&mut self) {
        let socket = self.socket();
        let child = Command::new("redis-server")
            .args(["--port", "0", "--unixsocket"])
            .arg(&socket)
            .args([
                "--unixsocketperm",
                "700",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
            ])
            .arg(self.directory.path())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "cannot run redis-server ({error}): the cluster tests need a real Redis; \
                     install it with `apt-get install -y redis-server`"
                )
            });
        self.child = Some(child);
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while self.cli(&["PING"]) != "PONG" {
            assert!(
                std::time::Instant::now() < deadline,
                "redis-server did not answer PING on {}",
                socket.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills it and starts it again on the same socket, empty, as Redis
    /// shipped without persistence comes back from a crash or a restart.
    pub fn restart(&mut self) {
        self.kill();
        // The old socket file stays behind a killed server.
        let _ = std::fs::remove_file(self.socket());
        self.launch();
    }

    /// The URL a server's `--redis-url` takes.
    pub fn url(&self) -> String {
        format!("redis+unix://{}", self.socket().display())
    }

    fn socket(&self) -> PathBuf {
        self.directory.path().join("redis.sock")
    }

    /// Runs one command through `redis-cli` and returns its answer,
    /// trimmed (empty if Redis cannot be reached).
    pub fn cli(&self, args: &[&str]) -> String {
        let output = Command::new("redis-cli")
            .arg("-s")
            .arg(self.socket())
            .args(args)
            .output();
        match output {
            Ok(output) => String::from_utf8_lossy(&output.stdout).trim().to_string(),
            Err(error) => panic!(
                "cannot run redis-cli ({error}): it comes with Debian's redis-server package"
            ),
        }
    }

    /// Kills it, as a crash of Redis would, and waits for it to be gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for RedisProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A port on 127.0.0.1 free a moment ago, for a node that must know its
/// own URL before it starts (`--public-url`). Another process could take it
/// in between; on a test machine that is rare enough.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}
