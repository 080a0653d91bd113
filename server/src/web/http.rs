//! HTTP/1 on the game port and the admin port, through `httparse` (the
//! parser hyper uses) and tungstenite's own handshake functions.
//!
//! A connection's request head is read once, by [`read_request`]: bytes
//! are fed to a [`HeadReader`] until `httparse` says the head is whole, at
//! most [`MAX_HEAD_BYTES`] of them. A WebSocket upgrade is then answered
//! here, with the response tungstenite itself makes for that head
//! ([`websocket_accept`]), and the socket goes on as a WebSocket
//! ([`upgrade`]) with the bytes that followed the head handed back through
//! [`Prefixed`]: nothing parses the head a second time. Any other request
//! gets one [`Response`] and the socket closes ([`answer`]).

use std::borrow::Cow;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, ReadBuf};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::server::{create_response, write_response};
use tokio_tungstenite::tungstenite::http;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};

use super::CONTENT_SECURITY_POLICY;

/// The largest request head read, WebSocket upgrades included: browsers
/// send a few hundred bytes.
pub const MAX_HEAD_BYTES: usize = 8192;

/// The most header lines a head may have: a browser sends about twenty.
pub const MAX_HEADERS: usize = 64;

/// A request head: what routing and the WebSocket handshake need of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `POST`…, as sent.
    pub method: String,
    /// The request target, query included.
    pub target: String,
    /// The minor version: 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub minor_version: u8,
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

    /// The path: the target without its query.
    pub fn path(&self) -> &str {
        self.target.split(['?', '#']).next().unwrap_or_default()
    }

    /// Whether this is a WebSocket upgrade: an `Upgrade` header naming
    /// `websocket`. [`websocket_accept`] checks the rest.
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
    Malformed(Cow<'static, str>),
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

/// Parses the head at the start of `bytes`: `None` while it is not whole,
/// else the request and the head's length (what follows is not the
/// head's).
pub fn parse_head(bytes: &[u8]) -> Result<Option<(Request, usize)>, HeadError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    let length = match parsed.parse(bytes) {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(error) => return Err(HeadError::Malformed(Cow::Owned(error.to_string()))),
    };
    let malformed = |why: &'static str| HeadError::Malformed(Cow::Borrowed(why));
    let (Some(method), Some(target), Some(minor_version)) =
        (parsed.method, parsed.path, parsed.version)
    else {
        return Err(malformed("an incomplete request line"));
    };
    // Origin form only: this server is nobody's proxy.
    if !target.starts_with('/') {
        return Err(malformed("a request target not starting with /"));
    }
    let headers = parsed
        .headers
        .iter()
        .map(|header| {
            let value = std::str::from_utf8(header.value)
                .map_err(|_| malformed("a header value that is not UTF-8"))?;
            Ok((header.name.to_ascii_lowercase(), value.trim().to_string()))
        })
        .collect::<Result<Vec<_>, HeadError>>()?;
    let request = Request {
        method: method.to_string(),
        target: target.to_string(),
        minor_version,
        headers,
    };
    Ok(Some((request, length)))
}

/// A request head arriving in pieces: [`HeadReader::feed`] each piece
/// read until it gives the request. The I/O is the caller's
/// ([`read_request`]); this only keeps the bytes and asks `httparse`.
#[derive(Debug, Default)]
pub struct HeadReader {
    bytes: Vec<u8>,
}

impl HeadReader {
    /// A reader with nothing read yet.
    pub fn new() -> HeadReader {
        HeadReader::default()
    }

    /// Takes the next bytes read: the request and the bytes that came
    /// after its head once it is whole, `None` while it is not.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Option<(Request, Vec<u8>)>, HeadError> {
        self.bytes.extend_from_slice(bytes);
        match parse_head(&self.bytes)? {
            Some((request, length)) if length <= MAX_HEAD_BYTES => {
                let rest = self.bytes.split_off(length);
                self.bytes = Vec::new();
                Ok(Some((request, rest)))
            }
            Some(_) => Err(HeadError::TooLarge),
            None if self.bytes.len() > MAX_HEAD_BYTES => Err(HeadError::TooLarge),
            None => Ok(None),
        }
    }
}

/// Reads from `stream` until a whole request head has come: returns it
/// parsed, with the bytes read after it.
pub async fn read_request<S: AsyncRead + Unpin>(
    stream: &mut S,
) -> Result<(Request, Vec<u8>), HeadError> {
    let mut reader = HeadReader::new();
    let mut chunk = [0u8; 1024];
    loop {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            return Err(HeadError::Closed);
        }
        if let Some(done) = reader.feed(&chunk[..read])? {
            return Ok(done);
        }
    }
}

/// Why a WebSocket upgrade is refused: tungstenite's reason.
#[derive(Debug, thiserror::Error)]
#[error("not a valid WebSocket upgrade: {0}")]
pub struct UpgradeError(String);

/// The `101 Switching Protocols` answer to `request`, as tungstenite makes
/// it (it checks the method, the version, `Connection`, `Upgrade`,
/// `Sec-WebSocket-Version` and `Sec-WebSocket-Key`).
pub fn websocket_accept(request: &Request) -> Result<Vec<u8>, UpgradeError> {
    let refused = |error: &dyn std::fmt::Display| UpgradeError(error.to_string());
    let version = match request.minor_version {
        0 => http::Version::HTTP_10,
        _ => http::Version::HTTP_11,
    };
    let mut builder = http::Request::builder()
        .method(request.method.as_str())
        .uri(request.target.as_str())
        .version(version);
    for (name, value) in &request.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let http_request = builder.body(()).map_err(|error| refused(&error))?;
    let response = create_response(&http_request).map_err(|error| refused(&error))?;
    let mut bytes = Vec::with_capacity(160);
    write_response(&mut bytes, &response).map_err(|error| refused(&error))?;
    Ok(bytes)
}

/// Sends `accept` (from [`websocket_accept`]) and goes on with `stream` as
/// a server's WebSocket.
pub async fn upgrade<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    accept: &[u8],
    config: WebSocketConfig,
) -> io::Result<WebSocketStream<S>> {
    stream.write_all(accept).await?;
    stream.flush().await?;
    Ok(WebSocketStream::from_raw_socket(stream, Role::Server, Some(config)).await)
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
    pub body: Cow<'static, [u8]>,
}

impl Response {
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
        bytes.extend_from_slice(&self.body);
        bytes
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

/// A stream that first gives back bytes already read from it: what a
/// client sent after its upgrade's head goes back to the WebSocket this
/// way.
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
