//! The web page, served over plain HTTP on the WebSocket port.
//!
//! A connection's request head is read first, whatever it is (see
//! [`http`], which reads it with `httparse`): a WebSocket upgrade goes on
//! to be a game connection; any other request is answered by [`respond`]
//! as HTTP/1.1 and the socket is closed. The head is read under the
//! handshake's timeout and capped at [`MAX_HEAD_BYTES`]; a head that is
//! no HTTP request gets `400`, a path the site does not have `404`,
//! with a page in the site's look.
//!
//! The page's files are in `server/web/`, built into the binary: the page
//! needs nothing but this server. It speaks the same MessagePack protocol
//! over a WebSocket to the same port; the MessagePack library is vendored
//! in `server/web/vendor/` (see its README for the version). The page's
//! rules engine, `patience-shared` compiled to WebAssembly (the package
//! `patience-wasm` in `shared/wasm/`), is built by `server/build.rs` and
//! embedded here too.

#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod http;

use std::borrow::Cow;

use patience_shared::game::GameKind;

pub use self::http::{
    HeadError, HeadReader, MAX_HEAD_BYTES, Prefixed, Request, Response, UpgradeError, answer,
    parse_head, read_request, upgrade, websocket_accept,
};

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
const NOT_FOUND_HTML: &[u8] = include_bytes!("../web/not-found.html");

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

impl Response {
    fn file(content_type: &'static str, cache_control: &'static str, body: &'static [u8]) -> Self {
        Response {
            status: 200,
            reason: "OK",
            content_type,
            cache_control,
            extra: Vec::new(),
            body: Cow::Borrowed(body),
        }
    }

    fn error(status: u16, reason: &'static str, body: &'static [u8]) -> Self {
        Response {
            status,
            reason,
            content_type: TEXT,
            cache_control: "no-store",
            extra: Vec::new(),
            body: Cow::Borrowed(body),
        }
    }

    /// `400`, for a head that is no HTTP request, or an upgrade that is no
    /// WebSocket's.
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

    /// `404`, for a path the site does not have: a page in the site's
    /// look, with the way back to the front page.
    pub fn not_found() -> Self {
        Response {
            content_type: HTML,
            ..Response::error(404, "Not Found", NOT_FOUND_HTML)
        }
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

/// Whether `id` reads as a race's id (a finished race's lasting page):
/// decimal digits, no leading zero, within a `u64`.
fn is_race_id(id: &str) -> bool {
    !id.starts_with('0')
        && id.bytes().all(|byte| byte.is_ascii_digit())
        && id.parse::<u64>().is_ok()
}

/// Whether `name` is a game of this protocol (`three-blind-mice`…).
fn is_game(name: &str) -> bool {
    GameKind::ALL.iter().any(|game| game.slug() == name)
}

/// The answer to a request that is not a WebSocket upgrade: the page's
/// files for `GET`, `405` for any other method, `404` for any other path.
/// The page's routes (`/`, `/days/GAME`, `/room/CODE`, `/race/ID`,
/// `/practice`, `/practice/GAME`, `/race/GAME`, `/daily/GAME`, `/account`,
/// `/lobby`, `/ratings`, `/ratings/GAME`) all get the page, which reads its
/// path to know what to show.
pub fn respond(request: &Request) -> Response {
    if request.method != "GET" {
        let mut refused = Response::error(405, "Method Not Allowed", b"only GET is served\n");
        refused.extra.push(("Allow", "GET"));
        return refused;
    }
    route(request.path()).unwrap_or_else(Response::not_found)
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
        "/practice" | "/account" | "/lobby" | "/ratings" => return page(),
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
        "days" | "ratings" if is_game(rest) => page(),
        "room" if is_room_code(rest) => page(),
        "practice" | "race" | "daily" if is_game(rest) => page(),
        "race" if is_race_id(rest) => page(),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
