//! The update of a stored race on a real store (SQLite in memory),
//! applied once however often it is asked, and the rating list and the
//! lobby's figure on the virtual clock.

use patience_shared::game::GameKind;
use patience_shared::protocol::{BotLevel, PlayerStatus};
use patience_shared::rating::{DAY_MS, INITIAL_SIGMA, Rating};

use super::*;
use crate::store::PlayerLookup;
use crate::store::sqlite::SqliteStore;
use crate::store::tests::hash;
use patience_room_core::rated::made_up_result as result;

const ENDED_MS: u64 = 1_796_083_200_000;

fn new_race(
    racers: &[(u8, PlayerStatus, Option<BotLevel>)],
    players: &[(u8, PlayerId)],
) -> NewRace {
    NewRace {
        daily: None,
        room_code: None,
        ended_at_ms: ENDED_MS,
        result: result(racers),
        players: players.to_vec(),
    }
}

#[test]
fn a_stored_race_is_rated_once_however_often_it_is_applied() {
    let mut store = SqliteStore::in_memory().expect("opens");
    let ada = store.register("ada", &hash(1), 1).expect("registers").id;
    let bob = store.register("bob", &hash(2), 2).expect("registers").id;
    let race = new_race(
        &[
            (0, PlayerStatus::Won, None),
            (1, PlayerStatus::Resigned, None),
        ],
        &[(0, ada), (1, bob)],
    );
    let race_id = store.record_race(&race).expect("stores");
    let rated = apply(&mut store, race_id, &race)
        .expect("applies")
        .expect("rated");
    assert_eq!(rated.changes.len(), 2);
    // Made again (a job run twice): nothing changes a second time.
    assert_eq!(apply(&mut store, race_id, &race).expect("applies"), None);
    let stored = store
        .ratings_of(GameKind::ThreeBlindMice, &[ada, bob])
        .expect("reads");
    let ada_rating = stored
        .iter()
        .find(|rating| rating.player == ada)
        .expect("ada");
    let bob_rating = stored
        .iter()
        .find(|rating| rating.player == bob)
        .expect("bob");
    assert!((ada_rating.rating.mu - 27.635_231_383_473_65).abs() < 1e-9);
    assert!((bob_rating.rating.mu - 22.364_768_616_526_35).abs() < 1e-9);
    assert_eq!((ada_rating.races, bob_rating.races), (1, 1));
    assert_eq!(ada_rating.last_race_ms, ENDED_MS);
    let history = store
        .rating_history(PlayerLookup::Name("ADA"), GameKind::ThreeBlindMice, 10)
        .expect("reads")
        .expect("ada exists");
    assert_eq!(history.rows.len(), 1);
    assert_eq!((history.rows[0].place, history.rows[0].racers), (1, 2));
    assert_eq!(history.rows[0].before, Rating::new());
}

#[test]
fn the_next_race_starts_from_the_rating_after_its_idle_days() {
    let mut store = SqliteStore::in_memory().expect("opens");
    let ada = store.register("ada", &hash(1), 1).expect("registers").id;
    let bob = store.register("bob", &hash(2), 2).expect("registers").id;
    let racers = [
        (0, PlayerStatus::Won, None),
        (1, PlayerStatus::Resigned, None),
    ];
    let first = new_race(&racers, &[(0, ada), (1, bob)]);
    let first_id = store.record_race(&first).expect("stores");
    let first_rated = apply(&mut store, first_id, &first)
        .expect("applies")
        .expect("rated");
    let later = NewRace {
        ended_at_ms: ENDED_MS + 300 * DAY_MS,
        ..first.clone()
    };
    let later_id = store.record_race(&later).expect("stores");
    let later_rated = apply(&mut store, later_id, &later)
        .expect("applies")
        .expect("rated");
    let after_first = first_rated.changes[0].after;
    assert_eq!(
        later_rated.changes[0].before,
        after_first.after_idle(300 * DAY_MS)
    );
    assert!(later_rated.changes[0].before.sigma > after_first.sigma);
    assert!(later_rated.changes[0].before.sigma <= INITIAL_SIGMA);
}

fn stored(player: PlayerId, name: &str, mu: f64, sigma: f64, last_race_ms: u64) -> StoredRating {
    StoredRating {
        player,
        name: name.to_string(),
        rating: Rating { mu, sigma },
        races: 3,
        last_race_ms,
    }
}

#[test]
fn the_list_ranks_the_conservative_figure_at_the_time_asked() {
    let now_ms = ENDED_MS + 200 * DAY_MS;
    // Cyd's estimate is the best but 200 idle days have made it the least
    // sure, and it falls below Bea's.
    let active = vec![
        stored(1, "ada", 30.0, 2.0, now_ms),
        stored(2, "bea", 29.0, 2.0, now_ms),
        stored(3, "cyd", 33.0, 2.0, ENDED_MS),
    ];
    let own = stored(3, "cyd", 33.0, 2.0, ENDED_MS);
    let list = list(active, Some(&own), now_ms, 2);
    assert_eq!(list.players, 3);
    let names: Vec<&str> = list.rows.iter().map(|row| row.name.as_str()).collect();
    assert_eq!(names, ["ada", "bea"]);
    assert_eq!(list.rows[0].rank, Some(1));
    assert_eq!(list.rows[0].rating, 2400);
    let own = list.own.expect("own row");
    assert_eq!(own.rank, Some(3));
    // sqrt(4 + 0.04 * 200) = sqrt(12) = 3.46: 33 - 10.39 = 22.61.
    assert_eq!((own.sigma, own.rating), (346, 2261));
    assert!(!own.provisional);
}

#[test]
fn a_lobby_seat_shows_the_conservative_figure_after_idle_days() {
    // A player with no rated race shows a new player's figure: 0, provisional.
    assert_eq!(
        seat_rating(None, ENDED_MS),
        SeatRating {
            rating: 0,
            provisional: true
        }
    );
    let settled = stored(1, "ada", 30.0, 2.0, ENDED_MS);
    assert_eq!(
        seat_rating(Some(&settled), ENDED_MS),
        SeatRating {
            rating: 2400,
            provisional: false
        }
    );
    // 200 idle days later: sigma sqrt(12), the figure 33 - 10.39 lower.
    assert_eq!(
        seat_rating(Some(&settled), ENDED_MS + 200 * DAY_MS).rating,
        1961
    );
}
