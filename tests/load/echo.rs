//! `patience-echo`: a bare tokio-tungstenite WebSocket server that sends
//! each binary or text frame back, the baseline `patience-load --scenario
//! echo` measures the race server against.
//!
//! It has what the race server's sockets have by default and nothing else:
//! `TCP_NODELAY`, the same kernel send buffer and the same WebSocket
//! settings (read and write buffers, frame and message limits), taken from
//! `patience_server::Config::default()` through the server's own
//! `websocket_config`. One task per connection reads a frame and writes it
//! back. It prints `patience-echo listening on ws://ADDRESS` when ready.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;
use futures::{SinkExt as _, StreamExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "patience-echo",
    about = "A bare WebSocket echo server with the race server's buffer sizes"
)]
struct Cli {
    /// Where to listen; port 0 for any free port.
    #[arg(long, default_value = "127.0.0.1:7880")]
    listen: SocketAddr,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let config = patience_server::Config::default();
    let websocket = patience_server::connection::websocket_config(&config);
    let send_buffer = config.socket_send_buffer_bytes;
    raise_open_files_limit();
    let listener = TcpListener::bind(cli.listen).await?;
    println!("patience-echo listening on ws://{}", listener.local_addr()?);
    let mut backoff = Duration::from_millis(10);
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                backoff = Duration::from_millis(10);
                let _ = stream.set_nodelay(true);
                if let Some(bytes) = send_buffer {
                    let _ = socket2::SockRef::from(&stream).set_send_buffer_size(bytes);
                }
                tokio::spawn(echo(stream, websocket));
            }
            Err(error) => {
                // Out of descriptors, most likely: wait for some to close.
                eprintln!("patience-echo: accept failed: {error}");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
        }
    }
}

/// Sends every data frame back until the client leaves.
async fn echo(stream: TcpStream, websocket: WebSocketConfig) {
    let Ok(mut socket) = tokio_tungstenite::accept_async_with_config(stream, Some(websocket)).await
    else {
        return;
    };
    while let Some(Ok(message)) = socket.next().await {
        match message {
            Message::Binary(_) | Message::Text(_) => {
                if socket.send(message).await.is_err() {
                    return;
                }
            }
            // tungstenite answers pings and the close itself, as it
            // reads on.
            Message::Close(_) | Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
        }
    }
}

/// Raises the soft open-files limit to the hard one, as the race server
/// raises its own, so that both hold as many sockets.
fn raise_open_files_limit() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

    let limits = getrlimit(Resource::Nofile);
    if limits.current != limits.maximum {
        let _ = setrlimit(
            Resource::Nofile,
            Rlimit {
                current: limits.maximum,
                maximum: limits.maximum,
            },
        );
    }
}
