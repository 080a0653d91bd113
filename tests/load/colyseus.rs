//! A client of Colyseus 0.16, just enough of it for `patience-load` to drive
//! the `race` room of `load/colyseus/server.mjs` the way it drives
//! patience-server, so the two servers can be measured side by side. The room does the same fan-out without rules: a player's
//! move is acked to the mover and sent as `progress` to everyone else.
//!
//! The protocol, as read from the pinned packages' sources
//! (`@colyseus/core` 0.16.26: `build/Protocol.mjs`, `Room.mjs`,
//! `MatchMaker.mjs`, `Server.mjs`; `@colyseus/ws-transport` 0.16.5; the
//! colyseus.js 0.16.22 client's `lib/Room.js` and `lib/Client.js`):
//!
//! 1. Matchmaking is HTTP: `POST /matchmake/{method}/{room name or id}` with
//!    the join options as a JSON body. The answer is always status 200: a
//!    seat reservation `{"sessionId", "room": {"roomId", "processId", ..}}`,
//!    or `{"code", "error"}` when refused.
//! 2. The seat is taken over a WebSocket to
//!    `/{processId}/{roomId}?sessionId={sessionId}`. The server sends
//!    `JOIN_ROOM` (10) with a length-prefixed reconnection token and
//!    serializer id (then the serializer's handshake; none for a room
//!    without state). The client confirms with a lone `JOIN_ROOM` byte;
//!    until then the room queues what it sends this client.
//! 3. Messages, both ways, are `ROOM_DATA` (13), the message type as a
//!    string, then the payload as MessagePack. `ERROR` (11) carries a code
//!    and a message. Types, codes and messages are written by
//!    `@colyseus/schema`'s encoder, which follows MessagePack's type bytes
//!    but writes multi-byte lengths and integers **little-endian**; the
//!    payload is real (big-endian) MessagePack from msgpackr.
//!
//! Layout: the wire codec ([`encode_move`], [`decode_frame`]), pure and
//! tested against bytes Colyseus itself produced (`load/colyseus/golden.mjs`);
//! the byte reader under it; matchmaking over a hand-written HTTP/1.1
//! request; the connection ([`create_room`], [`join_room`], [`Conn`]).
//!
//! For the generator: per room, [`create_room`] (the first player, seat 0)
//! then [`join_room`] for the other players (seats in join order) and the
//! spectators; [`Conn::into_parts`] for a writer and a reader task; on the
//! writer [`send_move`] with `n` = 1, 2, ... per player; on the reader
//! [`next_frame`] (or [`decode_frame`] on each binary message of its own read
//! loop). A mover's [`Frame::Ack`] echoes `n`; everyone else gets one
//! [`Frame::Progress`] whose `seat` and `progress.moves` name that move, so
//! move→ack and move→opponent are measured as for patience-server.
//!
//! Payloads are read field by field rather than through serde: this package
//! has no direct serde dependency, and the generator decodes one `progress`
//! per delivery, which should stay cheap next to the server it measures.

use std::fmt;

use anyhow::Context as _;
use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt as _, StreamExt as _};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The write half of a connection to the Colyseus server.
pub type Sink = SplitSink<WebSocketStream<MaybeTlsStream<TcpStream>>, Message>;
/// The read half of a connection to the Colyseus server.
pub type Stream = SplitStream<WebSocketStream<MaybeTlsStream<TcpStream>>>;

/// The room type `server.mjs` defines.
pub const ROOM_NAME: &str = "race";

/// Colyseus 0.16's first byte of a frame (`Protocol` in `@colyseus/core`).
mod code {
    pub const JOIN_ROOM: u8 = 10;
    pub const ERROR: u8 = 11;
    pub const LEAVE_ROOM: u8 = 12;
    pub const ROOM_DATA: u8 = 13;
}

/// The most a matchmaking answer may take; a seat reservation is ~200 bytes.
const MAX_HTTP_RESPONSE: u64 = 64 * 1024;

/// How deep [`Reader::skip_msgpack`] follows nested maps and arrays before
/// calling a frame hostile.
const MAX_NESTING: usize = 8;

/// What a client joins as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Takes the next seat and sends moves.
    Player,
    /// Watches: receives every player's `progress`.
    Spectator,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::Player => "player",
            Role::Spectator => "spectator",
        }
    }
}

/// How many clients of each role a new room takes; the room's `maxClients`
/// is their sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoomShape {
    /// Seats, 1 to 8.
    pub players: u8,
    /// Spectator places, 0 to 64.
    pub spectators: u16,
}

/// A seat's counters as the room reports them, named like patience-server's
/// `Progress`. The room keeps them as plain counters, not from a game.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Moves the seat has made, counting from 1: the generator's `n` of the
    /// move this counter reports.
    pub moves: u64,
    /// A stand-in counter (no rules).
    pub cards_home: u64,
    /// A stand-in counter (no rules).
    pub runs_home: u64,
    /// A stand-in counter (no rules).
    pub cards_uncovered: u64,
    /// A stand-in counter (no rules).
    pub stock_turned: u64,
    /// Milliseconds from the room's creation to the move.
    pub elapsed_ms: u64,
}

/// A frame from the Colyseus server, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// The seat is taken (`JOIN_ROOM`); the client must confirm it.
    Joined {
        /// For a reconnection, which this client never makes.
        reconnection_token: String,
        /// `none` for a room without state.
        serializer_id: String,
    },
    /// To the mover: its move was counted.
    Ack {
        /// The move's `n`, echoed.
        n: u64,
        /// Room event number.
        seq: u64,
        /// The mover's counters after the move.
        progress: Counters,
    },
    /// To everyone but the mover: a player moved.
    Progress {
        /// Room event number.
        seq: u64,
        /// Whose move (seats in join order, from 0).
        seat: u8,
        /// That player's counters after the move.
        progress: Counters,
    },
    /// The server refused something (`ERROR`); it closes the socket next.
    Error {
        /// Colyseus's error code (`ErrorCode` in `@colyseus/core`).
        code: i64,
        /// Why, for people.
        message: String,
    },
    /// The server asks the client to leave (`LEAVE_ROOM`).
    LeaveRoom,
}

