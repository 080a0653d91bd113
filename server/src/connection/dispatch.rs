//! The dispatcher: decodes a frame and routes each client message to the
//! handler of its area. Before `hello` only `hello` is routed; after it,
//! every message. It decides nothing else: what a message may do is the
//! handler's business.

use patience_shared::protocol::{
    self, ClientMessage, DecodeError, ErrorCode, Limits, PROTOCOL_VERSION, ServerMessage,
};

use super::Session;
use crate::metrics::bump;

impl Session {
    pub(super) async fn handle_frame(&mut self, bytes: &[u8]) {
        let error = match protocol::decode_client(bytes) {
            Ok(message) => return self.handle(message).await,
            Err(error) => error,
        };
        bump(&self.shared.metrics.malformed_messages);
        match error {
            // Whatever the frame was, it was not a hello: the document's
            // one rule for a first message, and one close reason for it.
            _ if !self.greeted => self.error(
                ErrorCode::HelloRequired,
                format!("the first message must be hello ({error})"),
            ),
            DecodeError::UnknownGame(game) => self.game_unavailable(&game),
            error => self.error(error.code(), error.to_string()),
        }
    }

    /// Handles one message. A race's moves, most of the traffic, are
    /// handled in this future; everything else in a boxed one of its own,
    /// made only when such a message comes. So the connection's task is
    /// not as large as the largest handler (a room to create, a daily
    /// attempt, a stored replay, ...) for all of its life: it is what every
    /// idle socket costs.
    async fn handle(&mut self, message: ClientMessage) {
        match message {
            ClientMessage::Move { text, seat } if self.greeted && self.daily.is_none() => {
                if self.moves_allowed() {
                    let command = self.move_command(text, seat);
                    self.forward(command).await;
                }
            }
            message => Box::pin(self.dispatch(message)).await,
        }
    }

    /// Routes one message to its handler.
    async fn dispatch(&mut self, message: ClientMessage) {
        if !self.greeted {
            return match message {
                ClientMessage::Hello { version, name } => self.hello(version, &name),
                _ => self.error(ErrorCode::HelloRequired, "the first message must be hello"),
            };
        }
        match message {
            ClientMessage::Hello { .. } => {
                self.error(ErrorCode::AlreadyGreeted, "hello was already said")
            }
            ClientMessage::CreateRoom {
                game,
                max_players,
                public,
                options,
                bots,
            } => {
                self.create_room(game, max_players, public, options, bots)
                    .await
            }
            ClientMessage::JoinRoom { code } => self.join_room(&code).await,
            ClientMessage::QuickRace { game } => self.quick_race(game).await,
            ClientMessage::Spectate { code } => self.spectate(&code).await,
            ClientMessage::Resume { token, last_seq } => self.resume(&token, last_seq).await,
            ClientMessage::Leave => self.leave().await,
            ClientMessage::StartEarly => self.start_early().await,
            ClientMessage::Move { text, seat } => self.play_move(text, seat).await,
            ClientMessage::Undo => self.undo().await,
            ClientMessage::Resign => self.resign().await,
            ClientMessage::Register { name } => self.register(name).await,
            ClientMessage::Authenticate { token } => self.authenticate(&token).await,
            ClientMessage::DailyPlay { game } => self.daily_play(game).await,
            ClientMessage::Leaderboard { game, date, limit } => {
                self.leaderboard(game, date, limit).await
            }
            ClientMessage::Replay { race_id } => self.replay(race_id).await,
            ClientMessage::Follow { game, date, limit } => self.follow(game, date, limit).await,
            ClientMessage::Unfollow { game } => self.unfollow(game),
            ClientMessage::DailyDays {
                game,
                before,
                limit,
            } => self.daily_days(game, before, limit).await,
            ClientMessage::PlayerStats { name } => self.player_stats(name).await,
            ClientMessage::Standings {
                game,
                period,
                key,
                limit,
            } => self.standings(game, period, key, limit).await,
            ClientMessage::ReplayBoards { race_id } => self.replay_boards(race_id).await,
            ClientMessage::RequestSignInCode => self.request_sign_in_code().await,
            ClientMessage::RedeemSignInCode { code } => self.redeem_sign_in_code(&code).await,
            ClientMessage::SignOut => self.sign_out().await,
            ClientMessage::Lobby { game } => self.lobby(game).await,
            ClientMessage::Rematch { accept } => self.rematch(accept).await,
            ClientMessage::QuickRaceAnswer { bot } => Box::pin(self.quick_race_answer(bot)).await,
            ClientMessage::Ratings { game, limit } => self.ratings(game, limit).await,
            ClientMessage::RatingHistory { game, name, limit } => {
                self.rating_history(game, name, limit).await
            }
        }
    }

    fn hello(&mut self, version: u32, name: &str) {
        if version != PROTOCOL_VERSION {
            return self.error(
                ErrorCode::UnsupportedVersion,
                format!("this server speaks protocol version {PROTOCOL_VERSION}, not {version}"),
            );
        }
        let name = match protocol::display_name(name) {
            Ok(name) => name,
            Err(error) => return self.error(ErrorCode::InvalidRequest, error.to_string()),
        };
        self.greeted = true;
        self.name = name.to_string();
        let config = &self.shared.config;
        self.reply(&ServerMessage::Welcome {
            version: PROTOCOL_VERSION,
            server: format!("patience-server {}", env!("CARGO_PKG_VERSION")),
            limits: Limits {
                max_message_bytes: u32::try_from(config.max_message_bytes).unwrap_or(u32::MAX),
                messages_per_second: config.messages_per_second,
                burst: config.message_burst,
            },
        });
    }
}
