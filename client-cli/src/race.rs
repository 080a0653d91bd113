//! A room and its race as one client sees them: a pure state machine fed
//! with the server's messages, read by the `--plain` mode, the terminal UI
//! and the bots alike.
//!
//! [`RaceState::apply`] takes a message and the time it arrived (the only
//! clock this module sees) and returns the lines a person should read about
//! it: moves played, cards turned, refusals in words, players finishing.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use patience_shared::any::AnyGame;
use patience_shared::protocol::{
    self, ErrorCode, Phase, PlayerStatus, Progress, RaceResult, RematchOffer, RematchStatus,
    RoomInfo, ServerMessage,
};
use patience_shared::rules::{Effect, Rules, View};

/// One racer as this client knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Racer {
    /// The board, where this client may see it: its own, or every board in
    /// a room with open boards; `None` for rivals otherwise (the fair-play
    /// rule of `docs/PROTOCOL.md`).
    pub board: Option<View>,
    /// Moves, cards home, time.
    pub progress: Progress,
    /// Racing, won, stuck...
    pub status: PlayerStatus,
}

/// What a finished race's reveal proved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verification {
    /// The seed and salt hash to the commitment sent at the start.
    pub commitment_ok: bool,
    /// Per seat: every logged move replayed legally from the revealed deal.
    pub logs_ok: BTreeMap<u8, bool>,
}

impl Verification {
    /// Checks a result against the commitment, as any client can.
    pub fn check(result: &RaceResult, commitment: &str) -> Verification {
        let reveal = &result.reveal;
        let commitment_ok =
            protocol::commitment(reveal.game, reveal.seed, &reveal.salt) == commitment;
        let logs_ok = result
            .logs
            .iter()
            .map(|log| {
                let mut position = AnyGame::deal(reveal.game, reveal.seed);
                let mut history = Vec::new();
                let ok = log.moves.iter().all(|text| {
                    if text == protocol::UNDO_TEXT {
                        return match history.pop() {
                            Some((mv, outcome)) => {
                                position.undo(mv, &outcome);
                                true
                            }
                            None => false,
                        };
                    }
                    match position
                        .parse_move(text)
                        .ok()
                        .and_then(|mv| position.apply(mv).ok().map(|outcome| (mv, outcome)))
                    {
                        Some(played) => {
                            history.push(played);
                            true
                        }
                        None => false,
                    }
                });
                (log.seat, ok)
            })
            .collect();
        Verification {
            commitment_ok,
            logs_ok,
        }
    }

    /// Whether the deal and every log checked out.
    pub fn all_ok(&self) -> bool {
        self.commitment_ok && self.logs_ok.values().all(|&ok| ok)
    }
}

/// The room and race from one client's seat (or a spectator's).
#[derive(Clone, Debug, Default)]
pub struct RaceState {
    /// The room, once joined.
    pub room: Option<RoomInfo>,
    /// This client's seat; `None` for a spectator.
    pub seat: Option<u8>,
    /// The secret to take the seat back.
    pub resume_token: Option<String>,
    /// Every racer's board, by seat.
    pub racers: BTreeMap<u8, Racer>,
    /// The deal's commitment, once the race started.
    pub commitment: Option<String>,
    /// When the race started, by this client's clock, and the time limit.
    pub race_clock: Option<(Instant, Duration)>,
    /// When the countdown ends, by this client's clock.
    pub countdown_ends: Option<Instant>,
    /// The result, once the race is over.
    pub result: Option<RaceResult>,
    /// The check of the result.
    pub verification: Option<Verification>,
    /// This client has no legal move left.
    pub stuck: bool,
    /// The last refusal, in words, until the next accepted move.
    pub last_rejection: Option<String>,
    /// The effects of this client's last move.
    pub last_effects: Vec<Effect>,
    /// The server said goodbye or the room was left.
    pub closed: Option<String>,
    /// The server said it is stopping while the race runs: it keeps the
    /// race and runs it again once it is back, so the race is paused, not
    /// over, until this client takes its seat back (or watches again).
    pub server_restarting: bool,
    /// The web page's address on the server raced on (`http://HOST:PORT`),
    /// for the link to a finished race's page.
    pub page_address: Option<String>,
    /// When the race started by this client's clock, as the last `resumed`
    /// said: a replayed `race_started` is read late.
    resumed_start: Option<Instant>,
    /// The room's latest event when this client last resumed: events up to
    /// it are replayed, and their times are the past's.
    replayed_until_seq: u64,
    /// Where the rematch stands, once someone proposed one.
    pub rematch: Option<RematchOffer>,
    /// The new room of an accepted rematch and the token of this client's
    /// seat in it, until the session takes the seat.
    pub rematch_ready: Option<(String, String)>,
    /// While this client waits alone for a quick race: its wait as the
    /// server last told it.
    pub quick_wait: Option<QuickWait>,
}

