//! A connection's outbox as the rest of the server holds it: a bounded queue
//! of encoded frames that its writer task drains, and a way to close it with
//! a reason.
//!
//! Rooms, the daily path and the registry hold [`ConnectionHandle`]s only:
//! sending never waits (`try_send`), so no client can slow another down.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use patience_shared::protocol::{self, ErrorCode, ServerMessage};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How a room reaches a connection: its outbox, and a way to close it.
#[derive(Clone, Debug)]
pub struct ConnectionHandle {
    /// Unique for the server's life.
    pub id: u64,
    outbox: mpsc::Sender<Bytes>,
    closing: CancellationToken,
    reason: Arc<Mutex<Option<(ErrorCode, String)>>>,
}

/// Why a frame was not queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendFailure {
    /// The outbox is full: the client is not keeping up.
    Full,
    /// The connection is closing.
    Closed,
}

impl ConnectionHandle {
    /// A handle on a connection whose writer drains `outbox`.
    pub fn new(id: u64, outbox: mpsc::Sender<Bytes>) -> ConnectionHandle {
        ConnectionHandle {
            id,
            outbox,
            closing: CancellationToken::new(),
            reason: Arc::new(Mutex::new(None)),
        }
    }

    /// Cancelled once the connection is to close.
    pub fn closing(&self) -> &CancellationToken {
        &self.closing
    }

    /// Why the connection was kicked, once (the writer says it last).
    pub fn take_reason(&self) -> Option<(ErrorCode, String)> {
        self.reason.lock().ok().and_then(|mut reason| reason.take())
    }

    /// Queues an encoded message without waiting.
    pub fn send(&self, frame: Bytes) -> Result<(), SendFailure> {
        self.outbox.try_send(frame).map_err(|error| match error {
            mpsc::error::TrySendError::Full(_) => SendFailure::Full,
            mpsc::error::TrySendError::Closed(_) => SendFailure::Closed,
        })
    }

    /// How many more messages the outbox takes now.
    pub fn free_slots(&self) -> usize {
        self.outbox.capacity()
    }

    /// Encodes and queues a message.
    pub fn send_message(&self, message: &ServerMessage) -> Result<(), SendFailure> {
        self.send(Bytes::from(protocol::encode(message)))
    }

    /// Closes the connection after telling the client why. The first reason wins.
    pub fn kick(&self, code: ErrorCode, message: impl Into<String>) {
        if let Ok(mut reason) = self.reason.lock() {
            reason.get_or_insert((code, message.into()));
        }
        self.closing.cancel();
    }

    /// Closes the connection without a reason (the socket is gone, or the
    /// client said goodbye).
    pub fn close_quietly(&self) {
        self.closing.cancel();
    }
}
