//! Sending: what the room tells whom. Events are numbered, encoded once
//! and logged for resumes; refusals, snapshots and the room's summary are
//! built here, each for the recipient entitled to it (see the crate's
//! "Fair play").

use super::*;

impl RoomCore {
    pub(crate) fn info(&self) -> RoomInfo {
        RoomInfo {
            code: self.params.code.to_string(),
            game: self.params.game,
            max_players: self.params.max_players,
            public: self.params.public,
            options: self.params.options,
            owner: self.owner,
            phase: self.phase,
            players: self
                .seats
                .iter()
                .map(|seat| PlayerInfo {
                    seat: seat.seat,
                    name: seat.name.clone(),
                    connected: seat.conn.is_some(),
                    status: seat.status,
                    bot: seat.bot,
                })
                .collect(),
            spectators: u32::try_from(self.spectators.len()).unwrap_or(u32::MAX),
            series: self.series.clone(),
        }
    }

    /// The room as the lobby lists it.
    pub(crate) fn listing(&self) -> LobbyRoom {
        LobbyRoom {
            code: self.params.code.to_string(),
            game: self.params.game,
            max_players: self.params.max_players,
            players: self.seats.iter().map(|seat| seat.name.clone()).collect(),
            phase: self.phase,
            series: self.series.clone(),
            // Filled in by the lobby, which reads the store.
            ratings: Vec::new(),
        }
    }

    /// Numbers, encodes once, logs and delivers an event. Progress still
    /// waiting for the tick goes out before any event meant for everyone,
    /// so that nobody learns of a racer's end (`finished`, `race_ended`)
    /// before the moves that led to it.
    pub(crate) fn emit(&mut self, audience: Audience, build: impl FnOnce(u64) -> ServerMessage) {
        if audience == Audience::Everyone && !self.progress_pending.is_empty() {
            self.tell_progress();
        }
        if self.seq >= self.seq_at_last_write + SEQ_CHECKPOINT {
            self.keep_race();
        }
        self.seq += 1;
        let frame = Bytes::from(protocol::encode(&build(self.seq)));
        self.log.push_back(LoggedEvent {
            seq: self.seq,
            audience,
            frame: frame.clone(),
        });
        self.log_bytes += frame.len();
        while self.log.len() > self.settings.event_log_capacity
            || (self.log_bytes > self.settings.event_log_bytes && self.log.len() > 1)
        {
            if let Some(oldest) = self.log.pop_front() {
                self.log_bytes -= oldest.frame.len();
            }
        }
        let players: Vec<ConnId> = self
            .seats
            .iter()
            .filter(|seat| audience.includes_seat(seat.seat))
            .filter_map(|seat| seat.conn)
            .collect();
        for conn in players {
            self.out(Output::Send {
                conn,
                frame: frame.clone(),
            });
        }
        if audience.includes_spectators() {
            // A spectator whose outbox is full is not waited for and not
            // dropped: it skips events until its outbox has room again, then
            // gets one snapshot of the latest state (coalescing).
            let catch_up = (!self.behind.is_empty())
                .then(|| Bytes::from(protocol::encode(&self.snapshot_message(None))));
            let outputs: Vec<Output> = self
                .spectators
                .iter()
                .map(|&conn| match &catch_up {
                    Some(snapshot) if self.behind.contains(&conn) => Output::CatchUp {
                        conn,
                        frame: snapshot.clone(),
                    },
                    _ => Output::Send {
                        conn,
                        frame: frame.clone(),
                    },
                })
                .collect();
            for output in outputs {
                self.out(output);
            }
        }
    }

