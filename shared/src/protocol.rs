//! The wire protocol between race clients and the race server.
//!
//! Every message is one of the serde types here, encoded with MessagePack
//! (rmp-serde, **named fields**: each struct is a map keyed by field name),
//! one message per binary WebSocket frame. Enums of messages are internally
//! tagged: a message is a map whose `type` key names it, e.g.
//! `{"type": "move", "text": "7h>4"}`. `docs/PROTOCOL.md` documents every
//! message with its bytes; snapshot tests in this module pin them.
//!
//! Layout: the version and limits; [`ClientMessage`] (client to server);
//! [`ServerMessage`] (server to client) with the structs they carry; the
//! typed [`ErrorCode`]; encoding helpers; the fair-play [`commitment`]; and
//! [`cards_home`], the progress measure every client computes alike.
//!
//! Only public information has a field here: boards travel as
//! [`View`], never as [`Board`](crate::rules::Board); a deal's seed and salt
//! appear only in [`Reveal`], sent after the race ends.

use std::fmt;

use serde::de::{self, DeserializeOwned};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use crate::bot::BotLevel;
use crate::card::Card;
use crate::game::GameKind;
use crate::rules::{Effect, MoveError, View, Zone};

mod tournament;

pub use tournament::{
    BoardsReplay, DaySummary, DaysPage, GameRecord, LeaderboardUpdate, Period, PlayerRecord,
    SeatReplay, StandingRow, StandingsPage, points_for,
};

/// The protocol version this code speaks. A client sends it in
/// [`ClientMessage::Hello`]; the server refuses any other.
pub const PROTOCOL_VERSION: u32 = 1;

/// Messages a client sends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum ClientMessage {
    /// The first message of every connection: the protocol version and a
    /// display name (trimmed, at most 24 characters).
    Hello {
        /// Must equal [`PROTOCOL_VERSION`].
        version: u32,
        /// The name shown to other players.
        name: String,
    },
    /// Opens a room and takes its first seat (the owner's).
    CreateRoom {
        /// The game the room races.
        game: GameKind,
        /// Seats, 2 to 8.
        max_players: u8,
        /// Whether quick race may put strangers in it.
        public: bool,
        /// Race options.
        #[serde(default)]
        options: RoomOptions,
        /// Seats for bots the server runs, after the creator's, in order:
        /// at most `max_players - 1`, and only in a private room without
        /// `open_boards`. Absent means none.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        bots: Vec<BotSeat>,
    },
    /// Takes a seat in a waiting room, by its code.
    JoinRoom {
        /// The room's code, e.g. `K7PQ2M` (case-insensitive).
        code: String,
    },
    /// Joins a waiting public room of this game, or opens one.
    QuickRace {
        /// The game.
        game: GameKind,
    },
    /// Watches a room, before or during its race.
    Spectate {
        /// The room's code.
        code: String,
    },
    /// Leaves the room (a racing player resigns first).
    Leave,
    /// The owner starts the countdown without waiting for more players.
    StartEarly,
    /// A move on the sender's own board, in the notation of `docs/NOTATION.md`.
    Move {
        /// The move, e.g. `7h>4`.
        text: String,
        /// The board the client means to move on; if given it must be the
        /// sender's own seat.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seat: Option<u8>,
    },
    /// Takes back the sender's last move (rooms whose options allow it).
    Undo,
    /// Gives up the race.
    Resign,
    /// Takes back a seat after a dropped connection, instead of joining.
    Resume {
        /// The secret token from [`ServerMessage::RoomJoined`] or the last
        /// [`ServerMessage::Resumed`]; each use replaces it.
        token: String,
        /// The `seq` of the last room event the client saw (0 if none).
        last_seq: u64,
    },
    /// Creates a player account. The answer, [`ServerMessage::Registered`],
    /// carries the account's secret token: the only way to use it later.
    Register {
        /// The player's name: see [`valid_player_name`].
        name: String,
    },
    /// Says which registered player this connection is, for the daily deal,
    /// leaderboards (the player's own rank) and the results of its races.
    Authenticate {
        /// The token from [`ServerMessage::Registered`].
        token: String,
    },
    /// Plays the day's deal of `game`: starts the player's one attempt, or
    /// takes it back where it stopped. Needs [`ClientMessage::Authenticate`].
    /// Moves then go as [`ClientMessage::Move`], and
    /// [`ClientMessage::Resign`] ends the attempt.
    DailyPlay {
        /// The game.
        game: GameKind,
    },
    /// A day's leaderboard of `game`.
    Leaderboard {
        /// The game.
        game: GameKind,
        /// The UTC date, `YYYY-MM-DD`; `None` for today.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        date: Option<String>,
        /// Rows wanted from the top (the server caps it); `None` for its default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u32>,
    },
    /// A finished race, or a finished daily attempt, with all it takes to
    /// play it back: [`ServerMessage::ReplayData`]; for the asker's own
    /// attempt of a day not yet closed, [`ServerMessage::AttemptReplay`];
    /// for anyone else's, [`ErrorCode::ReplayNotYet`].
    Replay {
        /// The race's id, from [`RaceResult::race_id`], a
        /// [`DailyResult`] or a [`LeaderboardRow`].
        race_id: u64,
    },
    /// Follows a day's leaderboard of `game` live: answered with a
    /// [`ServerMessage::LeaderboardPage`], then a
    /// [`ServerMessage::LeaderboardUpdate`] each time an attempt of that day
    /// begins or finishes, until [`ClientMessage::Unfollow`] of the game or
    /// the end of the connection. A connection follows one day per game.
    Follow {
        /// The game.
        game: GameKind,
        /// The UTC date, `YYYY-MM-DD`; `None` for today.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        date: Option<String>,
        /// Rows wanted in the first page, as in [`ClientMessage::Leaderboard`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u32>,
    },
    /// Stops following `game`'s day: no answer.
    Unfollow {
        /// The game.
        game: GameKind,
    },
    /// Closed days of `game`, newest first: [`ServerMessage::DaysPage`].
    DailyDays {
        /// The game.
        game: GameKind,
        /// Only days before this UTC date, `YYYY-MM-DD`; `None` for all.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<String>,
        /// Days wanted (the server caps it); `None` for its default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u32>,
    },
    /// A player's records at every game: [`ServerMessage::PlayerRecord`].
    PlayerStats {
        /// The player's name; `None` for the authenticated player.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// A week's or a month's standings of `game`:
    /// [`ServerMessage::StandingsPage`].
    Standings {
        /// The game.
        game: GameKind,
        /// Week or month.
        period: Period,
        /// Which one, `2026-W49` or `2026-12`; `None` for the current one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        /// Rows wanted from the top (the server caps it); `None` for its default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u32>,
    },
    /// A finished race's boards after every move:
    /// [`ServerMessage::BoardsReplay`]. Answered for the same races, and to
    /// the same players, as [`ClientMessage::Replay`].
    ReplayBoards {
        /// The race's id.
        race_id: u64,
    },
    /// Asks for a one-time sign-in code of the signed-in account, to sign
    /// in on another device: [`ServerMessage::SignInCode`]. Needs
    /// [`ClientMessage::Authenticate`] (or `register`, or
    /// [`ClientMessage::RedeemSignInCode`]) first.
    RequestSignInCode,
    /// Signs in with a code from [`ServerMessage::SignInCode`]: answered
    /// with [`ServerMessage::SignedIn`], a new token of that account for
    /// this device.
    RedeemSignInCode {
        /// The code, e.g. `K7PQ-3M9X`; case, spaces and the dash are
        /// ignored.
        code: String,
    },
    /// Revokes the token this connection signed in with (the account's
    /// other tokens stay): [`ServerMessage::SignedOut`], and the connection
    /// is a guest again.
    SignOut,
    /// The open public rooms still forming: [`ServerMessage::LobbyPage`].
    /// The lobby is not pushed: a client asks again to keep it current
    /// (every [`LobbyPage::refresh_ms`]).
    Lobby {
        /// Only rooms of this game; `None` for every game.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        game: Option<GameKind>,
    },
    /// After the race, in its room: whether the sender races the same
    /// players again, on a new deal. Everyone in the room hears each answer
    /// ([`ServerMessage::RematchOffer`]); once every racer accepts, each
    /// gets [`ServerMessage::RematchReady`].
    Rematch {
        /// `true` to accept (or to propose), `false` to decline.
        accept: bool,
    },
    /// While waiting alone for a quick race, the answer to the offer of
    /// [`ServerMessage::QuickRaceWait`]'s `bot_offer`: race a marked server
    /// bot now (`bot: true`: the sender leaves the waiting room for a
    /// private room with the bot), or keep waiting (`bot: false`: the offer
    /// is withdrawn, the wait and its window go on).
    QuickRaceAnswer {
        /// `true` to race a bot now, `false` to keep waiting.
        bot: bool,
    },
    /// A game's rating list, best first: [`ServerMessage::RatingsPage`].
    Ratings {
        /// The game.
        game: GameKind,
        /// Rows wanted from the top (the server caps it); `None` for its default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u32>,
    },
    /// A player's rating at `game` and its rated races, newest first:
    /// [`ServerMessage::RatingHistoryPage`].
    RatingHistory {
        /// The game.
        game: GameKind,
        /// The player's name; `None` for the authenticated player.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// Races wanted (the server caps it); `None` for its default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u32>,
    },
}

