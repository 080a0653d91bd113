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

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use patience_shared::protocol::{self, ErrorCode, ServerMessage};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// How a room reaches a connection: its outbox, and a way to close it.
#[derive(Debug)]
pub struct ConnectionHandle {
    /// Unique for the server's life.
    pub id: u64,
    state: Arc<OutboxState>,
    closing: CancellationToken,
}

/// What the handles and the writer share about the queue.
///
/// The queue is a deque under a lock rather than a channel: a channel
/// allocates a block of slots up front (about 1.5 KB with its own state),
/// while a deque allocates nothing until the first frame, and every idle
/// socket has an outbox. Senders never wait on the lock for long: it is
/// held only to push or pop one frame.
#[derive(Debug)]
struct OutboxState {
    /// Frames the queue holds at most.
    max_frames: usize,
    /// Bytes queued or fed to the socket but not yet written.
    max_bytes: usize,
    /// The frames queued, oldest first.
    frames: Mutex<VecDeque<Bytes>>,
    /// Wakes the writer when a frame is queued or the last handle goes.
    ready: Notify,
    /// Handles alive: the writer's `recv` ends once there are none.
    handles: AtomicUsize,
    /// Bytes sent to the outbox and not yet written to the socket.
    queued_bytes: AtomicUsize,
    /// The socket has taken nothing for the write timeout.
    stalled: AtomicBool,
    /// The connection is to close: the same as the handle's cancelled
    /// token, but read with one atomic load on every send (the token's
    /// state sits behind a mutex).
    closing: AtomicBool,
    /// Why the connection was kicked, if it was.
    reason: Mutex<Option<(ErrorCode, String)>>,
}

impl OutboxState {
    /// The queue, even if a thread panicked while holding it: a push or a
    /// pop leaves it whole.
    fn frames(&self) -> MutexGuard<'_, VecDeque<Bytes>> {
        self.frames
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The writer's end of an outbox.
#[derive(Debug)]
pub struct OutboxReceiver {
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
    let state = Arc::new(OutboxState {
        max_frames: max_frames.max(1),
        max_bytes,
        frames: Mutex::new(VecDeque::new()),
        ready: Notify::new(),
        handles: AtomicUsize::new(1),
        queued_bytes: AtomicUsize::new(0),
        stalled: AtomicBool::new(false),
        closing: AtomicBool::new(false),
        reason: Mutex::new(None),
    });
    let handle = ConnectionHandle {
        id,
        state: Arc::clone(&state),
        closing: CancellationToken::new(),
    };
    (handle, OutboxReceiver { state })
}

impl Clone for ConnectionHandle {
    fn clone(&self) -> ConnectionHandle {
        self.state.handles.fetch_add(1, Ordering::Relaxed);
        ConnectionHandle {
            id: self.id,
            state: Arc::clone(&self.state),
            closing: self.closing.clone(),
        }
    }
}

impl Drop for ConnectionHandle {
    fn drop(&mut self) {
        if self.state.handles.fetch_sub(1, Ordering::AcqRel) == 1 {
            // The last one: a waiting writer learns there is no more.
            self.state.ready.notify_one();
        }
    }
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
        self.state
            .reason
            .lock()
            .ok()
            .and_then(|mut reason| reason.take())
    }

    /// Queues an encoded message without waiting. Refused as
    /// [`SendFailure::Full`] when the frame would pass either bound, or
    /// while the socket is stalled.
    pub fn send(&self, frame: Bytes) -> Result<(), SendFailure> {
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
        {
            let mut frames = self.state.frames();
            if frames.len() >= self.state.max_frames {
                drop(frames);
                self.state.queued_bytes.fetch_sub(length, Ordering::AcqRel);
                return Err(SendFailure::Full);
            }
            frames.push_back(frame);
        }
        self.state.ready.notify_one();
        Ok(())
    }

    /// Frames the queue has room for now.
    fn room(&self) -> usize {
        self.state
            .max_frames
            .saturating_sub(self.state.frames().len())
    }