/// Why a frame from the server could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// The frame has no bytes at all.
    Empty,
    /// The frame ends in the middle of a value.
    Truncated,
    /// The frame's first byte is no code this client handles.
    UnknownCode(u8),
    /// A `ROOM_DATA` message of a type the race room does not send.
    UnknownMessage(String),
    /// A value of the wrong MessagePack type (or out of range) for a field.
    BadValue(&'static str),
    /// A payload lacks a field the room always sends.
    MissingField(&'static str),
    /// A string that is not UTF-8.
    InvalidUtf8,
    /// Bytes left over after the payload.
    TrailingBytes,
    /// Maps or arrays nested deeper than the room ever sends.
    TooDeep,
}

impl fmt::Display for FrameError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Empty => write!(formatter, "empty frame"),
            FrameError::Truncated => write!(formatter, "frame ends in the middle of a value"),
            FrameError::UnknownCode(code) => write!(formatter, "unknown frame code {code}"),
            FrameError::UnknownMessage(kind) => write!(formatter, "unknown message type {kind:?}"),
            FrameError::BadValue(field) => write!(formatter, "bad value for {field}"),
            FrameError::MissingField(field) => write!(formatter, "missing field {field}"),
            FrameError::InvalidUtf8 => write!(formatter, "string is not utf-8"),
            FrameError::TrailingBytes => write!(formatter, "bytes after the payload"),
            FrameError::TooDeep => write!(formatter, "values nested too deep"),
        }
    }
}

impl std::error::Error for FrameError {}

/// A player's move as the room expects it: `ROOM_DATA`, type `move`, and the
/// payload `{text, n}` as a plain MessagePack map.
pub fn encode_move(n: u64, text: &str) -> Vec<u8> {
    let mut frame = Vec::with_capacity(16 + text.len());
    frame.push(code::ROOM_DATA);
    // The type is written by schema's encoder; for strings under 32 bytes
    // that is MessagePack's fixstr, so one writer serves both.
    write_msgpack_str(&mut frame, "move");
    frame.push(0x82);
    write_msgpack_str(&mut frame, "text");
    write_msgpack_str(&mut frame, text);
    write_msgpack_str(&mut frame, "n");
    write_msgpack_uint(&mut frame, n);
    frame
}

/// The client's confirmation of [`Frame::Joined`].
pub fn encode_join_confirmation() -> Vec<u8> {
    vec![code::JOIN_ROOM]
}

/// A consented leave: the server closes the socket with code 4000.
pub fn encode_leave() -> Vec<u8> {
    vec![code::LEAVE_ROOM]
}

/// Decodes one binary frame from the server.
pub fn decode_frame(bytes: &[u8]) -> Result<Frame, FrameError> {
    let mut reader = Reader::new(bytes);
    let frame = match reader.byte().map_err(|_| FrameError::Empty)? {
        code::JOIN_ROOM => {
            let token_length = usize::from(reader.byte()?);
            let reconnection_token = reader.utf8(token_length)?.to_owned();
            let serializer_length = usize::from(reader.byte()?);
            let serializer_id = reader.utf8(serializer_length)?.to_owned();
            // A serializer handshake follows only for rooms with state; the
            // race room has none, so whatever follows is left unread.
            return Ok(Frame::Joined {
                reconnection_token,
                serializer_id,
            });
        }
        code::ERROR => {
            let code = reader.schema_int("error code")?;
            let message = reader.schema_str("error message")?.to_owned();
            Frame::Error { code, message }
        }
        code::LEAVE_ROOM => Frame::LeaveRoom,
        code::ROOM_DATA => {
            // Colyseus's own test: a type that looks like a non-empty string
            // is one, anything else is a number.
            if !reader.schema_str_follows() {
                let number = reader.schema_int("message type")?;
                return Err(FrameError::UnknownMessage(number.to_string()));
            }
            match reader.schema_str("message type")? {
                "ack" => decode_ack(&mut reader)?,
                "progress" => decode_progress(&mut reader)?,
                other => return Err(FrameError::UnknownMessage(other.to_owned())),
            }
        }
        other => return Err(FrameError::UnknownCode(other)),
    };
    if !reader.is_at_end() {
        return Err(FrameError::TrailingBytes);
    }
    Ok(frame)
}

/// `{n, seq, progress}`, in any order; other keys are skipped.
fn decode_ack(reader: &mut Reader<'_>) -> Result<Frame, FrameError> {
    let (mut n, mut seq, mut progress) = (None, None, None);
    for _ in 0..reader.msgpack_map_len("ack")? {
        match reader.msgpack_str("ack key")? {
            "n" => n = Some(reader.msgpack_uint("n")?),
            "seq" => seq = Some(reader.msgpack_uint("seq")?),
            "progress" => progress = Some(decode_counters(reader)?),
            _ => reader.skip_msgpack(0)?,
        }
    }
    Ok(Frame::Ack {
        n: n.ok_or(FrameError::MissingField("n"))?,
        seq: seq.ok_or(FrameError::MissingField("seq"))?,
        progress: progress.ok_or(FrameError::MissingField("progress"))?,
    })
}

/// `{seq, seat, progress, text, board}`, in any order; `text` and `board`
/// (always nil from this room) and other keys are skipped.
fn decode_progress(reader: &mut Reader<'_>) -> Result<Frame, FrameError> {
    let (mut seq, mut seat, mut progress) = (None, None, None);
    for _ in 0..reader.msgpack_map_len("progress")? {
        match reader.msgpack_str("progress key")? {
            "seq" => seq = Some(reader.msgpack_uint("seq")?),
            "seat" => {
                let value = reader.msgpack_uint("seat")?;
                seat = Some(u8::try_from(value).map_err(|_| FrameError::BadValue("seat"))?);
            }
            "progress" => progress = Some(decode_counters(reader)?),
            _ => reader.skip_msgpack(0)?,
        }
    }
    Ok(Frame::Progress {
        seq: seq.ok_or(FrameError::MissingField("seq"))?,
        seat: seat.ok_or(FrameError::MissingField("seat"))?,
        progress: progress.ok_or(FrameError::MissingField("progress"))?,
    })
}

