//! Rooms: creating one (its code claimed in the cluster, its bots seated),
//! joining, spectating, resuming a seat, leaving, quick race (a waiting
//! room here or the one the cluster advertises, if its waiter's rating
//! window meets the player's, or a room opened here to wait in), and the
//! room business forwarded to the room's actor
//! (moves, undo, resign, start early). A daily attempt's moves, undo and
//! resign go to the attempt instead.

use std::sync::Arc;
use std::time::{Duration, Instant};

use patience_shared::game::GameKind;
use patience_shared::protocol::{self, BotSeat, ErrorCode, RoomOptions, ServerMessage};
use tokio::sync::{mpsc, oneshot};

use super::Session;
use super::lookup::TokenElsewhere;
use crate::bots;
use crate::cluster::{Advert, Owner};
use crate::matchmaking::Waiter;
use crate::outbox::ConnectionHandle;
use crate::room;
use crate::room_handle::{Command, Refusal, RoomHandle};
use crate::secrets::token_hash;

/// Looks at the quick-race advertisement a request makes at most before it
/// opens a room of its own unadvertised: each look that does not settle it
/// follows a change made by another request meanwhile.
const QUICK_RACE_TRIES: usize = 20;

/// The wait before looking again at an advertisement of this node's whose
/// room is a moment from opening.
const QUICK_RACE_RETRY: Duration = Duration::from_millis(5);

impl Session {
    pub(super) async fn create_room(
        &mut self,
        game: GameKind,
        max_players: u8,
        public: bool,
        options: RoomOptions,
        bots: Vec<BotSeat>,
    ) {
        if self.not_in_room() {
            self.open_new_room(game, max_players, public, options, false, bots)
                .await;
        }
    }

    pub(super) async fn join_room(&mut self, code: &str) {
        if self.not_in_room()
            && let Some(room) = self.room_anywhere(code).await
        {
            self.enter(room, self.join_command()).await;
        }
    }

    pub(super) async fn quick_race(&mut self, game: GameKind) {
        if self.not_in_room() {
            let now = self.shared.clock.now_ms();
            self.find_quick_race_since(game, now).await;
        }
    }

    pub(super) async fn spectate(&mut self, code: &str) {
        if self.not_in_room()
            && let Some(room) = self.room_anywhere(code).await
        {
            self.enter(room, |conn, reply| Command::Spectate { conn, reply })
                .await;
        }
    }

    /// Takes a seat back with its resume token: a room here, or wherever
    /// the cluster says the token leads.
    pub(super) async fn resume(&mut self, token: &str, last_seq: u64) {
        if !self.not_in_room() {
            return;
        }
        let hash = token_hash(token);
        let room = match self.shared.registry.room_for_token(&hash) {
            Some(room) => Some(room),
            None => match self.token_elsewhere(&hash).await {
                TokenElsewhere::Redirected => return,
                TokenElsewhere::Here(room) => Some(room),
                TokenElsewhere::Unknown => None,
            },
        };
        match room {
            Some(room) => {
                self.enter(room, |conn, reply| Command::Resume {
                    conn,
                    token: hash,
                    last_seq,
                    reply,
                })
                .await;
                self.resume_quick_wait().await;
            }
            None => self.error(
                ErrorCode::InvalidResumeToken,
                "that resume token is unknown or already used",
            ),
        }
    }

    pub(super) async fn leave(&mut self) {
        self.end_quick_wait();
        if let Some(room) = self.room.take() {
            let command = Command::Leave {
                conn_id: self.handle.id,
            };
            if !self.tell(&room, command).await {
                // The room closed meanwhile: the client is out of it all the same.
                self.reply(&ServerMessage::Left {
                    code: room.code.to_string(),
                });
            }
        } else {
            self.error(ErrorCode::NotInRoom, "you are in no room");
        }
    }

    pub(super) async fn start_early(&mut self) {
        self.forward(Command::StartEarly {
            conn_id: self.handle.id,
        })
        .await
    }

    /// A move: the daily attempt's, if one is open here, else the room's.
    pub(super) async fn play_move(&mut self, text: String, seat: Option<u8>) {
        if !self.moves_allowed() {
            return;
        }
        if self.daily.is_some() {
            return self.daily_move(text, seat).await;
        }
        let command = self.move_command(text, seat);
        self.forward(command).await;
    }

    pub(super) async fn undo(&mut self) {
        if !self.moves_allowed() {
            return;
        }
        if self.daily.is_some() {
            return self.daily_undo().await;
        }
        self.forward(Command::Undo {
            conn_id: self.handle.id,
        })
        .await;
    }

    pub(super) async fn resign(&mut self) {
        if self.daily.is_some() {
            return self.daily_resign().await;
        }
        self.forward(Command::Resign {
            conn_id: self.handle.id,
        })
        .await
    }