/// A seat for a bot the server runs, asked for in
/// [`ClientMessage::CreateRoom`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotSeat {
    /// How hard it tries.
    pub level: BotLevel,
    /// The bot's mean time between its moves, in milliseconds; `None` for
    /// the server's default for the level. The server clamps it to
    /// [`BOT_PACE_MIN_MS`]..=[`BOT_PACE_MAX_MS`].
    #[serde(default)]
    pub pace_ms: Option<u32>,
}

/// The fastest pace a server bot may be given: a person's quickest moves.
pub const BOT_PACE_MIN_MS: u32 = 500;

/// The slowest pace a server bot may be given.
pub const BOT_PACE_MAX_MS: u32 = 10_000;

/// A server bot's pace when the room names none: each level at the speed
/// of a person who plays about as well.
pub fn default_bot_pace_ms(level: BotLevel) -> u32 {
    match level {
        BotLevel::Easy => 3_000,
        BotLevel::Normal => 2_000,
        BotLevel::Strong => 1_500,
    }
}

/// How long a sign-in code may be redeemed, in milliseconds: ten minutes.
pub const SIGN_IN_CODE_MS: u64 = 10 * 60 * 1000;

/// The characters of a sign-in code, without the dash: eight from
/// [`ROOM_CODE_ALPHABET`].
pub const SIGN_IN_CODE_CHARS: usize = 8;

/// A sign-in code as typed (any case, spaces, the dash) reduced to its
/// eight characters, upper case; `None` if it cannot be one.
pub fn normalize_sign_in_code(typed: &str) -> Option<String> {
    let code: String = typed
        .chars()
        .filter(|character| !character.is_whitespace() && *character != '-')
        .map(|character| character.to_ascii_uppercase())
        .collect();
    (code.chars().count() == SIGN_IN_CODE_CHARS
        && code
            .chars()
            .all(|character| ROOM_CODE_ALPHABET.contains(character)))
    .then_some(code)
}

/// Eight code characters as shown: two groups of four, `K7PQ-3M9X`.
pub fn show_sign_in_code(code: &str) -> String {
    let (first, second) = code.split_at(code.len().min(4));
    format!("{first}-{second}")
}

/// Options of a room's race.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RoomOptions {
    /// Whether players may take back moves.
    pub undo_allowed: bool,
    /// The race's time limit in milliseconds; `None` takes the server's default.
    pub time_limit_ms: Option<u64>,
    /// Whether every racer's board and moves are shown to everyone in the
    /// room while the race runs. Off by default: every racer plays the same
    /// deal, so a rival's face-up card may be face down on one's own board
    /// (see the fair-play rule in `docs/PROTOCOL.md`). Chosen at creation,
    /// for private rooms of friends who agree to it; quick races never have it.
    pub open_boards: bool,
    /// A series: the room's race and its rematches are one match, won by
    /// the first player to win a majority of `best_of` races (1 to 9).
    /// `None` (the default) is a single race.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_of: Option<u8>,
    /// Whether a private room's races count for ratings: chosen at
    /// creation, and refused with `undo_allowed` or `open_boards`. Public
    /// rooms (quick race's) are rated without it, unless they allow undo.
    /// Absent when false.
    #[serde(skip_serializing_if = "is_false")]
    pub rated: bool,
}

/// For serde: a `false` flag is left out, so messages without it keep
/// their bytes.
fn is_false(flag: &bool) -> bool {
    !*flag
}

/// The most races a series may be the best of.
pub const MAX_BEST_OF: u8 = 9;

