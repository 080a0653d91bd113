//! The update against the crate's own worked examples, the places of a
//! race, the provisional rule and the growth of uncertainty with idle time.

use super::*;

/// The crate's tests state their figures to the last bit of an `f64`; a
/// race of two through the multi-team form is the same computation.
fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() < 1e-12
}

fn entrant(mu: f64, sigma: f64, won: bool) -> Entrant {
    Entrant {
        rating: Rating { mu, sigma },
        won,
    }
}

#[test]
fn two_new_players_match_the_crates_worked_example() {
    // skillratings' `test_weng`: two new players, the first wins.
    let after = rate_race(&[
        entrant(INITIAL_MU, INITIAL_SIGMA, true),
        entrant(INITIAL_MU, INITIAL_SIGMA, false),
    ])
    .expect("two racers");
    assert!(close(after[0].mu, 27.635_231_383_473_65), "{after:?}");
    assert!(close(after[0].sigma, 8.065_506_316_323_548), "{after:?}");
    assert!(close(after[1].mu, 22.364_768_616_526_35), "{after:?}");
    assert!(close(after[1].sigma, 8.065_506_316_323_548), "{after:?}");
}

#[test]
fn a_settled_player_matches_the_crates_worked_example() {
    // skillratings' `test_weng`: (42, 1.3) against a new player, who wins,
    // loses, or ties with it (here: neither won the deal).
    let cases = [
        // (first wins, second wins, first's mu, second's mu)
        (true, false, 42.026_412_401_802_894, 23.914_677_769_440_46),
        (false, false, 41.944_283_200_044_92, 27.289_480_603_019_403),
    ];
    for (first_won, second_won, first_mu, second_mu) in cases {
        let after = rate_race(&[
            entrant(42.0, 1.3, first_won),
            entrant(INITIAL_MU, INITIAL_SIGMA, second_won),
        ])
        .expect("two racers");
        assert!(close(after[0].mu, first_mu), "{after:?}");
        assert!(close(after[0].sigma, 1.299_823_053_277_078_3), "{after:?}");
        assert!(close(after[1].mu, second_mu), "{after:?}");
        assert!(close(after[1].sigma, 8.029_022_445_649_298), "{after:?}");
    }
    // The new player wins: listed first, as in the standings.
    let after = rate_race(&[
        entrant(INITIAL_MU, INITIAL_SIGMA, true),
        entrant(42.0, 1.3, false),
    ])
    .expect("two racers");
    assert!(close(after[1].mu, 41.862_153_998_286_94), "{after:?}");
    assert!(close(after[0].mu, 30.664_283_436_598_35), "{after:?}");
}

#[test]
fn everyone_who_did_not_win_ties_for_last() {
    let check = |won: &[bool], expected: &[usize]| {
        assert_eq!(places(won).expect("winners first"), expected, "{won:?}");
    };
    check(&[true, false], &[1, 2]);
    check(&[false, false], &[1, 1]);
    check(&[true, true, false, false], &[1, 2, 3, 3]);
    check(&[true, false, false, false, false], &[1, 2, 2, 2, 2]);
    check(&[false, false, false], &[1, 1, 1]);
    assert_eq!(places(&[false, true]), Err(RateError::Order));

    // Equal racers who tie for last end equal, below the winner.
    let new = entrant(INITIAL_MU, INITIAL_SIGMA, false);
    let after = rate_race(&[Entrant { won: true, ..new }, new, new]).expect("three");
    assert_eq!(after[1], after[2]);
    assert!(
        after[0].mu > INITIAL_MU && after[1].mu < INITIAL_MU,
        "{after:?}"
    );
    // Nobody won: equal racers stay equal and grow surer.
    let after = rate_race(&[new, new, new]).expect("three");
    assert!(after.iter().all(|rating| close(rating.mu, INITIAL_MU)));
    assert!(after.iter().all(|rating| rating.sigma < INITIAL_SIGMA));
}

#[test]
fn a_race_has_two_to_eight_racers() {
    let new = entrant(INITIAL_MU, INITIAL_SIGMA, false);
    assert_eq!(rate_race(&[new]), Err(RateError::Racers(1)));
    assert_eq!(rate_race(&[new; 9]), Err(RateError::Racers(9)));
    assert_eq!(rate_race(&[new; 8]).expect("eight").len(), 8);
}

#[test]
fn a_new_rating_is_provisional_until_about_a_dozen_races() {
    assert!(Rating::new().is_provisional());
    assert!(close(Rating::new().conservative(), 0.0));
    // Two new players race each other again and again, winning in turn.
    let mut pair = [Rating::new(), Rating::new()];
    let mut races = 0;
    while pair[0].is_provisional() {
        let first_wins = races % 2 == 0;
        let after = rate_race(&[
            Entrant {
                rating: pair[usize::from(!first_wins)],
                won: true,
            },
            Entrant {
                rating: pair[usize::from(first_wins)],
                won: false,
            },
        ])
        .expect("two racers");
        pair[usize::from(!first_wins)] = after[0];
        pair[usize::from(first_wins)] = after[1];
        races += 1;
    }
    assert!((10..=16).contains(&races), "{races} races");
}

#[test]
fn uncertainty_grows_with_idle_time_on_the_virtual_clock() {
    let settled = Rating {
        mu: 30.0,
        sigma: 2.0,
    };
    let last_race_ms = 1_800_000_000_000;
    // No time, or a clock behind the last race: unchanged.
    assert_eq!(settled.at(last_race_ms, last_race_ms), settled);
    assert_eq!(settled.at(last_race_ms, last_race_ms - 5), settled);
    // The variance grows by IDLE_VARIANCE_PER_DAY a day; mu stays.
    let after_125_days = settled.at(last_race_ms, last_race_ms + 125 * DAY_MS);
    assert!(
        close(after_125_days.sigma, 9.0_f64.sqrt()),
        "{after_125_days:?}"
    );
    assert!(close(after_125_days.mu, 30.0));
    let after_half_a_day = settled.after_idle(DAY_MS / 2);
    assert!(close(after_half_a_day.sigma, 4.02_f64.sqrt()));
    // Provisional again after 800 days (4 + 32 = 36 = 6 squared), not before.
    assert!(!settled.after_idle(799 * DAY_MS).is_provisional());
    assert!(settled.after_idle(801 * DAY_MS).is_provisional());
    // Never above a new player's.
    assert!(close(
        settled.after_idle(100_000 * DAY_MS).sigma,
        INITIAL_SIGMA
    ));
}

#[test]
fn figures_travel_in_hundredths_and_show_one_decimal() {
    let check = |figure: f64, wire: i32, shown: &str| {
        assert_eq!(hundredths(figure), wire, "{figure}");
        assert_eq!(show_hundredths(wire), shown, "{wire}");
    };
    check(18.437, 1844, "18.4");
    check(0.0, 0, "0.0");
    check(-0.04, -4, "0.0");
    check(-3.26, -326, "-3.3");
    check(27.635, 2764, "27.6");
}
