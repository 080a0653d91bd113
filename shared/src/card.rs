//! Cards, suits and ranks, one byte each.
//!
//! A [`Card`] packs its suit into the high nibble and its rank (1 = Ace ..
//! 13 = King) into the low nibble, so it is `Copy`, hashes cheaply and fits
//! the fixed-capacity piles of the rules engine and the solver. The two copies
//! of a card in a two-deck game are the same value on purpose: no rule tells
//! them apart, and the solver treats them as interchangeable.
//!
//! Text form (used by the move notation, logs and JSON): rank `A 2 .. 9 T J Q K`
//! followed by suit `c d h s`, e.g. `Th`, `As`. Parsing also accepts `10h` and
//! upper-case suits.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One of the four suits, in bridge order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Suit {
    /// ♣, black.
    Clubs = 0,
    /// ♦, red.
    Diamonds = 1,
    /// ♥, red.
    Hearts = 2,
    /// ♠, black.
    Spades = 3,
}

impl Suit {
    /// All four suits, in bridge order.
    pub const ALL: [Suit; 4] = [Suit::Clubs, Suit::Diamonds, Suit::Hearts, Suit::Spades];

    /// The suit with this index (0..4), bridge order.
    pub const fn from_index(index: u8) -> Suit {
        match index & 3 {
            0 => Suit::Clubs,
            1 => Suit::Diamonds,
            2 => Suit::Hearts,
            _ => Suit::Spades,
        }
    }

    /// Index 0..4 in bridge order.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Whether the suit is red (diamonds, hearts).
    pub const fn is_red(self) -> bool {
        matches!(self, Suit::Diamonds | Suit::Hearts)
    }

    /// The lower-case letter of the notation: `c d h s`.
    pub const fn letter(self) -> char {
        match self {
            Suit::Clubs => 'c',
            Suit::Diamonds => 'd',
            Suit::Hearts => 'h',
            Suit::Spades => 's',
        }
    }

    /// The Unicode suit symbol, for boards shown to people.
    pub const fn symbol(self) -> char {
        match self {
            Suit::Clubs => '♣',
            Suit::Diamonds => '♦',
            Suit::Hearts => '♥',
            Suit::Spades => '♠',
        }
    }

    fn from_letter(letter: char) -> Option<Suit> {
        match letter.to_ascii_lowercase() {
            'c' | '♣' => Some(Suit::Clubs),
            'd' | '♦' => Some(Suit::Diamonds),
            'h' | '♥' => Some(Suit::Hearts),
            's' | '♠' => Some(Suit::Spades),
            _ => None,
        }
    }
}

/// Rank of a card: 1 = Ace, 11 = Jack, 12 = Queen, 13 = King.
pub type Rank = u8;

/// The rank of an Ace.
pub const ACE: Rank = 1;
/// The rank of a King.
pub const KING: Rank = 13;

/// A playing card in one byte: `suit << 4 | rank`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Card(u8);

impl Card {
    /// The card of this suit and rank. `rank` must be in `1..=13`.
    pub const fn new(suit: Suit, rank: Rank) -> Card {
        debug_assert!(rank >= ACE && rank <= KING);
        Card(((suit as u8) << 4) | rank)
    }

    /// The card's suit.
    pub const fn suit(self) -> Suit {
        Suit::from_index(self.0 >> 4)
    }

    /// The card's rank, 1 (Ace) to 13 (King).
    pub const fn rank(self) -> Rank {
        self.0 & 0x0f
    }

    /// A dense index `0..52` (suit-major), for tables and bit sets.
    pub const fn index(self) -> usize {
        (self.0 >> 4) as usize * 13 + (self.0 & 0x0f) as usize - 1
    }

    /// The card with dense index `index` (`0..52`), the inverse of [`Card::index`].
    pub const fn from_index(index: usize) -> Card {
        Card::new(Suit::from_index((index / 13) as u8), (index % 13) as u8 + 1)
    }

    /// The raw byte, stable across versions; handy for hashing.
    pub const fn to_byte(self) -> u8 {
        self.0
    }