/// Messages the server sends.
///
/// Room events carry `seq`, a number that grows by one with each event of
/// the room (whoever it was for). A player that reconnects sends the last
/// `seq` it saw and gets the events it missed. Replies that change nothing
/// ([`ServerMessage::Error`], [`ServerMessage::MoveRejected`]) carry none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum ServerMessage {
    /// The answer to a good [`ClientMessage::Hello`].
    Welcome {
        /// The protocol version, equal to the client's.
        version: u32,
        /// The server's name and version, for logs.
        server: String,
        /// The limits this server enforces on each connection.
        limits: Limits,
    },
    /// A request was refused; nothing changed. Fatal codes are followed by a
    /// close frame.
    Error {
        /// What went wrong, for programs.
        code: ErrorCode,
        /// What went wrong, for people.
        message: String,
    },
    /// The sender is in a room, as a player (`seat`) or a spectator.
    RoomJoined {
        /// Room event number.
        seq: u64,
        /// The room.
        room: RoomInfo,
        /// The sender's seat; `None` for a spectator.
        seat: Option<u8>,
        /// For players: the secret that takes the seat back after a drop.
        /// Never shown to anyone else; replaced on each use.
        resume_token: Option<String>,
    },
    /// The answer to [`ClientMessage::JoinRoom`] or
    /// [`ClientMessage::Spectate`] when the room has closed after a race:
    /// its latest race, kept for good, for [`ClientMessage::Replay`] and
    /// the race's page (`/race/ID`). A code no kept race was raced under is
    /// refused with [`ErrorCode::RoomNotFound`].
    RoomClosed {
        /// The room's code.
        code: String,
        /// The room's latest race.
        race_id: u64,
    },
    /// The room's players, owner or phase changed.
    RoomUpdate {
        /// Room event number.
        seq: u64,
        /// The room as it is now.
        room: RoomInfo,
    },
    /// The race starts in `starts_in_ms` milliseconds.
    Countdown {
        /// Room event number.
        seq: u64,
        /// Milliseconds until [`ServerMessage::RaceStarted`].
        starts_in_ms: u64,
    },
    /// The race has started: everyone has this same board.
    RaceStarted {
        /// Room event number.
        seq: u64,
        /// SHA-256 (hex) of the deal, see [`commitment`]: the seed and salt
        /// come in [`Reveal`] after the race.
        commitment: String,
        /// The deal, as a player may see it.
        board: View,
        /// The race's time limit in milliseconds.
        time_limit_ms: u64,
    },
    /// To the mover only: its move was played.
    MoveAccepted {
        /// Room event number.
        seq: u64,
        /// The move in canonical notation.
        text: String,
        /// What the move did beyond itself; a card turned face up is named here.
        effects: Vec<Effect>,
        /// The mover's board after the move.
        board: View,
        /// The mover's progress after the move.
        progress: Progress,
    },
    /// To the mover only: its move was refused and changed nothing.
    MoveRejected {
        /// The text that was sent.
        text: String,
        /// Why, for programs: `illegal_move`, `bad_notation`, `race_not_started`, ...
        code: ErrorCode,
        /// The rules engine's reason, for `illegal_move`.
        reason: Option<MoveError>,
        /// Why, for people.
        message: String,
    },
    /// To everyone but the mover: a racer moved. Counts only, unless the
    /// room has [`RoomOptions::open_boards`]: the move and the board name
    /// cards that may still be face down in other racers' games.
    Progress {
        /// Room event number.
        seq: u64,
        /// Whose move.
        seat: u8,
        /// The racer's progress after the move.
        progress: Progress,
        /// With `open_boards` only: the move in canonical notation (`undo`
        /// for a take-back); `None` otherwise.
        text: Option<String>,
        /// With `open_boards` only: the racer's board after the move;
        /// `None` otherwise.
        board: Option<View>,
    },
    /// A racer is done: won, resigned, stuck, out of time or gone.
    Finished {
        /// Room event number.
        seq: u64,
        /// Who.
        seat: u8,
        /// How.
        status: PlayerStatus,
        /// Milliseconds from the start of the race.
        elapsed_ms: u64,
    },
    /// To one player: it has no legal move left. In rooms without undo this
    /// is followed by its [`ServerMessage::Finished`] as `stuck`.
    Stuck {
        /// Room event number.
        seq: u64,
    },
    /// The race is over: standings, the deal's secret, every move.
    RaceEnded {
        /// Room event number.
        seq: u64,
        /// The result.
        result: RaceResult,
    },
    /// The whole state of the room, to a spectator who joins, or to a player
    /// who resumes when its missed events are no longer kept.
    Snapshot {
        /// Room event number of the latest event.
        seq: u64,
        /// The room.
        room: RoomInfo,
        /// The race, once started.
        race: Option<RaceSnapshot>,
    },
    /// The seat is back: the events missed follow, or a snapshot.
    Resumed {
        /// Room event number of the latest event.
        seq: u64,
        /// The room.
        room: RoomInfo,
        /// The seat taken back.
        seat: u8,
        /// The new secret resume token; the old one no longer works.
        resume_token: String,
        /// Milliseconds since the race started, on the server's clock, once
        /// it has: the client's race clock counts from here, not from
        /// when it reads a replayed `race_started`.
        #[serde(default)]
        elapsed_ms: Option<u64>,
    },
    /// The sender left its room.
    Left {
        /// The room's code.
        code: String,
    },
    /// The server is stopping; the connection closes next.
    ShuttingDown {
        /// For people.
        message: String,
    },
    /// The room a `join_room`, `spectate`, `resume` or `quick_race` asked
    /// for is on another node of the cluster: connect to `url`, say
    /// `hello` and send the same request there. Nothing changed here, and
    /// this connection stays open.
    Redirect {
        /// The WebSocket URL of the node that has the room.
        url: String,
    },
    /// A new account: the connection is now this player.
    Registered {
        /// The player's id.
        player: u64,
        /// The player's name, as stored.
        name: String,
        /// The account's secret, shown this once: the server keeps only its
        /// hash, and a lost token is a lost account.
        token: String,
    },
    /// The connection is now this registered player.
    Authenticated {
        /// The player's id.
        player: u64,
        /// The player's name.
        name: String,
    },
    /// The player's daily attempt is open, new or taken back. Moves are
    /// answered with [`ServerMessage::MoveAccepted`], whose `seq` is the
    /// attempt's move count, and [`ServerMessage::MoveRejected`].
    DailyStarted {
        /// The attempt.
        attempt: DailyAttempt,
    },
    /// The player's daily attempt is over: its result, committed to the
    /// server's database before this message is sent.
    DailyFinished {
        /// The result and where it ranks.
        result: DailyResult,
    },
    /// The answer to [`ClientMessage::Leaderboard`].
    LeaderboardPage {
        /// The page.
        page: LeaderboardPage,
    },
    /// The answer to [`ClientMessage::Replay`]: a room's race, or a daily
    /// attempt of a closed day.
    ReplayData {
        /// The finished race.
        race: RaceRecord,
    },
    /// The answer to [`ClientMessage::Replay`] for the asker's own attempt
    /// at a day's deal before the day is closed: what the player saw, and
    /// nothing else.
    AttemptReplay {
        /// The attempt.
        attempt: OwnAttempt,
    },
    /// A change to a day followed with [`ClientMessage::Follow`].
    LeaderboardUpdate {
        /// The change.
        update: LeaderboardUpdate,
    },
    /// The answer to [`ClientMessage::DailyDays`].
    DaysPage {
        /// The days.
        page: DaysPage,
    },
    /// The answer to [`ClientMessage::PlayerStats`].
    PlayerRecord {
        /// The player's records.
        record: PlayerRecord,
    },
    /// The answer to [`ClientMessage::Standings`].
    StandingsPage {
        /// The standings.
        page: StandingsPage,
    },
    /// The answer to [`ClientMessage::ReplayBoards`].
    BoardsReplay {
        /// The race's boards.
        replay: BoardsReplay,
    },
    /// The answer to [`ClientMessage::RequestSignInCode`]: a code that signs
    /// in as this account once, on any device, until it expires.
    SignInCode {
        /// Eight characters of [`ROOM_CODE_ALPHABET`] in two groups of four,
        /// e.g. `K7PQ-3M9X`.
        code: String,
        /// Milliseconds it stays valid ([`SIGN_IN_CODE_MS`]).
        expires_in_ms: u64,
    },
    /// The answer to [`ClientMessage::RedeemSignInCode`]: the connection is
    /// now this player, as after `authenticate`.
    SignedIn {
        /// The player's id.
        player: u64,
        /// The player's name.
        name: String,
        /// A new secret token of the account for this device (48 hex
        /// digits), shown this once; the account's other tokens stay valid.
        token: String,
    },
    /// The answer to [`ClientMessage::SignOut`]: the token is revoked and
    /// the connection is a guest.
    SignedOut,
    /// The answer to [`ClientMessage::Lobby`].
    LobbyPage {
        /// The rooms.
        page: LobbyPage,
    },
    /// To everyone in a finished room: where the rematch stands, after each
    /// answer and when it is settled.
    RematchOffer {
        /// Room event number.
        seq: u64,
        /// The rematch.
        offer: RematchOffer,
    },
    /// To each racer, once every racer accepted: the new room is open and
    /// the seat in it is yours. Send [`ClientMessage::Leave`], then
    /// [`ClientMessage::Resume`] with this token (and `last_seq` 0).
    RematchReady {
        /// Room event number.
        seq: u64,
        /// The new room's code.
        code: String,
        /// The secret that takes the seat in the new room.
        resume_token: String,
    },
    /// To a player waiting alone in a quick race's room: how long they
    /// have waited, how wide their rating window is, whether a bot is
    /// offered, and how many players wait and race this game. Sent when
    /// the wait begins and every [`QUICK_RACE_STEP_MS`] after it.
    QuickRaceWait {
        /// The game.
        game: GameKind,
        /// Milliseconds waited.
        waited_ms: u64,
        /// Rating points either side of the player's estimate that a rival
        /// may be; absent once the window is open to anyone.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<u8>,
        /// Whether a marked server bot is offered: answer with
        /// [`ClientMessage::QuickRaceAnswer`].
        bot_offer: bool,
        /// Players seated in public rooms of this game whose race has not
        /// begun (the recipient among them).
        waiting: u32,
        /// Players seated in rooms of this game whose race runs.
        racing: u32,
    },
    /// A game's rating list: the answer to [`ClientMessage::Ratings`].
    RatingsPage {
        /// The game.
        game: GameKind,
        /// Players on the list (those with a rated race of the game in
        /// the last 90 days).
        players: u32,
        /// The top rows, best first.
        rows: Vec<RatingRow>,
        /// The asker's row, if the asker is signed in and rated at the game.
        own: Option<RatingRow>,
    },
    /// A player's rating and its history: the answer to
    /// [`ClientMessage::RatingHistory`].
    RatingHistoryPage {
        /// The game.
        game: GameKind,
        /// The player's name, as registered.
        name: String,
        /// The rating now; `None` before the player's first rated race of
        /// the game.
        rating: Option<RatingRow>,
        /// Rated races, newest first.
        races: Vec<RatingHistoryEntry>,
    },
}

/// One player's rating at one game, as shown: figures in whole
/// hundredths (the protocol has no floats), see [`crate::rating`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RatingRow {
    /// The place on the game's rating list; `None` off the list (no rated
    /// race in 90 days) or where no list was asked for.
    pub rank: Option<u32>,
    /// The player's name.
    pub name: String,
    /// The figure shown, `mu - 3 sigma`, in hundredths.
    pub rating: i32,
    /// The estimate `mu`, in hundredths.
    pub mu: i32,
    /// The uncertainty `sigma`, in hundredths: it grows with idle days.
    pub sigma: i32,
    /// Rated races played at the game.
    pub races: u32,
    /// Whether the rating is still provisional (`sigma` above 6).
    pub provisional: bool,
}

/// One rated race in a player's history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RatingHistoryEntry {
    /// The race, for [`ClientMessage::Replay`].
    pub race_id: u64,
    /// When it ended: Unix milliseconds.
    pub at_ms: u64,
    /// The player's place among the rated racers: the winners 1, 2...
    /// in finish order, everyone who did not win tied after them.
    pub place: u8,
    /// How many racers were rated.
    pub racers: u8,
    /// The figure shown (`mu - 3 sigma`) going in, in hundredths.
    pub before: i32,
    /// The figure shown after the race, in hundredths.
    pub after: i32,
}

/// How often a quick race's waiter hears [`ServerMessage::QuickRaceWait`],
/// and how often its rating window widens.
pub const QUICK_RACE_STEP_MS: u64 = 10_000;

/// The open public rooms still forming, as [`ServerMessage::LobbyPage`]
/// lists them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LobbyPage {
    /// Rooms waiting for players, fullest first, then oldest code first.
    pub rooms: Vec<LobbyRoom>,
    /// How often a client that shows the lobby should ask again, in
    /// milliseconds.
    pub refresh_ms: u32,
}

