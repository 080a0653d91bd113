//! The web page, served over plain HTTP on the WebSocket port.
//!
//! A connection's request head is read first, whatever it is: a WebSocket
//! upgrade (an `Upgrade: websocket` header) goes on to the usual handshake
//! with the bytes already read handed back through [`Prefixed`], so the
//! handshake reads them as if nothing had; any other request is answered
//! by [`respond`] as HTTP/1.1 and the socket is closed. The head is read
//! under the handshake's timeout and capped at [`MAX_HEAD_BYTES`]; a head
//! that is no HTTP request gets `400`.
//!
//! The page's files are in `server/web/`, built into the binary: the page
//! needs nothing but this server. It speaks the same MessagePack protocol
//! over a WebSocket to the same port; the MessagePack library is vendored
//! in `server/web/vendor/` (see its README for the version). The page's
//! rules engine, `patience-shared` compiled to WebAssembly (the package
//! `patience-wasm` in `shared/wasm/`), is built by `server/build.rs` and
//! embedded here too.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use patience_shared::game::GameKind;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, ReadBuf};

/// The largest request head read, WebSocket upgrades included: browsers
/// send a few hundred bytes.
pub const MAX_HEAD_BYTES: usize = 8192;

/// The page's content security policy: scripts, styles and images from
/// this server only, WebSockets to it, nothing else, never framed.
/// `'wasm-unsafe-eval'` lets the page compile its rules engine (it allows
/// WebAssembly only, not JavaScript's `eval`); `worker-src 'self'` lets it
/// run the hint worker from this server.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; \
     script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; \
     style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// The version of `@msgpack/msgpack` vendored in `server/web/vendor/`; its
/// file name carries it, so the file is cached for good.
pub const MSGPACK_VERSION: &str = "3.1.3";

const INDEX_HTML: &[u8] = include_bytes!("../web/index.html");
const APP_JS: &[u8] = include_bytes!("../web/app.js");
const CARDS_JS: &[u8] = include_bytes!("../web/cards.js");
const PROTOCOL_JS: &[u8] = include_bytes!("../web/protocol.js");
const ENGINE_JS: &[u8] = include_bytes!("../web/engine.js");
const HINT_WORKER_JS: &[u8] = include_bytes!("../web/hint-worker.js");
const PRACTICE_JS: &[u8] = include_bytes!("../web/practice.js");
const RACE_JS: &[u8] = include_bytes!("../web/race.js");
const ENGINE_WASM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/patience.wasm"));
const STYLE_CSS: &[u8] = include_bytes!("../web/style.css");
const FAVICON_SVG: &[u8] = include_bytes!("../web/favicon.svg");
const MSGPACK_JS: &[u8] = include_bytes!("../web/vendor/msgpack-3.1.3.min.js");
const MSGPACK_LICENSE: &[u8] = include_bytes!("../web/vendor/LICENSE");

const HTML: &str = "text/html; charset=utf-8";
const JAVASCRIPT: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const SVG: &str = "image/svg+xml";
const WASM: &str = "application/wasm";
const TEXT: &str = "text/plain; charset=utf-8";

/// Files that change with the server: browsers check before using a copy.
const REVALIDATE: &str = "no-cache";
/// The vendored library, whose name holds its version.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// A request head: what routing needs of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `POST`…, as sent.
    pub method: String,
    /// The request target, query included.
    pub target: String,
    /// Header names (lower case) and values, in order.
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// Whether this is a WebSocket upgrade: an `Upgrade` header naming
    /// `websocket`. The handshake checks the rest.
    pub fn is_websocket_upgrade(&self) -> bool {
        self.headers.iter().any(|(key, value)| {
            key == "upgrade"
                && value
                    .split(',')
                    .any(|token| token.trim().eq_ignore_ascii_case("websocket"))
        })
    }
}

