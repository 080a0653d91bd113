//! A scripted stand-in for the race server, for unit tests of the account,
//! daily, leaderboard and replay commands: it accepts WebSocket connections
//! on 127.0.0.1:0, answers `hello` with `welcome`, and answers every other
//! message with what the test's script returns for it. The real server is
//! tested end to end in `tests/`.

use std::sync::{Arc, Mutex};

use futures::{SinkExt as _, StreamExt as _};
use patience_shared::protocol::{self, ClientMessage, Limits, PROTOCOL_VERSION, ServerMessage};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

/// What the fake server received, in order, across its connections.
pub type Received = Arc<Mutex<Vec<ClientMessage>>>;

/// Starts a fake server whose answers to each message (after `hello`) come
/// from `script`. Returns its URL and the log of what it received.
pub async fn start(
    script: impl FnMut(&ClientMessage) -> Vec<ServerMessage> + Send + 'static,
) -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a local port");
    let url = format!(
        "ws://{}/",
        listener
            .local_addr()
            .expect("a bound listener has an address")
    );
    let received: Received = Arc::default();
    let log = Arc::clone(&received);
    let script = Arc::new(Mutex::new(script));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (log, script) = (Arc::clone(&log), Arc::clone(&script));
            tokio::spawn(async move {
                let Ok(mut socket) = tokio_tungstenite::accept_async(stream).await else {
                    return;
                };
                while let Some(Ok(frame)) = socket.next().await {
                    let Message::Binary(bytes) = frame else {
                        continue;
                    };
                    let Ok(message) = protocol::decode_client(&bytes) else {
                        return;
                    };
                    let answers = if let ClientMessage::Hello { .. } = message {
                        vec![ServerMessage::Welcome {
                            version: PROTOCOL_VERSION,
                            server: "fake".into(),
                            limits: Limits {
                                max_message_bytes: 4096,
                                messages_per_second: 20,
                                burst: 40,
                            },
                        }]
                    } else {
                        let answers = script.lock().map(|mut script| script(&message));
                        answers.unwrap_or_default()
                    };
                    if let Ok(mut log) = log.lock() {
                        log.push(message);
                    }
                    for answer in answers {
                        let frame = Message::Binary(protocol::encode(&answer).into());
                        if socket.send(frame).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    (url, received)
}