    /// A race move for the room's actor, received now.
    pub(super) fn move_command(&self, text: String, seat: Option<u8>) -> Command {
        Command::Move {
            conn_id: self.handle.id,
            text,
            seat,
            received: Instant::now(),
            received_ms: self.shared.clock.now_ms(),
        }
    }

    /// The command that seats this connection in a room, under the name
    /// others see and with the registered player if there is one.
    pub(super) fn join_command(
        &self,
    ) -> impl FnOnce(ConnectionHandle, oneshot::Sender<Result<(), Refusal>>) -> Command + use<>
    {
        let name = self.name.clone();
        let player = self.player.as_ref().map(|player| player.id);
        move |conn, reply| Command::Join {
            conn,
            name,
            player,
            bot: None,
            reply,
        }
    }

    pub(super) fn not_in_room(&mut self) -> bool {
        // A room that has closed (its actor gone) no longer holds anyone.
        if self
            .room
            .as_ref()
            .is_some_and(|room| room.commands.is_closed())
        {
            self.room = None;
        }
        if self.room.is_some() {
            self.error(ErrorCode::AlreadyInRoom, "leave your room first");
        } else if self.daily.is_some() {
            self.error(
                ErrorCode::AlreadyInRoom,
                "you are playing the daily deal: finish it or resign first",
            );
            return false;
        }
        self.room.is_none()
    }

    pub(super) async fn open_new_room(
        &mut self,
        game: GameKind,
        max_players: u8,
        public: bool,
        options: RoomOptions,
        quick: bool,
        bots: Vec<BotSeat>,
    ) {
        if bots.len() >= usize::from(max_players.max(1)) {
            return self.error(
                ErrorCode::InvalidRequest,
                format!(
                    "a room of {max_players} seats has at most {} bots: one seat is yours",
                    max_players.saturating_sub(1)
                ),
            );
        }
        if !bots.is_empty() && (public || options.open_boards) {
            // Strangers a quick race brings in never agreed to race bots,
            // and a bot that saw every board would see cards its own board
            // hides.
            return self.error(
                ErrorCode::InvalidRequest,
                "a room with bots is private and without open_boards",
            );
        }
        if !self.may_open_room(game, max_players, public, &options) {
            return;
        }
        let bot_seats = if bots.is_empty() {
            None
        } else {
            match self.shared.bots.reserve(bots.len()) {
                Some(permits) => Some(permits),
                None => {
                    return self.error(
                        ErrorCode::TooManyRooms,
                        "too many bots are racing on this server; try again later",
                    );
                }
            }
        };
        let code = match &self.shared.cluster {
            None => None,
            Some(cluster) => match self.claim_code(cluster).await {
                Some(code) => Some(code),
                None => return,
            },
        };
        self.open_room(code, game, max_players, public, quick, options)
            .await;
        if let (Some(permits), Some(room)) = (bot_seats, &self.room) {
            let hosting = self.shared.bot_hosting();
            if let Err(refusal) = bots::seat_bots(hosting, room, &bots, permits).await {
                tracing::warn!(?refusal, "a bot could not take its seat");
            }
        }
    }

    /// Whether a room of these settings may open now; if not, the client
    /// was told why.
    fn may_open_room(
        &self,
        game: GameKind,
        max_players: u8,
        public: bool,
        options: &RoomOptions,
    ) -> bool {
        let config = &self.shared.config;
        if !(2..=8).contains(&max_players) {
            self.error(ErrorCode::InvalidRequest, "a room has 2 to 8 seats");
            return false;
        }
        if options
            .time_limit_ms
            .is_some_and(|limit| limit == 0 || limit > config.max_time_limit_ms)
        {
            self.error(
                ErrorCode::InvalidRequest,
                format!(
                    "the time limit must be between 1 and {} ms",
                    config.max_time_limit_ms
                ),
            );
            return false;
        }
        if options
            .best_of
            .is_some_and(|best_of| best_of == 0 || best_of > protocol::MAX_BEST_OF)
        {
            self.error(
                ErrorCode::InvalidRequest,
                format!(
                    "a series is the best of 1 to {} races",
                    protocol::MAX_BEST_OF
                ),
            );
            return false;
        }
        if options.open_boards && public {
            // Strangers a quick race brings in never agreed to show their
            // boards, nor to see the deal's cards on others'.
            self.error(
                ErrorCode::InvalidRequest,
                "open_boards rooms are private: quick race never puts strangers in one",
            );
            return false;
        }
        if options.rated && (options.undo_allowed || options.open_boards) {
            // A take-back, or a rival's board in view, is not the race the
            // others ran: such a race cannot count.
            self.error(
                ErrorCode::InvalidRequest,
                "a rated room allows no undo and no open_boards",
            );
            return false;
        }
        if !self.shared.pool.deals(game) {
            self.game_unavailable(game.slug());
            return false;
        }
        if !self.shared.database.is_up() {
            // A race the server could not store is a race nobody can
            // replay or trust: refuse it before anyone plays.
            let reason = self.shared.database.down_reason();
            self.error(
                ErrorCode::Internal,
                format!("the server's database is down, so no race can be stored: {reason}"),
            );
            return false;
        }
        if self.shared.registry.room_count() >= config.max_rooms {
            self.error(
                ErrorCode::TooManyRooms,
                "too many rooms are open; try again later",
            );
            return false;
        }
        true
    }