/// One open room of the lobby.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LobbyRoom {
    /// Its code, for [`ClientMessage::JoinRoom`].
    pub code: String,
    /// The game.
    pub game: GameKind,
    /// Seats.
    pub max_players: u8,
    /// The names of the seats taken, in seat order.
    pub players: Vec<String>,
    /// `lobby`, `dealing` or `countdown`: a room in its countdown still
    /// takes players until it is full.
    pub phase: Phase,
    /// The series the room's race belongs to, if it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<SeriesScore>,
    /// Each player's rating at the room's game, in `players`' order:
    /// `None` for a guest's or a bot's seat. Left out when no seat is a
    /// registered player's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ratings: Vec<Option<SeatRating>>,
}

/// A waiting player's rating as the lobby shows it, in whole hundredths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatRating {
    /// The figure shown, `mu - 3 sigma` (0 for a player with no rated
    /// race of the game yet).
    pub rating: i32,
    /// Whether the rating is still provisional.
    pub provisional: bool,
}

/// How often a client showing the lobby asks for it again, in milliseconds.
pub const LOBBY_REFRESH_MS: u32 = 2_000;

/// A series' score: races won by each player, and who won it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeriesScore {
    /// The series is the best of this many races.
    pub best_of: u8,
    /// Races of the series over so far.
    pub races: u8,
    /// Each player's races won, in the order they first raced.
    pub wins: Vec<SeriesWins>,
    /// The player who has won a majority of `best_of`: the series is over.
    pub winner: Option<String>,
}

/// One player's races won in a series.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeriesWins {
    /// The player's name in the room.
    pub name: String,
    /// Races won.
    pub wins: u8,
}

impl SeriesScore {
    /// A series of `best_of` races, none raced yet.
    pub fn new(best_of: u8) -> SeriesScore {
        SeriesScore {
            best_of,
            races: 0,
            wins: Vec::new(),
            winner: None,
        }
    }

    /// The races a player must win to win the series: a majority.
    pub fn needed(&self) -> u8 {
        self.best_of / 2 + 1
    }

    /// Adds a player (with no win) unless the score has it already.
    pub fn enter(&mut self, name: &str) {
        if self.wins.iter().all(|entry| entry.name != name) {
            self.wins.push(SeriesWins {
                name: name.to_string(),
                wins: 0,
            });
        }
    }

    /// Counts a race of the series won by `first` (the race's first place);
    /// the first player to reach [`SeriesScore::needed`] wins the series,
    /// which then counts nothing more.
    pub fn record(&mut self, first: &str) {
        if self.winner.is_some() {
            return;
        }
        self.races = self.races.saturating_add(1);
        self.enter(first);
        let needed = self.needed();
        if let Some(entry) = self.wins.iter_mut().find(|entry| entry.name == first) {
            entry.wins = entry.wins.saturating_add(1);
            if entry.wins >= needed {
                self.winner = Some(entry.name.clone());
            }
        }
    }

    /// The score a rematch races for: this one, or a new series of the
    /// same length once this one is won.
    pub fn for_rematch(&self) -> SeriesScore {
        if self.winner.is_some() {
            let mut fresh = SeriesScore::new(self.best_of);
            for entry in &self.wins {
                fresh.enter(&entry.name);
            }
            fresh
        } else {
            self.clone()
        }
    }

    /// The score as a line: `ada 2 - bob 1 (best of 5)`.
    pub fn line(&self) -> String {
        let scores: Vec<String> = self
            .wins
            .iter()
            .map(|entry| format!("{} {}", entry.name, entry.wins))
            .collect();
        let mut line = format!("{} (best of {})", scores.join(" - "), self.best_of);
        if let Some(winner) = &self.winner {
            line.push_str(&format!(": {winner} wins the series"));
        }
        line
    }
}

/// Where a rematch stands, as [`ServerMessage::RematchOffer`] tells it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RematchOffer {
    /// Open, ready, declined or expired.
    pub status: RematchStatus,
    /// Seats that accepted (bots accept at once).
    pub accepted: Vec<u8>,
    /// Seats that declined or left.
    pub declined: Vec<u8>,
    /// Seats that have not answered.
    pub waiting: Vec<u8>,
    /// Milliseconds left to answer while it is open; 0 once settled.
    pub expires_in_ms: u64,
}

/// Where a rematch is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RematchStatus {
    /// Waiting for answers.
    Open,
    /// Everyone accepted: [`ServerMessage::RematchReady`] follows.
    Ready,
    /// Someone declined or left: there is no rematch.
    Declined,
    /// Someone did not answer in time: there is no rematch.
    Expired,
}

/// How long racers have to answer a rematch, in milliseconds.
pub const REMATCH_WAIT_MS: u64 = 30_000;

/// A player's attempt at the day's deal, as the player may see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DailyAttempt {
    /// The game.
    pub game: GameKind,
    /// The UTC date whose deal this is, `YYYY-MM-DD`.
    pub date: String,
    /// SHA-256 of the day's deal, see [`commitment`]; revealed with the
    /// day's leaderboard once the day is over.
    pub commitment: String,
    /// The player's board now.
    pub board: View,
    /// The moves played so far, in notation.
    pub moves: Vec<String>,
    /// The player's progress; `elapsed_ms` is the server's clock since the
    /// attempt began.
    pub progress: Progress,
    /// The attempt's time limit in milliseconds.
    pub time_limit_ms: u64,
    /// Whether the attempt was begun before (this is a resume).
    pub resumed: bool,
    /// Attempts of the day finished when this one (re)opened.
    pub finishers: u32,
    /// Their winning times, fastest first (at most [`MAX_WINNING_TIMES`]):
    /// a win at `t` would rank just after those below `t`, which a client
    /// shows as the race goes on.
    pub winning_times_ms: Vec<u64>,
    /// Known when the attempt opens: `new_account` if the account was
    /// registered on the day or later, so the attempt is played but kept off
    /// the ranking (a win would take the place `winning_times_ms` gives,
    /// unranked). `None` otherwise; `review` is decided only at the end.
    #[serde(default)]
    pub unranked: Option<Unranked>,
}

/// The most winning times a [`DailyAttempt`] lists.
pub const MAX_WINNING_TIMES: usize = 1000;

impl DailyAttempt {
    /// The rank a win at `elapsed_ms` would have among the finishers known
    /// at the start: after every faster win (ties go to who won first).
    pub fn rank_if_won_at(&self, elapsed_ms: u64) -> u32 {
        let faster = self
            .winning_times_ms
            .partition_point(|&time| time <= elapsed_ms);
        u32::try_from(faster).unwrap_or(u32::MAX).saturating_add(1)
    }
}

/// How a daily attempt ended, and where it ranks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DailyResult {
    /// The game.
    pub game: GameKind,
    /// The UTC date, `YYYY-MM-DD`.
    pub date: String,
    /// Won, resigned, stuck or out of time.
    pub status: PlayerStatus,
    /// Moves, cards home and time at the end.
    pub progress: Progress,
    /// The attempt's rank among the day's finished attempts so far.
    pub rank: u32,
    /// How many attempts of the day have finished so far.
    pub finishers: u32,
    /// The attempt, as a race of one, for [`ClientMessage::Replay`].
    pub race_id: u64,
    /// Why the attempt is kept off the ranking, if it is: `rank` is then
    /// the place it would have taken, and `finishers` counts only the
    /// ranked attempts.
    pub unranked: Option<Unranked>,
}

/// Why a finished daily attempt is kept off the day's ranking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unranked {
    /// The account was registered on the attempt's day (UTC) or later: only
    /// accounts registered before the day began rank on it.
    NewAccount,
    /// The moves came faster than a person plays: the attempt is kept for
    /// an operator's review, who may rank it.
    Review,
}

/// A player's own finished attempt of a day still open, as the player saw
/// it: the answer to [`ClientMessage::Replay`] before the day is closed.
/// It has no seed and no salt, and each board is a [`View`]: a card the
/// player never turned stays hidden.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnAttempt {
    /// The game.
    pub game: GameKind,
    /// The UTC date, `YYYY-MM-DD`.
    pub date: String,
    /// The attempt as a race of one.
    pub race_id: u64,
    /// How it ended.
    pub status: PlayerStatus,
    /// Moves, cards home and time at the end.
    pub progress: Progress,
    /// Every move, in notation.
    pub moves: Vec<String>,
    /// The player's board before the first move (`boards[0]`, the deal as
    /// dealt) and after each move: one more than `moves`.
    pub boards: Vec<View>,
}

