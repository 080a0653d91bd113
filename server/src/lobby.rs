//! The lobby: the open public rooms still forming, on this node and, in a
//! cluster, on every other node (as each published them at its last
//! renewal, see [`cluster`](crate::cluster)). Fullest first, so that players
//! meet; then by code, so that the order holds from one refresh to the next.

use patience_shared::game::GameKind;
use patience_shared::protocol::{LOBBY_REFRESH_MS, LobbyPage, LobbyRoom};

use crate::cluster::Cluster;
use crate::registry::Registry;

/// The most rooms one page lists.
pub const MAX_LOBBY_ROOMS: usize = 100;

/// The lobby of `game` (or of every game), as this node sees it now.
pub async fn page(
    registry: &Registry,
    cluster: Option<&Cluster>,
    game: Option<GameKind>,
) -> LobbyPage {
    let mut rooms = registry.lobby(game);
    if let Some(cluster) = cluster {
        match cluster.lobby_elsewhere().await {
            Ok(elsewhere) => rooms.extend(
                elsewhere
                    .into_iter()
                    .filter(|room| game.is_none_or(|game| room.game == game)),
            ),
            Err(error) => {
                tracing::warn!(%error, "the other nodes' lobby could not be read");
            }
        }
    }
    LobbyPage {
        rooms: ordered(rooms),
        refresh_ms: LOBBY_REFRESH_MS,
    }
}

/// Fullest first, then by code; one entry per code (a room that moved
/// between nodes may be listed by both for a moment); at most
/// [`MAX_LOBBY_ROOMS`].
fn ordered(mut rooms: Vec<LobbyRoom>) -> Vec<LobbyRoom> {
    rooms.sort_by(|a, b| {
        b.players
            .len()
            .cmp(&a.players.len())
            .then_with(|| a.code.cmp(&b.code))
    });
    rooms.dedup_by(|later, earlier| later.code == earlier.code);
    rooms.truncate(MAX_LOBBY_ROOMS);
    rooms
}

#[cfg(test)]
mod tests {
    use patience_shared::protocol::Phase;

    use super::*;

    fn room(code: &str, players: usize) -> LobbyRoom {
        LobbyRoom {
            code: code.to_string(),
            game: GameKind::Indian,
            max_players: 4,
            players: (0..players).map(|seat| format!("p{seat}")).collect(),
            phase: Phase::Lobby,
            series: None,
        }
    }

    #[test]
    fn the_fullest_come_first_then_by_code_once_each() {
        let codes = |rooms: Vec<LobbyRoom>| -> Vec<String> {
            ordered(rooms).into_iter().map(|room| room.code).collect()
        };
        assert_eq!(
            codes(vec![
                room("KKK", 1),
                room("AAA", 1),
                room("MMM", 3),
                room("AAA", 1)
            ]),
            ["MMM", "AAA", "KKK"]
        );
        let many = (0..150)
            .map(|index| room(&format!("{index:03}"), 1))
            .collect();
        assert_eq!(ordered(many).len(), MAX_LOBBY_ROOMS);
    }
}
