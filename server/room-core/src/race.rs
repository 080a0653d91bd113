//! The race: the countdown and the deal, moves and take-backs, each seat's
//! end, the race's end and result, the deadlines (time limit, grace,
//! linger), and the room's close.

use super::*;
use crate::judge;

impl RoomCore {
    /// The race is due (the room is full, the owner started early, or a
    /// quick race has two players). A countdown is a promise that the race
    /// starts when it ends, so it is sent only with a proved deal at hand;
    /// without one the room says it is dealing, and counts down once the
    /// deal arrives ([`Input::DealReady`]).
    pub(crate) fn begin_start(&mut self) {
        if self.seed.is_some() {
            return self.begin_countdown();
        }
        self.phase = Phase::Dealing;
        self.changed = true;
        if !self.waiting_for_deal {
            self.waiting_for_deal = true;
            self.out(Output::NeedDeal);
        }
    }

    pub(crate) fn begin_countdown(&mut self) {
        self.phase = Phase::Countdown;
        let countdown = self.settings.countdown_ms;
        self.countdown_until = Some(self.now.saturating_add(countdown));
        self.changed = true;
        self.emit(Audience::Everyone, |seq| ServerMessage::Countdown {
            seq,
            starts_in_ms: countdown,
        });
        self.act_on_deadlines();
    }

    fn start_race(&mut self, seed: u64) {
        let salt = self.new_secret(16);
        let game = self.params.game;
        let commitment = protocol::commitment(game, seed, &salt);
        let deal = AnyGame::deal(game, seed);
        let board = deal.view();
        let progress = Progress::measure(&board, &board, 0, 0);
        for seat in &mut self.seats {
            seat.position = Some(deal.clone());
            seat.status = PlayerStatus::Racing;
            seat.progress = progress;
            if let Some(series) = self.series.as_mut() {
                series.enter(&seat.name);
            }
        }
        self.race = Some(Race {
            seed,
            salt,
            commitment: commitment.clone(),
            deal: board.clone(),
            started: self.now,
            deadline: self.now.saturating_add(self.time_limit_ms),
            result: None,
        });
        self.phase = Phase::Racing;
        self.changed = true;
        self.metrics.bump(Counter::RacesStarted);
        self.metrics.gauge(Gauge::RacesRunning, 1);
        tracing::info!(players = self.seats.len(), "race started");
        self.keep_race();
        let time_limit_ms = self.time_limit_ms;
        self.emit(Audience::Everyone, |seq| ServerMessage::RaceStarted {
            seq,
            commitment,
            board,
            time_limit_ms,
        });
    }

    /// The index of the connection's seat if it may play now; otherwise the
    /// connection is told why not (as a refused move when `is_move`).
    pub(crate) fn racing_seat(&mut self, conn: ConnId, text: &str, is_move: bool) -> Option<usize> {
        let index = self.seat_index_of(conn);
        let refusal = match (index, self.phase) {
            (None, _) => Some((ErrorCode::NotAPlayer, "spectators cannot play")),
            (Some(_), Phase::Lobby | Phase::Dealing | Phase::Countdown) => {
                Some((ErrorCode::RaceNotStarted, "the race has not started"))
            }
            (Some(_), Phase::Finished) => Some((ErrorCode::RaceOver, "the race is over")),
            (Some(index), Phase::Racing) if self.seats[index].status != PlayerStatus::Racing => {
                Some((ErrorCode::RaceOver, "your race is over"))
            }
            (Some(_), Phase::Racing) => None,
        };
        match refusal {
            None => index,
            Some((code, message)) if is_move => {
                self.reject(conn, text.to_string(), code, None, message.to_string());
                None
            }
            Some((code, message)) => {
                self.error_to(conn, code, message);
                None
            }
        }
    }

    pub(crate) fn play(&mut self, conn: ConnId, text: String, named_seat: Option<u8>) {
        let Some(index) = self.racing_seat(conn, &text, true) else {
            return;
        };
        if let Some(named) = named_seat.filter(|&named| named != self.seats[index].seat) {
            return self.reject(
                conn,
                text,
                ErrorCode::NotYourBoard,
                None,
                format!("you may only move on your own board, not seat {named}'s"),
            );
        }
        let Some(position) = self.seats[index].position.as_mut() else {
            return;
        };
        let played = match judge::play(position, &text) {
            Ok(played) => played,
            Err(refused) => {
                let judge::Refused {
                    code,
                    reason,
                    message,
                } = refused;
                return self.reject(conn, text, code, reason, message);
            }
        };
        self.metrics.bump(Counter::MovesAccepted);
        let effects = played.outcome.effects.to_vec();
        let seat = &mut self.seats[index];
        seat.history.push(played.mv, &played.outcome);
        seat.log.push(&played.text);
        self.after_change(index, played.text, effects);
    }