/// One line of a daily leaderboard. The board lists every finished attempt
/// of the day in the ranking's order, those kept off the ranking among them
/// where they would stand, marked by `unranked`: a day is never empty, even
/// on a fresh server where every account is new.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaderboardRow {
    /// 1 for the best: won first, then less time, then fewer moves. A row
    /// off the ranking (`unranked`) has no rank of its own: this is the
    /// place it would have taken.
    pub rank: u32,
    /// The player's name.
    pub name: String,
    /// How the attempt ended.
    pub status: PlayerStatus,
    /// Milliseconds from the attempt's start to its end.
    pub elapsed_ms: u64,
    /// Moves played.
    pub moves: u32,
    /// Cards brought home.
    pub cards_home: u16,
    /// The attempt as a race, for [`ClientMessage::Replay`] (which, until
    /// the day is closed, answers only the attempt's own player).
    pub race_id: u64,
    /// Why the attempt is off the ranking; `rank` is then the place it
    /// would have taken.
    pub unranked: Option<Unranked>,
    /// Its place on the board, 1 for the top, counting every finished
    /// attempt, ranked or not (a podium's rows: their rank).
    #[serde(default)]
    pub place: u32,
}

/// A day's leaderboard of one game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaderboardPage {
    /// The game.
    pub game: GameKind,
    /// The UTC date, `YYYY-MM-DD`.
    pub date: String,
    /// Whether the day is over: the ranking is final.
    pub day_over: bool,
    /// Finished attempts on the ranking.
    pub finishers: u32,
    /// Finished attempts kept off the ranking (see [`Unranked`]).
    pub unranked: u32,
    /// Attempts still being played.
    pub playing: u32,
    /// The top rows of the board, ranked and unranked, by `place`.
    pub rows: Vec<LeaderboardRow>,
    /// The asking player's own row, whether or not it is in `rows`.
    pub own: Option<LeaderboardRow>,
    /// The day's deal, once the day is over (`None` before).
    pub reveal: Option<Reveal>,
}

/// A finished race kept by the server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaceRecord {
    /// The race's id.
    pub race_id: u64,
    /// For a daily attempt, its UTC date.
    pub daily: Option<String>,
    /// When the race ended: milliseconds since the Unix epoch, server clock.
    pub ended_at_ms: u64,
    /// Standings, the deal's seed and every move.
    pub result: RaceResult,
}

/// Whether `name` may be a registered player's name: 3 to 20 characters,
/// ASCII letters, digits, `_` and `-`, starting with a letter. Names are
/// unique by [`name_key`]: whatever their case or look-alike spelling.
pub fn valid_player_name(name: &str) -> bool {
    // A registered name is shown in rooms as the display name, so it keeps
    // that rule first (the ASCII rule implies it today; a wider alphabet
    // later must not let bidirectional controls in).
    display_name(name) == Ok(name)
        && (3..=MAX_PLAYER_NAME_CHARS).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The longest registered player's name.
pub const MAX_PLAYER_NAME_CHARS: usize = 20;

/// The longest display name (the name in [`ClientMessage::Hello`]), in
/// characters.
pub const MAX_DISPLAY_NAME_CHARS: usize = 24;

/// Why a display name is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Empty once trimmed, or longer than [`MAX_DISPLAY_NAME_CHARS`].
    #[error("a name has 1 to {MAX_DISPLAY_NAME_CHARS} characters")]
    Length,
    /// A control character (`U+0000`-`U+001F`, `U+007F`-`U+009F`).
    #[error("a name may not hold control characters")]
    Control,
    /// A bidirectional formatting character, which reorders the text shown
    /// around the name.
    #[error("a name may not hold bidirectional formatting characters")]
    Bidi,
    /// Nothing a reader can see: spaces, zero-width and format characters,
    /// combining marks with no letter to sit on, blank letters.
    #[error("a name needs a visible character")]
    Invisible,
    /// An invisible or format character inside the name (zero-width space,
    /// word joiner, byte order mark, soft hyphen, tag characters, a zero-width
    /// joiner anywhere but between two emoji) or a blank letter: each lets
    /// two names look the same but differ.
    #[error(
        "a name may not hold invisible or format characters (a zero-width joiner only between emoji)"
    )]
    Hidden,
    /// Ends in a number in brackets, such as `ada (2)`: the server's own mark
    /// for a repeated name in a room.
    #[error(
        "a name may not end in a number in brackets, the mark the server gives a repeated name"
    )]
    Numbered,
}

/// The bidirectional formatting characters: embeddings and overrides
/// (`U+202A`-`U+202E`), isolates (`U+2066`-`U+2069`) and the implicit marks
/// (`U+200E`, `U+200F`, `U+061C`). A name holding one could make the text
/// after it (another name, a move, a rank) read in another order.
fn is_bidi_control(character: char) -> bool {
    matches!(character, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Whether a character shows nothing by itself: white space, format
/// characters (`Cf`: zero-width space and joiners, word joiner, BOM, ...),
/// combining marks (`M`), and the letters fonts draw blank.
fn is_invisible(character: char) -> bool {
    use finl_unicode::categories::CharacterCategories as _;
    character.is_whitespace()
        || character.is_format()
        || character.is_mark()
        || is_blank_letter(character)
}

/// The letters fonts draw blank: the Hangul fillers and the blank Braille
/// pattern, the usual way to fake an empty name or pad a copied one.
fn is_blank_letter(character: char) -> bool {
    matches!(
        character,
        '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' | '\u{2800}'
    )
}

/// Whether the character at `index` of `characters` hides inside a name: a
/// format character or a blank letter. The one exception is a zero-width
/// joiner between two emoji (`👩‍💻`), which joins them into one picture:
/// after an emoji, its skin tone or its emoji presentation selector, and
/// before another emoji.
fn hides_at(characters: &[char], index: usize) -> bool {
    use finl_unicode::categories::CharacterCategories as _;
    let character = characters[index];
    if character == '\u{200D}' {
        let before = index.checked_sub(1).map(|before| characters[before]);
        let after = characters.get(index + 1).copied();
        let joins_emoji = before.is_some_and(|before| {
            before.is_symbol_other() || before.is_symbol_modifier() || before == '\u{FE0F}'
        }) && after.is_some_and(|after| after.is_symbol_other());
        return !joins_emoji;
    }
    character.is_format() || is_blank_letter(character)
}

/// Checks a display name (the `hello` name) and returns it trimmed of
/// surrounding white space: 1 to [`MAX_DISPLAY_NAME_CHARS`] characters, no
/// control or bidirectional formatting character, at least one visible
/// character, no invisible or format character anywhere (a zero-width
/// joiner only between two emoji), and not ending in a number in brackets
/// (`ada (2)`, the server's mark for a repeated name, compared by
/// [`name_key`] so that look-alike digits and brackets count too).
/// Combining marks may follow a visible character (accents need them).
pub fn display_name(name: &str) -> Result<&str, NameError> {
    let name = name.trim();
    let characters: Vec<char> = name.chars().collect();
    if characters.is_empty() || characters.len() > MAX_DISPLAY_NAME_CHARS {
        Err(NameError::Length)
    } else if characters.iter().any(|character| character.is_control()) {
        Err(NameError::Control)
    } else if characters.iter().copied().any(is_bidi_control) {
        Err(NameError::Bidi)
    } else if characters.iter().copied().all(is_invisible) {
        Err(NameError::Invisible)
    } else if (0..characters.len()).any(|index| hides_at(&characters, index)) {
        Err(NameError::Hidden)
    } else if ends_numbered(&name_key(name)) {
        Err(NameError::Numbered)
    } else {
        Ok(name)
    }
}

/// The key two names are compared by: their confusable skeleton (Unicode
/// TS #39), folded to lower case and taken again, so that names that look
/// alike have one key whatever their case or script (`ada`, `ADA`, `аda`
/// with a Cyrillic `а`, fullwidth `ａｄａ`; `rn` and `m`; `I`, `l` and `1`).
/// Within a room, seats whose names share a key are told apart by the
/// server's mark (`ada (2)`); registered names are unique by key.
pub fn name_key(name: &str) -> String {
    let skeleton: String = unicode_security::skeleton(name).collect();
    unicode_security::skeleton(&skeleton.to_lowercase()).collect()
}

/// Whether a name's key ends as the server's mark does: an opening bracket,
/// one or more digits, a closing bracket, each compared by its key.
fn ends_numbered(key: &str) -> bool {
    let digits = name_key("0123456789");
    let Some(rest) = key.strip_suffix(name_key(")").as_str()) else {
        return false;
    };
    let without_digits = rest.trim_end_matches(|character: char| {
        character.is_ascii_digit() || digits.contains(character)
    });
    without_digits.len() < rest.len() && without_digits.ends_with(name_key("(").as_str())
}

/// The per-connection limits a server enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// The largest message accepted, in bytes.
    pub max_message_bytes: u32,
    /// Messages per second allowed, on average.
    pub messages_per_second: u32,
    /// Messages allowed in a burst above the average.
    pub burst: u32,
}

/// A room as everyone in it sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoomInfo {
    /// The room's code: six characters from [`ROOM_CODE_ALPHABET`].
    pub code: String,
    /// The game.
    pub game: GameKind,
    /// Seats.
    pub max_players: u8,
    /// Whether quick race may fill it.
    pub public: bool,
    /// Race options.
    pub options: RoomOptions,
    /// The owner's seat (who may start early); `None` once the owner left.
    pub owner: Option<u8>,
    /// Where the room is in its life.
    pub phase: Phase,
    /// The seats taken, in seat order.
    pub players: Vec<PlayerInfo>,
    /// How many spectators watch.
    pub spectators: u32,
    /// The series the room's race belongs to (rooms created with
    /// [`RoomOptions::best_of`] and their rematches); once the race is
    /// over, its point is counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<SeriesScore>,
}

