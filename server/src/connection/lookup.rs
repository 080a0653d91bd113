//! Where a room code or a resume token leads: a room open here; in a
//! cluster, a room taken over here (its node is gone, see `failover`), or
//! another live node, where the client is sent with a `redirect`. Also the
//! claim of a fresh room code in the cluster's Redis.

use std::sync::Arc;

use patience_shared::protocol::{ErrorCode, ServerMessage};

use super::Session;
use crate::cluster::Cluster;
use crate::failover::{self, Found};
use crate::metrics::bump;
use crate::room_handle::RoomHandle;

/// Where a resume token no room here knows leads, in a cluster.
pub(super) enum TokenElsewhere {
    /// To another live node: the client was sent there.
    Redirected,
    /// To a room here: a race whose node is gone, taken over here, or one
    /// whose actor has not yet taken its tokens in.
    Here(RoomHandle),
    /// Nowhere.
    Unknown,
}

impl Session {
    /// Claims a fresh room code in the cluster's Redis, so that no two
    /// nodes ever open rooms under one code; `None` (the client told) if
    /// Redis cannot be reached.
    pub(super) async fn claim_code(&self, cluster: &Cluster) -> Option<Arc<str>> {
        match cluster.claim_new_code(&self.shared.registry).await {
            Ok(code) => Some(code),
            Err(error) => {
                tracing::warn!(%error, "no room code could be claimed");
                self.error(
                    ErrorCode::Internal,
                    "the cluster's Redis cannot be reached: no new room can open; try again later",
                );
                None
            }
        }
    }

    /// The room `code`, for a join or a spectator: open here, or taken
    /// over here (its node is gone); `None` once the client was sent to
    /// the node that owns it, told which kept race the closed room raced
    /// last (`room_closed`), or told that no room has the code.
    pub(super) async fn room_anywhere(&self, code: &str) -> Option<RoomHandle> {
        if let Some(room) = self.shared.registry.room(code) {
            return Some(room);
        }
        if let Some(cluster) = &self.shared.cluster {
            match failover::find_room(&self.shared, cluster, code).await {
                Found::Here(room) => return Some(room),
                Found::Elsewhere(url) => {
                    self.redirect(url);
                    return None;
                }
                Found::Nowhere => {}
            }
        }
        match self.race_of_closed_room(code).await {
            Some(race_id) => self.reply(&ServerMessage::RoomClosed {
                code: code.to_string(),
                race_id,
            }),
            None => self.error(
                ErrorCode::RoomNotFound,
                format!("no room has the code {code}"),
            ),
        }
        None
    }

    /// The latest kept race of a room no node has open any more. A room's
    /// race is kept before its result is announced, so a room that closed
    /// after its race always finds it. When the store cannot answer, the
    /// client hears `room_not_found`, as for a code never used.
    async fn race_of_closed_room(&self, code: &str) -> Option<u64> {
        let code = code.to_string();
        let found = self
            .shared
            .database
            .call(move |store| store.race_of_room(&code))
            .await;
        found.unwrap_or_else(|error| {
            tracing::warn!(%error, "the race of a closed room could not be read");
            None
        })
    }

    /// When no room here knows a resume token, asks the cluster which room
    /// it opens a seat of (Redis, or the store when Redis lost the token's
    /// pointer, as it does when it restarts), and finds that room: on
    /// another live node the client gets a `redirect` there; a running
    /// race no live node holds (its node died) is taken over here at once,
    /// rather than at the next failover scan.
    pub(super) async fn token_elsewhere(&self, hash: &crate::secrets::TokenHash) -> TokenElsewhere {
        let Some(cluster) = &self.shared.cluster else {
            return TokenElsewhere::Unknown;
        };
        let pointed = match cluster.room_of_token(hash).await {
            Ok(code) => code,
            Err(error) => {
                tracing::warn!(%error, "the cluster could not say where a token's room is");
                None
            }
        };
        let code = match pointed {
            Some(code) => code,
            None => match failover::code_of_token(&self.shared, cluster, *hash).await {
                Some(code) => code,
                None => return TokenElsewhere::Unknown,
            },
        };
        match failover::find_room(&self.shared, cluster, &code).await {
            Found::Here(room) => TokenElsewhere::Here(room),
            Found::Elsewhere(url) => {
                self.redirect(url);
                TokenElsewhere::Redirected
            }
            Found::Nowhere => TokenElsewhere::Unknown,
        }
    }

    pub(super) fn redirect(&self, url: String) {
        bump(&self.shared.metrics.cluster_redirects);
        self.reply(&ServerMessage::Redirect { url });
    }
}