    /// Whether a connection that fell behind may be sent a catch-up
    /// snapshot now: its socket takes writes again and its outbox is at
    /// most half full, in frames and in bytes, so the snapshot and the
    /// events after it fit.
    pub fn has_room_to_catch_up(&self) -> bool {
        let state = &self.state;
        !state.stalled.load(Ordering::Acquire)
            && self.room() * 2 >= state.max_frames
            && state.queued_bytes.load(Ordering::Acquire) * 2 <= state.max_bytes
    }

    /// Whether `frames` frames of `bytes` bytes in all fit the outbox now,
    /// with room to spare for two more frames: a resumed player's missed
    /// events are sent only if they do (a snapshot otherwise).
    pub fn has_room_for(&self, frames: usize, bytes: usize) -> bool {
        let state = &self.state;
        frames + 2 <= self.room()
            && state.queued_bytes.load(Ordering::Acquire) + bytes <= state.max_bytes
    }

    /// Encodes and queues a message.
    pub fn send_message(&self, message: &ServerMessage) -> Result<(), SendFailure> {
        self.send(Bytes::from(protocol::encode(message)))
    }

    /// Closes the connection after telling the client why. The first reason wins.
    pub fn kick(&self, code: ErrorCode, message: impl Into<String>) {
        if let Ok(mut reason) = self.state.reason.lock() {
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
    /// The next frame, once one is queued; `None` once every handle is gone
    /// and the queue is empty. Cancel-safe: a frame is taken only by the
    /// call that returns it.
    pub async fn recv(&mut self) -> Option<Bytes> {
        loop {
            if let Some(frame) = self.try_recv() {
                return Some(frame);
            }
            if self.state.handles.load(Ordering::Acquire) == 0 {
                return None;
            }
            // A frame queued since the check above left a permit: this
            // returns at once then.
            self.state.ready.notified().await;
        }
    }

    /// Whether the connection is to close (kicked, or closed quietly).
    pub fn is_closing(&self) -> bool {
        self.state.closing.load(Ordering::Acquire)
    }

    /// The next frame if one is queued now.
    pub fn try_recv(&mut self) -> Option<Bytes> {
        self.state.frames().pop_front()
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
        let discarded = std::mem::take(&mut *self.state.frames());
        let bytes: usize = discarded.iter().map(Bytes::len).sum();
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

    /// Waits for `task`, failing the test rather than hanging.
    async fn at_once<T>(task: tokio::task::JoinHandle<T>) -> Result<T, tokio::task::JoinError> {
        tokio::time::timeout(std::time::Duration::from_secs(10), task)
            .await
            .expect("the writer is woken")
    }

    #[tokio::test]
    async fn the_writer_gets_each_frame_once_in_order_and_none_once_every_handle_is_gone() {
        let (handle, mut receiver) = outbox(1, 8, 1000);
        let rival = handle.clone();
        assert!(handle.send(frame(1)).is_ok());
        assert!(rival.send(frame(2)).is_ok());
        assert_eq!(receiver.try_recv().map(|frame| frame.len()), Some(1));
        assert_eq!(receiver.recv().await.map(|frame| frame.len()), Some(2));
        // A writer waiting on an empty queue is woken by the next frame...
        let waiting = tokio::spawn(async move {
            let frame = receiver.recv().await.map(|frame| frame.len());
            (frame, receiver)
        });
        tokio::task::yield_now().await;
        assert!(handle.send(frame(3)).is_ok());
        let (frame, mut receiver) = at_once(waiting).await.expect("no panic");
        assert_eq!(frame, Some(3));
        // ...and told there is no more once the last handle is gone.
        let waiting = tokio::spawn(async move { receiver.recv().await.is_none() });
        tokio::task::yield_now().await;
        drop(handle);
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "a handle is left");
        drop(rival);
        assert!(at_once(waiting).await.expect("no panic"));
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