    /// Notes a racer's latest progress for everyone else, to be told at
    /// the end of the race's current tick with whatever moves come
    /// meanwhile.
    pub(crate) fn progress_for_others(&mut self, pending: PendingProgress) {
        match self
            .progress_pending
            .iter_mut()
            .find(|waiting| waiting.seat == pending.seat)
        {
            Some(waiting) => *waiting = pending,
            None => self.progress_pending.push(pending),
        }
        if self.progress_due.is_none() {
            let tick = self.settings.progress_tick_ms.max(1);
            let start = self.race.as_ref().map_or(self.now, |race| race.started);
            let ticks_done = self.now.saturating_sub(start) / tick;
            self.progress_due = Some(start.saturating_add((ticks_done + 1).saturating_mul(tick)));
        }
    }

    /// Tells every racer's progress that waits, one `progress` per racer
    /// to its rivals and the spectators; they go out one after the other,
    /// so that each connection's writer sends them in one write.
    pub(crate) fn tell_progress(&mut self) {
        self.progress_due = None;
        let pending = std::mem::take(&mut self.progress_pending);
        if pending.is_empty() {
            return;
        }
        for PendingProgress {
            seat,
            progress,
            text,
            board,
        } in pending
        {
            self.emit(Audience::Others(seat), |seq| ServerMessage::Progress {
                seq,
                seat,
                progress,
                text,
                board,
            });
        }
    }

    /// Sends to one connection, outside the event log.
    pub(crate) fn send_to(&mut self, conn: ConnId, message: &ServerMessage) {
        self.out(Output::Send {
            conn,
            frame: Bytes::from(protocol::encode(message)),
        });
    }

    pub(crate) fn error_to(&mut self, conn: ConnId, code: ErrorCode, message: impl Into<String>) {
        self.send_to(
            conn,
            &ServerMessage::Error {
                code,
                message: message.into(),
            },
        );
    }

    pub(crate) fn reject(
        &mut self,
        conn: ConnId,
        text: String,
        code: ErrorCode,
        reason: Option<MoveError>,
        message: String,
    ) {
        self.metrics.bump(Counter::MovesRejected);
        self.send_to(
            conn,
            &ServerMessage::MoveRejected {
                text,
                code,
                reason,
                message,
            },
        );
    }

    pub(crate) fn seat_index_of(&self, conn: ConnId) -> Option<usize> {
        self.seats.iter().position(|seat| seat.conn == Some(conn))
    }

    /// The race clock: it stands still while the room waits for the store.
    pub(crate) fn elapsed_ms(&self) -> u64 {
        let now = self
            .waiting_since
            .map_or(self.now, |since| since.min(self.now));
        self.race
            .as_ref()
            .map_or(0, |race| now.saturating_sub(race.started))
    }

    /// The race as `viewer` (a seat, or `None` for a spectator) may see it:
    /// its own board, and the others' only once the race is over or in a
    /// room with open boards.
    fn snapshot(&self, viewer: Option<u8>) -> Option<RaceSnapshot> {
        let race = self.race.as_ref()?;
        let all_boards = self.params.options.open_boards || self.phase == Phase::Finished;
        Some(RaceSnapshot {
            commitment: race.commitment.clone(),
            elapsed_ms: self.elapsed_ms(),
            time_limit_ms: self.time_limit_ms,
            boards: self
                .seats
                .iter()
                .filter(|seat| seat.position.is_some())
                .map(|seat| SeatBoard {
                    seat: seat.seat,
                    status: seat.status,
                    board: seat
                        .position
                        .as_ref()
                        .filter(|_| all_boards || viewer == Some(seat.seat))
                        .map(Rules::view),
                    progress: seat.progress,
                })
                .collect(),
            result: race.result.clone(),
        })
    }

    /// A whole-room snapshot message for `viewer`.
    pub(crate) fn snapshot_message(&self, viewer: Option<u8>) -> ServerMessage {
        ServerMessage::Snapshot {
            seq: self.seq,
            room: self.info(),
            race: self.snapshot(viewer),
        }
    }

    pub(crate) fn new_secret(&mut self, bytes: usize) -> String {
        secret_from(&mut self.secrets, bytes)
    }
}
