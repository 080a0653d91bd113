//! Opening the load's sockets, whatever speaks over them.
//!
//! A loopback target takes at most about 28,000 connections from one source
//! address (the ephemeral port range), so the [`Connector`] spreads its
//! sockets over 127.0.0.1, 127.0.0.2, … by binding each before it connects.
//! Each socket is a file descriptor, so the tool raises its own open-files
//! limit first ([`raise_open_files_limit`]). Clients read with an 8 KiB
//! buffer, not tungstenite's 128 KiB default, so that ten thousand idle
//! sockets do not cost the tool a gigabyte and a half.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Context as _;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A client WebSocket of the load.
pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Sockets per source address when the tool chooses how many addresses to
/// use: well inside the ephemeral range of one address.
pub const SOCKETS_PER_SOURCE_ADDRESS: usize = 20_000;

/// Opens WebSockets to one server.
#[derive(Debug)]
pub struct Connector {
    url: String,
    address: SocketAddr,
    /// The addresses to bind before connecting, in turn; empty to let the
    /// system choose.
    sources: Vec<IpAddr>,
    next_source: AtomicUsize,
}

impl Connector {
    /// A connector to `url` (`ws://IP:PORT/…`). With `source_addresses`
    /// above 1 and a loopback IPv4 target, sockets come in turn from
    /// 127.0.0.1 up to 127.0.0.`source_addresses`.
    pub fn new(url: &str, source_addresses: usize) -> anyhow::Result<Connector> {
        let address = url
            .strip_prefix("ws://")
            .context("the url must start with ws://")?
            .split('/')
            .next()
            .context("the url names no host")?
            .parse::<SocketAddr>()
            .context("the url's host must be IP:PORT")?;
        let sources = if source_addresses > 1 && address.ip().is_loopback() && address.is_ipv4() {
            anyhow::ensure!(
                source_addresses <= 254,
                "at most 254 source addresses (127.0.0.1 to 127.0.0.254)"
            );
            (1..=source_addresses)
                .map(|last| IpAddr::V4(Ipv4Addr::new(127, 0, 0, last as u8)))
                .collect()
        } else {
            Vec::new()
        };
        Ok(Connector {
            url: url.to_string(),
            address,
            sources,
            next_source: AtomicUsize::new(0),
        })
    }

    /// The source addresses needed for `sockets` sockets at once.
    pub fn source_addresses_for(sockets: usize) -> usize {
        sockets.div_ceil(SOCKETS_PER_SOURCE_ADDRESS).max(1)
    }

    /// Opens a TCP connection (with its receive buffer set, if given) and
    /// makes it a WebSocket.
    pub async fn connect(&self, recv_buffer: Option<u32>) -> anyhow::Result<Socket> {
        let socket = if self.address.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        if let Some(bytes) = recv_buffer {
            socket.set_recv_buffer_size(bytes)?;
        }
        if !self.sources.is_empty() {
            let turn = self.next_source.fetch_add(1, Ordering::Relaxed) % self.sources.len();
            socket
                .bind(SocketAddr::new(self.sources[turn], 0))
                .with_context(|| format!("binding to {}", self.sources[turn]))?;
        }
        let stream = socket.connect(self.address).await.context("connecting")?;
        stream.set_nodelay(true)?;
        let (socket, _) = tokio_tungstenite::client_async_with_config(
            self.url.as_str(),
            MaybeTlsStream::Plain(stream),
            Some(client_config()),
        )
        .await
        .context("websocket handshake")?;
        Ok(socket)
    }
}

/// The clients' WebSocket settings: a small read buffer, the rest default.
fn client_config() -> WebSocketConfig {
    WebSocketConfig::default().read_buffer_size(8 * 1024)
}

/// Raises the soft open-files limit to `wanted` descriptors, or as far as
/// the hard limit allows (saying so on stderr); returns the limit now in
/// force (`None`: unlimited).
pub fn raise_open_files_limit(wanted: u64) -> Option<u64> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

    let limits = getrlimit(Resource::Nofile);
    if limits.current.is_none_or(|soft| soft >= wanted) {
        return limits.current;
    }
    let target = limits.maximum.map_or(wanted, |hard| hard.min(wanted));
    if target < wanted {
        eprintln!(
            "patience-load: the hard open-files limit is {target}, below the {wanted} this run needs; \
             raise it (ulimit -Hn) or expect connections to fail"
        );
    }
    let raised = Rlimit {
        current: Some(target),
        maximum: limits.maximum,
    };
    match setrlimit(Resource::Nofile, raised) {
        Ok(()) => Some(target),
        Err(error) => {
            eprintln!("patience-load: cannot raise the open-files limit: {error}");
            limits.current
        }
    }
}
