//! Which rooms are rated and which of their racers count.

use patience_shared::protocol::BotLevel;

use super::made_up_result as result;
use super::*;

#[test]
fn registered_people_count_and_bots_and_guests_do_not() {
    use PlayerStatus::{Left, OutOfTime, Resigned, Won};
    let check = |racers: &[(u8, PlayerStatus, Option<BotLevel>)],
                 players: &[(u8, PlayerId)],
                 expected: Result<Vec<(PlayerId, bool)>, Unrated>| {
        assert_eq!(
            rated_racers(&result(racers), players),
            expected,
            "{racers:?}"
        );
    };
    // Two people: the winner and the one who resigned.
    check(
        &[(1, Won, None), (0, Resigned, None)],
        &[(0, 10), (1, 11)],
        Ok(vec![(11, true), (10, false)]),
    );
    // A bot won: the people are rated among themselves.
    check(
        &[
            (2, Won, Some(BotLevel::Strong)),
            (0, Won, None),
            (1, OutOfTime, None),
        ],
        &[(0, 10), (1, 11)],
        Ok(vec![(10, true), (11, false)]),
    );
    // A guest (no account) is left out: one person left, not rated.
    check(
        &[(0, Won, None), (1, Left, None)],
        &[(0, 10)],
        Err(Unrated::TooFewPeople),
    );
    // A person against a bot alone: not rated.
    check(
        &[(1, Won, Some(BotLevel::Easy)), (0, Resigned, None)],
        &[(0, 10)],
        Err(Unrated::TooFewPeople),
    );
    // One account in two seats: not rated at all.
    check(
        &[(0, Won, None), (1, Resigned, None), (2, Resigned, None)],
        &[(0, 10), (1, 10), (2, 12)],
        Err(Unrated::OneAccountTwice),
    );
}

#[test]
fn quick_races_and_rooms_created_rated_count_unless_undo_or_open_boards() {
    let options = |rated: bool, undo_allowed: bool, open_boards: bool| RoomOptions {
        rated,
        undo_allowed,
        open_boards,
        ..RoomOptions::default()
    };
    // (public, rated, undo, open boards) -> rated
    let cases = [
        ((true, false, false, false), true),
        ((false, true, false, false), true),
        ((true, true, false, false), true),
        ((false, false, false, false), false),
        ((true, false, true, false), false),
        ((true, false, false, true), false),
        ((false, true, true, false), false),
        ((false, true, false, true), false),
    ];
    for ((public, rated, undo, open), expected) in cases {
        assert_eq!(
            room_is_rated(public, &options(rated, undo, open)),
            expected,
            "public {public}, rated {rated}, undo {undo}, open boards {open}"
        );
    }
}
