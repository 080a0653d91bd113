//! Days followed live, and a finished race's boards for clients without a
//! rules engine.

use patience_shared::game::GameKind;
use patience_shared::protocol::ErrorCode;

use super::Session;

impl Session {
    pub(super) async fn follow(
        &mut self,
        _game: GameKind,
        _date: Option<String>,
        _limit: Option<u32>,
    ) {
        self.error(ErrorCode::InvalidRequest, "not built yet");
    }

    pub(super) fn unfollow(&mut self, _game: GameKind) {}

    pub(super) async fn replay_boards(&mut self, _race_id: u64) {
        self.error(ErrorCode::InvalidRequest, "not built yet");
    }
}
