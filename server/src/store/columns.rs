//! How both stores write the values they share as columns: statuses and
//! game slugs as text, move logs as MessagePack, and `u64`s as the signed
//! 64-bit integers both databases have. One place, so that the two
//! backends cannot drift apart in what they keep.

use patience_shared::game::GameKind;
use patience_shared::protocol::{BotLevel, PlayerStatus};

use super::StoreError;

/// The status an open daily attempt has in the database.
pub(super) const OPEN: &str = "racing";

pub(super) fn int(value: u64) -> i64 {
    value.cast_signed()
}

pub(super) fn status_name(status: PlayerStatus) -> &'static str {
    match status {
        PlayerStatus::Waiting => "waiting",
        PlayerStatus::Racing => OPEN,
        PlayerStatus::Won => "won",
        PlayerStatus::Resigned => "resigned",
        PlayerStatus::Stuck => "stuck",
        PlayerStatus::OutOfTime => "out_of_time",
        PlayerStatus::Left => "left",
    }
}

pub(super) fn parse_status(name: &str) -> Result<PlayerStatus, StoreError> {
    Ok(match name {
        "waiting" => PlayerStatus::Waiting,
        OPEN => PlayerStatus::Racing,
        "won" => PlayerStatus::Won,
        "resigned" => PlayerStatus::Resigned,
        "stuck" => PlayerStatus::Stuck,
        "out_of_time" => PlayerStatus::OutOfTime,
        "left" => PlayerStatus::Left,
        other => return Err(StoreError::Corrupt(format!("unknown status {other:?}"))),
    })
}

pub(super) fn parse_game(slug: &str) -> Result<GameKind, StoreError> {
    slug.parse()
        .map_err(|_| StoreError::Corrupt(format!("unknown game {slug:?}")))
}

pub(super) fn encode_log(moves: &[String]) -> Vec<u8> {
    // A list of strings always encodes; the empty blob would read back as
    // corrupt rather than pass for an empty log.
    rmp_serde::to_vec(moves).unwrap_or_default()
}

pub(super) fn decode_log(bytes: &[u8]) -> Result<Vec<String>, StoreError> {
    rmp_serde::from_slice(bytes).map_err(|error| StoreError::Corrupt(format!("move log: {error}")))
}

pub(super) fn parse_bot(name: &str) -> Result<BotLevel, StoreError> {
    name.parse()
        .map_err(|_| StoreError::Corrupt(format!("unknown bot level {name:?}")))
}
