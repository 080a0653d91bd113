//! A scripted stand-in for the race server, for unit tests of the account,
//! daily, leaderboard and replay commands and of online sessions: it
//! accepts WebSocket connections on 127.0.0.1:0, answers `hello` with
//! `welcome`, and answers every other message with what the test's script
//! returns for it ([`start`]), then, if the script says so, drops the
//! connection without a word, as a lost network does ([`start_scripted`]).
//! The real server is tested end to end in `tests/`.

use std::sync::{Arc, Mutex};

use futures::{SinkExt as _, StreamExt as _};
use patience_shared::protocol::{self, ClientMessage, Limits, PROTOCOL_VERSION, ServerMessage};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

/// What the fake server received, in order, across its connections.
pub type Received = Arc<Mutex<Vec<ClientMessage>>>;

/// What the fake server does about one message.
#[derive(Clone, Debug, Default)]
pub struct Reply {
    /// Sent back, in order.
    pub messages: Vec<ServerMessage>,
    /// Then the connection is dropped (no close frame).
    pub then_drop: bool,
}

/// Starts a fake server whose answers to each message (after `hello`) come
/// from `script`. Returns its URL and the log of what it received.
/// Cancel-safe: dropped early, nothing was started.
pub async fn start(
    mut script: impl FnMut(&ClientMessage) -> Vec<ServerMessage> + Send + 'static,
) -> (String, Received) {
    start_scripted(move |message| Reply {
        messages: script(message),
        then_drop: false,
    })
    .await
}

/// [`start`], with a script that may also drop the connection.
/// Cancel-safe, as [`start`].
pub async fn start_scripted(
    script: impl FnMut(&ClientMessage) -> Reply + Send + 'static,
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
                    let reply = if let ClientMessage::Hello { .. } = message {
                        Reply {
                            messages: vec![ServerMessage::Welcome {
                                version: PROTOCOL_VERSION,
                                server: "fake".into(),
                                limits: Limits {
                                    max_message_bytes: 4096,
                                    messages_per_second: 20,
                                    burst: 40,
                                },
                            }],
                            then_drop: false,
                        }
                    } else {
                        let reply = script.lock().map(|mut script| script(&message));
                        reply.unwrap_or_default()
                    };
                    if let Ok(mut log) = log.lock() {
                        log.push(message);
                    }
                    for answer in reply.messages {
                        let frame = Message::Binary(protocol::encode(&answer).into());
                        if socket.send(frame).await.is_err() {
                            return;
                        }
                    }
                    if reply.then_drop {
                        return;
                    }
                }
            });
        }
    });
    (url, received)
}
