//! A connection's outbox as the rest of the server holds it: a queue of
//! encoded frames that its writer task drains, bounded in frames **and** in
//! bytes, and a way to close it with a reason.
//!
//! Rooms, the daily path and the registry hold [`ConnectionHandle`]s only:
//! sending never waits (`try_send`), so no client can slow another down.
//! The writer holds the other end, an [`OutboxReceiver`]: it gives the bytes
//! back once they are written to the socket, and says when the socket has
//! stopped taking them ([`OutboxReceiver::set_stalled`]); from then on every
//! send is refused as [`SendFailure::Full`], so the room applies its policy
//! for a slow consumer (a player is kicked `too_slow`, a spectator skips
//! events and later gets one snapshot) even before the queue itself fills.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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
    state: Arc<OutboxState>,
    closing: CancellationToken,
    reason: Arc<Mutex<Option<(ErrorCode, String)>>>,
}

/// What the handle and the writer share about the queue.
#[derive(Debug)]
struct OutboxState {
    /// Frames the queue holds at most (the channel's capacity).
    max_frames: usize,
    /// Bytes queued or fed to the socket but not yet written.
    max_bytes: usize,
    /// Bytes sent to the outbox and not yet written to the socket.
    queued_bytes: AtomicUsize,
    /// The socket has taken nothing for the write timeout.
    stalled: AtomicBool,
    /// The connection is to close: the same as the handle's cancelled
    /// token, but read with one atomic load on every send (the token's
    /// state sits behind a mutex).
    closing: AtomicBool,
}

/// The writer's end of an outbox.
#[derive(Debug)]
pub struct OutboxReceiver {
    frames: mpsc::Receiver<Bytes>,
    state: Arc<OutboxState>,
}

/// Why a frame was not queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendFailure {
    /// The outbox is full (in frames or in bytes), or the socket has
    /// stopped taking what is written: the client is not keeping up.
    Full,
    /// The connection is closing.
    Closed,
}

/// A new outbox of at most `max_frames` frames and `max_bytes` bytes (a
/// single frame larger than `max_bytes` is taken when nothing else waits,
/// so that no message is undeliverable): the handle for connection `id` and
/// the writer's end.
pub fn outbox(id: u64, max_frames: usize, max_bytes: usize) -> (ConnectionHandle, OutboxReceiver) {
    let (sender, frames) = mpsc::channel(max_frames.max(1));
    let state = Arc::new(OutboxState {
        max_frames: max_frames.max(1),
        max_bytes,
        queued_bytes: AtomicUsize::new(0),
        stalled: AtomicBool::new(false),
        closing: AtomicBool::new(false),
    });
    let handle = ConnectionHandle {
        id,
        outbox: sender,
        state: Arc::clone(&state),
        closing: CancellationToken::new(),
        reason: Arc::new(Mutex::new(None)),
    };
    (handle, OutboxReceiver { frames, state })
}

impl ConnectionHandle {
    /// Cancelled once the connection is to close.
    pub fn closing(&self) -> &CancellationToken {
        &self.closing
    }

    /// Whether the connection is to close (kicked, or closed quietly): one
    /// atomic load, for loops that check it on every frame.
    pub fn is_closing(&self) -> bool {
        self.state.closing.load(Ordering::Acquire)
    }

    /// Why the connection was kicked, once (the writer says it last).
    pub fn take_reason(&self) -> Option<(ErrorCode, String)> {
        self.reason.lock().ok().and_then(|mut reason| reason.take())
    }

    /// Queues an encoded message without waiting. Refused as
    /// [`SendFailure::Full`] when the frame would pass either bound, or
    /// while the socket is stalled.
    pub fn send(&self, frame: Bytes) -> Result<(), SendFailure> {
        // A closed channel is refused by `try_send` below.
        if self.state.closing.load(Ordering::Acquire) {
            return Err(SendFailure::Closed);
        }
        if self.state.stalled.load(Ordering::Acquire) {
            return Err(SendFailure::Full);
        }
        let length = frame.len();
        let before = self.state.queued_bytes.fetch_add(length, Ordering::AcqRel);
        if before > 0 && before + length > self.state.max_bytes {
            self.state.queued_bytes.fetch_sub(length, Ordering::AcqRel);
            return Err(SendFailure::Full);
        }
        self.outbox.try_send(frame).map_err(|error| {
            self.state.queued_bytes.fetch_sub(length, Ordering::AcqRel);
            match error {
                mpsc::error::TrySendError::Full(_) => SendFailure::Full,
                mpsc::error::TrySendError::Closed(_) => SendFailure::Closed,
            }
        })
    }

    /// Whether a connection that fell behind may be sent a catch-up
    /// snapshot now: its socket takes writes again and its outbox is at
    /// most half full, in frames and in bytes, so the snapshot and the
    /// events after it fit.
    pub fn has_room_to_catch_up(&self) -> bool {
        let state = &self.state;
        !state.stalled.load(Ordering::Acquire)
            && self.outbox.capacity() * 2 >= state.max_frames
            && state.queued_bytes.load(Ordering::Acquire) * 2 <= state.max_bytes
    }