/// The room's counters map; every field is required.
fn decode_counters(reader: &mut Reader<'_>) -> Result<Counters, FrameError> {
    let mut fields: [Option<u64>; 6] = [None; 6];
    const NAMES: [&str; 6] = [
        "moves",
        "cards_home",
        "runs_home",
        "cards_uncovered",
        "stock_turned",
        "elapsed_ms",
    ];
    for _ in 0..reader.msgpack_map_len("progress counters")? {
        let key = reader.msgpack_str("progress counters key")?;
        match NAMES.iter().position(|name| *name == key) {
            Some(index) => fields[index] = Some(reader.msgpack_uint(NAMES[index])?),
            None => reader.skip_msgpack(0)?,
        }
    }
    let mut values = [0; 6];
    for (index, field) in fields.into_iter().enumerate() {
        values[index] = field.ok_or(FrameError::MissingField(NAMES[index]))?;
    }
    let [
        moves,
        cards_home,
        runs_home,
        cards_uncovered,
        stock_turned,
        elapsed_ms,
    ] = values;
    Ok(Counters {
        moves,
        cards_home,
        runs_home,
        cards_uncovered,
        stock_turned,
        elapsed_ms,
    })
}

fn write_msgpack_str(out: &mut Vec<u8>, text: &str) {
    let length = text.len();
    if length < 32 {
        // fixstr: the length is below 32, so it fits the low five bits.
        out.push(0xa0 | length as u8);
    } else if let Ok(length) = u8::try_from(length) {
        out.extend_from_slice(&[0xd9, length]);
    } else if let Ok(length) = u16::try_from(length) {
        out.push(0xda);
        out.extend_from_slice(&length.to_be_bytes());
    } else {
        // A move's text is a few bytes; a string past 4 GiB cannot be sent.
        let length = u32::try_from(length).unwrap_or(u32::MAX);
        out.push(0xdb);
        out.extend_from_slice(&length.to_be_bytes());
    }
    out.extend_from_slice(text.as_bytes());
}

fn write_msgpack_uint(out: &mut Vec<u8>, value: u64) {
    if value < 0x80 {
        out.push(value as u8);
    } else if let Ok(value) = u8::try_from(value) {
        out.extend_from_slice(&[0xcc, value]);
    } else if let Ok(value) = u16::try_from(value) {
        out.push(0xcd);
        out.extend_from_slice(&value.to_be_bytes());
    } else if let Ok(value) = u32::try_from(value) {
        out.push(0xce);
        out.extend_from_slice(&value.to_be_bytes());
    } else {
        out.push(0xcf);
        out.extend_from_slice(&value.to_be_bytes());
    }
}