/// The characters room codes are made of: no `0/O`, `1/I/L`, `2/Z`, `5/S`, `8/B`, `U/V`.
pub const ROOM_CODE_ALPHABET: &str = "34679ACDEFGHJKMNPQRTWXY";

/// Where a room is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Waiting for players.
    Lobby,
    /// The race is due to start but waits for the solver to prove a deal;
    /// the countdown is sent once the deal is there.
    Dealing,
    /// Counting down to the start.
    Countdown,
    /// Racing.
    Racing,
    /// The race is over.
    Finished,
}

/// One seat of a room.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerInfo {
    /// The seat number, 0-based, stable for the room's life.
    pub seat: u8,
    /// The player's name.
    pub name: String,
    /// Whether its connection is up (a dropped player keeps its seat for a
    /// grace period).
    pub connected: bool,
    /// Where it is in the race.
    pub status: PlayerStatus,
    /// `None` for a person; a bot the server runs has its level here (and a
    /// name that says it is a bot).
    #[serde(default)]
    pub bot: Option<BotLevel>,
}

/// Where a player is in the race.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlayerStatus {
    /// In the lobby, before the race.
    Waiting,
    /// Playing.
    Racing,
    /// Won the deal.
    Won,
    /// Gave up.
    Resigned,
    /// Had no legal move left.
    Stuck,
    /// Ran out of time.
    OutOfTime,
    /// Left the room or did not come back within the grace period.
    Left,
}

/// A racer's progress, as anyone may see it: counts that name no card.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Moves played (take-backs count as moves).
    pub moves: u32,
    /// Cards home: on foundations, discarded, or on Virginia Reel home piles.
    pub cards_home: u16,
    /// Cards in their winning order ([`cards_in_order`]): the cards home,
    /// and in Three Blind Mice also the cards dealt face up that are built
    /// in suit order down from a King at the bottom of a pile. The one
    /// measure of how far a racer has come, the same for every viewer:
    /// every progress bar draws it, and the standings rank by it.
    #[serde(default)]
    pub cards_in_order: u16,
    /// Complete runs home: full foundations (13 cards), and complete Virginia
    /// Reel home piles (4 cards).
    #[serde(default)]
    pub runs_home: u8,
    /// Cards dealt face down outside the stock that are now face up.
    #[serde(default)]
    pub cards_uncovered: u16,
    /// Cards that have left the stock (turned to the waste or dealt out).
    #[serde(default)]
    pub stock_turned: u16,
    /// Milliseconds from the start of the race to the last move.
    pub elapsed_ms: u64,
}

impl Progress {
    /// The progress of a board that started as `deal` and is now `board`,
    /// after `moves` moves at `elapsed_ms`: every count is taken from what
    /// anyone may see, so every client computes the same numbers.
    pub fn measure(deal: &View, board: &View, moves: u32, elapsed_ms: u64) -> Progress {
        let hidden = |view: &View, in_stock: bool| -> usize {
            view.zones
                .iter()
                .filter(|zone| (zone.zone == Zone::Stock) == in_stock)
                .map(|zone| usize::from(zone.hidden))
                .sum()
        };
        let fewer = |before: usize, after: usize| {
            u16::try_from(before.saturating_sub(after)).unwrap_or(u16::MAX)
        };
        Progress {
            moves,
            cards_home: cards_home(board),
            cards_in_order: cards_in_order(deal, board),
            runs_home: runs_home(board),
            cards_uncovered: fewer(hidden(deal, false), hidden(board, false)),
            stock_turned: fewer(hidden(deal, true), hidden(board, true)),
            elapsed_ms,
        }
    }
}

/// The race as a spectator or a resuming player needs it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaceSnapshot {
    /// The commitment sent at the start.
    pub commitment: String,
    /// Milliseconds since the race started.
    pub elapsed_ms: u64,
    /// The time limit in milliseconds.
    pub time_limit_ms: u64,
    /// Every racer's progress in seat order, with the boards the recipient
    /// may see.
    pub boards: Vec<SeatBoard>,
    /// Once the race is over, its result.
    pub result: Option<RaceResult>,
}

/// One racer's progress, and its board where the recipient may see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatBoard {
    /// Whose board.
    pub seat: u8,
    /// Where the racer is in the race.
    pub status: PlayerStatus,
    /// The board: the recipient's own, every board once the race is over
    /// or in a room with `open_boards`; `None` otherwise.
    pub board: Option<View>,
    /// The racer's progress.
    pub progress: Progress,
}

/// The end of a race: who placed where, the deal's secret, every move.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaceResult {
    /// The id under which the server keeps the race, for
    /// [`ClientMessage::Replay`]; `None` if it could not be stored.
    #[serde(default)]
    pub race_id: Option<u64>,
    /// Best first: won, then finish time, then progress, then fewer moves.
    pub standings: Vec<Standing>,
    /// The deal's seed and salt, to check the commitment.
    pub reveal: Reveal,
    /// Every racer's moves, in notation, in the order played.
    pub logs: Vec<MoveLog>,
    /// Whether the race was run with [`RoomOptions::open_boards`]: every
    /// board was shown live.
    #[serde(default)]
    pub open_boards: bool,
}

/// One line of the standings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Standing {
    /// 1 for the winner.
    pub rank: u8,
    /// The racer's seat.
    pub seat: u8,
    /// The racer's name.
    pub name: String,
    /// How its race ended.
    pub status: PlayerStatus,
    /// Its progress when it finished.
    pub progress: Progress,
    /// `None` for a person; the level of a bot the server ran.
    #[serde(default)]
    pub bot: Option<BotLevel>,
}

/// What the commitment hid: with it, anyone can deal the same cards with
/// `AnyGame::deal(game, seed)` and replay every move log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reveal {
    /// The game.
    pub game: GameKind,
    /// The deal's seed.
    pub seed: u64,
    /// The random salt, 32 hex digits.
    pub salt: String,
}

/// One racer's moves, for replays and for checking that every move was legal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveLog {
    /// Whose moves.
    pub seat: u8,
    /// Each move in canonical notation, from the deal on; `undo` takes back
    /// the move before it.
    pub moves: Vec<String>,
}

/// The text of a take-back in a [`MoveLog`] and in [`ServerMessage::Progress`].
pub const UNDO_TEXT: &str = "undo";