/// A quick race's wait, as [`ServerMessage::QuickRaceWait`] tells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuickWait {
    /// Milliseconds waited when it was told.
    pub waited_ms: u64,
    /// Rating points either side; `None`: open to anyone.
    pub window: Option<u8>,
    /// A bot is offered.
    pub bot_offer: bool,
    /// Players waiting for this game (this client among them).
    pub waiting: u32,
    /// Players racing this game.
    pub racing: u32,
}

impl QuickWait {
    /// The wait in words: how long, how wide, who else is about.
    pub fn line(&self) -> String {
        let window = match self.window {
            Some(points) => format!("rivals within {points} rating points"),
            None => "open to any rival".to_string(),
        };
        format!(
            "waiting {}s, {window} · {} waiting, {} racing",
            self.waited_ms / 1000,
            self.waiting,
            self.racing
        )
    }
}

/// How far this client's race clock may drift from the server's before an
/// acknowledged move sets it right: more than a message's way across any
/// working network, less than a wait a person would notice on the clock.
const CLOCK_DRIFT_TOLERATED: Duration = Duration::from_secs(1);

/// The address of the web page served beside the WebSocket at `server`
/// (`ws://HOST:PORT/…` → `http://HOST:PORT`, `wss` → `https`); `None` for
/// a URL that is neither.
pub fn page_address(server: &str) -> Option<String> {
    let (scheme, rest) = server.split_once("://")?;
    let web_scheme = match scheme.to_ascii_lowercase().as_str() {
        "ws" => "http",
        "wss" => "https",
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    (!authority.is_empty()).then(|| format!("{web_scheme}://{authority}"))
}

/// What a player who asked for a room that has closed after its race is
/// told: where the race's results and replay stay, on the page (`page`,
/// when the server's address gives one) and in the terminal.
pub fn closed_room_text(code: &str, race_id: u64, page: Option<&str>) -> String {
    let terminal = format!("`patience replay {race_id}`");
    match page {
        Some(page) => format!(
            "room {code} has closed after its race; its results and replay stay at {page} and in {terminal}"
        ),
        None => format!(
            "room {code} has closed after its race; its results and replay stay in {terminal}"
        ),
    }
}

impl RaceState {
    /// Nothing seen yet, of a race on the server at `server` (its
    /// WebSocket URL).
    pub fn on_server(server: &str) -> RaceState {
        RaceState {
            page_address: page_address(server),
            ..RaceState::default()
        }
    }

    /// The lasting page of the finished race `race_id`, on the server
    /// raced on.
    pub fn race_page(&self, race_id: u64) -> Option<String> {
        self.page_address
            .as_ref()
            .map(|address| format!("{address}/race/{race_id}"))
    }

    /// This client's own board, when it is a racer.
    pub fn my_board(&self) -> Option<&View> {
        self.seat
            .and_then(|seat| self.racers.get(&seat))
            .and_then(|racer| racer.board.as_ref())
    }

    /// Whether the room shows every board live.
    pub fn open_boards(&self) -> bool {
        self.room
            .as_ref()
            .is_some_and(|room| room.options.open_boards)
    }

    /// This client's status.
    pub fn my_status(&self) -> Option<PlayerStatus> {
        let seat = self.seat?;
        self.room
            .as_ref()?
            .players
            .iter()
            .find(|player| player.seat == seat)
            .map(|player| player.status)
    }

    /// The name of a seat.
    pub fn name_of(&self, seat: u8) -> String {
        self.room
            .as_ref()
            .and_then(|room| room.players.iter().find(|player| player.seat == seat))
            .map_or_else(
                || format!("seat {}", seat + 1),
                |player| player.name.clone(),
            )
    }

    /// The room's phase.
    pub fn phase(&self) -> Option<Phase> {
        self.room.as_ref().map(|room| room.phase)
    }

    /// Whether a server that stops now keeps this race and runs it again
    /// when it is back (PROTOCOL.md, `shutting_down`): a race is kept, a
    /// lobby or a countdown is not, and a finished race has nothing left.
    pub fn race_kept_by_a_restart(&self) -> bool {
        self.phase() == Some(Phase::Racing) && self.result.is_none()
    }

    /// Whether this client may still move.
    pub fn can_move(&self) -> bool {
        self.result.is_none()
            && self.closed.is_none()
            && self
                .seat
                .and_then(|seat| self.racers.get(&seat))
                .is_some_and(|racer| racer.status == PlayerStatus::Racing)
    }

    /// Milliseconds since the race started, at `now`.
    pub fn race_elapsed(&self, now: Instant) -> Option<Duration> {
        self.race_clock
            .map(|(started, _)| now.saturating_duration_since(started))
    }

    /// Sets the race clock by the server's, from a live event (`seq`) read
    /// at `now` that says the race stood at `server_elapsed`. The server's
    /// clock stands still while a room waits for its store (PROTOCOL.md, "A
    /// race rides out a store outage"), which a clock counted here cannot
    /// know of; a drift within [`CLOCK_DRIFT_TOLERATED`] is the network's
    /// and left alone, so the clock does not jitter.
    fn follow_server_clock(&mut self, seq: u64, server_elapsed: Duration, now: Instant) {
        if seq <= self.replayed_until_seq {
            return;
        }
        let Some((started, limit)) = self.race_clock else {
            return;
        };
        if now
            .saturating_duration_since(started)
            .abs_diff(server_elapsed)
            > CLOCK_DRIFT_TOLERATED
        {
            let started = now.checked_sub(server_elapsed).unwrap_or(now);
            self.race_clock = Some((started, limit));
        }
    }

    /// Applies a server message received at `now`; returns lines for people.
    pub fn apply(&mut self, message: ServerMessage, now: Instant) -> Vec<String> {
        let mut notes = Vec::new();
        match message {
            ServerMessage::Welcome { server, .. } => notes.push(format!("connected to {server}")),
            ServerMessage::Error { code, message } => {
                notes.push(format!("error: {message}"));
                // A resumable kick keeps the seat: the session resumes. A
                // server stopping mid-race keeps the race: the session
                // comes back once it is up.
                if code == ErrorCode::ShuttingDown && self.race_kept_by_a_restart() {
                    self.server_restarting = true;
                } else if code.is_fatal() && !(code.is_resumable() && self.seat.is_some()) {
                    self.closed = Some(message);
                }
            }
            // A spectator that watches again after a drop, once the room
            // has closed.
            ServerMessage::RoomClosed { code, race_id } => {
                let page = self.race_page(race_id);
                let text = closed_room_text(&code, race_id, page.as_deref());
                notes.push(text.clone());
                self.closed = Some(text);
            }
            ServerMessage::RoomJoined {
                room,
                seat,
                resume_token,
                ..
            } => {
                // A quick racer moved to a rival's room waits no more.
                self.quick_wait = None;
                notes.push(match seat {
                    Some(seat) => format!(
                        "joined room {} ({}) in seat {}",
                        room.code,
                        room.game.title(),
                        seat + 1
                    ),
                    None => format!("watching room {} ({})", room.code, room.game.title()),
                });
                notes.push(
                    if room.options.open_boards {
                        "open boards: everyone in the room sees every board and move live"
                    } else {
                        "boards stay private until the race ends: rivals are shown as progress"
                    }
                    .into(),
                );
                self.seat = seat;
                self.resume_token = resume_token;
                self.room = Some(room);
                self.server_restarting = false;
            }
            ServerMessage::RoomUpdate { room, .. } => {
                if let Some(old) = &self.room {
                    for player in &room.players {
                        match old.players.iter().find(|p| p.seat == player.seat) {
                            None => notes.push(format!("{} joined", player.name)),
                            // A racer who resigned or left is told by
                            // `finished`, not as a lost connection.
                            Some(was)
                                if was.connected
                                    && !player.connected
                                    && matches!(
                                        player.status,
                                        PlayerStatus::Racing | PlayerStatus::Waiting
                                    ) =>
                            {
                                notes.push(format!("{} lost the connection", player.name));
                            }
                            Some(was) if !was.connected && player.connected => {
                                notes.push(format!("{} is back", player.name));
                            }
                            _ => {}
                        }
                    }
                    for was in &old.players {
                        if !room.players.iter().any(|p| p.seat == was.seat) {
                            notes.push(format!("{} left", was.name));
                        }
                    }
                }
                for player in &room.players {
                    if let Some(racer) = self.racers.get_mut(&player.seat) {
                        racer.status = player.status;
                    }
                }
                if room.players.len() > 1 || room.phase != Phase::Lobby {
                    self.quick_wait = None;
                }
                self.room = Some(room);
            }
            ServerMessage::Countdown { starts_in_ms, .. } => {
                self.countdown_ends = Some(now + Duration::from_millis(starts_in_ms));
                notes.push(format!(
                    "the race starts in {:.1} s",
                    starts_in_ms as f64 / 1000.0
                ));
            }
            ServerMessage::RaceStarted {
                commitment,
                board,
                time_limit_ms,
                ..
            } => {
                self.commitment = Some(commitment);
                let started = self.resumed_start.unwrap_or(now);
                self.race_clock = Some((started, Duration::from_millis(time_limit_ms)));
                self.countdown_ends = None;
                let seats: Vec<u8> = self
                    .room
                    .iter()
                    .flat_map(|room| room.players.iter().map(|player| player.seat))
                    .collect();
                // Everyone starts from this board, but a rival's board is
                // followed only with open boards: otherwise it is not kept,
                // so that nothing shows a rival's stale deal as its board.
                let progress = Progress::measure(&board, &board, 0, 0);
                let open = self.open_boards();
                for seat in seats.into_iter().chain(self.seat) {
                    let shown = open || self.seat == Some(seat);
                    self.racers.insert(
                        seat,
                        Racer {
                            board: shown.then(|| board.clone()),
                            progress,
                            status: PlayerStatus::Racing,
                        },
                    );
                }
                notes.push("the race has started: go!".into());
            }
            ServerMessage::MoveAccepted {
                seq,
                text,
                effects,
                board,
                progress,
            } => {
                // Its time is the move's, which the server stamped a moment
                // before this client read it.
                self.follow_server_clock(seq, Duration::from_millis(progress.elapsed_ms), now);
                notes.push(played_text(&text, &effects));
                self.last_rejection = None;
                self.last_effects = effects;
                if let Some(seat) = self.seat {
                    let racer = self.racers.entry(seat).or_insert(Racer {
                        board: None,
                        progress,
                        status: PlayerStatus::Racing,
                    });
                    racer.board = Some(board);
                    racer.progress = progress;
                }
            }
            ServerMessage::MoveRejected { text, message, .. } => {
                let line = format!("{text:?} refused: {message}");
                self.last_rejection = Some(line.clone());
                notes.push(line);
            }
            ServerMessage::Progress {
                seat,
                text,
                board,
                progress,
                ..
            } => {
                let name = self.name_of(seat);
                notes.push(match text {
                    Some(text) => format!("{name} played {text} ({})", progress_text(&progress)),
                    None => format!("{name}: {}", progress_text(&progress)),
                });
                let racer = self.racers.entry(seat).or_insert(Racer {
                    board: None,
                    progress,
                    status: PlayerStatus::Racing,
                });
                // Without open boards the rival's board is no longer the
                // deal, and this client may not know it.
                racer.board = board;
                racer.progress = progress;
            }
            ServerMessage::Finished {
                seat,
                status,
                elapsed_ms,
                ..
            } => {
                notes.push(format!(
                    "{} {} after {}",
                    self.name_of(seat),
                    status_text(status),
                    clock_text(Duration::from_millis(elapsed_ms))
                ));
                if let Some(racer) = self.racers.get_mut(&seat) {
                    racer.status = status;
                }
                if let Some(player) = self
                    .room
                    .as_mut()
                    .and_then(|room| room.players.iter_mut().find(|p| p.seat == seat))
                {
                    player.status = status;
                }
            }
            ServerMessage::Stuck { .. } => {
                self.stuck = true;
                notes.push("you have no legal move left".into());
            }
            ServerMessage::RaceEnded { result, .. } => {
                let verification = self
                    .commitment
                    .as_deref()
                    .map(|commitment| Verification::check(&result, commitment));
                notes.push(format!(
                    "the race is over; the deal was {} seed {}",
                    result.reveal.game.title(),
                    result.reveal.seed
                ));
                if result.open_boards {
                    notes.push("open boards: every board was shown live during this race".into());
                }
                for standing in &result.standings {
                    notes.push(format!(
                        "{}. {} {} ({} cards home, {} moves)",
                        standing.rank,
                        standing.name,
                        status_text(standing.status),
                        standing.progress.cards_home,
                        standing.progress.moves
                    ));
                }
                if let Some(verification) = &verification {
                    notes.push(if verification.all_ok() {
                        "verified: the deal matches its commitment and every move was legal".into()
                    } else {
                        "NOT verified: the reveal or a move log does not check out".into()
                    });
                }
                if let Some(race_id) = result.race_id {
                    notes.push(match self.race_page(race_id) {
                        Some(page) => format!(
                            "race id {race_id}: `patience replay {race_id}` plays it back; its page: {page}"
                        ),
                        None => format!(
                            "race id {race_id}: `patience replay {race_id}` plays it back"
                        ),
                    });
                }
                self.verification = verification;
                self.result = Some(result);
            }
            ServerMessage::Snapshot { room, race, .. } => {
                if let Some(race) = race {
                    self.commitment = Some(race.commitment.clone());
                    self.race_clock = Some((
                        now.checked_sub(Duration::from_millis(race.elapsed_ms))
                            .unwrap_or(now),
                        Duration::from_millis(race.time_limit_ms),
                    ));
                    self.racers = race
                        .boards
                        .into_iter()
                        .map(|seat_board| {
                            (
                                seat_board.seat,
                                Racer {
                                    board: seat_board.board,
                                    progress: seat_board.progress,
                                    status: seat_board.status,
                                },
                            )
                        })
                        .collect();
                    if let Some(result) = race.result {
                        self.verification = Some(Verification::check(&result, &race.commitment));
                        self.result = Some(result);
                    }
                }
                self.room = Some(room);
            }
            ServerMessage::Resumed {
                seq,
                room,
                seat,
                resume_token,
                elapsed_ms,
            } => {
                // The seat of a rematch: a new room and a new race.
                if self
                    .rematch_ready
                    .as_ref()
                    .is_some_and(|(code, _)| *code == room.code)
                {
                    *self = RaceState::default();
                    notes.push(format!("rematch: room {}", room.code));
                }
                self.replayed_until_seq = seq;
                self.server_restarting = false;
                notes.push(format!("back in room {} in seat {}", room.code, seat + 1));
                // The race clock is the server's: anchored here, it survives
                // the replayed `race_started` that may follow.
                self.resumed_start = elapsed_ms.map(|elapsed| {
                    now.checked_sub(Duration::from_millis(elapsed))
                        .unwrap_or(now)
                });
                if let (Some(start), Some((_, limit))) = (self.resumed_start, self.race_clock) {
                    self.race_clock = Some((start, limit));
                }
                self.seat = Some(seat);
                self.resume_token = Some(resume_token);
                self.room = Some(room);
            }
            // Leaving the finished room for its rematch's is no goodbye.
            ServerMessage::Left { code } if self.rematch_ready.is_some() => {
                notes.push(format!("left room {code} for the rematch"));
            }
            // A quick racer leaving its own room for a rival's (or for a
            // bot's) hears `left` of the room it waited in, before or after
            // `room_joined` of the new one.
            ServerMessage::Left { code }
                if self.quick_wait.is_some()
                    || self.room.as_ref().is_some_and(|room| room.code != code) =>
            {
                self.quick_wait = None;
                notes.push(format!("left room {code} for a rival's"));
            }
            ServerMessage::QuickRaceWait {
                waited_ms,
                window,
                bot_offer,
                waiting,
                racing,
                ..
            } => {
                let newly_offered =
                    bot_offer && !self.quick_wait.as_ref().is_some_and(|wait| wait.bot_offer);
                let wait = QuickWait {
                    waited_ms,
                    window,
                    bot_offer,
                    waiting,
                    racing,
                };
                notes.push(if newly_offered {
                    "no rival yet: b races a bot now, w keeps waiting".to_string()
                } else {
                    wait.line()
                });
                self.quick_wait = Some(wait);
            }
            ServerMessage::Left { code } => {
                notes.push(format!("left room {code}"));
                self.closed = Some(format!("left room {code}"));
            }
            ServerMessage::ShuttingDown { message } => {
                if self.race_kept_by_a_restart() {
                    notes.push(format!(
                        "the server is restarting ({message}); the race is paused, not over"
                    ));
                    self.server_restarting = true;
                } else {
                    // A lobby or a countdown is not kept (PROTOCOL.md,
                    // `shutting_down`): its players join a new room.
                    notes.push(format!("the server is stopping: {message}"));
                    self.closed = Some(message);
                }
            }
            // The session follows redirects before a room is entered
            // (crate::session); one here changes nothing.
            ServerMessage::Redirect { .. } => {}
            // Account, daily, tournament and replay answers belong to other
            // commands; a room's race never asks for them.
            ServerMessage::Registered { .. }
            | ServerMessage::Authenticated { .. }
            | ServerMessage::DailyStarted { .. }
            | ServerMessage::DailyFinished { .. }
            | ServerMessage::LeaderboardPage { .. }
            | ServerMessage::LeaderboardUpdate { .. }
            | ServerMessage::DaysPage { .. }
            | ServerMessage::PlayerRecord { .. }
            | ServerMessage::StandingsPage { .. }
            | ServerMessage::ReplayData { .. }
            | ServerMessage::BoardsReplay { .. }
            | ServerMessage::SignInCode { .. }
            | ServerMessage::SignedIn { .. }
            | ServerMessage::SignedOut
            | ServerMessage::LobbyPage { .. }
            | ServerMessage::RatingsPage { .. }
            | ServerMessage::RatingHistoryPage { .. }
            | ServerMessage::AttemptReplay { .. } => {}
            ServerMessage::RematchOffer { offer, .. } => {
                notes.push(self.rematch_note(&offer));
                self.rematch = Some(offer);
            }
            ServerMessage::RematchReady {
                code, resume_token, ..
            } => {
                notes.push(format!("rematch: the new room is {code}"));
                self.rematch_ready = Some((code, resume_token));
            }
        }
        notes
    }

    /// A rematch's state in words.
    fn rematch_note(&self, offer: &RematchOffer) -> String {
        let names = |seats: &[u8]| {
            seats
                .iter()
                .map(|&seat| self.name_of(seat))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match offer.status {
            RematchStatus::Open => {
                let mut line = format!("rematch? accepted: {}", names(&offer.accepted));
                if !offer.waiting.is_empty() {
                    line.push_str(&format!(
                        "; waiting for {} ({} s left)",
                        names(&offer.waiting),
                        offer.expires_in_ms.div_ceil(1000)
                    ));
                }
                line
            }
            RematchStatus::Ready => "rematch: everyone accepted".to_string(),
            RematchStatus::Declined => format!("no rematch: {} declined", names(&offer.declined)),
            RematchStatus::Expired => {
                format!(
                    "no rematch: {} did not answer in time",
                    names(&offer.waiting)
                )
            }
        }
    }

    /// Whether this client waits alone for a quick race and is offered a
    /// bot.
    pub fn bot_offered(&self) -> bool {
        self.quick_wait.as_ref().is_some_and(|wait| wait.bot_offer) && self.closed.is_none()
    }

    /// Whether this client may answer a rematch: a racer of a race that is
    /// over, still in its room, with no rematch under way.
    pub fn may_rematch(&self) -> bool {
        self.seat.is_some()
            && self.result.is_some()
            && self.closed.is_none()
            && self.rematch_ready.is_none()
    }

    /// The series score as a line, if the room is in a series.
    pub fn series_line(&self) -> Option<String> {
        let series = self.room.as_ref()?.series.as_ref()?;
        Some(format!("series: {}", series.line()))
    }

    /// Whether an error means the resume token is no good.
    pub fn is_bad_token(message: &ServerMessage) -> bool {
        matches!(
            message,
            ServerMessage::Error {
                code: ErrorCode::InvalidResumeToken,
                ..
            }
        )
    }
}

/// The line for a move of one's own that the server accepted: the move,
/// then what it did beyond itself.
pub fn played_text(text: &str, effects: &[Effect]) -> String {
    let mut line = format!("you played {text}");
    for effect in effects {
        line.push_str("; ");
        line.push_str(&effect_text(effect));
    }
    line
}

/// An effect in words.
pub fn effect_text(effect: &Effect) -> String {
    match effect {
        Effect::TurnedUp { zone, card } => format!("{} turned up on {zone}", card.pretty()),
        Effect::RunRemoved { from, suit, .. } => {
            format!("the run of {suit:?} left {from} for a foundation").to_lowercase()
        }
        Effect::AceDiscarded { card, .. } => format!("{} discarded", card.pretty()),
        Effect::Drew { card } => format!("turned {} onto the waste", card.pretty()),
        Effect::Dealt { count } => format!("dealt {count} cards from the stock"),
    }
}

/// A racer's progress in words: "12 moves, 13 home (1 run), 4 uncovered,
/// 7 from the stock"; the parts a game cannot have are left out.
pub fn progress_text(progress: &Progress) -> String {
    let plural = |count: u32| if count == 1 { "" } else { "s" };
    let mut text = format!(
        "{} move{}, {} home",
        progress.moves,
        plural(progress.moves),
        progress.cards_home
    );
    if progress.runs_home > 0 {
        let runs = progress.runs_home;
        text.push_str(&format!(" ({runs} run{})", plural(u32::from(runs))));
    }
    if progress.cards_uncovered > 0 {
        text.push_str(&format!(", {} uncovered", progress.cards_uncovered));
    }
    if progress.stock_turned > 0 {
        text.push_str(&format!(", {} from the stock", progress.stock_turned));
    }
    text
}

/// A status in words, e.g. "won".
pub fn status_text(status: PlayerStatus) -> &'static str {
    match status {
        PlayerStatus::Waiting => "waiting",
        PlayerStatus::Racing => "racing",
        PlayerStatus::Won => "won",
        PlayerStatus::Resigned => "resigned",
        PlayerStatus::Stuck => "stuck",
        PlayerStatus::OutOfTime => "ran out of time",
        PlayerStatus::Left => "left",
    }
}

/// A duration as `m:ss`.
pub fn clock_text(duration: Duration) -> String {
    let seconds = duration.as_secs();
    format!("{}:{:02}", seconds / 60, seconds % 60)
}

/// Milliseconds as `m:ss.t`, tenths truncated: `184020` is `3:04.0`.
pub fn tenths_text(milliseconds: u64) -> String {
    let tenths = milliseconds / 100;
    format!("{}:{:02}.{}", tenths / 600, tenths / 10 % 60, tenths % 10)
}

#[cfg(test)]
mod tests {
    use patience_shared::game::GameKind;
    use patience_shared::protocol::{MoveLog, PlayerInfo, Reveal, RoomOptions};
    use patience_shared::rules::MoveError;

    use super::*;

    fn result(salt: &str, moves: &[&str]) -> RaceResult {
        RaceResult {
            race_id: None,
            standings: Vec::new(),
            reveal: Reveal {
                game: GameKind::ThreeBlindMice,
                seed: 7,
                salt: salt.into(),
            },
            logs: vec![MoveLog {
                seat: 0,
                moves: moves.iter().map(|text| text.to_string()).collect(),
            }],
            open_boards: false,
        }
    }

    #[test]
    fn times_read_as_minutes_seconds_and_tenths() {
        for (milliseconds, expected) in [
            (0, "0:00.0"),
            (99, "0:00.0"),
            (100, "0:00.1"),
            (59_999, "0:59.9"),
            (60_000, "1:00.0"),
            (184_020, "3:04.0"),
            (3_600_000, "60:00.0"),
        ] {
            assert_eq!(tenths_text(milliseconds), expected, "{milliseconds} ms");
        }
    }

    #[test]
    fn verification_checks_the_commitment_and_replays_every_log() {
        let salt = "00112233445566778899aabbccddeeff";
        let commitment = protocol::commitment(GameKind::ThreeBlindMice, 7, salt);
        let deal = AnyGame::deal(GameKind::ThreeBlindMice, 7);
        let mut legal = Vec::new();
        deal.legal_moves(&mut legal);
        let first = deal.format_move(legal[0]);
        let check = |result: RaceResult, commitment_ok: bool, log_ok: bool| {
            let verification = Verification::check(&result, &commitment);
            assert_eq!(verification.commitment_ok, commitment_ok);
            assert_eq!(verification.logs_ok.get(&0), Some(&log_ok));
        };
        check(result(salt, &[&first, "undo", &first]), true, true);
        check(result("ffff", &[&first]), false, true);
        check(result(salt, &["undo"]), true, false);
        check(result(salt, &["1>1"]), true, false);
    }

    /// Ada in seat 0 races Bob; Bob plays one move, told as the server
    /// tells it in a room with or without open boards. Returns Ada's state
    /// and the line she read about Bob's move.
    fn rival_moves(open_boards: bool) -> (RaceState, String) {
        let deal = AnyGame::deal(GameKind::ThreeBlindMice, 7);
        let player = |seat: u8, name: &str| PlayerInfo {
            seat,
            name: name.into(),
            connected: true,
            status: PlayerStatus::Racing,
            bot: None,
        };
        let room = RoomInfo {
            code: "K7PQ3M".into(),
            game: GameKind::ThreeBlindMice,
            max_players: 2,
            public: false,
            options: RoomOptions {
                open_boards,
                ..RoomOptions::default()
            },
            owner: Some(0),
            phase: Phase::Racing,
            players: vec![player(0, "ada"), player(1, "bob")],
            spectators: 0,
            series: None,
        };
        let now = Instant::now();
        let mut state = RaceState::default();
        let joined = ServerMessage::RoomJoined {
            seq: 1,
            room,
            seat: Some(0),
            resume_token: Some("token".into()),
        };
        state.apply(joined, now);
        let started = ServerMessage::RaceStarted {
            seq: 2,
            commitment: "c".into(),
            board: deal.view(),
            time_limit_ms: 60_000,
        };
        state.apply(started, now);
        let mut bob = deal.clone();
        let mut legal = Vec::new();
        bob.legal_moves(&mut legal);
        let text = bob.format_move(legal[0]);
        bob.apply(legal[0]).expect("a legal move");
        let progress = Progress::measure(&deal.view(), &bob.view(), 1, 900);
        let moved = ServerMessage::Progress {
            seq: 3,
            seat: 1,
            progress,
            text: open_boards.then(|| text.clone()),
            board: open_boards.then(|| bob.view()),
        };
        let notes = state.apply(moved, now);
        assert_eq!(state.racers[&1].progress, progress);
        assert_eq!(state.my_board(), Some(&deal.view()), "Ada's own board");
        (state, notes.join("\n"))
    }

    #[test]
    fn a_rival_is_followed_by_counts_unless_boards_are_open() {
        let (state, line) = rival_moves(false);
        assert_eq!(state.racers[&1].board, None, "no rival board is kept");
        assert!(line.starts_with("bob: 1 move, 0 home"), "{line}");
        let (state, line) = rival_moves(true);
        assert!(state.racers[&1].board.is_some(), "open boards show it");
        assert!(line.starts_with("bob played "), "{line}");
    }

    #[test]
    fn progress_reads_as_counts_and_leaves_out_what_a_game_cannot_have() {
        let check = |progress: Progress, expected: &str| {
            assert_eq!(progress_text(&progress), expected);
        };
        check(Progress::default(), "0 moves, 0 home");
        check(
            Progress {
                moves: 1,
                cards_home: 26,
                runs_home: 2,
                ..Progress::default()
            },
            "1 move, 26 home (2 runs)",
        );
        check(
            Progress {
                moves: 40,
                cards_home: 13,
                cards_in_order: 13,
                runs_home: 1,
                cards_uncovered: 9,
                stock_turned: 31,
                elapsed_ms: 5,
            },
            "40 moves, 13 home (1 run), 9 uncovered, 31 from the stock",
        );
    }

    #[test]
    fn a_rival_who_resigns_and_goes_is_not_said_to_have_lost_the_connection() {
        let check = |status: PlayerStatus, lost: bool| {
            let (mut state, _) = rival_moves(false);
            let mut room = state.room.clone().expect("a room");
            room.players[1].connected = false;
            room.players[1].status = status;
            let notes = state.apply(ServerMessage::RoomUpdate { seq: 9, room }, Instant::now());
            assert_eq!(
                notes.iter().any(|note| note == "bob lost the connection"),
                lost,
                "{status:?}: {notes:?}"
            );
        };
        check(PlayerStatus::Racing, true);
        check(PlayerStatus::Resigned, false);
        check(PlayerStatus::Won, false);
    }

    #[test]
    fn a_resumable_kick_keeps_the_seat_and_others_end_the_session() {
        let check = |code: ErrorCode, closed: bool| {
            let (mut state, _) = rival_moves(false);
            state.apply(
                ServerMessage::Error {
                    code,
                    message: "bye".into(),
                },
                Instant::now(),
            );
            assert_eq!(state.closed.is_some(), closed, "{code:?}");
        };
        check(ErrorCode::TooSlow, false);
        check(ErrorCode::IdleTimeout, false);
        check(ErrorCode::Replaced, true);
        // A race running: the server keeps it across its restart.
        check(ErrorCode::ShuttingDown, false);
        check(ErrorCode::RoomNotFound, false);
        // A spectator has no seat to resume.
        let mut watching = RaceState::default();
        watching.apply(
            ServerMessage::Error {
                code: ErrorCode::TooSlow,
                message: "bye".into(),
            },
            Instant::now(),
        );
        assert!(watching.closed.is_some());
    }

    #[test]
    fn a_finished_races_page_is_on_the_server_raced_on() {
        let cases = [
            ("ws://127.0.0.1:7878", Some("http://127.0.0.1:7878")),
            ("ws://race.example/", Some("http://race.example")),
            (
                "WSS://race.example:443/play?x=1",
                Some("https://race.example:443"),
            ),
            ("ws://[::1]:7878/", Some("http://[::1]:7878")),
            ("http://race.example", None),
            ("ws://", None),
            ("race.example", None),
        ];
        for (server, expected) in cases {
            assert_eq!(page_address(server).as_deref(), expected, "{server}");
        }
        let state = RaceState::on_server("ws://127.0.0.1:7878");
        assert_eq!(
            state.race_page(731).as_deref(),
            Some("http://127.0.0.1:7878/race/731")
        );
        assert_eq!(RaceState::default().race_page(731), None);
    }

    #[test]
    fn the_race_clock_after_a_resume_is_the_servers() {
        let start = Instant::now();
        let resumed = |elapsed_ms| ServerMessage::Resumed {
            seq: 9,
            room: rival_moves(false).0.room.expect("a room"),
            seat: 0,
            resume_token: "token".into(),
            elapsed_ms,
        };
        let started = ServerMessage::RaceStarted {
            seq: 2,
            commitment: "c".into(),
            board: AnyGame::deal(GameKind::ThreeBlindMice, 7).view(),
            time_limit_ms: 60_000,
        };
        // A restarted client: `resumed`, then the replayed start.
        let mut state = RaceState::default();
        state.apply(resumed(Some(50_000)), start);
        state.apply(started.clone(), start);
        assert_eq!(state.race_elapsed(start), Some(Duration::from_secs(50)));
        // A client that kept its state: the server's figure corrects it.
        let mut state = RaceState::default();
        state.apply(started.clone(), start);
        state.apply(resumed(Some(12_000)), start + Duration::from_secs(10));
        assert_eq!(
            state.race_elapsed(start + Duration::from_secs(10)),
            Some(Duration::from_secs(12))
        );
        // Before the start there is no clock to take.
        let mut state = RaceState::default();
        state.apply(resumed(None), start);
        state.apply(started, start + Duration::from_secs(3));
        assert_eq!(
            state.race_elapsed(start + Duration::from_secs(4)),
            Some(Duration::from_secs(1))
        );
    }

    #[test]
    fn an_acknowledged_move_sets_the_race_clock_by_the_servers_but_a_replayed_one_does_not() {
        let start = Instant::now();
        let deal = AnyGame::deal(GameKind::ThreeBlindMice, 7).view();
        let accepted = |seq, elapsed_ms| ServerMessage::MoveAccepted {
            seq,
            text: "7h>4".into(),
            effects: Vec::new(),
            board: deal.clone(),
            progress: Progress::measure(&deal, &deal, 1, elapsed_ms),
        };
        let mut state = RaceState::default();
        state.apply(
            ServerMessage::RaceStarted {
                seq: 2,
                commitment: "c".into(),
                board: deal.clone(),
                time_limit_ms: 60_000,
            },
            start,
        );
        let at = |seconds| start + Duration::from_secs(seconds);
        // (event, read at, race clock then), in order.
        let script = [
            // A move stamped a moment before it is read: the network's drift.
            (accepted(3, 9_700), at(10), Duration::from_secs(10)),
            // The room waited 5 s for its store: the server's clock stood still.
            (accepted(4, 15_000), at(20), Duration::from_secs(15)),
            // Ahead of this client's count (it read `race_started` late).
            (accepted(5, 23_000), at(21), Duration::from_secs(23)),
        ];
        for (event, read_at, clock) in script {
            state.apply(event, read_at);
            assert_eq!(state.race_elapsed(read_at), Some(clock));
        }
        // After a resume the missed events are replayed with their old
        // times; the clock stays the one `resumed` gave.
        state.apply(
            ServerMessage::Resumed {
                seq: 9,
                room: rival_moves(false).0.room.expect("a room"),
                seat: 0,
                resume_token: "token".into(),
                elapsed_ms: Some(40_000),
            },
            at(40),
        );
        state.apply(accepted(8, 30_000), at(40));
        assert_eq!(state.race_elapsed(at(40)), Some(Duration::from_secs(40)));
        state.apply(accepted(10, 44_000), at(42));
        assert_eq!(state.race_elapsed(at(42)), Some(Duration::from_secs(44)));
    }

    #[test]
    fn a_refused_move_is_said_in_words_and_kept_until_the_next_move() {
        let mut state = RaceState::default();
        let notes = state.apply(
            ServerMessage::MoveRejected {
                text: "7h>5".into(),
                code: ErrorCode::IllegalMove,
                reason: Some(MoveError::ChangesNothing),
                message: "that move changes nothing".into(),
            },
            Instant::now(),
        );
        assert_eq!(notes, ["\"7h>5\" refused: that move changes nothing"]);
        assert!(state.last_rejection.is_some());
        assert!(!state.can_move(), "no seat, no race");
    }
}
