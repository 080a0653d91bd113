//! The admin port: `GET /livez`, `GET /healthz` and `GET /metrics`
//! (Prometheus text), over HTTP/1.1: one request head, read with the game
//! port's reader ([`HeadReader`], `httparse`), one answer with
//! `Connection: close`. Requests are capped in size and
//! time, and connections in number (`admin_max_connections`). At the cap a
//! new connection is still taken, and the oldest one still open is closed
//! to make room (`Slots`): a client that opens connections and says
//! nothing, or never reads its answer, can only push itself out, and a
//! health probe, which sends its request at once and reads its answer at
//! once, is answered however many such connections come.
//!
//! `/livez` says whether the process is alive: `200 alive` unless its
//! database thread has stopped (which only a restart mends). Redis and a
//! lost PostgreSQL do not count: the node reconnects to both by itself.
//!
//! `/healthz` says whether the node is ready: `200 ok` while the server can
//! store what it is told, and `503` with a one-line reason while the
//! database thread reconnects to a lost database server, or once it has
//! stopped (see [`database`](crate::database)): the server then refuses
//! what it cannot keep, and in the second case wants restarting. A node of
//! a cluster also answers `503` while its Redis does not answer a `PING`
//! within a second.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use crate::cluster::Cluster;
use crate::database::Database;
use crate::metrics::bump;
use crate::state::Shared;
use crate::web::HeadReader;

/// The largest request head read.
const MAX_REQUEST_BYTES: usize = 2048;

/// The admin connections being answered, oldest first, each with the
/// token that closes it: at most `admin_max_connections` of them.
struct Slots {
    capacity: usize,
    open: Mutex<SlotList>,
}

#[derive(Default)]
struct SlotList {
    next_id: u64,
    open: VecDeque<(u64, CancellationToken)>,
}

impl Slots {
    /// A slot for a new connection, and whether an older one was closed to
    /// make room for it.
    fn take(self: &Arc<Self>) -> (Slot, bool) {
        let mut list = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let mut pushed_out = false;
        while list.open.len() >= self.capacity {
            if let Some((_, oldest)) = list.open.pop_front() {
                oldest.cancel();
                pushed_out = true;
            }
        }
        let id = list.next_id;
        list.next_id += 1;
        let closed = CancellationToken::new();
        list.open.push_back((id, closed.clone()));
        drop(list);
        let slot = Slot {
            slots: Arc::clone(self),
            id,
            closed,
        };
        (slot, pushed_out)
    }
}

/// One connection's place in [`Slots`], given back when dropped.
struct Slot {
    slots: Arc<Slots>,
    id: u64,
    closed: CancellationToken,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut list = self
            .slots
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        list.open.retain(|(id, _)| *id != self.id);
    }
}

