//! Connections: taking a seat, watching, resuming with a token (a person's
//! or a server bot's), leaving, dropping, and falling behind.

use super::*;
use crate::race::left_unless_finished;

impl RoomCore {
    pub(crate) fn join(
        &mut self,
        conn: ConnId,
        name: String,
        player: Option<PlayerId>,
        bot: Option<BotLevel>,
    ) -> Result<(), Refusal> {
        match self.phase {
            Phase::Racing | Phase::Finished => {
                return Err(Refusal::new(
                    ErrorCode::RaceAlreadyStarted,
                    "the race has started: you may spectate",
                ));
            }
            _ if self.seats.len() >= usize::from(self.params.max_players) => {
                return Err(Refusal::new(ErrorCode::RoomFull, "every seat is taken"));
            }
            _ => {}
        }
        let seat_number = (0u8..)
            .find(|number| self.seats.iter().all(|seat| seat.seat != *number))
            .unwrap_or(0);
        let token = self.new_secret(24);
        let hash = token_hash(&token);
        self.out(Output::TokenIssued(hash));
        let name = self.distinct_name(name);
        let index = self.seats.partition_point(|seat| seat.seat < seat_number);
        self.seats.insert(
            index,
            Seat {
                seat: seat_number,
                name,
                player,
                bot,
                conn: Some(conn),
                token: hash,
                grace_until: None,
                status: PlayerStatus::Waiting,
                position: None,
                history: MoveStack::new(),
                log: MoveTexts::default(),
                progress: Progress::default(),
                finished_ms: None,
            },
        );
        self.owner.get_or_insert(seat_number);
        tracing::info!(
            seat = seat_number,
            bot = bot.map(BotLevel::as_str),
            "player joined"
        );
        let joined = ServerMessage::RoomJoined {
            seq: self.seq,
            room: self.info(),
            seat: Some(seat_number),
            resume_token: Some(token),
        };
        self.send_to(conn, &joined);
        self.changed = true;
        let full = self.seats.len() >= usize::from(self.params.max_players);
        match self.phase {
            Phase::Lobby if full || (self.params.quick && self.seats.len() >= 2) => {
                self.begin_start();
            }
            Phase::Countdown if full => {
                // The room filled up during the countdown: no one else can
                // come, so start as soon as the deal is there.
                self.countdown_until = Some(self.now);
                self.act_on_deadlines();
            }
            _ => {}
        }
        Ok(())
    }

    /// `name`, or `name (2)`, `name (3)`… if a seat already goes by it or
    /// by a name that looks the same (same [`protocol::name_key`]: any case,
    /// Cyrillic or fullwidth look-alikes), so that everyone can tell the
    /// players apart.
    fn distinct_name(&self, name: String) -> String {
        let taken = |candidate: &str| {
            let key = protocol::name_key(candidate);
            self.seats
                .iter()
                .any(|seat| protocol::name_key(&seat.name) == key)
        };
        if !taken(&name) {
            return name;
        }
        (2..)
            .map(|number| format!("{name} ({number})"))
            .find(|candidate| !taken(candidate))
            .unwrap_or(name)
    }

    pub(crate) fn spectate(&mut self, conn: ConnId) {
        let joined = ServerMessage::RoomJoined {
            seq: self.seq,
            room: self.info(),
            seat: None,
            resume_token: None,
        };
        self.send_to(conn, &joined);
        let snapshot = self.snapshot_message(None);
        self.send_to(conn, &snapshot);
        self.spectators.push(conn);
        self.changed = true;
    }

    /// A server bot takes back its seat, as [`RoomCore::resume`] with the
    /// seat's own token.
    pub(crate) fn resume_bot(&mut self, conn: ConnId, seat: u8) -> Result<(), Refusal> {
        let token = self
            .seats
            .iter()
            .find(|kept| kept.seat == seat && kept.bot.is_some())
            .map(|kept| kept.token)
            .ok_or_else(|| {
                Refusal::new(
                    ErrorCode::InvalidResumeToken,
                    format!("seat {seat} is no bot's"),
                )
            })?;
        self.resume(conn, token, 0)
    }