    /// Whether `frames` frames of `bytes` bytes in all fit the outbox now,
    /// with room to spare for two more frames: a resumed player's missed
    /// events are sent only if they do (a snapshot otherwise).
    pub fn has_room_for(&self, frames: usize, bytes: usize) -> bool {
        let state = &self.state;
        frames + 2 <= self.outbox.capacity()
            && state.queued_bytes.load(Ordering::Acquire) + bytes <= state.max_bytes
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
        self.close_quietly();
    }

    /// Closes the connection without a reason (the socket is gone, or the
    /// client said goodbye).
    pub fn close_quietly(&self) {
        self.state.closing.store(true, Ordering::Release);
        self.closing.cancel();
    }
}

impl OutboxReceiver {
    /// The next frame, once one is queued; `None` once every handle is gone.
    pub async fn recv(&mut self) -> Option<Bytes> {
        self.frames.recv().await
    }

    /// Whether the connection is to close (kicked, or closed quietly).
    pub fn is_closing(&self) -> bool {
        self.state.closing.load(Ordering::Acquire)
    }

    /// The next frame if one is queued now.
    pub fn try_recv(&mut self) -> Option<Bytes> {
        self.frames.try_recv().ok()
    }

    /// Frames of `bytes` bytes in all have reached the socket: their room
    /// in the byte bound is free again, and the socket is not stalled.
    pub fn written(&self, bytes: usize) {
        self.state.queued_bytes.fetch_sub(bytes, Ordering::AcqRel);
        self.state.stalled.store(false, Ordering::Release);
    }

    /// The socket has taken nothing for the write timeout: refuse sends
    /// until it takes writes again.
    pub fn set_stalled(&self) {
        self.state.stalled.store(true, Ordering::Release);
    }

    /// Drops every queued frame unsent (a client kicked for being slow is
    /// not sent the stale ones).
    pub fn discard(&mut self) {
        let mut bytes = 0;
        while let Ok(frame) = self.frames.try_recv() {
            bytes += frame.len();
        }
        self.state.queued_bytes.fetch_sub(bytes, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(bytes: usize) -> Bytes {
        Bytes::from(vec![0u8; bytes])
    }

    /// Sends frames of the given sizes and says which were taken.
    fn check(max_frames: usize, max_bytes: usize, sizes: &[usize], expected: &[bool]) {
        let (handle, _receiver) = outbox(1, max_frames, max_bytes);
        let taken: Vec<bool> = sizes
            .iter()
            .map(|&size| handle.send(frame(size)).is_ok())
            .collect();
        assert_eq!(
            taken, expected,
            "{max_frames} frames, {max_bytes} bytes, {sizes:?}"
        );
    }

    #[test]
    fn the_outbox_is_bounded_in_frames_and_in_bytes() {
        check(3, 1000, &[10, 10, 10, 10], &[true, true, true, false]);
        check(10, 100, &[40, 40, 40, 10], &[true, true, false, true]);
        // One frame larger than the byte bound goes when nothing else waits.
        check(10, 100, &[500, 1], &[true, false]);
        check(10, 100, &[1, 500], &[true, false]);
    }

    #[test]
    fn written_frames_free_their_bytes_and_end_a_stall() {
        let (handle, mut receiver) = outbox(1, 4, 100);
        assert!(handle.send(frame(60)).is_ok());
        assert_eq!(handle.send(frame(60)), Err(SendFailure::Full));
        assert!(!handle.has_room_to_catch_up(), "60 of 100 bytes queued");
        let written = receiver.try_recv().map_or(0, |frame| frame.len());
        receiver.written(written);
        assert!(handle.has_room_to_catch_up());
        receiver.set_stalled();
        assert_eq!(handle.send(frame(1)), Err(SendFailure::Full));
        assert!(!handle.has_room_to_catch_up(), "the socket is stalled");
        receiver.written(0);
        assert!(handle.has_room_for(2, 100));
        assert!(!handle.has_room_for(3, 10), "two frames are kept spare");
        assert!(handle.send(frame(60)).is_ok());
        assert!(handle.has_room_for(1, 40));
        assert!(!handle.has_room_for(1, 41));
        receiver.discard();
        assert!(handle.send(frame(100)).is_ok(), "discarded bytes are free");
    }

    #[test]
    fn a_closing_connection_refuses_frames_as_closed() {
        let (handle, _receiver) = outbox(1, 4, 100);
        handle.kick(ErrorCode::TooSlow, "slow");
        assert_eq!(handle.send(frame(1)), Err(SendFailure::Closed));
        assert_eq!(
            handle.take_reason().map(|(code, _)| code),
            Some(ErrorCode::TooSlow)
        );
    }
}
