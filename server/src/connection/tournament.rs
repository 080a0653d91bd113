//! The connection's tournament requests beyond one day's page: past days,
//! a player's records, and the weekly and monthly standings.

use patience_shared::game::GameKind;
use patience_shared::protocol::{ErrorCode, Period};

use super::Session;

impl Session {
    pub(super) async fn daily_days(
        &mut self,
        _game: GameKind,
        _before: Option<String>,
        _limit: Option<u32>,
    ) {
        self.error(ErrorCode::InvalidRequest, "not built yet");
    }

    pub(super) async fn player_stats(&mut self, _name: Option<String>) {
        self.error(ErrorCode::InvalidRequest, "not built yet");
    }

    pub(super) async fn standings(
        &mut self,
        _game: GameKind,
        _period: Period,
        _key: Option<String>,
        _limit: Option<u32>,
    ) {
        self.error(ErrorCode::InvalidRequest, "not built yet");
    }
}