/// Reads a frame front to back: MessagePack values (big-endian) and
/// schema's strings and numbers (little-endian).
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    fn is_at_end(&self) -> bool {
        self.at == self.bytes.len()
    }

    fn take(&mut self, count: usize) -> Result<&'a [u8], FrameError> {
        let end = self.at.checked_add(count).ok_or(FrameError::Truncated)?;
        let taken = self.bytes.get(self.at..end).ok_or(FrameError::Truncated)?;
        self.at = end;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], FrameError> {
        let mut array = [0; N];
        array.copy_from_slice(self.take(N)?);
        Ok(array)
    }

    fn byte(&mut self) -> Result<u8, FrameError> {
        Ok(self.array::<1>()?[0])
    }

    fn utf8(&mut self, length: usize) -> Result<&'a str, FrameError> {
        std::str::from_utf8(self.take(length)?).map_err(|_| FrameError::InvalidUtf8)
    }

    /// Schema's `stringCheck`: is the next value a non-empty string?
    fn schema_str_follows(&self) -> bool {
        matches!(
            self.bytes.get(self.at),
            Some(0xa1..=0xbf | 0xd9 | 0xda | 0xdb)
        )
    }

    /// A string as schema writes it: MessagePack's `str` type bytes with
    /// little-endian lengths.
    fn schema_str(&mut self, what: &'static str) -> Result<&'a str, FrameError> {
        let length = match self.byte()? {
            prefix @ 0xa0..=0xbf => usize::from(prefix & 0x1f),
            0xd9 => usize::from(self.byte()?),
            0xda => usize::from(u16::from_le_bytes(self.array()?)),
            0xdb => usize::try_from(u32::from_le_bytes(self.array()?))
                .map_err(|_| FrameError::BadValue(what))?,
            _ => return Err(FrameError::BadValue(what)),
        };
        self.utf8(length)
    }

    /// An integer as schema writes it: MessagePack's int type bytes with
    /// little-endian values. Floats are refused: no code is one.
    fn schema_int(&mut self, what: &'static str) -> Result<i64, FrameError> {
        let value = match self.byte()? {
            prefix @ 0x00..=0x7f => i64::from(prefix),
            prefix @ 0xe0..=0xff => i64::from(prefix as i8),
            0xcc => i64::from(self.byte()?),
            0xcd => i64::from(u16::from_le_bytes(self.array()?)),
            0xce => i64::from(u32::from_le_bytes(self.array()?)),
            0xcf => i64::try_from(u64::from_le_bytes(self.array()?))
                .map_err(|_| FrameError::BadValue(what))?,
            0xd0 => i64::from(i8::from_le_bytes(self.array()?)),
            0xd1 => i64::from(i16::from_le_bytes(self.array()?)),
            0xd2 => i64::from(i32::from_le_bytes(self.array()?)),
            0xd3 => i64::from_le_bytes(self.array()?),
            _ => return Err(FrameError::BadValue(what)),
        };
        Ok(value)
    }

    fn msgpack_map_len(&mut self, what: &'static str) -> Result<usize, FrameError> {
        match self.byte()? {
            prefix @ 0x80..=0x8f => Ok(usize::from(prefix & 0x0f)),
            0xde => Ok(usize::from(u16::from_be_bytes(self.array()?))),
            0xdf => usize::try_from(u32::from_be_bytes(self.array()?))
                .map_err(|_| FrameError::BadValue(what)),
            _ => Err(FrameError::BadValue(what)),
        }
    }

    fn msgpack_str_len(&mut self, prefix: u8, what: &'static str) -> Result<usize, FrameError> {
        match prefix {
            0xa0..=0xbf => Ok(usize::from(prefix & 0x1f)),
            0xd9 => Ok(usize::from(self.byte()?)),
            0xda => Ok(usize::from(u16::from_be_bytes(self.array()?))),
            0xdb => usize::try_from(u32::from_be_bytes(self.array()?))
                .map_err(|_| FrameError::BadValue(what)),
            _ => Err(FrameError::BadValue(what)),
        }
    }

    fn msgpack_str(&mut self, what: &'static str) -> Result<&'a str, FrameError> {
        let prefix = self.byte()?;
        let length = self.msgpack_str_len(prefix, what)?;
        self.utf8(length)
    }

    /// A non-negative integer. msgpackr writes JavaScript numbers past 32
    /// bits as float64, so an integral float is one too.
    fn msgpack_uint(&mut self, what: &'static str) -> Result<u64, FrameError> {
        let bad = || FrameError::BadValue(what);
        let value = match self.byte()? {
            prefix @ 0x00..=0x7f => u64::from(prefix),
            0xcc => u64::from(self.byte()?),
            0xcd => u64::from(u16::from_be_bytes(self.array()?)),
            0xce => u64::from(u32::from_be_bytes(self.array()?)),
            0xcf => u64::from_be_bytes(self.array()?),
            0xd0 => u64::try_from(i8::from_be_bytes(self.array()?)).map_err(|_| bad())?,
            0xd1 => u64::try_from(i16::from_be_bytes(self.array()?)).map_err(|_| bad())?,
            0xd2 => u64::try_from(i32::from_be_bytes(self.array()?)).map_err(|_| bad())?,
            0xd3 => u64::try_from(i64::from_be_bytes(self.array()?)).map_err(|_| bad())?,
            0xca => integral(f64::from(f32::from_be_bytes(self.array()?))).ok_or_else(bad)?,
            0xcb => integral(f64::from_be_bytes(self.array()?)).ok_or_else(bad)?,
            _ => return Err(bad()),
        };
        Ok(value)
    }

    /// Skips one MessagePack value of any type.
    fn skip_msgpack(&mut self, depth: usize) -> Result<(), FrameError> {
        if depth > MAX_NESTING {
            return Err(FrameError::TooDeep);
        }
        let prefix = self.byte()?;
        let (skip_bytes, items) = match prefix {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => (0, 0),
            0x80..=0x8f => (0, 2 * usize::from(prefix & 0x0f)),
            0x90..=0x9f => (0, usize::from(prefix & 0x0f)),
            0xa0..=0xbf | 0xd9 | 0xda | 0xdb => (self.msgpack_str_len(prefix, "string")?, 0),
            0xc4 => (usize::from(self.byte()?), 0),
            0xc5 => (usize::from(u16::from_be_bytes(self.array()?)), 0),
            0xc6 => (self.be_u32_len()?, 0),
            0xc7 => (usize::from(self.byte()?) + 1, 0),
            0xc8 => (usize::from(u16::from_be_bytes(self.array()?)) + 1, 0),
            0xc9 => (self.be_u32_len()?.saturating_add(1), 0),
            0xcc | 0xd0 => (1, 0),
            0xcd | 0xd1 => (2, 0),
            0xca | 0xce | 0xd2 => (4, 0),
            0xcb | 0xcf | 0xd3 => (8, 0),
            0xd4 => (2, 0),
            0xd5 => (3, 0),
            0xd6 => (5, 0),
            0xd7 => (9, 0),
            0xd8 => (17, 0),
            0xdc => (0, usize::from(u16::from_be_bytes(self.array()?))),
            0xdd => (0, self.be_u32_len()?),
            0xde => (0, 2 * usize::from(u16::from_be_bytes(self.array()?))),
            0xdf => (0, self.be_u32_len()?.saturating_mul(2)),
            0xc1 => return Err(FrameError::BadValue("msgpack value")),
        };
        self.take(skip_bytes)?;
        for _ in 0..items {
            self.skip_msgpack(depth + 1)?;
        }
        Ok(())
    }

    fn be_u32_len(&mut self) -> Result<usize, FrameError> {
        usize::try_from(u32::from_be_bytes(self.array()?))
            .map_err(|_| FrameError::BadValue("length"))
    }
}

/// `value` as an integer, if it is a non-negative whole number that a
/// float64 holds exactly.
fn integral(value: f64) -> Option<u64> {
    const EXACT_LIMIT: f64 = 9_007_199_254_740_992.0; // 2^53
    (value.fract() == 0.0 && (0.0..=EXACT_LIMIT).contains(&value)).then_some(value as u64)
}

/// Where the Colyseus server listens: `HOST:PORT`, from a base such as
/// `127.0.0.1:2567`, `http://127.0.0.1:2567` or `ws://127.0.0.1:2567/`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Endpoint {
    host_port: String,
}

impl Endpoint {
    fn parse(base: &str) -> anyhow::Result<Endpoint> {
        let without_scheme = ["http://", "ws://"]
            .iter()
            .find_map(|scheme| base.strip_prefix(scheme))
            .unwrap_or(base);
        let host_port = without_scheme.trim_end_matches('/');
        let (host, port) = host_port
            .rsplit_once(':')
            .with_context(|| format!("{base:?} names no port"))?;
        anyhow::ensure!(
            !host.is_empty() && !host_port.contains('/'),
            "{base:?} is not HOST:PORT"
        );
        port.parse::<u16>()
            .with_context(|| format!("{base:?} has a bad port"))?;
        Ok(Endpoint {
            host_port: host_port.to_owned(),
        })
    }
}

/// What matchmaking answered: a seat held for `session_id` until the
/// WebSocket takes it (15 s by default).
#[derive(Clone, Debug, PartialEq, Eq)]
struct SeatReservation {
    session_id: String,
    room_id: String,
    process_id: String,
}

