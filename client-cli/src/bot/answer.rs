//! Waiting for the server's answer to the bot's last move, sans I/O: the
//! bot sends nothing else meanwhile, and a resume may lose that answer for
//! good, so the wait also ends once the events a resume replays have come.

use patience_shared::protocol::ServerMessage;

use crate::net::seq_of;

/// The answer to the last move (or resignation) the bot sent, while it
/// waits for it: the bot sends nothing else meanwhile, so that it never
/// plays a move chosen for a board that is no longer its own.
///
/// A dropped connection can lose the answer for good: a move lost on its
/// way was never played, a refusal is not among the events a resume
/// replays, and a resume whose missed events are no longer kept sends a
/// snapshot instead. So after a resume the answer is awaited only until
/// the events missed have come (the last is numbered as the `resumed`
/// message says; at once if none was missed), or a snapshot came; then the
/// board the bot has is its board. (When the last event missed was meant
/// for another seat, the next event for this one ends the wait.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Answer {
    /// A move or a resignation was sent and is not answered yet.
    awaited: bool,
    /// After a resume: the number of the last event missed.
    replayed_until: Option<u64>,
    /// The highest event number read so far.
    last_seq: u64,
}

impl Answer {
    /// A move or a resignation has just been sent.
    pub(super) fn sent(&mut self) {
        self.awaited = true;
    }

    /// Whether the bot still waits for an answer.
    pub(super) fn awaited(&self) -> bool {
        self.awaited
    }

    /// Takes in a message from the server, in the order read.
    pub(super) fn heard(&mut self, message: &ServerMessage) {
        match *message {
            ServerMessage::MoveAccepted { .. }
            | ServerMessage::MoveRejected { .. }
            | ServerMessage::Snapshot { .. } => self.awaited = false,
            ServerMessage::Resumed { seq, .. } if self.awaited => self.replayed_until = Some(seq),
            _ => {}
        }
        // A `resumed` message's number is the room's latest event's, not
        // that of an event read here.
        if !matches!(message, ServerMessage::Resumed { .. })
            && let Some(seq) = seq_of(message)
        {
            self.last_seq = self.last_seq.max(seq);
        }
        if self
            .replayed_until
            .is_some_and(|until| self.last_seq >= until)
        {
            self.awaited = false;
        }
        if !self.awaited {
            self.replayed_until = None;
        }
    }
}