/// A stable, typed reason for a refusal. Serialized as a snake_case string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The client speaks another protocol version (fatal).
    UnsupportedVersion,
    /// The first message was not `hello` (fatal).
    HelloRequired,
    /// A second `hello`.
    AlreadyGreeted,
    /// The frame is not a MessagePack message of this protocol.
    MalformedMessage,
    /// A well-formed message of a type this protocol does not have.
    UnknownMessage,
    /// A text frame: this protocol uses binary frames only.
    TextFrame,
    /// Too many messages: the connection is closed with code 1008 (fatal).
    RateLimited,
    /// Too many connections (fatal).
    ServerFull,
    /// The server is stopping (fatal).
    ShuttingDown,
    /// Silent for too long (fatal).
    IdleTimeout,
    /// The connection could not keep up with its messages (fatal; players may resume).
    TooSlow,
    /// Another connection took this seat with its resume token (fatal).
    Replaced,
    /// Room options out of bounds (players, time limit, name).
    InvalidRequest,
    /// The server does not deal this game.
    GameUnavailable,
    /// Too many rooms are open.
    TooManyRooms,
    /// No room has that code.
    RoomNotFound,
    /// Every seat is taken.
    RoomFull,
    /// The race has started or ended: seats are closed (spectating is not).
    RaceAlreadyStarted,
    /// The connection is already in a room.
    AlreadyInRoom,
    /// The connection is in no room.
    NotInRoom,
    /// Only the room's owner may do that.
    NotOwner,
    /// A spectator cannot move.
    NotAPlayer,
    /// A move named another player's board.
    NotYourBoard,
    /// The race has not started yet.
    RaceNotStarted,
    /// The race is over, or the sender's part in it.
    RaceOver,
    /// The move's text does not read as a move of this position.
    BadNotation,
    /// The rules refuse the move; see `reason`.
    IllegalMove,
    /// This room's options do not allow undo.
    UndoNotAllowed,
    /// There is no move to take back.
    NothingToUndo,
    /// The resume token is unknown, used up, or its seat is gone.
    InvalidResumeToken,
    /// A player's name that breaks the rules of [`valid_player_name`].
    InvalidName,
    /// Another player has that name.
    NameTaken,
    /// The account token is unknown.
    InvalidToken,
    /// The request needs a registered player: authenticate first.
    NotAuthenticated,
    /// The player has finished today's deal of this game already.
    DailyAlreadyPlayed,
    /// No finished race has that id.
    RaceNotFound,
    /// No registered player has that name.
    PlayerNotFound,
    /// That daily attempt is another player's, and its day is not closed:
    /// nobody but its player may watch it before then.
    ReplayNotYet,
    /// This source address has registered too many accounts lately.
    RegistrationLimited,
    /// The sign-in code is unknown, used already, or expired.
    InvalidSignInCode,
    /// This source address has tried too many sign-in codes lately.
    SignInLimited,
    /// The server failed; nothing changed.
    Internal,
}

impl ErrorCode {
    /// Every code, in the order of the document's table.
    pub const ALL: [ErrorCode; 42] = [
        ErrorCode::UnsupportedVersion,
        ErrorCode::HelloRequired,
        ErrorCode::AlreadyGreeted,
        ErrorCode::MalformedMessage,
        ErrorCode::UnknownMessage,
        ErrorCode::TextFrame,
        ErrorCode::RateLimited,
        ErrorCode::ServerFull,
        ErrorCode::ShuttingDown,
        ErrorCode::IdleTimeout,
        ErrorCode::TooSlow,
        ErrorCode::Replaced,
        ErrorCode::InvalidRequest,
        ErrorCode::GameUnavailable,
        ErrorCode::TooManyRooms,
        ErrorCode::RoomNotFound,
        ErrorCode::RoomFull,
        ErrorCode::RaceAlreadyStarted,
        ErrorCode::AlreadyInRoom,
        ErrorCode::NotInRoom,
        ErrorCode::NotOwner,
        ErrorCode::NotAPlayer,
        ErrorCode::NotYourBoard,
        ErrorCode::RaceNotStarted,
        ErrorCode::RaceOver,
        ErrorCode::BadNotation,
        ErrorCode::IllegalMove,
        ErrorCode::UndoNotAllowed,
        ErrorCode::NothingToUndo,
        ErrorCode::InvalidResumeToken,
        ErrorCode::InvalidName,
        ErrorCode::NameTaken,
        ErrorCode::InvalidToken,
        ErrorCode::NotAuthenticated,
        ErrorCode::DailyAlreadyPlayed,
        ErrorCode::RaceNotFound,
        ErrorCode::PlayerNotFound,
        ErrorCode::ReplayNotYet,
        ErrorCode::RegistrationLimited,
        ErrorCode::InvalidSignInCode,
        ErrorCode::SignInLimited,
        ErrorCode::Internal,
    ];

    /// The code's wire name, as serde writes it (e.g. `rate_limited`): also
    /// the reason of the close frame that follows a fatal code.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnsupportedVersion => "unsupported_version",
            ErrorCode::HelloRequired => "hello_required",
            ErrorCode::AlreadyGreeted => "already_greeted",
            ErrorCode::MalformedMessage => "malformed_message",
            ErrorCode::UnknownMessage => "unknown_message",
            ErrorCode::TextFrame => "text_frame",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::ServerFull => "server_full",
            ErrorCode::ShuttingDown => "shutting_down",
            ErrorCode::IdleTimeout => "idle_timeout",
            ErrorCode::TooSlow => "too_slow",
            ErrorCode::Replaced => "replaced",
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::GameUnavailable => "game_unavailable",
            ErrorCode::TooManyRooms => "too_many_rooms",
            ErrorCode::RoomNotFound => "room_not_found",
            ErrorCode::RoomFull => "room_full",
            ErrorCode::RaceAlreadyStarted => "race_already_started",
            ErrorCode::AlreadyInRoom => "already_in_room",
            ErrorCode::NotInRoom => "not_in_room",
            ErrorCode::NotOwner => "not_owner",
            ErrorCode::NotAPlayer => "not_a_player",
            ErrorCode::NotYourBoard => "not_your_board",
            ErrorCode::RaceNotStarted => "race_not_started",
            ErrorCode::RaceOver => "race_over",
            ErrorCode::BadNotation => "bad_notation",
            ErrorCode::IllegalMove => "illegal_move",
            ErrorCode::UndoNotAllowed => "undo_not_allowed",
            ErrorCode::NothingToUndo => "nothing_to_undo",
            ErrorCode::InvalidResumeToken => "invalid_resume_token",
            ErrorCode::InvalidName => "invalid_name",
            ErrorCode::NameTaken => "name_taken",
            ErrorCode::InvalidToken => "invalid_token",
            ErrorCode::NotAuthenticated => "not_authenticated",
            ErrorCode::DailyAlreadyPlayed => "daily_already_played",
            ErrorCode::RaceNotFound => "race_not_found",
            ErrorCode::PlayerNotFound => "player_not_found",
            ErrorCode::ReplayNotYet => "replay_not_yet",
            ErrorCode::RegistrationLimited => "registration_limited",
            ErrorCode::InvalidSignInCode => "invalid_sign_in_code",
            ErrorCode::SignInLimited => "sign_in_limited",
            ErrorCode::Internal => "internal",
        }
    }

    /// Whether a player closed with this error may take its seat back with
    /// its resume token (the server said "resume to catch up"): the seat is
    /// kept, unlike after `replaced` or `shutting_down`.
    pub fn is_resumable(self) -> bool {
        matches!(self, ErrorCode::TooSlow | ErrorCode::IdleTimeout)
    }

    /// Whether the server closes the connection after this error.
    pub fn is_fatal(self) -> bool {
        matches!(
            self,
            ErrorCode::UnsupportedVersion
                | ErrorCode::HelloRequired
                | ErrorCode::RateLimited
                | ErrorCode::ServerFull
                | ErrorCode::ShuttingDown
                | ErrorCode::IdleTimeout
                | ErrorCode::TooSlow
                | ErrorCode::Replaced
        )
    }
}

/// A frame that is not a message of this protocol.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Not MessagePack, not a map with string keys and a string `type`, or
    /// a known type whose fields are missing or of the wrong type.
    #[error("malformed message: {0}")]
    Malformed(String),
    /// A map whose `type` names no message of this protocol.
    #[error("unknown message type {0:?}")]
    Unknown(String),
    /// A message that names a game (`create_room`, `quick_race`,
    /// `daily_play`, `leaderboard`) with a name no game of this protocol has.
    #[error("no game is called {0:?}")]
    UnknownGame(String),
}

impl DecodeError {
    /// The error code a server answers with.
    pub fn code(&self) -> ErrorCode {
        match self {
            DecodeError::Malformed(_) => ErrorCode::MalformedMessage,
            DecodeError::Unknown(_) => ErrorCode::UnknownMessage,
            DecodeError::UnknownGame(_) => ErrorCode::GameUnavailable,
        }
    }
}

/// Encodes a message as MessagePack with named fields.
pub fn encode<T: Serialize>(message: &T) -> Vec<u8> {
    // Every protocol type serializes: maps with string keys, no floats, no
    // unsupported shapes. A failure would be a bug in this module, which the
    // snapshot tests rule out; the empty frame is the panic-free fallback.
    let mut frame = rmp_serde::to_vec_named(message).unwrap_or_default();
    // The encoder grows its buffer by doubling, so up to half of it is
    // spare; a frame is often kept (a room keeps its events for resumes),
    // and a kept frame would keep its spare bytes too.
    frame.shrink_to_fit();
    frame
}