/// Reads a matchmaking answer's JSON: the reservation, or the refusal as an
/// error.
fn parse_reservation(body: &[u8]) -> anyhow::Result<SeatReservation> {
    let answer: serde_json::Value =
        serde_json::from_slice(body).context("matchmaking answer is not json")?;
    if let Some(error) = answer.get("error") {
        anyhow::bail!(
            "matchmaking refused: {} (code {})",
            error.as_str().unwrap_or("no reason given"),
            answer
                .get("code")
                .map_or("none".to_owned(), ToString::to_string)
        );
    }
    // The ids go into the WebSocket's path and query; Colyseus makes them
    // from [A-Za-z0-9_-], so anything else is not an answer from it.
    let id = |value: Option<&serde_json::Value>, name: &str| -> anyhow::Result<String> {
        let text = value
            .and_then(serde_json::Value::as_str)
            .with_context(|| format!("matchmaking answer lacks {name}"))?;
        anyhow::ensure!(
            !text.is_empty()
                && text
                    .bytes()
                    .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-'),
            "matchmaking answer has a strange {name}: {text:?}"
        );
        Ok(text.to_owned())
    };
    let room = answer.get("room");
    Ok(SeatReservation {
        session_id: id(answer.get("sessionId"), "sessionId")?,
        room_id: id(room.and_then(|room| room.get("roomId")), "room.roomId")?,
        process_id: id(
            room.and_then(|room| room.get("processId")),
            "room.processId",
        )?,
    })
}

/// Splits an HTTP/1.1 response into its status and body, undoing chunked
/// transfer encoding (which Node uses when the handler sets no length).
fn parse_http_response(response: &[u8]) -> anyhow::Result<(u16, Vec<u8>)> {
    let head_end = response
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .context("http response has no end of headers")?;
    let head = std::str::from_utf8(&response[..head_end]).context("http headers not utf-8")?;
    let rest = &response[head_end + 4..];
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .strip_prefix("HTTP/1.")
        .and_then(|after| after.get(2..5))
        .and_then(|code| code.parse::<u16>().ok())
        .with_context(|| format!("bad http status line {status_line:?}"))?;
    let (mut chunked, mut content_length) = (false, None);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            anyhow::bail!("bad http header line {line:?}");
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.eq_ignore_ascii_case("chunked");
        } else if name.eq_ignore_ascii_case("content-length") {
            content_length = Some(value.parse::<usize>().context("bad content-length")?);
        }
    }
    let body = if chunked {
        dechunk(rest)?
    } else if let Some(length) = content_length {
        rest.get(..length)
            .context("http body shorter than its content-length")?
            .to_vec()
    } else {
        rest.to_vec()
    };
    Ok((status, body))
}

/// Undoes chunked transfer encoding: `SIZE-IN-HEX\r\nDATA\r\n`, up to a
/// zero size.
fn dechunk(mut rest: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = rest
            .windows(2)
            .position(|window| window == b"\r\n")
            .context("chunk size line not ended")?;
        let size_line = std::str::from_utf8(&rest[..line_end]).context("chunk size not utf-8")?;
        // A size may carry extensions after ';'.
        let size_hex = size_line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_hex, 16)
            .with_context(|| format!("bad chunk size {size_line:?}"))?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Ok(body);
        }
        let chunk = rest.get(..size).context("chunk shorter than its size")?;
        body.extend_from_slice(chunk);
        rest = rest
            .get(size..)
            .and_then(|after| after.strip_prefix(b"\r\n"))
            .context("chunk not followed by CRLF")?;
    }
}

/// `POST /matchmake/{method}/{target}` with `options` as the JSON body, over
/// one connection closed after the answer.
async fn matchmake(
    endpoint: &Endpoint,
    method: &str,
    target: &str,
    options: &serde_json::Value,
) -> anyhow::Result<SeatReservation> {
    let body = options.to_string();
    let request = format!(
        "POST /matchmake/{method}/{target} HTTP/1.1\r\n\
         Host: {host}\r\n\
         Accept: application/json\r\n\
         Content-Type: application/json\r\n\
         Content-Length: {length}\r\n\
         Connection: close\r\n\
         \r\n\
         {body}",
        host = endpoint.host_port,
        length = body.len(),
    );
    let mut stream = TcpStream::connect(&endpoint.host_port)
        .await
        .with_context(|| format!("connect to {} for matchmaking", endpoint.host_port))?;
    stream.set_nodelay(true)?;
    stream
        .write_all(request.as_bytes())
        .await
        .context("send matchmaking request")?;
    let mut response = Vec::new();
    (&mut stream)
        .take(MAX_HTTP_RESPONSE)
        .read_to_end(&mut response)
        .await
        .context("read matchmaking answer")?;
    let (status, body) = parse_http_response(&response)?;
    anyhow::ensure!(
        status == 200,
        "matchmaking {method}/{target} answered http {status}: {}",
        String::from_utf8_lossy(&body)
    );
    parse_reservation(&body).with_context(|| format!("matchmaking {method}/{target}"))
}

/// Takes a reserved seat: the WebSocket, then the `JOIN_ROOM` handshake.
async fn take_seat(endpoint: &Endpoint, seat: SeatReservation) -> anyhow::Result<Conn> {
    let url = format!(
        "ws://{}/{}/{}?sessionId={}",
        endpoint.host_port, seat.process_id, seat.room_id, seat.session_id
    );
    let stream = TcpStream::connect(&endpoint.host_port)
        .await
        .with_context(|| format!("connect to {}", endpoint.host_port))?;
    stream.set_nodelay(true)?;
    let (socket, _) = tokio_tungstenite::client_async(url.as_str(), MaybeTlsStream::Plain(stream))
        .await
        .context("websocket handshake")?;
    let (mut sink, mut stream) = socket.split();
    match next_frame(&mut stream).await? {
        Some(Frame::Joined { .. }) => {}
        Some(Frame::Error { code, message }) => {
            anyhow::bail!(
                "joining room {} refused: {message} (code {code})",
                seat.room_id
            )
        }
        Some(other) => anyhow::bail!("expected JOIN_ROOM, got {other:?}"),
        None => anyhow::bail!("room {} closed the socket before the join", seat.room_id),
    }
    sink.send(Message::Binary(encode_join_confirmation().into()))
        .await
        .context("confirm the join")?;
    Ok(Conn {
        room_id: seat.room_id,
        sink,
        stream,
    })
}

