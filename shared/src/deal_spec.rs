//! Checks the deal specification of `docs/PROTOCOL.md` ("The deal, exactly")
//! against the code, so the document cannot drift: the test vectors are read
//! out of the document itself, and the layout text is built from
//! `AnyGame::deal(game, seed)` exactly as the document defines it.
//!
//! `docs/deal_reference.py` is an independent implementation written from the
//! document alone; it is not run here, to keep the tests Rust-only.

use rand_chacha::ChaCha20Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use sha2::{Digest, Sha256};

use crate::any::AnyGame;
use crate::deck::{chacha_key, shuffled_pack};
use crate::game::GameKind;
use crate::rules::{Board, Rules, Zone};

/// The document's text between the deal subsection's heading and the next
/// section, which is all these tests read.
fn deal_section() -> &'static str {
    let document = include_str!("../../docs/PROTOCOL.md");
    let start = document
        .find("### The deal, exactly")
        .expect("docs/PROTOCOL.md has a subsection \"The deal, exactly\"");
    let rest = &document[start..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    &rest[..end]
}

/// The cells of every table row of the deal subsection with `columns` cells,
/// backticks stripped, whose cell `seed_column` is a seed: header and rule
/// rows are skipped that way.
fn table_rows(columns: usize, seed_column: usize) -> Vec<Vec<String>> {
    deal_section()
        .lines()
        .filter_map(|line| line.trim().strip_prefix('|')?.strip_suffix('|'))
        .map(|row| {
            row.split('|')
                .map(|cell| cell.trim().trim_matches('`').to_string())
                .collect::<Vec<_>>()
        })
        .filter(|cells| cells.len() == columns)
        .filter(|cells| cells[seed_column].parse::<u64>().is_ok())
        .collect()
}

/// A zone's name in the layout text: the names of `docs/NOTATION.md`.
fn zone_name(zone: Zone) -> String {
    match zone {
        Zone::Pile(i) => format!("{}", i + 1),
        Zone::Cell(i) => format!("c{}", i + 1),
        Zone::Stock => "s".to_string(),
        Zone::Waste => "w".to_string(),
        Zone::Foundation(i) => format!("f{}", i + 1),
        Zone::Reserve(i) => format!("r{}", i + 1),
        Zone::Position(i) => format!("{}{}", char::from(b'A' + i / 8), i % 8 + 1),
        Zone::Discard => "x".to_string(),
    }
}

/// The layout text of a board as the document defines it: one line per zone
/// in the game's zone order, `name:` then ` card` for each card bottom first,
/// a face-down card prefixed with `#`, every line ended by LF.
fn layout_text(board: &Board) -> String {
    let mut text = String::new();
    for zone in &board.zones {
        text.push_str(&zone_name(zone.zone));
        text.push(':');
        for (index, card) in zone.cards.iter().enumerate() {
            text.push(' ');
            if index < usize::from(zone.face_down) {
                text.push('#');
            }
            text.push_str(&card.to_string());
        }
        text.push('\n');
    }
    text
}

/// Lower-case hex of the SHA-256 of `text`.
fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The deal vectors: every game has some, and each row matches the code.
#[test]
fn the_documented_deal_vectors_match_the_code() {
    let check = |game: &str, seed: &str, first: &str, last: &str, digest: &str| {
        let kind: GameKind = game.parse().expect("a game name in the table");
        let seed: u64 = seed.parse().expect("a decimal u64 seed in the table");
        let pack = shuffled_pack(kind.decks(), seed);
        let context = format!("{game} seed {seed}");
        assert_eq!(
            pack.first().map(ToString::to_string).as_deref(),
            Some(first),
            "P[0] of {context}"
        );
        assert_eq!(
            pack.last().map(ToString::to_string).as_deref(),
            Some(last),
            "P[last] of {context}"
        );
        let text = layout_text(&AnyGame::deal(kind, seed).board());
        assert_eq!(sha256_hex(&text), digest, "layout of {context}:\n{text}");
    };
    let rows = table_rows(5, 1);
    for game in GameKind::ALL {
        let count = rows.iter().filter(|row| row[0] == game.slug()).count();
        assert!(
            count >= 3,
            "docs/PROTOCOL.md gives {count} deal vectors for {game}"
        );
    }
    for row in &rows {
        check(&row[0], &row[1], &row[2], &row[3], &row[4]);
    }
}

/// The ChaCha20 vectors: the key the seed becomes, and the `next_u32` words
/// at the start of the stream and at the start of its second block.
#[test]
fn the_documented_chacha_vectors_match_the_code() {
    let check = |seed: &str, key: &str, block0: &str, block1: &str| {
        let seed: u64 = seed.parse().expect("a decimal u64 seed in the table");
        let key_bytes = chacha_key(seed);
        let key_hex: String = key_bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(key_hex, key, "key of seed {seed}");
        let mut rng = ChaCha20Rng::from_seed(key_bytes);
        let words: Vec<String> = (0..20).map(|_| format!("{:08x}", rng.next_u32())).collect();
        assert_eq!(words[..4].join(" "), block0, "words 1-4 of seed {seed}");
        assert_eq!(words[16..].join(" "), block1, "words 17-20 of seed {seed}");
    };
    let rows = table_rows(4, 0);
    assert!(
        !rows.is_empty(),
        "docs/PROTOCOL.md gives no ChaCha20 vector"
    );
    for row in &rows {
        check(&row[0], &row[1], &row[2], &row[3]);
    }
}

/// The layout text of one small, known deal, written out in full, so the
/// definition itself (names, `#`, spaces, line ends) is pinned too.
#[test]
fn layout_text_follows_the_definition() {
    let text = layout_text(&AnyGame::deal(GameKind::ThreeBlindMice, 0).board());
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    assert_eq!(lines.len(), 16, "{text}");
    assert!(lines.iter().all(|line| line.ends_with('\n')));
    assert!(lines[0].starts_with("1: 5c "), "{text}");
    assert!(lines[7].starts_with("8: #"), "{text}");
    assert_eq!(lines[15], "f4:\n");
}