    pub(crate) fn resume(
        &mut self,
        conn: ConnId,
        token: TokenHash,
        last_seq: u64,
    ) -> Result<(), Refusal> {
        let Some(index) = self
            .seats
            .iter()
            .position(|seat| seat.token == token && seat.status != PlayerStatus::Left)
        else {
            return Err(Refusal::new(
                ErrorCode::InvalidResumeToken,
                "that resume token is unknown or already used",
            ));
        };
        let new_token = self.new_secret(24);
        let new_hash = token_hash(&new_token);
        self.out(Output::TokenRevoked(token));
        self.out(Output::TokenIssued(new_hash));
        let seat = &mut self.seats[index];
        let replaced = seat.conn.replace(conn).filter(|&old| old != conn);
        seat.token = new_hash;
        seat.grace_until = None;
        let seat_number = seat.seat;
        if let Some(old) = replaced {
            self.out(Output::Kick {
                conn: old,
                code: ErrorCode::Replaced,
                message: "your seat was taken back by another connection".to_string(),
            });
            self.out(Output::Detach { conn: old });
        }
        tracing::info!(seat = seat_number, last_seq, "player resumed");
        // The new token must be kept before the player has it, or a crash
        // would leave it holding a token that opens nothing.
        if self.phase == Phase::Racing {
            self.keep_race();
        }
        let resumed = ServerMessage::Resumed {
            seq: self.seq,
            room: self.info(),
            seat: seat_number,
            resume_token: new_token,
            elapsed_ms: self.race.as_ref().map(|_| self.elapsed_ms()),
        };
        self.send_to(conn, &resumed);
        // The missed events if they are all kept (and fit the outbox, which
        // the shell knows); otherwise one snapshot says it all.
        let kept_from = self.log.front().map_or(self.seq + 1, |event| event.seq);
        let snapshot = Bytes::from(protocol::encode(&self.snapshot_message(Some(seat_number))));
        if last_seq <= self.seq && kept_from <= last_seq + 1 {
            let missed = self
                .log
                .iter()
                .filter(|event| event.seq > last_seq && event.audience.includes_seat(seat_number))
                .map(|event| event.frame.clone())
                .collect();
            self.out(Output::Replay {
                conn,
                missed,
                snapshot,
            });
        } else {
            self.out(Output::Send {
                conn,
                frame: snapshot,
            });
        }
        self.changed = true;
        self.start_if_gathered();
        Ok(())
    }

    pub(crate) fn leave(&mut self, conn: ConnId) {
        let left = ServerMessage::Left {
            code: self.params.code.to_string(),
        };
        if let Some(index) = self.seat_index_of(conn) {
            self.seats[index].conn = None;
            self.send_to(conn, &left);
            self.out(Output::Detach { conn });
            self.give_up_seat(index, PlayerStatus::Resigned);
            let seat = self.seats.get(index).map(|seat| seat.seat);
            if let Some(seat) = seat.filter(|_| self.phase == Phase::Finished) {
                self.answer_rematch(seat, false);
            }
        } else if let Some(index) = self.spectators.iter().position(|&id| id == conn) {
            self.spectators.remove(index);
            self.behind.remove(&conn);
            self.send_to(conn, &left);
            self.out(Output::Detach { conn });
        }
        self.changed = true;
    }

    /// A player is gone for good: out of the lobby, or out of the race as `status`.
    pub(crate) fn give_up_seat(&mut self, index: usize, status: PlayerStatus) {
        self.outputs
            .push_back(Output::TokenRevoked(self.seats[index].token));
        match self.phase {
            Phase::Lobby | Phase::Dealing | Phase::Countdown => {
                let seat = self.seats.remove(index);
                if self.owner == Some(seat.seat) {
                    self.owner = self.seats.first().map(|seat| seat.seat);
                }
            }
            Phase::Racing => {
                self.seats[index].grace_until = None;
                if self.seats[index].status == PlayerStatus::Racing {
                    self.finish(index, status);
                }
                self.seats[index].status = left_unless_finished(self.seats[index].status);
            }
            Phase::Finished => self.seats[index].grace_until = None,
        }
        self.changed = true;
    }

    /// A seat's connection is gone: the seat waits for it to resume.
    fn drop_seat_connection(&mut self, index: usize) {
        let grace_until = self.now.saturating_add(self.settings.grace_ms);
        let seat = &mut self.seats[index];
        seat.grace_until = Some(grace_until);
        if let Some(conn) = seat.conn.take() {
            self.out(Output::Detach { conn });
        }
        self.changed = true;
    }

    pub(crate) fn disconnected(&mut self, conn: ConnId) {
        if let Some(index) = self.seat_index_of(conn) {
            tracing::info!(seat = self.seats[index].seat, "player dropped");
            self.drop_seat_connection(index);
        } else if let Some(index) = self.spectators.iter().position(|&id| id == conn) {
            self.spectators.remove(index);
            self.behind.remove(&conn);
            self.out(Output::Detach { conn });
            self.changed = true;
        }
    }

    /// Nobody is waited for: a player who cannot keep up is disconnected
    /// and may resume; a spectator skips events, then gets one snapshot.
    pub(crate) fn overflow(&mut self, conn: ConnId) {
        if let Some(index) = self.seat_index_of(conn) {
            tracing::info!(
                seat = self.seats[index].seat,
                "player too slow: disconnected"
            );
            self.out(Output::Kick {
                conn,
                code: ErrorCode::TooSlow,
                message: "you fell behind; resume to catch up".to_string(),
            });
            self.drop_seat_connection(index);
        } else if self.spectators.contains(&conn) && self.behind.insert(conn) {
            self.out(Output::FellBehind { conn });
        }
    }

    pub(crate) fn start_early(&mut self, conn: ConnId) {
        let is_owner = self
            .seat_index_of(conn)
            .is_some_and(|index| self.owner == Some(self.seats[index].seat));
        if !is_owner {
            return self.error_to(
                conn,
                ErrorCode::NotOwner,
                "only the room's owner may start early",
            );
        }
        match self.phase {
            Phase::Lobby => self.begin_start(),
            Phase::Dealing | Phase::Countdown => {}
            Phase::Racing | Phase::Finished => self.error_to(
                conn,
                ErrorCode::RaceAlreadyStarted,
                "the race has already started",
            ),
        }
    }
}
