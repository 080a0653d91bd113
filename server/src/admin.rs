//! The admin port: `GET /healthz` and `GET /metrics` (Prometheus text), over
//! a minimal HTTP/1.1 that reads one request line and answers with
//! `Connection: close`. Requests are capped in size and time, and
//! connections in number (`admin_max_connections`): one over the cap is
//! answered `503` and closed at once, without a task, so that clients that
//! open connections and say nothing cannot pile tasks up.
//!
//! `/healthz` answers `200 ok` while the server can store what it is told,
//! and `503` with a one-line reason while the database thread reconnects to
//! a lost database server, or once it has stopped (see
//! [`database`](crate::database)): the server then refuses what it cannot
//! keep, and in the second case wants restarting. A node of a cluster also answers
//! `503` while its Redis does not answer a `PING` within a second.

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::cluster::Cluster;
use crate::database::Database;
use crate::metrics::bump;
use crate::state::Shared;

/// The largest request head read.
const MAX_REQUEST_BYTES: usize = 2048;

/// The answer to a connection over the cap.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 32\r\nConnection: close\r\n\r\ntoo many admin connections open\n";

/// Serves the admin port until the server shuts down.
pub async fn serve(shared: Arc<Shared>, listener: TcpListener) {
    let slots = Arc::new(Semaphore::new(shared.config.admin_max_connections));
    loop {
        let accepted = tokio::select! {
            _ = shared.shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                // Taken after `accept`, unlike the game port's cap: a
                // connection over it is told so at once rather than left
                // waiting in the backlog.
                let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                    bump(&shared.metrics.admin_connections_refused);
                    refuse(stream);
                    continue;
                };
                let shared = Arc::clone(&shared);
                shared.tracker.clone().spawn(async move {
                    let answer =
                        tokio::time::timeout(Duration::from_secs(5), answer(&shared, stream, slot));
                    if let Ok(Err(error)) = answer.await {
                        tracing::debug!(%error, "admin request failed");
                    }
                });
            }
            Err(error) => {
                tracing::warn!(%error, "admin accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// Answers `503` to a connection over the cap and closes it, never
/// waiting: one write that the fresh socket's buffer takes whole, or
/// nothing if it does not.
fn refuse(stream: TcpStream) {
    if let Ok(mut stream) = stream.into_std() {
        let _ = stream.write(BUSY);
    }
}

/// The status line and body of `/healthz`.
pub fn health(database: &Database) -> (&'static str, &'static str) {
    if database.is_up() {
        ("200 OK", "ok\n")
    } else if database.is_reconnecting() {
        (
            "503 Service Unavailable",
            "database down: reconnecting to the database server; nothing can be stored until it is back\n",
        )
    } else {
        (
            "503 Service Unavailable",
            "database down: the database thread has stopped and nothing can be stored\n",
        )
    }
}

/// The status and body of `/healthz` for a node whose database is up:
/// `503` if it is in a cluster whose Redis does not answer now (it can
/// then open no room, find no room elsewhere, and its leases lapse).
async fn cluster_health(cluster: Option<&Cluster>) -> (&'static str, String) {
    match cluster.map(Cluster::ping) {
        None => ("200 OK", "ok\n".to_string()),
        Some(ping) => match ping.await {
            Ok(()) => ("200 OK", "ok\n".to_string()),
            Err(error) => (
                "503 Service Unavailable",
                format!("redis unreachable: {error}\n"),
            ),
        },
    }
}

async fn answer(
    shared: &Shared,
    mut stream: TcpStream,
    slot: OwnedSemaphorePermit,
) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(256);
    let mut buffer = [0u8; 512];
    while !head.windows(4).any(|window| window == b"\r\n\r\n") && head.len() < MAX_REQUEST_BYTES {
        let read = stream.read(&mut buffer).await?;
        if read == 0 {
            break;
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let head = String::from_utf8_lossy(&head);
    let mut words = head.lines().next().unwrap_or_default().split_whitespace();
    let (method, path) = (
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default(),
    );
    let (status, content_type, body) = match (method, path) {
        ("GET", "/healthz") => {
            let (status, body) = match health(&shared.database) {
                ("200 OK", _) => cluster_health(shared.cluster.as_ref()).await,
                down => (down.0, down.1.to_string()),
            };
            (status, "text/plain", body)
        }
        ("GET", "/metrics") => (
            "200 OK",
            "text/plain; version=0.0.4",
            shared
                .metrics
                .render(&shared.pool.ready_counts(), shared.database.stats()),
        ),
        ("GET", _) => ("404 Not Found", "text/plain", "not found\n".to_string()),
        _ => (
            "405 Method Not Allowed",
            "text/plain",
            "GET only\n".to_string(),
        ),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    // Freed before the end of the answer is sent, so that a client that has
    // read it whole can count on the slot being free again.
    drop(slot);
    stream.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_is_a_whole_http_answer() {
        let text = std::str::from_utf8(BUSY).expect("ascii");
        let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
        assert!(head.starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
        assert!(
            head.contains(&format!("Content-Length: {}\r\n", body.len())),
            "{head}"
        );
    }

    #[tokio::test]
    async fn health_is_ok_while_the_database_is_up_and_503_once_it_is_down() {
        let database = Database::open(None, 4).expect("opens");
        assert_eq!(health(&database), ("200 OK", "ok\n"));
        database.crash_for_tests().await;
        let (status, body) = health(&database);
        assert_eq!(status, "503 Service Unavailable");
        assert!(body.starts_with("database down: "), "{body}");
        assert_eq!(body.lines().count(), 1, "{body}");
    }
}