    pub(crate) fn undo(&mut self, conn: ConnId) {
        let Some(index) = self.racing_seat(conn, UNDO_TEXT, true) else {
            return;
        };
        if !self.params.options.undo_allowed {
            return self.reject(
                conn,
                UNDO_TEXT.to_string(),
                ErrorCode::UndoNotAllowed,
                None,
                "this room does not allow undo".to_string(),
            );
        }
        let seat = &mut self.seats[index];
        let (Some(position), Some((mv, outcome))) = (seat.position.as_mut(), seat.history.pop())
        else {
            return self.reject(
                conn,
                UNDO_TEXT.to_string(),
                ErrorCode::NothingToUndo,
                None,
                "there is no move to take back".to_string(),
            );
        };
        position.undo(mv, &outcome);
        seat.log.push(UNDO_TEXT);
        self.metrics.bump(Counter::MovesAccepted);
        self.after_change(index, UNDO_TEXT.to_string(), Vec::new());
    }

    /// Acknowledges a played move to its mover at once, tells everyone else
    /// the mover's progress on the tick (and, with open boards only, the
    /// move and the board), and ends the player's race if it is won or
    /// stuck.
    fn after_change(&mut self, index: usize, text: String, effects: Vec<Effect>) {
        let elapsed_ms = self.elapsed_ms();
        let Some(deal) = self.race.as_ref().map(|race| &race.deal) else {
            return;
        };
        let seat = &mut self.seats[index];
        let Some(position) = seat.position.as_ref() else {
            return;
        };
        let board = position.view();
        let (won, stuck) = (position.is_won(), position.is_stuck());
        seat.progress = Progress::measure(deal, &board, seat.progress.moves + 1, elapsed_ms);
        let (seat_number, progress) = (seat.seat, seat.progress);
        let kept = LiveMove {
            seat: seat_number,
            index: u32::try_from(seat.log.len().saturating_sub(1)).unwrap_or(u32::MAX),
            text: text.clone(),
            elapsed_ms,
            seq: self.seq,
            epoch: self.epoch,
        };
        self.keep(Keep::Move(kept));
        // A rival's move text and board name cards that may still be face
        // down in the recipient's own game: they stay with the mover.
        let shown = self
            .params
            .options
            .open_boards
            .then(|| (text.clone(), board.clone()));
        self.emit(Audience::Seat(seat_number), |seq| {
            ServerMessage::MoveAccepted {
                seq,
                text,
                effects,
                board,
                progress,
            }
        });
        let (text, board) = shown.unzip();
        self.progress_for_others(PendingProgress {
            seat: seat_number,
            progress,
            text,
            board,
        });
        if won {
            self.finish(index, PlayerStatus::Won);
        } else if stuck {
            self.emit(Audience::Seat(seat_number), |seq| ServerMessage::Stuck {
                seq,
            });
            if !self.params.options.undo_allowed {
                self.finish(index, PlayerStatus::Stuck);
            }
        }
    }

    pub(crate) fn finish(&mut self, index: usize, status: PlayerStatus) {
        let elapsed_ms = self.elapsed_ms();
        let seat = &mut self.seats[index];
        seat.status = status;
        seat.finished_ms = Some(elapsed_ms);
        let seat_number = seat.seat;
        tracing::info!(seat = seat_number, ?status, elapsed_ms, "player finished");
        self.changed = true;
        if self
            .seats
            .iter()
            .any(|seat| seat.status == PlayerStatus::Racing)
        {
            self.keep_race();
            self.emit(Audience::Everyone, |seq| ServerMessage::Finished {
                seq,
                seat: seat_number,
                status,
                elapsed_ms,
            });
        } else {
            self.end_race(seat_number, status, elapsed_ms);
        }
    }