/// Creates a `race` room of `shape` and joins it as `role` (normally the
/// first player, seat 0). Returns the room id for [`join_room`].
pub async fn create_room(
    base: &str,
    shape: RoomShape,
    role: Role,
) -> anyhow::Result<(String, Conn)> {
    let endpoint = Endpoint::parse(base)?;
    let options = serde_json::json!({
        "role": role.as_str(),
        "players": shape.players,
        "spectators": shape.spectators,
    });
    let seat = matchmake(&endpoint, "create", ROOM_NAME, &options).await?;
    let conn = take_seat(&endpoint, seat).await?;
    Ok((conn.room_id.clone(), conn))
}

/// Joins the room `room_id` as `role`. Players take seats in the order they
/// join; a room refuses a role whose places are all taken.
pub async fn join_room(base: &str, room_id: &str, role: Role) -> anyhow::Result<Conn> {
    let endpoint = Endpoint::parse(base)?;
    let options = serde_json::json!({ "role": role.as_str() });
    let seat = matchmake(&endpoint, "joinById", room_id, &options).await?;
    take_seat(&endpoint, seat).await
}

/// Sends a player's move `n` (the generator counts from 1) with `text`.
pub async fn send_move(sink: &mut Sink, n: u64, text: &str) -> anyhow::Result<()> {
    sink.send(Message::Binary(encode_move(n, text).into()))
        .await
        .context("send move")
}

/// Leaves the room, consented (as the Colyseus client leaves): the server
/// closes the socket with code 4000.
pub async fn send_leave(sink: &mut Sink) -> anyhow::Result<()> {
    sink.send(Message::Binary(encode_leave().into()))
        .await
        .context("send leave")
}

