//! The games Patience Race deals, by name.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One of the games the service deals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GameKind {
    /// One deck, Scorpion family: ten piles, three of them partly face down, two give-only cells.
    ThreeBlindMice,
    /// Two decks, Forty Thieves family: ten piles of three, one face down.
    Indian,
    /// Indian's sister deal: nine piles of four, two face down.
    Midshipman,
    /// Two decks: 24 row positions built up by threes on 2s, 3s and 4s.
    VirginiaReel,
}

impl GameKind {
    /// Every game, in the order menus list them.
    pub const ALL: [GameKind; 4] = [
        GameKind::ThreeBlindMice,
        GameKind::Indian,
        GameKind::Midshipman,
        GameKind::VirginiaReel,
    ];

    /// The command-line and wire name, e.g. `three-blind-mice`.
    pub const fn slug(self) -> &'static str {
        match self {
            GameKind::ThreeBlindMice => "three-blind-mice",
            GameKind::Indian => "indian",
            GameKind::Midshipman => "midshipman",
            GameKind::VirginiaReel => "virginia-reel",
        }
    }

    /// The name shown to people.
    pub const fn title(self) -> &'static str {
        match self {
            GameKind::ThreeBlindMice => "Three Blind Mice",
            GameKind::Indian => "Indian",
            GameKind::Midshipman => "Midshipman",
            GameKind::VirginiaReel => "Virginia Reel",
        }
    }

    /// How many 52-card decks the game uses.
    pub const fn decks(self) -> usize {
        match self {
            GameKind::ThreeBlindMice => 1,
            _ => 2,
        }
    }

    /// How many cards the game uses: 52 or 104.
    pub const fn card_count(self) -> usize {
        self.decks() * 52
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.slug())
    }
}

/// A game name that names no game.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown game {name:?}: expected three-blind-mice (tbm), indian, midshipman or virginia-reel (vr)"
)]
pub struct UnknownGame {
    /// The name that was given.
    pub name: String,
}

impl FromStr for GameKind {
    type Err = UnknownGame;

    fn from_str(name: &str) -> Result<GameKind, UnknownGame> {
        let normalized = name.trim().to_ascii_lowercase().replace(['_', ' '], "-");
        match normalized.as_str() {
            "three-blind-mice" | "tbm" => Ok(GameKind::ThreeBlindMice),
            "indian" => Ok(GameKind::Indian),
            "midshipman" => Ok(GameKind::Midshipman),
            "virginia-reel" | "vr" => Ok(GameKind::VirginiaReel),
            _ => Err(UnknownGame {
                name: name.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_short_forms_parse() {
        let check = |text: &str, expected: Option<GameKind>| {
            assert_eq!(text.parse::<GameKind>().ok(), expected, "{text}");
        };
        for game in GameKind::ALL {
            check(game.slug(), Some(game));
        }
        check("tbm", Some(GameKind::ThreeBlindMice));
        check("VR", Some(GameKind::VirginiaReel));
        check("Three Blind Mice", Some(GameKind::ThreeBlindMice));
        check("virginia_reel", Some(GameKind::VirginiaReel));
        check("spider", None);
    }
}
