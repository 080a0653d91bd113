//! `patience deal` and `patience moves`, run as a script would run them.

use patience_tests::{patience, stderr, stdout};

#[test]
fn deal_prints_a_board_for_every_game_and_short_names_work() {
    for (name, title) in [
        ("three-blind-mice", "Three Blind Mice"),
        ("tbm", "Three Blind Mice"),
        ("indian", "Indian"),
        ("midshipman", "Midshipman"),
        ("vr", "Virginia Reel"),
    ] {
        let output = patience(&["deal", name, "7"]);
        assert!(output.status.success(), "{name}: {}", stderr(&output));
        assert!(
            stdout(&output).starts_with(&format!("{title} · seed 7")),
            "{name}"
        );
    }
}

#[test]
fn deal_json_holds_every_card() {
    for (game, cards) in [
        ("tbm", 52),
        ("indian", 104),
        ("midshipman", 104),
        ("vr", 104),
    ] {
        let output = patience(&["deal", game, "12", "--json"]);
        assert!(output.status.success(), "{}", stderr(&output));
        let json: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("valid JSON");
        assert_eq!(json["seed"], 12);
        let zones = json["zones"].as_array().expect("zones");
        let total: usize = zones
            .iter()
            .map(|z| z["cards"].as_array().map_or(0, Vec::len))
            .sum();
        assert_eq!(total, cards, "{game}");
    }
}

#[test]
fn moves_plays_a_line_and_lists_legal_moves_as_json() {
    let first = patience(&["moves", "indian", "3"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let listed = stdout(&first);
    let some_move = listed
        .lines()
        .next()
        .expect("a fresh Indian deal has moves");
    let after = patience(&["moves", "indian", "3", "--play", some_move, "--json"]);
    assert!(after.status.success(), "{}", stderr(&after));
    let json: serde_json::Value = serde_json::from_str(&stdout(&after)).expect("valid JSON");
    assert_eq!(json["played"], 1);
    assert_eq!(json["won"], false);
    assert!(json["stuck"].is_boolean());
    assert!(json["moves"].is_array());
    assert_eq!(json["position"]["game"], "indian");
}

#[test]
fn an_illegal_move_stops_with_its_number_and_reason() {
    let output = patience(&["moves", "indian", "3", "--play", "s s 9>9"]);
    assert!(!output.status.success());
    let message = stderr(&output);
    assert!(message.contains("move 3"), "{message}");
    assert!(message.contains("9>9"), "{message}");
    let unreadable = patience(&["moves", "vr", "3", "--play", "hello"]);
    assert!(!unreadable.status.success());
    assert!(
        stderr(&unreadable).contains("move 1"),
        "{}",
        stderr(&unreadable)
    );
}

#[test]
fn an_unknown_game_is_refused() {
    let output = patience(&["deal", "spider", "1"]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("unknown game"),
        "{}",
        stderr(&output)
    );
}
