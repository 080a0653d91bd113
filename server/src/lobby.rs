//! The lobby: the open public rooms still forming, on this node and, in a
//! cluster, on every other node (as each published them at its last
//! renewal, see [`cluster`](crate::cluster)). Fullest first, so that players
//! meet; then by code, so that the order holds from one refresh to the next.
//!
//! Each listed seat of a registered player shows the player's rating at the
//! room's game, read from the store when the page is asked for (so at the
//! clock's time, after idle days): the rooms carry their seats' player ids
//! ([`ListedRoom`]), every node's alike, and the store is the cluster's.
//! A store that cannot answer leaves the ratings out; the page still goes.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use patience_shared::game::GameKind;
use patience_shared::protocol::{LOBBY_REFRESH_MS, LobbyPage};

use crate::cluster::Cluster;
use crate::database::Database;
use crate::ratings;
use crate::registry::Registry;
use crate::room_handle::ListedRoom;
use crate::store::{PlayerId, StoredRating};

/// The most rooms one page lists.
pub const MAX_LOBBY_ROOMS: usize = 100;

/// The lobby of `game` (or of every game), as this node sees it now, with
/// the waiting players' ratings at `now_ms`.
pub async fn page(
    registry: &Registry,
    cluster: Option<&Cluster>,
    database: &Database,
    game: Option<GameKind>,
    now_ms: u64,
) -> LobbyPage {
    let mut rooms = registry.lobby(game);
    if let Some(cluster) = cluster {
        match cluster.lobby_elsewhere().await {
            Ok(elsewhere) => rooms.extend(
                elsewhere
                    .into_iter()
                    .filter(|listed| game.is_none_or(|game| listed.room.game == game)),
            ),
            Err(error) => {
                tracing::warn!(%error, "the other nodes' lobby could not be read");
            }
        }
    }
    let mut rooms = ordered(rooms);
    let wanted = players_by_game(&rooms);
    let stored = if wanted.is_empty() {
        Vec::new()
    } else {
        let asked = database
            .call_aside(move |store| {
                let mut found = Vec::new();
                for (game, players) in wanted {
                    let players: Vec<PlayerId> = players.into_iter().collect();
                    found.extend(
                        store
                            .ratings_of(game, &players)?
                            .into_iter()
                            .map(|rating| (game, rating)),
                    );
                }
                Ok(found)
            })
            .await;
        asked.unwrap_or_else(|error| {
            tracing::warn!(%error, "the lobby's ratings could not be read");
            Vec::new()
        })
    };
    let stored: HashMap<(GameKind, PlayerId), StoredRating> = stored
        .into_iter()
        .map(|(game, rating)| ((game, rating.player), rating))
        .collect();
    for listed in &mut rooms {
        with_ratings(listed, &stored, now_ms);
    }
    LobbyPage {
        rooms: rooms.into_iter().map(|listed| listed.room).collect(),
        refresh_ms: LOBBY_REFRESH_MS,
    }
}

/// The registered players seated in `rooms`, by the game of their room.
fn players_by_game(rooms: &[ListedRoom]) -> BTreeMap<GameKind, BTreeSet<PlayerId>> {
    let mut wanted: BTreeMap<GameKind, BTreeSet<PlayerId>> = BTreeMap::new();
    for listed in rooms {
        let players = listed.seat_players.iter().flatten().copied();
        wanted.entry(listed.room.game).or_default().extend(players);
    }
    wanted.retain(|_, players| !players.is_empty());
    wanted
}

/// Fills in a room's `ratings` from the stored ratings of its game: a
/// registered player with none shows a new player's. A room with no
/// registered player keeps none.
fn with_ratings(
    listed: &mut ListedRoom,
    stored: &HashMap<(GameKind, PlayerId), StoredRating>,
    now_ms: u64,
) {
    let game = listed.room.game;
    listed.room.ratings = if listed.seat_players.iter().any(Option::is_some) {
        listed
            .seat_players
            .iter()
            .map(|player| {
                player.map(|player| ratings::seat_rating(stored.get(&(game, player)), now_ms))
            })
            .collect()
    } else {
        Vec::new()
    };
}

/// Fullest first, then by code; one entry per code (a room that moved
/// between nodes may be listed by both for a moment); at most
/// [`MAX_LOBBY_ROOMS`].
fn ordered(mut rooms: Vec<ListedRoom>) -> Vec<ListedRoom> {
    rooms.sort_by(|a, b| {
        b.room
            .players
            .len()
            .cmp(&a.room.players.len())
            .then_with(|| a.room.code.cmp(&b.room.code))
    });
    rooms.dedup_by(|later, earlier| later.room.code == earlier.room.code);
    rooms.truncate(MAX_LOBBY_ROOMS);
    rooms
}

#[cfg(test)]
mod tests {
    use patience_shared::protocol::{LobbyRoom, Phase};

    use super::*;

    fn room(code: &str, players: usize) -> ListedRoom {
        ListedRoom {
            room: LobbyRoom {
                code: code.to_string(),
                game: GameKind::Indian,
                max_players: 4,
                players: (0..players).map(|seat| format!("p{seat}")).collect(),
                phase: Phase::Lobby,
                series: None,
                ratings: Vec::new(),
            },
            seat_players: vec![None; players],
        }
    }

    #[test]
    fn the_fullest_come_first_then_by_code_once_each() {
        let codes = |rooms: Vec<ListedRoom>| -> Vec<String> {
            ordered(rooms)
                .into_iter()
                .map(|listed| listed.room.code)
                .collect()
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

    #[test]
    fn registered_seats_show_their_rating_and_the_others_none() {
        use patience_shared::protocol::SeatRating;
        use patience_shared::rating::Rating;

        let settled = StoredRating {
            player: 7,
            name: "p0".to_string(),
            rating: Rating {
                mu: 30.0,
                sigma: 2.0,
            },
            races: 40,
            last_race_ms: 1_000,
        };
        let stored = HashMap::from([((GameKind::Indian, 7), settled)]);
        let mut listed = room("AAA", 3);
        // A rated player, a registered one with no rated race, a guest.
        listed.seat_players = vec![Some(7), Some(8), None];
        assert_eq!(
            players_by_game(std::slice::from_ref(&listed)),
            BTreeMap::from([(GameKind::Indian, BTreeSet::from([7, 8]))])
        );
        with_ratings(&mut listed, &stored, 1_000);
        assert_eq!(
            listed.room.ratings,
            [
                Some(SeatRating {
                    rating: 2400,
                    provisional: false
                }),
                Some(SeatRating {
                    rating: 0,
                    provisional: true
                }),
                None,
            ]
        );
        // Guests only: no ratings at all, and nothing to look up.
        let mut guests = room("BBB", 2);
        assert!(players_by_game(std::slice::from_ref(&guests)).is_empty());
        with_ratings(&mut guests, &stored, 1_000);
        assert!(guests.room.ratings.is_empty());
    }
}