/// Why a request head could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HeadError {
    /// The head is not an HTTP/1.x request.
    #[error("not an HTTP request: {0}")]
    Malformed(&'static str),
    /// The head is longer than [`MAX_HEAD_BYTES`].
    #[error("request head over {MAX_HEAD_BYTES} bytes")]
    TooLarge,
    /// The peer closed before the head was complete.
    #[error("connection closed before the request head ended")]
    Closed,
    /// Reading failed.
    #[error("reading the request head: {0}")]
    Io(#[from] io::Error),
}

/// The length of the head at the start of `bytes` (through its blank
/// line), if it is complete.
fn head_length(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .map(|at| at + 4)
}

/// Parses a complete request head (request line and headers, through the
/// blank line).
pub fn parse_head(head: &[u8]) -> Result<Request, HeadError> {
    let text = std::str::from_utf8(head).map_err(|_| HeadError::Malformed("not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let request_line = lines
        .next()
        .ok_or(HeadError::Malformed("no request line"))?;
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HeadError::Malformed("bad request line"));
    };
    let is_token = |text: &str| {
        !text.is_empty()
            && text
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte))
    };
    if !is_token(method) {
        return Err(HeadError::Malformed("bad method"));
    }
    if !target.starts_with('/') || target.bytes().any(|byte| byte <= b' ' || byte == 0x7f) {
        return Err(HeadError::Malformed("bad request target"));
    }
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(HeadError::Malformed("not HTTP/1.0 or HTTP/1.1"));
    }
    let mut headers = Vec::new();
    for line in lines.take_while(|line| !line.is_empty()) {
        let (name, value) = line
            .split_once(':')
            .ok_or(HeadError::Malformed("a header line without a colon"))?;
        if !is_token(name) {
            return Err(HeadError::Malformed("bad header name"));
        }
        headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
    }
    Ok(Request {
        method: method.to_string(),
        target: target.to_string(),
        headers,
    })
}

/// Reads from `stream` until a whole request head has come: returns it
/// parsed, with every byte read (the head and whatever followed it).
pub async fn read_request<S: AsyncRead + Unpin>(
    stream: &mut S,
) -> Result<(Request, Vec<u8>), HeadError> {
    let mut bytes = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            return Err(HeadError::Closed);
        }
        // Look for the blank line only where it can newly be.
        let from = bytes.len().saturating_sub(3);
        bytes.extend_from_slice(&chunk[..read]);
        if let Some(length) = head_length(&bytes[from..]).map(|length| from + length) {
            if length > MAX_HEAD_BYTES {
                return Err(HeadError::TooLarge);
            }
            let request = parse_head(&bytes[..length])?;
            return Ok((request, bytes));
        }
        if bytes.len() > MAX_HEAD_BYTES {
            return Err(HeadError::TooLarge);
        }
    }
}

/// An HTTP answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Its reason phrase.
    pub reason: &'static str,
    /// The `Content-Type`.
    pub content_type: &'static str,
    /// The `Cache-Control`.
    pub cache_control: &'static str,
    /// Extra headers (`Allow` on a 405).
    pub extra: Vec<(&'static str, &'static str)>,
    /// The body.
    pub body: &'static [u8],
}

impl Response {
    fn file(content_type: &'static str, cache_control: &'static str, body: &'static [u8]) -> Self {
        Response {
            status: 200,
            reason: "OK",
            content_type,
            cache_control,
            extra: Vec::new(),
            body,
        }
    }

    fn error(status: u16, reason: &'static str, body: &'static [u8]) -> Self {
        Response {
            status,
            reason,
            content_type: TEXT,
            cache_control: "no-store",
            extra: Vec::new(),
            body,
        }
    }

    /// `400`, for a head that is no HTTP request.
    pub fn bad_request() -> Self {
        Response::error(400, "Bad Request", b"bad request\n")
    }

    /// `503`, for a request over the connection cap.
    pub fn busy() -> Self {
        Response::error(
            503,
            "Service Unavailable",
            b"the server has too many connections; try again later\n",
        )
    }

    /// The whole answer as bytes: status line, headers, body. The
    /// connection closes after it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: {}\r\n\
             Content-Security-Policy: {}\r\nX-Content-Type-Options: nosniff\r\n\
             Referrer-Policy: no-referrer\r\nConnection: close\r\n",
            self.status,
            self.reason,
            self.content_type,
            self.body.len(),
            self.cache_control,
            CONTENT_SECURITY_POLICY,
        );
        for (name, value) in &self.extra {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(self.body);
        bytes
    }
}

/// Whether `code` reads as a room code: six characters of the rooms'
/// alphabet, in either case.
fn is_room_code(code: &str) -> bool {
    const ALPHABET: &[u8] = b"34679ACDEFGHJKMNPQRTWXY";
    code.len() == 6
        && code
            .bytes()
            .all(|byte| ALPHABET.contains(&byte.to_ascii_uppercase()))
}

/// Whether `name` is a game of this protocol (`three-blind-mice`…).
fn is_game(name: &str) -> bool {
    GameKind::ALL.iter().any(|game| game.slug() == name)
}

