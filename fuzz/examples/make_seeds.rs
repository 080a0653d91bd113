//! Writes the committed seed inputs under `fuzz/seeds/`, one folder per
//! target: real protocol frames for `decode`, the notation examples of
//! `docs/NOTATION.md` and real legal moves for `notation`, short move
//! sequences for `rules`. Run from `fuzz/` with `cargo run --example
//! make_seeds`; it replaces the folders' contents, and its output is
//! deterministic, so running it again changes nothing unless the code did.

use std::fs;
use std::path::Path;

use patience_fuzz::positions;
use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, ClientMessage, ErrorCode, Limits, PROTOCOL_VERSION, Progress, RoomOptions, ServerMessage,
};
use patience_shared::rules::{Effect, MoveError, Rules, Zone};

fn main() -> std::io::Result<()> {
    write("decode", decode_seeds())?;
    write("notation", notation_seeds())?;
    write("rules", rules_seeds())?;
    Ok(())
}

/// Replaces `seeds/{target}/` with one file per input, named by its index.
fn write(target: &str, inputs: Vec<Vec<u8>>) -> std::io::Result<()> {
    let folder = Path::new("seeds").join(target);
    if folder.exists() {
        fs::remove_dir_all(&folder)?;
    }
    fs::create_dir_all(&folder)?;
    for (index, input) in inputs.iter().enumerate() {
        fs::write(folder.join(format!("{index:03}")), input)?;
    }
    println!("{target}: {} inputs", inputs.len());
    Ok(())
}

fn decode_seeds() -> Vec<Vec<u8>> {
    let client = [
        ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name: "ada".into(),
        },
        ClientMessage::CreateRoom {
            game: GameKind::VirginiaReel,
            max_players: 4,
            public: true,
            options: RoomOptions {
                undo_allowed: true,
                time_limit_ms: Some(600_000),
                open_boards: false,
                best_of: None,
                rated: false,
            },
            bots: Vec::new(),
        },
        ClientMessage::JoinRoom {
            code: "K7PQ2M".into(),
        },
        ClientMessage::QuickRace {
            game: GameKind::Indian,
        },
        ClientMessage::Spectate {
            code: "K7PQ2M".into(),
        },
        ClientMessage::Leave,
        ClientMessage::StartEarly,
        ClientMessage::Move {
            text: "7h>4".into(),
            seat: Some(1),
        },
        ClientMessage::Move {
            text: "B5>A2/C1/r4".into(),
            seat: None,
        },
        ClientMessage::Undo,
        ClientMessage::Resign,
        ClientMessage::Resume {
            token: "0123456789abcdef".into(),
            last_seq: 17,
        },
        ClientMessage::Register { name: "ada".into() },
        ClientMessage::Authenticate {
            token: "0123456789abcdef".into(),
        },
        ClientMessage::DailyPlay {
            game: GameKind::Midshipman,
        },
        ClientMessage::Leaderboard {
            game: GameKind::ThreeBlindMice,
            date: Some("2026-12-01".into()),
            limit: Some(10),
        },
        ClientMessage::Replay { race_id: 42 },
    ];
    let deal = AnyGame::deal(GameKind::ThreeBlindMice, 1).view();
    let server = [
        ServerMessage::Welcome {
            version: PROTOCOL_VERSION,
            server: "patience-server 0.1.0".into(),
            limits: Limits {
                max_message_bytes: 4096,
                messages_per_second: 20,
                burst: 40,
            },
        },
        ServerMessage::Error {
            code: ErrorCode::MalformedMessage,
            message: "not a message".into(),
        },
        ServerMessage::MoveRejected {
            text: "3>4".into(),
            code: ErrorCode::IllegalMove,
            reason: Some(MoveError::EmptySource {
                zone: Zone::Pile(2),
            }),
            message: "pile 3 is empty".into(),
        },
        ServerMessage::MoveAccepted {
            seq: 9,
            text: "7h>4".into(),
            effects: vec![Effect::Dealt { count: 8 }],
            board: deal.clone(),
            progress: Progress::measure(&deal, &deal, 1, 1500),
        },
        ServerMessage::Progress {
            seq: 10,
            seat: 2,
            progress: Progress::default(),
            text: None,
            board: None,
        },
        ServerMessage::Stuck { seq: 11 },
        ServerMessage::ShuttingDown {
            message: "restarting".into(),
        },
    ];
    let mut inputs: Vec<Vec<u8>> = client.iter().map(protocol::encode).collect();
    inputs.extend(server.iter().map(protocol::encode));
    inputs
}

/// The examples of `docs/NOTATION.md`, and every legal move of a few
/// positions of each game in canonical form, each after the row byte of a
/// position it belongs to.
fn notation_seeds() -> Vec<Vec<u8>> {
    let examples = [
        "7h>4",
        "Ks>2",
        "c1>4",
        "Qd>4",
        "3:2>4",
        "3>4",
        "3:6>4",
        "10h>4",
        "K♠>2",
        "3>7",
        "3>f",
        "w>7",
        "w>f",
        "s",
        "r3>B4",
        "B5>A2/r4",
        "B5>A2/C1/r4",
        "B5>x/r4",
        "A3~B6",
        "B6~A3",
        "d",
    ];
    let mut inputs: Vec<Vec<u8>> = examples
        .iter()
        .map(|text| [&[0u8][..], text.as_bytes()].concat())
        .collect();
    let mut legal = Vec::new();
    for row in [0u8, 37, 140, 255] {
        for state in positions::row(usize::from(row)) {
            state.legal_moves(&mut legal);
            for &mv in legal.iter().take(4) {
                inputs.push([&[row][..], state.format_move(mv).as_bytes()].concat());
            }
        }
    }
    inputs
}

/// For each game, a few starting rows with a run of legal-move picks, an
/// undo, a move in notation and a move as MessagePack.
fn rules_seeds() -> Vec<Vec<u8>> {
    let mut inputs = Vec::new();
    let mut legal = Vec::new();
    for (game_index, _) in GameKind::ALL.iter().enumerate() {
        for row in [0u8, 9, 100, 200] {
            let state = &positions::row(usize::from(row))[game_index];
            let mut input = vec![game_index as u8, row];
            input.extend([0, 1, 2, 3, 0xC0, 5, 7]);
            state.legal_moves(&mut legal);
            if let Some(&mv) = legal.first() {
                let text = state.format_move(mv);
                if text.len() <= 0x0F {
                    input.push(0xE0 | text.len() as u8);
                    input.extend(text.as_bytes());
                }
                let packed = rmp_serde::to_vec(&mv).unwrap_or_default();
                if packed.len() <= 0x0F {
                    input.push(0xF0 | packed.len() as u8);
                    input.extend(&packed);
                }
            }
            input.extend([11, 0xC1, 0xC2, 13, 17]);
            inputs.push(input);
        }
    }
    inputs
}
