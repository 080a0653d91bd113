//! The accept loop: a slot is taken before each `accept`, so the server never
//! holds more sockets than its cap; accept errors (such as running out of
//! file descriptors) are logged and retried with a growing back-off.
//!
//! Every accepted socket counts under `max_connections` from its accept,
//! whether it has sent a whole request head yet or not: a socket accepted
//! beyond it (one of `OVER_CAP_SOCKETS`) is refused as soon as its head
//! is read, or after a second without one.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::OVER_CAP_SOCKETS;
use crate::connection;
use crate::state::Shared;

/// Accepts connections until the server shuts down.
pub async fn accept_loop(shared: Arc<Shared>, listener: TcpListener) {
    let mut backoff = Duration::from_millis(10);
    loop {
        let permit = tokio::select! {
            _ = shared.shutdown.cancelled() => return,
            permit = Arc::clone(&shared.socket_slots).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return,
            },
        };
        let accepted = tokio::select! {
            _ = shared.shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => {
                backoff = Duration::from_millis(10);
                let _ = stream.set_nodelay(true);
                if let Some(bytes) = shared.config.socket_send_buffer_bytes {
                    let _ = socket2::SockRef::from(&stream).set_send_buffer_size(bytes);
                }
                // This socket's permit is taken: the sockets open are the
                // permits taken, over the cap once they pass max_connections.
                let over_cap = shared.socket_slots.available_permits() < OVER_CAP_SOCKETS;
                let serving =
                    connection::serve(Arc::clone(&shared), stream, peer, permit, over_cap);
                shared.tracker.spawn(serving);
            }
            Err(error) => {
                tracing::warn!(%error, ?backoff, "accept failed");
                tokio::select! {
                    _ = shared.shutdown.cancelled() => return,
                    _ = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
        }
    }
}