/// The answer to a request that is not a WebSocket upgrade: the page's
/// files for `GET`, `405` for any other method, `404` for any other path.
/// The page's routes (`/`, `/days/GAME`, `/room/CODE`, `/practice`,
/// `/practice/GAME`, `/race/GAME`, `/daily/GAME`, `/account`, `/lobby`) all get the
/// page, which reads its path to know what to show.
pub fn respond(request: &Request) -> Response {
    let path = request.target.split(['?', '#']).next().unwrap_or_default();
    let known = route(path);
    if request.method != "GET" {
        let mut refused = Response::error(405, "Method Not Allowed", b"only GET is served\n");
        refused.extra.push(("Allow", "GET"));
        return refused;
    }
    known.unwrap_or_else(|| Response::error(404, "Not Found", b"no such page\n"))
}

/// The file at `path`, if there is one.
fn route(path: &str) -> Option<Response> {
    let page = || Some(Response::file(HTML, REVALIDATE, INDEX_HTML));
    match path {
        "/" | "/index.html" => return page(),
        "/app.js" => return Some(Response::file(JAVASCRIPT, REVALIDATE, APP_JS)),
        "/cards.js" => return Some(Response::file(JAVASCRIPT, REVALIDATE, CARDS_JS)),
        "/protocol.js" => return Some(Response::file(JAVASCRIPT, REVALIDATE, PROTOCOL_JS)),
        "/engine.js" => return Some(Response::file(JAVASCRIPT, REVALIDATE, ENGINE_JS)),
        "/hint-worker.js" => return Some(Response::file(JAVASCRIPT, REVALIDATE, HINT_WORKER_JS)),
        "/practice.js" => return Some(Response::file(JAVASCRIPT, REVALIDATE, PRACTICE_JS)),
        "/race.js" => return Some(Response::file(JAVASCRIPT, REVALIDATE, RACE_JS)),
        "/engine.wasm" => return Some(Response::file(WASM, REVALIDATE, ENGINE_WASM)),
        "/practice" | "/account" | "/lobby" => return page(),
        "/style.css" => return Some(Response::file(CSS, REVALIDATE, STYLE_CSS)),
        "/favicon.svg" => return Some(Response::file(SVG, REVALIDATE, FAVICON_SVG)),
        "/vendor/msgpack-3.1.3.min.js" => {
            return Some(Response::file(JAVASCRIPT, IMMUTABLE, MSGPACK_JS));
        }
        "/vendor/LICENSE" => return Some(Response::file(TEXT, IMMUTABLE, MSGPACK_LICENSE)),
        _ => {}
    }
    let (section, rest) = path.strip_prefix('/')?.split_once('/')?;
    match section {
        "days" if is_game(rest) => page(),
        "room" if is_room_code(rest) => page(),
        "practice" | "race" | "daily" if is_game(rest) => page(),
        _ => None,
    }
}

/// Answers one plain HTTP request on `stream` and closes it: writes the
/// answer, ends the sending side, then reads (and drops) what the client
/// still sends, for a moment, so that closing does not reset the
/// connection before the client has read the answer.
pub async fn answer<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    response: &Response,
    linger: std::time::Duration,
) -> io::Result<()> {
    stream.write_all(&response.to_bytes()).await?;
    stream.flush().await?;
    stream.shutdown().await?;
    let drain = async {
        let mut sink = [0u8; 1024];
        let mut left = 64 * 1024usize;
        while left > 0 {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(read) => left = left.saturating_sub(read),
            }
        }
    };
    let _ = tokio::time::timeout(linger, drain).await;
    Ok(())
}

/// A stream that first gives back bytes already read from it: the
/// request head read to tell a page request from an upgrade goes back to
/// the WebSocket handshake this way.
#[derive(Debug)]
pub struct Prefixed<S> {
    prefix: Vec<u8>,
    position: usize,
    inner: S,
}

impl<S> Prefixed<S> {
    /// `inner`, whose next bytes read are `prefix`.
    pub fn new(prefix: Vec<u8>, inner: S) -> Self {
        Prefixed {
            prefix,
            position: 0,
            inner,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Prefixed<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.position < this.prefix.len() {
            let left = &this.prefix[this.position..];
            let taken = left.len().min(buf.remaining());
            buf.put_slice(&left[..taken]);
            this.position += taken;
            if this.position == this.prefix.len() {
                this.prefix = Vec::new();
                this.position = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(context, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Prefixed<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(context, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(context)
    }

    fn poll_shutdown(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(context)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(context, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests;