    /// Whether the card is red.
    pub const fn is_red(self) -> bool {
        self.suit().is_red()
    }

    /// The card of the same suit one rank higher, if any.
    pub const fn next_higher(self) -> Option<Card> {
        if self.rank() < KING {
            Some(Card(self.0 + 1))
        } else {
            None
        }
    }

    /// The rank character of the notation: `A 2..9 T J Q K`.
    pub const fn rank_char(self) -> char {
        match self.rank() {
            1 => 'A',
            10 => 'T',
            11 => 'J',
            12 => 'Q',
            13 => 'K',
            r => (b'0' + r) as char,
        }
    }

    /// A short form for people: `10♥`, `A♠`.
    pub fn pretty(self) -> String {
        let rank = match self.rank() {
            10 => "10".to_string(),
            _ => self.rank_char().to_string(),
        };
        format!("{rank}{}", self.suit().symbol())
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.rank_char(), self.suit().letter())
    }
}

impl fmt::Debug for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A card's text that is not `rank` + `suit`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a card: {text:?} (expected a rank A 2-9 T J Q K then a suit c d h s, as in Th or 7c)")]
pub struct ParseCardError {
    /// The text that was given.
    pub text: String,
}

impl FromStr for Card {
    type Err = ParseCardError;

    fn from_str(text: &str) -> Result<Card, ParseCardError> {
        let error = || ParseCardError {
            text: text.to_string(),
        };
        let mut chars = text.chars();
        let suit = chars
            .next_back()
            .and_then(Suit::from_letter)
            .ok_or_else(error)?;
        let rank = match chars.as_str().to_ascii_uppercase().as_str() {
            "A" | "1" => 1,
            "T" | "10" => 10,
            "J" => 11,
            "Q" => 12,
            "K" => 13,
            digit if digit.len() == 1 => match digit.as_bytes()[0] {
                b @ b'2'..=b'9' => b - b'0',
                _ => return Err(error()),
            },
            _ => return Err(error()),
        };
        Ok(Card::new(suit, rank))
    }
}

impl Serialize for Card {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = [self.rank_char() as u8, self.suit().letter() as u8];
        // Both bytes are ASCII, so this never fails; the fallback keeps it panic-free.
        serializer.serialize_str(std::str::from_utf8(&text).unwrap_or("??"))
    }
}

impl<'de> Deserialize<'de> for Card {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Card, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips_for_every_card() {
        for index in 0..52 {
            let card = Card::from_index(index);
            assert_eq!(card.index(), index);
            assert_eq!(card.to_string().parse::<Card>(), Ok(card));
        }
    }

    #[test]
    fn parses_the_accepted_spellings() {
        let check = |text: &str, expected: Option<&str>| {
            let parsed = text.parse::<Card>().ok().map(|c| c.to_string());
            assert_eq!(parsed.as_deref(), expected, "{text}");
        };
        check("Th", Some("Th"));
        check("10h", Some("Th"));
        check("10H", Some("Th"));
        check("as", Some("As"));
        check("1s", Some("As"));
        check("K♠", Some("Ks"));
        check("7", None);
        check("11h", None);
        check("0c", None);
        check("Xc", None);
        check("", None);
        check("7x", None);
    }

    #[test]
    fn rank_and_suit_helpers() {
        let seven = Card::new(Suit::Hearts, 7);
        assert_eq!(seven.next_higher(), Some(Card::new(Suit::Hearts, 8)));
        assert_eq!(Card::new(Suit::Hearts, KING).next_higher(), None);
        assert!(seven.is_red());
        assert_eq!(seven.pretty(), "7♥");
        assert_eq!(Card::new(Suit::Spades, 10).pretty(), "10♠");
    }

    #[test]
    fn serde_uses_the_text_form() {
        let card = Card::new(Suit::Diamonds, 12);
        let json = serde_json::to_string(&card).expect("serialize");
        assert_eq!(json, "\"Qd\"");
        assert_eq!(
            serde_json::from_str::<Card>(&json).expect("deserialize"),
            card
        );
        assert!(serde_json::from_str::<Card>("\"Zz\"").is_err());
    }
}