    /// Everyone is done: the result goes to the store, and is announced
    /// (with the last player's `finished`) once it is stored.
    pub(crate) fn end_race(&mut self, seat: u8, status: PlayerStatus, elapsed_ms: u64) {
        // A write made again after a failure writes the race as it ended.
        if self.writes_kept < self.writes_issued {
            self.final_race = self.live_race().map(Box::new);
        }
        let Some(race) = self.race.as_ref() else {
            return;
        };
        let mut order: Vec<&Seat> = self.seats.iter().collect();
        order.sort_by_key(|seat| {
            standing_key(seat.seat, seat.status, seat.finished_ms, seat.progress)
        });
        let standings: Vec<Standing> = (1u8..)
            .zip(order)
            .map(|(rank, seat)| Standing {
                rank,
                seat: seat.seat,
                name: seat.name.clone(),
                status: seat.status,
                // A standing's time is when that racer's race ended (a
                // resignation, the time limit), not its last move.
                progress: Progress {
                    elapsed_ms: seat.finished_ms.unwrap_or(seat.progress.elapsed_ms),
                    ..seat.progress
                },
                bot: seat.bot,
            })
            .collect();
        // The race's first place takes the series' point.
        if let (Some(series), Some(first)) = (self.series.as_mut(), standings.first()) {
            series.record(&first.name);
        }
        let result = RaceResult {
            race_id: None,
            standings,
            reveal: Reveal {
                game: self.params.game,
                seed: race.seed,
                salt: race.salt.clone(),
            },
            logs: self
                .seats
                .iter()
                .map(|seat| MoveLog {
                    seat: seat.seat,
                    moves: seat.log.to_vec(),
                })
                .collect(),
            open_boards: self.params.options.open_boards,
        };
        // A finished room lingers for its results, and a busy server holds
        // as many such rooms as races end in `linger_ms`: what only served
        // the running race goes now. No move is taken back any more, the
        // result holds the logs, and a player who resumes from before the
        // end gets a snapshot with the result instead of the race's events.
        for seat in &mut self.seats {
            seat.history = MoveStack::new();
            seat.log = MoveTexts::default();
        }
        self.log.clear();
        self.log_bytes = 0;
        self.phase = Phase::Finished;
        self.close_at = Some(self.now.saturating_add(self.settings.linger_ms));
        self.changed = true;
        self.metrics.bump(Counter::RacesFinished);
        self.metrics.gauge(Gauge::RacesRunning, -1);
        tracing::info!("race ended");
        let stored = NewRace {
            daily: None,
            room_code: Some(self.params.code.to_string()),
            ended_at_ms: self.now,
            result: result.clone(),
            players: self
                .seats
                .iter()
                .filter_map(|seat| Some((seat.seat, seat.player?)))
                .collect(),
        };
        // Asked now, unless it waits for the writes before it.
        let asked_at = (self.writes_kept == self.writes_issued).then_some(self.now);
        self.ending = Some(Ending {
            seat,
            status,
            elapsed_ms,
            result,
            asked_at,
        });
        self.out(Output::StoreRace(Box::new(stored)));
    }

    /// The result is stored (or could not be: then it is announced without
    /// an id, since the race is over either way).
    pub(crate) fn announce_end(&mut self, race_id: Option<u64>) {
        let Some(Ending {
            seat,
            status,
            elapsed_ms,
            mut result,
            ..
        }) = self.ending.take()
        else {
            return;
        };
        result.race_id = race_id;
        if let Some(race) = self.race.as_mut() {
            race.result = Some(result.clone());
        }
        self.emit(Audience::Everyone, |seq| ServerMessage::Finished {
            seq,
            seat,
            status,
            elapsed_ms,
        });
        self.emit(Audience::Everyone, |seq| ServerMessage::RaceEnded {
            seq,
            result,
        });
    }

