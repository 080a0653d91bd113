//! The lobby and rematches: `lobby` (the open public rooms of every node,
//! see [`crate::lobby`]) and `rematch` (an answer for the room's actor,
//! which runs the vote).

use patience_shared::game::GameKind;
use patience_shared::protocol::ServerMessage;

use super::Session;
use crate::room_handle::Command;

impl Session {
    pub(super) async fn lobby(&mut self, game: Option<GameKind>) {
        let shared = &self.shared;
        let page = crate::lobby::page(
            &shared.registry,
            shared.cluster.as_ref(),
            &shared.database,
            game,
            shared.clock.now_ms(),
        )
        .await;
        self.reply(&ServerMessage::LobbyPage { page });
    }

    pub(super) async fn rematch(&mut self, accept: bool) {
        self.forward(Command::Rematch {
            conn_id: self.handle.id,
            accept,
        })
        .await
    }
}