/// The client messages with a `game` field: a game name that is not one of
/// [`GameKind`]'s is `game_unavailable`, not a malformed message, so that a
/// client asking for a game this protocol lacks is told so.
const GAME_MESSAGES: [&str; 11] = [
    "create_room",
    "quick_race",
    "daily_play",
    "leaderboard",
    "follow",
    "unfollow",
    "daily_days",
    "standings",
    "lobby",
    "ratings",
    "rating_history",
];

/// Decodes in two steps, so that what is wrong is told from the `type` tag
/// and never from a library's error text: first the frame must be a map
/// with string keys and a string `type` (an integer `type`, which rmp-serde
/// would read as a variant's index, is malformed); then the type must be
/// one of `T`'s; then its fields must decode.
fn decode<T: DeserializeOwned>(bytes: &[u8], game_messages: &[&str]) -> Result<T, DecodeError> {
    // One message a frame, nothing after it: read through a cursor, which
    // tells where the message ended.
    let mut cursor = std::io::Cursor::new(bytes);
    let TypeTag(tag) = rmp_serde::from_read(&mut cursor)
        .map_err(|error| DecodeError::Malformed(error.to_string()))?;
    if usize::try_from(cursor.position()).ok() != Some(bytes.len()) {
        return Err(DecodeError::Malformed(
            "bytes after the end of the message".to_string(),
        ));
    }
    if !is_known_type::<T>(&tag) {
        return Err(DecodeError::Unknown(tag));
    }
    rmp_serde::from_slice(bytes).map_err(|error| {
        #[derive(Deserialize)]
        struct GameName {
            game: String,
        }
        let unknown_game = rmp_serde::from_slice::<GameName>(bytes)
            .ok()
            .filter(|_| game_messages.contains(&tag.as_str()))
            .filter(|named| GameKind::ALL.iter().all(|game| game.slug() != named.game));
        match unknown_game {
            Some(named) => DecodeError::UnknownGame(named.game),
            None => DecodeError::Malformed(error.to_string()),
        }
    })
}

/// The `type` of a message, read from a map with string keys; every other
/// value is skipped unread.
struct TypeTag(String);

impl<'de> Deserialize<'de> for TypeTag {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<TypeTag, D::Error> {
        struct TagVisitor;

        impl<'de> de::Visitor<'de> for TagVisitor {
            type Value = TypeTag;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a map with string keys and a string `type`")
            }

            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<TypeTag, A::Error> {
                let mut tag = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key != "type" {
                        map.next_value::<de::IgnoredAny>()?;
                    } else if tag.is_some() {
                        return Err(de::Error::duplicate_field("type"));
                    } else {
                        tag = Some(map.next_value::<TextOnly>()?.0);
                    }
                }
                tag.map(TypeTag)
                    .ok_or_else(|| de::Error::missing_field("type"))
            }
        }

        deserializer.deserialize_map(TagVisitor)
    }
}

/// A MessagePack string, and nothing else: serde's `String` would take a
/// bin of UTF-8 bytes too.
struct TextOnly(String);

impl<'de> Deserialize<'de> for TextOnly {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<TextOnly, D::Error> {
        struct TextVisitor;

        impl de::Visitor<'_> for TextVisitor {
            type Value = TextOnly;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a string")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<TextOnly, E> {
                Ok(TextOnly(text.to_string()))
            }
        }

        deserializer.deserialize_string(TextVisitor)
    }
}

/// Whether the internally tagged enum `T` has a message whose `type` is
/// `tag`. Serde itself is asked, with an error type that tells "unknown
/// variant" from every other failure (a known type's fields are missing
/// here): no list of names to keep in step with the enum by hand.
fn is_known_type<T: DeserializeOwned>(tag: &str) -> bool {
    #[derive(Debug)]
    enum Probe {
        UnknownVariant,
        Other,
    }

    impl fmt::Display for Probe {
        fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(formatter, "{self:?}")
        }
    }

    impl std::error::Error for Probe {}

    impl de::Error for Probe {
        fn custom<M: fmt::Display>(_: M) -> Probe {
            Probe::Other
        }

        fn unknown_variant(_: &str, _: &'static [&'static str]) -> Probe {
            Probe::UnknownVariant
        }
    }

    let only_the_tag = de::value::MapDeserializer::<_, Probe>::new(std::iter::once(("type", tag)));
    !matches!(T::deserialize(only_the_tag), Err(Probe::UnknownVariant))
}

/// Decodes a client's frame.
pub fn decode_client(bytes: &[u8]) -> Result<ClientMessage, DecodeError> {
    decode(bytes, &GAME_MESSAGES)
}

/// Decodes a server's frame.
pub fn decode_server(bytes: &[u8]) -> Result<ServerMessage, DecodeError> {
    decode(bytes, &[])
}

/// The commitment to a deal: lower-case hex SHA-256 of the ASCII text
/// `patience-race:v1:{game}:{seed}:{salt}`, with the game's slug (e.g.
/// `three-blind-mice`), the seed in decimal and the salt as sent in [`Reveal`].
pub fn commitment(game: GameKind, seed: u64, salt: &str) -> String {
    let digest = Sha256::digest(format!("patience-race:v1:{}:{seed}:{salt}", game.slug()));
    to_hex(&digest)
}

/// Lower-case hex of some bytes.
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for &byte in bytes {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    text
}

/// The complete runs a board has brought home: foundations holding a whole
/// suit (13 cards) and Virginia Reel home piles holding their four cards.
pub fn runs_home(view: &View) -> u8 {
    let count = view
        .zones
        .iter()
        .filter(|zone| match zone.zone {
            Zone::Foundation(_) => zone.face_up.len() == 13,
            Zone::Position(position) => {
                zone.face_up.len() == 4 && zone.face_up[0].rank() == 2 + position / 8
            }
            _ => false,
        })
        .count();
    u8::try_from(count).unwrap_or(u8::MAX)
}

/// The cards a board has brought home, from what anyone may see: foundation
/// and discard cards, and for Virginia Reel the cards of home piles (a row
/// position whose bottom card is its row's base rank: 2, 3 or 4).
pub fn cards_home(view: &View) -> u16 {
    let home_pile = |position: u8, cards: &[Card]| {
        cards
            .first()
            .is_some_and(|card| card.rank() == 2 + position / 8)
    };
    let count: usize = view
        .zones
        .iter()
        .map(|zone| match zone.zone {
            Zone::Foundation(_) | Zone::Discard => zone.face_up.len(),
            Zone::Position(position) if home_pile(position, &zone.face_up) => zone.face_up.len(),
            _ => 0,
        })
        .sum();
    u16::try_from(count).unwrap_or(u16::MAX)
}

/// The cards a board has in their winning order, from what every racer
/// saw at the start: the cards home ([`cards_home`]), and for Three Blind
/// Mice also the cards built in suit order down from a King at the bottom
/// of a pile, counting only cards that were dealt face up (the face-up
/// cards of `deal`, the board every racer is shown first) and stopping at
/// the first card that was dealt face down (a run leaves only once all 13
/// are built, so cards home alone stay at 0 for most of a race).
///
/// The count never looks at a card that was dealt face down, only at
/// where the cards everyone saw at the start now lie: swap the identities
/// of the cards dealt face down among themselves, and it stays the same.
/// So a rival, who races the same deal and cannot yet tell those cards
/// apart on its own board, learns nothing about them from it.
pub fn cards_in_order(deal: &View, board: &View) -> u16 {
    let home = cards_home(board);
    if board.game != GameKind::ThreeBlindMice {
        return home;
    }
    let mut dealt_face_up = [false; 52];
    for card in deal.zones.iter().flat_map(|zone| &zone.face_up) {
        if let Some(slot) = dealt_face_up.get_mut(card.index()) {
            *slot = true;
        }
    }
    let public = |card: &Card| dealt_face_up.get(card.index()).copied().unwrap_or(false);
    let built: usize = board
        .zones
        .iter()
        .filter(|zone| matches!(zone.zone, Zone::Pile(_)) && zone.hidden == 0)
        .map(|zone| {
            let Some(king) = zone.face_up.first() else {
                return 0;
            };
            if king.rank() != 13 || !public(king) {
                return 0;
            }
            1 + zone
                .face_up
                .windows(2)
                .take_while(|pair| {
                    public(&pair[1])
                        && pair[1].suit() == king.suit()
                        && pair[1].rank() + 1 == pair[0].rank()
                })
                .count()
        })
        .sum();
    home.saturating_add(u16::try_from(built).unwrap_or(u16::MAX))
}

#[cfg(test)]
mod tests;