    /// Acts on every deadline that has come by `self.now`.
    pub(crate) fn act_on_deadlines(&mut self) {
        let now = self.now;
        if self.progress_due.is_some_and(|due| now >= due) {
            self.tell_progress();
        }
        if let Some(since) = self.waiting_since
            && now >= since.saturating_add(self.settings.store_outage_ms)
        {
            let seconds = self.settings.store_outage_ms.div_ceil(1_000);
            return self.cannot_keep(&format!(
                "the server could not store this race for {seconds} s"
            ));
        }
        if self.result_deadline().is_some_and(|due| now >= due) {
            tracing::error!(
                "the race's result has gone unanswered too long: announced without an id"
            );
            self.metrics.bump(Counter::StorageErrors);
            self.announce_end(None);
        }
        if let Some(due) = self.unanswered_deadline()
            && now >= due
        {
            let seconds = self.unanswered_bound().div_ceil(1_000);
            tracing::error!("a write of the running race has gone unanswered too long");
            return self.cannot_keep(&format!(
                "the server's store did not answer for {seconds} s"
            ));
        }
        if self.retry_at.is_some_and(|at| now >= at) {
            self.write_again();
        }
        if self.phase == Phase::Countdown
            && self.countdown_until.is_some_and(|until| now >= until)
            && let Some(seed) = self.seed
        {
            self.start_race(seed);
        }
        let expired: Vec<usize> = (0..self.seats.len())
            .rev()
            .filter(|&index| {
                self.seats[index]
                    .grace_until
                    .is_some_and(|until| now >= until)
            })
            .collect();
        for index in expired {
            let seat = self.seats[index].seat;
            tracing::info!(seat, "grace period over: seat given up");
            self.give_up_seat(index, PlayerStatus::Left);
            if self.phase == Phase::Finished {
                self.answer_rematch(seat, false);
            }
        }
        if self.vote.as_mut().is_some_and(|vote| vote.expire(now)) {
            self.tell_rematch();
        }
        self.start_if_gathered();
        if self.phase == Phase::Racing
            && self.waiting_since.is_none()
            && self.race.as_ref().is_some_and(|race| now >= race.deadline)
        {
            for index in 0..self.seats.len() {
                if self.phase == Phase::Racing && self.seats[index].status == PlayerStatus::Racing {
                    self.finish(index, PlayerStatus::OutOfTime);
                }
            }
        }
        self.close_if_done();
    }

    pub(crate) fn close_if_done(&mut self) {
        let done = match self.phase {
            Phase::Lobby | Phase::Dealing | Phase::Countdown => self.seats.is_empty(),
            Phase::Racing => false,
            Phase::Finished => {
                self.ending.is_none() && self.close_at.is_some_and(|at| self.now >= at)
            }
        };
        if done && !self.closed {
            self.close(true);
        }
    }

    /// Whoever is still here is out of the room now; `tell` says so to
    /// them (at shutdown the connections say so themselves).
    pub(crate) fn close(&mut self, tell: bool) {
        if self.closed {
            return;
        }
        self.closed = true;
        let left = ServerMessage::Left {
            code: self.params.code.to_string(),
        };
        let seats: Vec<(TokenHash, Option<ConnId>)> = self
            .seats
            .iter()
            .map(|seat| (seat.token, seat.conn))
            .collect();
        for (token, conn) in seats {
            self.out(Output::TokenRevoked(token));
            if let Some(conn) = conn {
                if tell {
                    self.send_to(conn, &left);
                }
                self.out(Output::Detach { conn });
            }
        }
        for conn in std::mem::take(&mut self.spectators) {
            if tell {
                self.send_to(conn, &left);
            }
            self.out(Output::Detach { conn });
        }
        if self.phase == Phase::Racing {
            self.metrics.gauge(Gauge::RacesRunning, -1);
        }
        if self.waiting_since.take().is_some() {
            self.metrics.gauge(Gauge::RoomsWaitingForStore, -1);
        }
        tracing::info!("room closed");
    }
}

/// The order of the standings: winners first, by finish time. Then
/// everyone else by cards in order ([`Progress::cards_in_order`], the
/// measure every progress bar shows; more first); then those who played to
/// the end (out of time, stuck) above those who gave up (resigned, left);
/// then whoever lasted longer; the seat breaks ties. So a racer who
/// resigned after two moves never ranks above one who played on, and the
/// order agrees with the bars.
pub(crate) fn standing_key(
    seat: u8,
    status: PlayerStatus,
    finished_ms: Option<u64>,
    progress: Progress,
) -> (
    bool,
    u64,
    std::cmp::Reverse<u16>,
    bool,
    std::cmp::Reverse<u64>,
    u8,
) {
    let won = status == PlayerStatus::Won;
    let gave_up = matches!(status, PlayerStatus::Resigned | PlayerStatus::Left);
    let finished_ms = finished_ms.unwrap_or(u64::MAX);
    let (finish, played) = if won {
        (finished_ms, 0)
    } else {
        (0, finished_ms)
    };
    (
        !won,
        finish,
        std::cmp::Reverse(progress.cards_in_order),
        gave_up,
        std::cmp::Reverse(played),
        seat,
    )
}

/// A seat given up in a race is `left`, unless its race had already ended
/// some other way (won, resigned, stuck, out of time), which it keeps.
pub(crate) fn left_unless_finished(current: PlayerStatus) -> PlayerStatus {
    match current {
        PlayerStatus::Waiting | PlayerStatus::Racing => PlayerStatus::Left,
        finished => finished,
    }
}
