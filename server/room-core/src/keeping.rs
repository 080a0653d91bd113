//! Sending and keeping: outputs held back behind the store's writes, the
//! answers to those writes, a failed write made again after a pause, and
//! the bounds on how long a room waits for its store (see the crate's
//! "Durability" and "A store outage").

use super::*;

impl RoomCore {
    /// Queues `output`, or holds it back while a write before it is not yet
    /// committed.
    pub(crate) fn out(&mut self, output: Output) {
        if self.writes_kept < self.writes_issued {
            self.held.push_back((self.writes_issued, output));
        } else {
            self.outputs.push_back(output);
        }
    }

    /// Issues a write at once, ahead of what is held; after a failure,
    /// only counts it: the race written again carries it.
    pub(crate) fn keep(&mut self, write: Keep) {
        self.writes_issued += 1;
        self.seq_at_last_write = self.seq;
        if self.retry_at.is_some() {
            return;
        }
        self.in_flight.push_back(InFlight {
            covers: self.writes_issued,
            sent_at: self.now,
        });
        self.outputs.push_back(Output::Keep(write));
    }

    /// When the oldest write sent, if it is still unanswered then, has
    /// waited too long for the store.
    pub(crate) fn unanswered_deadline(&self) -> Option<Millis> {
        self.in_flight
            .front()
            .map(|write| write.sent_at.saturating_add(self.unanswered_bound()))
    }

    /// When the race's result, if the store has not answered for it by
    /// then, is announced as one that could not be stored.
    pub(crate) fn result_deadline(&self) -> Option<Millis> {
        let asked_at = self.ending.as_ref()?.asked_at?;
        Some(asked_at.saturating_add(self.unanswered_bound()))
    }

    /// How long a write may go unanswered.
    pub(crate) fn unanswered_bound(&self) -> Millis {
        self.settings.store_outage_ms.max(UNANSWERED_WRITE_MIN_MS)
    }

    /// Keeps the running race's room as it stands; nothing in a lobby or
    /// after the race.
    pub(crate) fn keep_race(&mut self) {
        if let Some(race) = self.live_race() {
            self.keep(Keep::Race(Box::new(race)));
        }
    }

    /// The oldest write is committed: what waited for it goes out, and a
    /// room that waited for the store runs its clock again.
    pub(crate) fn kept(&mut self) {
        let Some(InFlight { covers, .. }) = self.in_flight.pop_front() else {
            return;
        };
        self.writes_kept = self.writes_kept.max(covers);
        self.failures = 0;
        if let Some(since) = self.waiting_since.take() {
            let waited = self.now.saturating_sub(since);
            if let Some(race) = self.race.as_mut() {
                race.started = race.started.saturating_add(waited);
                race.deadline = race.deadline.saturating_add(waited);
            }
            self.metrics.gauge(Gauge::RoomsWaitingForStore, -1);
            tracing::warn!(waited, "the store keeps the race again");
        }
        if self.writes_kept == self.writes_issued {
            self.final_race = None;
        }
        while self
            .held
            .front()
            .is_some_and(|(after, _)| *after <= self.writes_kept)
        {
            if let Some((_, output)) = self.held.pop_front() {
                if matches!(output, Output::StoreRace(_))
                    && let Some(ending) = self.ending.as_mut()
                {
                    ending.asked_at = Some(self.now);
                }
                self.outputs.push_back(output);
            }
        }
    }

    /// The oldest write failed, and with it every write sent after it:
    /// nothing is sent until the race is written again, whole, after a
    /// pause; what is held stays held.
    pub(crate) fn write_failed(&mut self) {
        if self.in_flight.is_empty() {
            return;
        }
        self.in_flight.clear();
        // Writes the shell has not taken yet are lost with the others.
        self.outputs
            .retain(|output| !matches!(output, Output::Keep(_)));
        if self.waiting_since.is_none() {
            self.waiting_since = Some(self.now);
            self.metrics.gauge(Gauge::RoomsWaitingForStore, 1);
            tracing::warn!("a write of the running race failed: the room waits for the store");
        }
        let pause = RETRY_PAUSE_MIN_MS
            .saturating_mul(1 << self.failures.min(20))
            .min(RETRY_PAUSE_MAX_MS);
        self.failures = self.failures.saturating_add(1);
        self.retry_at = Some(self.now.saturating_add(pause));
    }

    /// Writes the race again, whole, as it stands (or as it ended): it
    /// replaces what was kept, so it carries every write that was lost.
    pub(crate) fn write_again(&mut self) {
        self.retry_at = None;
        let Some(race) = self
            .live_race()
            .map(Box::new)
            .or_else(|| self.final_race.clone())
        else {
            return self.cannot_keep("the server could not store this race");
        };
        self.metrics.bump(Counter::StoreRetries);
        self.in_flight.push_back(InFlight {
            covers: self.writes_issued,
            sent_at: self.now,
        });
        self.outputs.push_back(Output::Keep(Keep::Race(race)));
    }

    /// A write was refused, or the store has failed for longer than the
    /// room waits: nothing held may be told, and the room cannot go on
    /// telling its players what it cannot keep. They are told why (`why`,
    /// and that the race resumes) and the room closes; the race stays in
    /// the store as far as it was kept, and resumes from there when a
    /// server runs it again.
    pub(crate) fn cannot_keep(&mut self, why: &str) {
        tracing::error!("the running race could not be kept: the room closes");
        self.held.clear();
        self.in_flight.clear();
        self.retry_at = None;
        self.writes_kept = self.writes_issued;
        let conns: Vec<ConnId> = self
            .seats
            .iter()
            .filter_map(|seat| seat.conn)
            .chain(self.spectators.iter().copied())
            .collect();
        let message = format!(
            "{why}; it resumes from its last stored move when a server runs it again \
             (after a restart, or on another node of a cluster)"
        );
        for conn in conns {
            self.out(Output::Kick {
                conn,
                code: ErrorCode::Internal,
                message: message.clone(),
            });
        }
        self.close(false);
    }
}