    /// Opens a room, under `code` (claimed in the cluster) or a fresh one,
    /// and seats the client in it.
    async fn open_room(
        &mut self,
        code: Option<Arc<str>>,
        game: GameKind,
        max_players: u8,
        public: bool,
        quick: bool,
        options: RoomOptions,
    ) {
        let context = self.shared.room_context();
        let room = match code {
            None => room::create(&context, game, max_players, public, quick, options),
            Some(code) => {
                let created = room::create_with_code(
                    &context,
                    Arc::clone(&code),
                    game,
                    max_players,
                    public,
                    quick,
                    options,
                );
                match created {
                    Some(room) => room,
                    None => {
                        if let Some(cluster) = &self.shared.cluster {
                            cluster.release(&code);
                        }
                        return self.error(ErrorCode::Internal, "a room code clashed; try again");
                    }
                }
            }
        };
        self.enter(room, self.join_command()).await;
    }

    /// Seats the client in a quick race of `game`, as a player waiting
    /// since `since_ms`: a waiting room here whose waiter's rating window
    /// meets this player's, or the room the cluster advertises if its
    /// waiter's does (the client is sent to its node), or a room opened
    /// here (and advertised, if no live room is), in which the player
    /// waits. Opening is decided in Redis, at once
    /// ([`Cluster::advertise`]): of two nodes asked at the same moment, one
    /// advertises its room and the other sends its player there, so they
    /// meet.
    pub(super) async fn find_quick_race_since(&mut self, game: GameKind, since_ms: u64) {
        if !self.shared.pool.deals(game) {
            return self.game_unavailable(game.slug());
        }
        let me = Waiter {
            mu: self.quick_estimate(game).await,
            since_ms,
        };
        if self.join_waiting_room(game, &me).await {
            return;
        }
        let seats = self.shared.config.quick_race_seats;
        let options = RoomOptions::default();
        let Some(cluster) = self.shared.cluster.clone() else {
            self.open_new_room(game, seats, true, options, true, Vec::new())
                .await;
            return self.begin_quick_wait(game, me).await;
        };
        if !self.may_open_room(game, seats, true, &options) {
            return;
        }
        // The code of the room this request would open, claimed once.
        let mut claimed: Option<Arc<str>> = None;
        let give_back = |claimed: &Option<Arc<str>>| {
            if let Some(code) = claimed {
                cluster.release(code);
            }
        };
        let mut advertise = true;
        for _ in 0..QUICK_RACE_TRIES {
            let now = self.shared.clock.now_ms();
            let stale = match cluster.advertised(game).await {
                Ok(None) => None,
                Ok(Some(advert)) if !advert.meets(&me, now) && advert.owner != Owner::Nobody => {
                    // A live waiter out of this player's reach. This one
                    // waits beside it, on its node, in a room of its own,
                    // unadvertised: the node's looks at its waiters move
                    // the later one once their windows meet.
                    if let Owner::Elsewhere { url } = advert.owner {
                        give_back(&claimed);
                        return self.redirect(url);
                    }
                    advertise = false;
                    break;
                }
                Ok(Some(Advert {
                    owner: Owner::Elsewhere { url },
                    ..
                })) => {
                    give_back(&claimed);
                    return self.redirect(url);
                }
                Ok(Some(Advert {
                    code,
                    owner: Owner::Here,
                    ..
                })) => {
                    if self.join_waiting_room(game, &me).await {
                        give_back(&claimed);
                        return;
                    }
                    if cluster.holds(&code) && self.shared.registry.room(&code).is_none() {
                        // Advertised by another request here, which opens
                        // it in a moment.
                        tokio::time::sleep(QUICK_RACE_RETRY).await;
                        continue;
                    }
                    // Full, racing or closed: this request's room replaces it.
                    Some(code)
                }
                // Its node is gone.
                Ok(Some(Advert { code, .. })) => Some(code),
                Err(error) => {
                    tracing::warn!(%error, "the quick-race advertisement could not be read");
                    give_back(&claimed);
                    return self.error(
                        ErrorCode::Internal,
                        "the cluster's Redis cannot be reached: no quick race can be found; try again later",
                    );
                }
            };
            let code = match &claimed {
                Some(code) => Arc::clone(code),
                None => {
                    let Some(code) = self.claim_code(&cluster).await else {
                        return;
                    };
                    claimed = Some(Arc::clone(&code));
                    code
                }
            };
            match cluster.advertise(game, &code, stale.as_deref(), &me).await {
                Ok(true) => {
                    self.open_room(Some(code), game, seats, true, true, options)
                        .await;
                    return self.begin_quick_wait(game, me).await;
                }
                // Another room was advertised first: the next look finds it.
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(%error, "a quick-race room could not be advertised");
                    give_back(&claimed);
                    return self.error(
                        ErrorCode::Internal,
                        "the cluster's Redis cannot be reached: no quick race can be found; try again later",
                    );
                }
            }
        }
        if advertise {
            // The advertisement changed under every look: a room of this
            // request's own, which quick races here still find.
            tracing::warn!("the quick-race advertisement kept changing; a room opens unadvertised");
        }
        if claimed.is_none() {
            claimed = self.claim_code(&cluster).await;
            if claimed.is_none() {
                return;
            }
        }
        self.open_room(claimed, game, seats, true, true, options)
            .await;
        self.begin_quick_wait(game, me).await;
    }

    /// Seats the client in a room of this node waiting for quick racers of
    /// `game` whose waiter's window meets `me` (or that has no waiter),
    /// the fullest first; whether one took it.
    async fn join_waiting_room(&mut self, game: GameKind, me: &Waiter) -> bool {
        let now = self.shared.clock.now_ms();
        for room in self.shared.registry.quick_race_candidates(game) {
            let meets = room
                .summary
                .waiter()
                .is_none_or(|waiter| waiter.meets(me, now));
            if meets && self.try_enter(&room, self.join_command()).await.is_ok() {
                self.room = Some(room);
                return true;
            }
        }
        false
    }

    /// Asks `room` to take this connection in, and remembers it if it does.
    async fn enter(
        &mut self,
        room: RoomHandle,
        command: impl FnOnce(ConnectionHandle, oneshot::Sender<Result<(), Refusal>>) -> Command,
    ) {
        match self.try_enter(&room, command).await {
            Ok(()) => self.room = Some(room),
            Err(Refusal { code, message }) => self.error(code, message),
        }
    }

    pub(super) async fn try_enter(
        &self,
        room: &RoomHandle,
        command: impl FnOnce(ConnectionHandle, oneshot::Sender<Result<(), Refusal>>) -> Command,
    ) -> Result<(), Refusal> {
        let gone = || {
            Refusal::new(
                ErrorCode::RoomNotFound,
                format!("room {} has closed", room.code),
            )
        };
        let (reply, answer) = oneshot::channel();
        room.commands
            .send(command(self.handle.clone(), reply))
            .await
            .map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }

    async fn tell(&self, room: &RoomHandle, command: Command) -> bool {
        room.commands.send(command).await.is_ok()
    }

    /// Sends a command to the room this connection is in.
    pub(super) async fn forward(&mut self, command: Command) {
        // A move or an undo the room never got is refused as such.
        let refusal = |command: Command| match command {
            Command::Move { text, .. } => Some(text),
            Command::Undo { .. } => Some(protocol::UNDO_TEXT.to_string()),
            _ => None,
        };
        let Some(room) = &self.room else {
            return self.not_in_a_room(refusal(command));
        };
        // Most often the room's queue has room at once; waiting for room is
        // boxed, so that this future stays small (see `handle`). The queue
        // gives back a command it could not take.
        let refused = match room.commands.try_send(command) {
            Ok(()) => return,
            Err(mpsc::error::TrySendError::Full(command)) => {
                match Box::pin(room.commands.send(command)).await {
                    Ok(()) => return,
                    Err(mpsc::error::SendError(command)) => command,
                }
            }
            Err(mpsc::error::TrySendError::Closed(command)) => command,
        };
        self.room = None;
        self.not_in_a_room(refusal(refused));
    }

    fn not_in_a_room(&self, move_text: Option<String>) {
        let message = "you are in no room".to_string();
        match move_text {
            Some(text) => self.reply(&ServerMessage::MoveRejected {
                text,
                code: ErrorCode::NotInRoom,
                reason: None,
                message,
            }),
            None => self.error(ErrorCode::NotInRoom, message),
        }
    }

    /// Tells the room this connection is gone.
    pub(super) async fn disconnected(&mut self) {
        self.leave_daily();
        // The room keeps its waiter's window while the seat is held: a
        // resume takes the wait back.
        self.quick_wait = None;
        if let Some(room) = self.room.take() {
            self.tell(
                &room,
                Command::Disconnected {
                    conn_id: self.handle.id,
                },
            )
            .await;
        }
    }
}