/// The next frame from the server, or `None` once the socket is closed.
/// Pings are answered by tungstenite as the stream is read: the transport
/// pings every socket every 3 s and drops one that missed two, so a
/// connection must keep being read (a stalled reader is gone within ~9 s).
pub async fn next_frame(stream: &mut Stream) -> anyhow::Result<Option<Frame>> {
    loop {
        match stream.next().await {
            Some(Ok(Message::Binary(bytes))) => {
                return decode_frame(&bytes)
                    .map(Some)
                    .context("frame from the colyseus server");
            }
            Some(Ok(Message::Close(_))) | None => return Ok(None),
            Some(Ok(Message::Text(text))) => {
                anyhow::bail!("colyseus sent a text frame: {text:?}")
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
            Some(Err(error)) => return Err(error).context("read from the colyseus server"),
        }
    }
}

/// A joined client of a `race` room.
#[derive(Debug)]
pub struct Conn {
    /// The room's id.
    pub room_id: String,
    sink: Sink,
    stream: Stream,
}

impl Conn {
    /// The two halves, for a generator that writes from one task and reads
    /// from another (with [`send_move`], [`send_leave`] and [`next_frame`]).
    pub fn into_parts(self) -> (Sink, Stream) {
        (self.sink, self.stream)
    }
}

#[cfg(test)]
// `colyseus_smoke` is no cargo feature: smoke.sh sets it for this crate only.
#[allow(unexpected_cfgs)]
mod tests {
    use super::*;

    /// Frames as `@colyseus/core` 0.16.26 encodes them (`node golden.mjs`).
    const GOLDEN_JOIN: &str = "0a08544f4b454e313233046e6f6e65";
    const GOLDEN_ERROR: &str = "0bcd7510b3657665727920736561742069732074616b656e";
    const GOLDEN_ACK: &str = "0da361636bde0003a16e07a37365710ca870726f6772657373de0006a56d6f76\
        657307aa63617264735f686f6d6501a972756e735f686f6d6500af63617264735f756e636f766572656400ac\
        73746f636b5f7475726e656407aa656c61707365645f6d73cd0dac";
    const GOLDEN_PROGRESS: &str = "0da870726f6772657373de0005a37365710ca47365617401a870726f677265\
        7373de0006a56d6f76657307aa63617264735f686f6d6501a972756e735f686f6d6500af63617264735f756e\
        636f766572656400ac73746f636b5f7475726e656407aa656c61707365645f6d73cd0daca474657874c0a562\
        6f617264c0";
    /// A move as Colyseus's own encoder writes it with plain maps.
    const GOLDEN_MOVE: &str = "0da46d6f7665de0002a474657874a474312066a16e07";

    const GOLDEN_COUNTERS: Counters = Counters {
        moves: 7,
        cards_home: 1,
        runs_home: 0,
        cards_uncovered: 0,
        stock_turned: 7,
        elapsed_ms: 3500,
    };

    fn bytes(hex: &str) -> Vec<u8> {
        let digits: Vec<u8> = hex
            .bytes()
            .filter(|byte| !byte.is_ascii_whitespace())
            .collect();
        digits
            .chunks(2)
            .map(|pair| {
                let text = std::str::from_utf8(pair).unwrap_or("zz");
                u8::from_str_radix(text, 16).unwrap_or_else(|_| panic!("bad hex {text:?}"))
            })
            .collect()
    }

    /// The one check of this module's decoder: `hex` decodes to `expected`.
    fn check(hex: &str, expected: Result<Frame, FrameError>) {
        assert_eq!(decode_frame(&bytes(hex)), expected, "decoding {hex}");
    }

    #[test]
    fn golden_frames_decode() {
        let cases = [
            (
                GOLDEN_JOIN,
                Frame::Joined {
                    reconnection_token: "TOKEN123".to_owned(),
                    serializer_id: "none".to_owned(),
                },
            ),
            (
                GOLDEN_ERROR,
                Frame::Error {
                    code: 4213,
                    message: "every seat is taken".to_owned(),
                },
            ),
            (
                GOLDEN_ACK,
                Frame::Ack {
                    n: 7,
                    seq: 12,
                    progress: GOLDEN_COUNTERS,
                },
            ),
            (
                GOLDEN_PROGRESS,
                Frame::Progress {
                    seq: 12,
                    seat: 1,
                    progress: GOLDEN_COUNTERS,
                },
            ),
            ("0c", Frame::LeaveRoom),
        ];
        for (hex, expected) in cases {
            check(hex, Ok(expected));
        }
    }

    #[test]
    fn every_cut_of_a_golden_frame_is_an_error() {
        for golden in [GOLDEN_JOIN, GOLDEN_ERROR, GOLDEN_ACK, GOLDEN_PROGRESS] {
            let frame = bytes(golden);
            for cut in 0..frame.len() {
                let decoded = decode_frame(&frame[..cut]);
                assert!(
                    decoded.is_err(),
                    "{golden} cut to {cut} bytes gave {decoded:?}"
                );
            }
        }
    }

    #[test]
    fn bad_frames_are_typed_errors() {
        let cases = [
            ("", FrameError::Empty),
            ("0e00", FrameError::UnknownCode(14)),
            // ROOM_DATA of type "hello" (no payload).
            (
                "0da568656c6c6f",
                FrameError::UnknownMessage("hello".to_owned()),
            ),
            // ROOM_DATA with the numeric type 5.
            ("0d05", FrameError::UnknownMessage("5".to_owned())),
            // An ack whose payload is an array, not a map.
            ("0da361636b90", FrameError::BadValue("ack")),
            // An ack {} without fields.
            ("0da361636b80", FrameError::MissingField("n")),
            // An ack {n: -1}.
            ("0da361636b81a16eff", FrameError::BadValue("n")),
            // An ack {n: 1.5} (float64).
            (
                "0da361636b81a16ecb3ff8000000000000",
                FrameError::BadValue("n"),
            ),
            // A progress whose seat is 300.
            (
                "0da870726f677265737381a473656174cd012c",
                FrameError::BadValue("seat"),
            ),
            // A leave with a byte after it.
            ("0c00", FrameError::TrailingBytes),
            // A join whose token is not utf-8.
            ("0a01ff00", FrameError::InvalidUtf8),
            // An ack {x: [[[[[[[[[[]]]]]]]]]]} nests deeper than the room ever does.
            (
                "0da361636b81a178919191919191919191919190",
                FrameError::TooDeep,
            ),
        ];
        for (hex, expected) in cases {
            check(hex, Err(expected));
        }
    }

    #[test]
    fn unknown_keys_of_any_type_are_skipped() {
        // {n: 3, extra: {fixext1, array [nil, true], bin8 of 2 bytes}, seq: 2^40 as a float64,
        //  progress: {the six counters, all 0}}
        let mut frame = bytes("0da361636b84a16e03a5657874726183a165d40101a16192c0c3a162c4020102");
        frame.extend_from_slice(&bytes("a3736571cb4270000000000000"));
        frame.extend_from_slice(&bytes("a870726f677265737386"));
        for name in [
            "moves",
            "cards_home",
            "runs_home",
            "cards_uncovered",
            "stock_turned",
            "elapsed_ms",
        ] {
            write_msgpack_str(&mut frame, name);
            frame.push(0);
        }
        assert_eq!(
            decode_frame(&frame),
            Ok(Frame::Ack {
                n: 3,
                seq: 1 << 40,
                progress: Counters::default(),
            })
        );
    }

    /// A move decodes, as MessagePack, to what Colyseus's own encoder's move
    /// decodes to; and its header is ROOM_DATA then the type `move`.
    #[test]
    fn moves_encode_like_colyseus() {
        let golden = bytes(GOLDEN_MOVE);
        let ours = encode_move(7, "t1 f");
        assert_eq!(ours[..6], golden[..6], "code and message type");
        let payload = |frame: &[u8]| -> serde_json::Value {
            rmp_serde::from_slice(&frame[6..]).unwrap_or_else(|error| panic!("{error}"))
        };
        assert_eq!(payload(&ours), payload(&golden));
        for (n, text) in [
            (0, ""),
            (127, "w f"),
            (128, "t7 t1"),
            (300, "s w"),
            (65_536, &"x".repeat(40)),
            (u64::MAX, &"y".repeat(300)),
        ] {
            let frame = encode_move(n, text);
            assert_eq!(
                payload(&frame),
                serde_json::json!({ "text": text, "n": n }),
                "move {n} {text:?}"
            );
        }
    }

    #[test]
    fn http_responses_parse() {
        let cases: [(&str, Option<(u16, &str)>); 7] = [
            (
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                 Transfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n3;x=y\r\n1}\n\r\n0\r\n\r\n",
                Some((200, "{\"a\":1}\n")),
            ),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
                Some((200, "{}")),
            ),
            ("HTTP/1.0 503 Busy\r\n\r\nlater", Some((503, "later"))),
            ("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}", None),
            (
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{}",
                None,
            ),
            ("SMTP ready\r\n\r\n", None),
            ("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", None),
        ];
        for (response, expected) in cases {
            let parsed = parse_http_response(response.as_bytes())
                .ok()
                .map(|(status, body)| (status, String::from_utf8_lossy(&body).into_owned()));
            assert_eq!(
                parsed,
                expected.map(|(status, body)| (status, body.to_owned())),
                "{response:?}"
            );
        }
    }

    #[test]
    fn reservations_parse() {
        let good = br#"{"room":{"clients":0,"locked":false,"private":false,"maxClients":3,
            "unlisted":false,"createdAt":"2026-12-01T22:30:00.000Z","name":"race",
            "processId":"Xb3_q-1","roomId":"aBc_9-z"},"sessionId":"s1D"}"#;
        let parsed = parse_reservation(good).ok();
        assert_eq!(
            parsed,
            Some(SeatReservation {
                session_id: "s1D".to_owned(),
                room_id: "aBc_9-z".to_owned(),
                process_id: "Xb3_q-1".to_owned(),
            })
        );
        let refused = br#"{"code":4212,"error":"room \"nope\" not found"}"#;
        let Err(error) = parse_reservation(refused) else {
            panic!("a refusal parsed as a reservation");
        };
        let error = error.to_string();
        assert!(
            error.contains("not found") && error.contains("4212"),
            "{error}"
        );
        for bad in [
            &br#"{"room":{"processId":"p","roomId":"r"}}"#[..],
            br#"{"room":{"processId":"p","roomId":"r/../x"},"sessionId":"s"}"#,
            br#"{"room":{"processId":"p","roomId":"r"},"sessionId":"s?x=1"}"#,
            b"not json",
        ] {
            assert!(
                parse_reservation(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn endpoints_parse() {
        let cases = [
            ("127.0.0.1:2567", Some("127.0.0.1:2567")),
            ("http://127.0.0.1:2567", Some("127.0.0.1:2567")),
            ("ws://localhost:80/", Some("localhost:80")),
            ("127.0.0.1", None),
            ("http://127.0.0.1:2567/matchmake", None),
            ("http://host/path:2567", None),
            (":2567", None),
            ("127.0.0.1:http", None),
        ];
        for (base, expected) in cases {
            let parsed = Endpoint::parse(base)
                .ok()
                .map(|endpoint| endpoint.host_port);
            assert_eq!(parsed.as_deref(), expected, "{base:?}");
        }
    }

    /// End to end against the real Node server: built only with
    /// `--cfg colyseus_smoke` (see `load/colyseus/smoke.sh`), because it needs
    /// Node 20 and `npm ci` in `load/colyseus/`, which the default test run must
    /// not.
    #[cfg(colyseus_smoke)]
    mod smoke {
        use std::io::BufRead as _;
        use std::path::Path;
        use std::process::{Child, Command, Stdio};
        use std::time::Duration;

        use super::super::*;

        /// The smoke test drives whole connections; the generator splits
        /// them ([`Conn::into_parts`]) and uses the free functions these call.
        impl Conn {
            /// Sends a player's move; see [`send_move`].
            async fn send_move(&mut self, n: u64, text: &str) -> anyhow::Result<()> {
                send_move(&mut self.sink, n, text).await
            }

            /// The next frame; see [`next_frame`].
            async fn next_frame(&mut self) -> anyhow::Result<Option<Frame>> {
                next_frame(&mut self.stream).await
            }

            /// Leaves the room (consented) and waits for the server to close.
            async fn leave(mut self) -> anyhow::Result<()> {
                send_leave(&mut self.sink).await?;
                while self.next_frame().await?.is_some() {}
                Ok(())
            }
        }

        /// The Node server, killed when the test ends however it ends.
        struct NodeServer(Child);

        impl Drop for NodeServer {
            fn drop(&mut self) {
                let _ = self.0.kill();
                let _ = self.0.wait();
            }
        }

        /// Starts `server.mjs` on a free port; returns it and its `HOST:PORT`.
        fn start_node_server() -> (NodeServer, String) {
            let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("load/colyseus");
            assert!(
                directory.join("node_modules/@colyseus/core").is_dir(),
                "run `npm ci` in {} first",
                directory.display()
            );
            let mut child = Command::new("node")
                .args(["server.mjs", "--port", "0"])
                .current_dir(&directory)
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .unwrap_or_else(|error| panic!("start node: {error}"));
            let stdout = child.stdout.take();
            let server = NodeServer(child);
            let mut line = String::new();
            if let Some(stdout) = stdout {
                // Blocks until the server prints its line or exits (EOF).
                let _ = std::io::BufReader::new(stdout).read_line(&mut line);
            }
            let Some(address) = line.trim().strip_prefix("listening ") else {
                panic!("the node server printed {line:?} instead of `listening HOST:PORT`");
            };
            (server, address.to_owned())
        }

        /// Reads the next frame, failing the test on anything else.
        async fn frame(conn: &mut Conn, who: &str) -> Frame {
            match conn.next_frame().await {
                Ok(Some(frame)) => frame,
                Ok(None) => panic!("{who}: socket closed"),
                Err(error) => panic!("{who}: {error:#}"),
            }
        }

        #[test]
        fn two_players_and_a_spectator_see_acks_and_progress() {
            let (_server, base) = start_node_server();
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap_or_else(|error| panic!("runtime: {error}"));
            let scenario = async {
                let shape = RoomShape {
                    players: 2,
                    spectators: 1,
                };
                let (room_id, mut first) = create_room(&base, shape, Role::Player).await?;
                let mut second = join_room(&base, &room_id, Role::Player).await?;
                // Both seats are taken: the room refuses a third player at the
                // join (an ERROR frame), though it still has a spectator place.
                let Err(refused) = join_room(&base, &room_id, Role::Player).await else {
                    panic!("a third player took a seat in a two-seat room");
                };
                assert!(
                    format!("{refused:#}").contains("every seat is taken"),
                    "{refused:#}"
                );
                let mut watcher = join_room(&base, &room_id, Role::Spectator).await?;
                // Now the room is full: matchmaking itself refuses.
                let Err(full) = join_room(&base, &room_id, Role::Spectator).await else {
                    panic!("a fourth client joined a room of three");
                };
                assert!(
                    format!("{full:#}").contains("matchmaking refused"),
                    "{full:#}"
                );

                let mut seq = 0;
                for (seat, n) in [(0_u8, 1_u64), (1, 1), (0, 2), (0, 3), (1, 2)] {
                    let (mover, rival) = if seat == 0 {
                        (&mut first, &mut second)
                    } else {
                        (&mut second, &mut first)
                    };
                    mover.send_move(n, "t1 f").await?;
                    seq += 1;
                    match frame(mover, "mover").await {
                        Frame::Ack {
                            n: acked,
                            seq: acked_seq,
                            progress,
                        } => assert_eq!((acked, acked_seq, progress.moves), (n, seq, n)),
                        other => panic!("mover of {seat}/{n} got {other:?}"),
                    }
                    for (who, conn) in [("rival", rival), ("spectator", &mut watcher)] {
                        match frame(conn, who).await {
                            Frame::Progress {
                                seq: seen_seq,
                                seat: seen_seat,
                                progress,
                            } => assert_eq!((seen_seq, seen_seat, progress.moves), (seq, seat, n)),
                            other => panic!("{who} of {seat}/{n} got {other:?}"),
                        }
                    }
                }
                first.leave().await?;
                eprintln!("colyseus smoke: room {room_id}: 5 moves, 5 acks, 10 progress frames");
                anyhow::Ok(())
            };
            let outcome = runtime
                .block_on(async { tokio::time::timeout(Duration::from_secs(20), scenario).await });
            match outcome {
                Ok(Ok(())) => {}
                Ok(Err(error)) => panic!("{error:#}"),
                Err(_) => panic!("the smoke scenario took over 20 s"),
            }
        }
    }
}
