//! Boards as plain text, for `patience deal`, `--plain` play and logs.
//!
//! Piles and reserves are drawn as columns, the way the cards lie on a table;
//! Virginia Reel's row positions as a grid of three rows; everything else
//! (cells, stock, waste, foundations, discard) as one labelled line each.
//! Face-down cards are shown in parentheses, `(7h)`, since these commands
//! show the whole deal; the stock is listed from the next card to be turned.
//! [`view_text`] draws what a player may see: face-down cards as `##`.

use std::fmt::Write;

use patience_shared::card::Card;
use patience_shared::rules::{Board, View, Zone, ZoneCards};

/// One zone ready to draw: its cards as text, bottom first.
struct Shown {
    zone: Zone,
    cards: Vec<String>,
}

/// The whole board as text, ending without a newline.
pub fn board_text(board: &Board) -> String {
    let shown: Vec<Shown> = board
        .zones
        .iter()
        .map(|zone| Shown {
            zone: zone.zone,
            cards: if zone.zone == Zone::Stock {
                // The stock's top, the next card turned, is its last card.
                zone.cards.iter().rev().map(Card::to_string).collect()
            } else {
                zone.cards
                    .iter()
                    .enumerate()
                    .map(|(index, &card)| card_text(zone, index, card))
                    .collect()
            },
        })
        .collect();
    shown_text(&shown)
}

/// What a player may see, as text: face-down cards are `##`, the stock is
/// a count.
pub fn view_text(view: &View) -> String {
    let shown: Vec<Shown> = view
        .zones
        .iter()
        .map(|zone| Shown {
            zone: zone.zone,
            cards: if zone.zone == Zone::Stock {
                vec!["##".to_string(); usize::from(zone.hidden) + zone.face_up.len()]
            } else {
                std::iter::repeat_n("##".to_string(), usize::from(zone.hidden))
                    .chain(zone.face_up.iter().map(Card::to_string))
                    .collect()
            },
        })
        .collect();
    shown_text(&shown)
}

fn shown_text(zones: &[Shown]) -> String {
    let mut out = String::new();
    let of_kind = |wanted: fn(Zone) -> bool| -> Vec<&Shown> {
        zones.iter().filter(|shown| wanted(shown.zone)).collect()
    };
    let positions = of_kind(|zone| matches!(zone, Zone::Position(_)));
    let piles = of_kind(|zone| matches!(zone, Zone::Pile(_)));
    let reserves = of_kind(|zone| matches!(zone, Zone::Reserve(_)));
    if !positions.is_empty() {
        out.push_str(&positions_grid(&positions));
    }
    if !piles.is_empty() {
        out.push_str(&columns("Piles", &piles));
    }
    if !reserves.is_empty() {
        out.push_str(&columns("Reserve", &reserves));
    }
    for shown in zones {
        if matches!(
            shown.zone,
            Zone::Pile(_) | Zone::Reserve(_) | Zone::Position(_)
        ) {
            continue;
        }
        let _ = writeln!(out, "{}", zone_line(shown));
    }
    out.trim_end().to_string()
}

fn card_text(zone: &ZoneCards, index: usize, card: Card) -> String {
    if index < usize::from(zone.face_down) {
        format!("({card})")
    } else {
        card.to_string()
    }
}

/// Zones drawn side by side as columns, bottom card first, numbered from 1.
fn columns(title: &str, zones: &[&Shown]) -> String {
    const WIDTH: usize = 5;
    let mut out = format!("{title}:\n");
    for (number, _) in zones.iter().enumerate() {
        let _ = write!(out, "{:<WIDTH$}", number + 1);
    }
    out = out.trim_end().to_string();
    out.push('\n');
    let height = zones.iter().map(|z| z.cards.len()).max().unwrap_or(0);
    for row in 0..height {
        let mut line = String::new();
        for zone in zones {
            let cell = zone.cards.get(row).map(String::as_str).unwrap_or_default();
            let _ = write!(line, "{cell:<WIDTH$}");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if height == 0 {
        out.push_str("(all empty)\n");
    }
    out.push('\n');
    out
}

/// Virginia Reel's 24 positions: rows A, B, C (the 2s, 3s and 4s rows) of
/// eight, each position's cards from the bottom up.
fn positions_grid(positions: &[&Shown]) -> String {
    const WIDTH: usize = 9;
    let mut out = String::from("Rows:\n   ");
    for column in 1..=8 {
        let _ = write!(out, "{column:<WIDTH$}");
    }
    out = out.trim_end().to_string();
    out.push('\n');
    for (row_index, row) in positions.chunks(8).enumerate() {
        let mut line = format!("{}  ", (b'A' + row_index as u8) as char);
        for zone in row {
            let cards: String = zone.cards.concat();
            let cell = if cards.is_empty() {
                "--".to_string()
            } else {
                cards
            };
            let _ = write!(line, "{cell:<WIDTH$}");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push('\n');
    out
}

/// One labelled line for a cell, the stock, the waste, a foundation or the discard.
fn zone_line(zone: &Shown) -> String {
    let label = match zone.zone {
        Zone::Cell(i) => format!("Cell {}", i + 1),
        Zone::Stock => format!("Stock ({} cards, next first)", zone.cards.len()),
        Zone::Waste => format!("Waste ({})", zone.cards.len()),
        Zone::Foundation(i) => format!("Foundation {}", i + 1),
        Zone::Discard => format!("Discard ({})", zone.cards.len()),
        other => other.to_string(),
    };
    if zone.zone == Zone::Stock && zone.cards.iter().all(|card| card == "##") {
        return format!("Stock: {} cards", zone.cards.len());
    }
    if zone.cards.is_empty() {
        format!("{label}: --")
    } else {
        format!("{label}: {}", zone.cards.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use patience_shared::game::GameKind;

    use super::*;

    fn card(text: &str) -> Card {
        text.parse().expect("test card")
    }

    #[test]
    fn piles_become_columns_and_face_down_cards_are_marked() {
        let board = Board {
            game: GameKind::Indian,
            zones: vec![
                ZoneCards {
                    zone: Zone::Pile(0),
                    face_down: 1,
                    cards: vec![card("7h"), card("8c")],
                },
                ZoneCards {
                    zone: Zone::Pile(1),
                    face_down: 0,
                    cards: vec![card("Ks")],
                },
                ZoneCards {
                    zone: Zone::Stock,
                    face_down: 2,
                    cards: vec![card("2d"), card("3d")],
                },
                ZoneCards {
                    zone: Zone::Waste,
                    face_down: 0,
                    cards: vec![],
                },
            ],
        };
        assert_eq!(
            board_text(&board),
            "Piles:\n1    2\n(7h) Ks\n8c\n\nStock (2 cards, next first): 3d 2d\nWaste (0): --"
        );
    }

    #[test]
    fn a_view_hides_face_down_cards_and_the_stock() {
        let view = Board {
            game: GameKind::Indian,
            zones: vec![
                ZoneCards {
                    zone: Zone::Pile(0),
                    face_down: 1,
                    cards: vec![card("7h"), card("8c")],
                },
                ZoneCards {
                    zone: Zone::Stock,
                    face_down: 2,
                    cards: vec![card("2d"), card("3d")],
                },
            ],
        }
        .to_view();
        assert_eq!(view_text(&view), "Piles:\n1\n##\n8c\n\nStock: 2 cards");
    }
}