/// Serves the admin port until the server shuts down.
pub async fn serve(shared: Arc<Shared>, listener: TcpListener) {
    let slots = Arc::new(Slots {
        capacity: shared.config.admin_max_connections.max(1),
        open: Mutex::default(),
    });
    loop {
        let accepted = tokio::select! {
            _ = shared.shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                let (slot, pushed_out) = slots.take();
                if pushed_out {
                    bump(&shared.metrics.admin_connections_refused);
                }
                let shared = Arc::clone(&shared);
                shared.tracker.clone().spawn(async move {
                    let closed = slot.closed.clone();
                    let answer =
                        tokio::time::timeout(Duration::from_secs(5), answer(&shared, stream, slot));
                    tokio::select! {
                        answered = answer => if let Ok(Err(error)) = answered {
                            tracing::debug!(%error, "admin request failed");
                        },
                        () = closed.cancelled() => {
                            tracing::debug!("admin connection closed to make room for a newer one");
                        }
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

/// Answers the admin port while the server starts and cannot serve yet
/// (a cluster node waiting for its Redis): `/livez` is `200 alive`, and
/// every other path `503` with `reason`, so that an orchestrator keeps the
/// process but sends it no player. Returns the listener once `started` is
/// cancelled, for [`serve`].
pub async fn serve_while_starting(
    listener: TcpListener,
    reason: &'static str,
    capacity: usize,
    started: CancellationToken,
) -> TcpListener {
    let slots = Arc::new(Slots {
        capacity: capacity.max(1),
        open: Mutex::default(),
    });
    let answering = tokio_util::task::TaskTracker::new();
    loop {
        let accepted = tokio::select! {
            () = started.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let Ok((mut stream, _)) = accepted else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let (slot, _) = slots.take();
        answering.spawn(async move {
            let closed = slot.closed.clone();
            let answer = async {
                let asked = read_request_line(&mut stream).await?;
                let (status, body) = match asked
                    .as_ref()
                    .map(|(method, path)| (method.as_str(), path.as_str()))
                {
                    Some(("GET", "/livez")) => ("200 OK", "alive\n"),
                    Some(_) => ("503 Service Unavailable", reason),
                    None => ("400 Bad Request", "bad request\n"),
                };
                write_answer(&mut stream, status, "text/plain", body, slot).await
            };
            tokio::select! {
                _ = tokio::time::timeout(Duration::from_secs(5), answer) => {}
                () = closed.cancelled() => {}
            }
        });
    }
    answering.close();
    answering.wait().await;
    listener
}

/// The status line and body of `/livez`: the process is alive unless its
/// database thread has stopped for good.
pub fn liveness(database: &Database) -> (&'static str, &'static str) {
    if database.is_up() || database.is_reconnecting() {
        ("200 OK", "alive\n")
    } else {
        (
            "503 Service Unavailable",
            "database thread stopped: restart the server\n",
        )
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

/// What a request asks the admin port: its method and path, or `None` for
/// a head that is no HTTP request.
type Asked = Option<(String, String)>;

/// Reads a request head (at most [`MAX_REQUEST_BYTES`]) and gives its
/// method and path; `None` if it is no HTTP request, too long, or ends
/// before it is whole.
async fn read_request_line(stream: &mut TcpStream) -> std::io::Result<Asked> {
    let mut reader = HeadReader::new();
    let mut buffer = [0u8; 512];
    let mut read_so_far = 0;
    loop {
        let read = stream.read(&mut buffer).await?;
        if read == 0 {
            return Ok(None);
        }
        read_so_far += read;
        match reader.feed(&buffer[..read]) {
            Ok(Some((request, _))) => {
                let path = request.path().to_string();
                return Ok(Some((request.method, path)));
            }
            Ok(None) if read_so_far <= MAX_REQUEST_BYTES => {}
            Ok(None) | Err(_) => return Ok(None),
        }
    }
}

/// Writes a whole answer and closes the connection.
async fn write_answer(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &str,
    slot: Slot,
) -> std::io::Result<()> {
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

async fn answer(shared: &Shared, mut stream: TcpStream, slot: Slot) -> std::io::Result<()> {
    let Some((method, path)) = read_request_line(&mut stream).await? else {
        let body = "bad request\n";
        return write_answer(&mut stream, "400 Bad Request", "text/plain", body, slot).await;
    };
    let (status, content_type, body) = match (method.as_str(), path.as_str()) {
        ("GET", "/livez") => {
            let (status, body) = liveness(&shared.database);
            (status, "text/plain", body.to_string())
        }
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
    write_answer(&mut stream, status, content_type, &body, slot).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_cap_the_oldest_connection_makes_room_for_the_newest() {
        let slots = Arc::new(Slots {
            capacity: 2,
            open: Mutex::default(),
        });
        let (first, pushed_out) = slots.take();
        assert!(!pushed_out);
        let (second, pushed_out) = slots.take();
        assert!(!pushed_out);
        let (third, pushed_out) = slots.take();
        assert!(pushed_out);
        assert!(first.closed.is_cancelled());
        assert!(!second.closed.is_cancelled() && !third.closed.is_cancelled());
        drop(first);
        // A slot given back makes room without closing anyone.
        drop(second);
        let (_fourth, pushed_out) = slots.take();
        assert!(!pushed_out);
        assert!(!third.closed.is_cancelled());
    }

    #[tokio::test]
    async fn health_is_ok_while_the_database_is_up_and_503_once_it_is_down() {
        let database = Database::open(None, 4).expect("opens");
        assert_eq!(health(&database), ("200 OK", "ok\n"));
        assert_eq!(liveness(&database), ("200 OK", "alive\n"));
        database.crash_for_tests().await;
        assert_eq!(liveness(&database).0, "503 Service Unavailable");
        let (status, body) = health(&database);
        assert_eq!(status, "503 Service Unavailable");
        assert!(body.starts_with("database down: "), "{body}");
        assert_eq!(body.lines().count(), 1, "{body}");
    }
}
