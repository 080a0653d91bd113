//! The admin port: `GET /healthz` and `GET /metrics` (Prometheus text), over
//! a minimal HTTP/1.1 that reads one request line and answers with
//! `Connection: close`. Requests are capped in size and time.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use crate::Shared;

/// The largest request head read.
const MAX_REQUEST_BYTES: usize = 2048;

/// Serves the admin port until the server shuts down.
pub async fn serve(shared: Arc<Shared>, listener: TcpListener) {
    loop {
        let accepted = tokio::select! {
            _ = shared.shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                let shared = Arc::clone(&shared);
                shared.tracker.clone().spawn(async move {
                    let answer =
                        tokio::time::timeout(Duration::from_secs(5), answer(&shared, stream));
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

async fn answer(shared: &Shared, mut stream: TcpStream) -> std::io::Result<()> {
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
        ("GET", "/healthz") => ("200 OK", "text/plain", "ok\n".to_string()),
        ("GET", "/metrics") => (
            "200 OK",
            "text/plain; version=0.0.4",
            shared.metrics.render(&shared.pool.ready_counts()),
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
    stream.shutdown().await
}
