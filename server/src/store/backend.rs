//! The small interface a database implements to run the store's SQL,
//! written once in [`sql`](super::sql) against it, as ripgrep writes its
//! search once against its `Matcher` trait.
//!
//! A [`Backend`] runs a statement with [`Param`]s and hands each row of the
//! answer to a reader as a [`Row`]; it brackets transactions, savepoints
//! and atomic calls; and it keeps what truly differs between SQLite and
//! PostgreSQL: the name comparison, row locks, the running race's move
//! (one round trip on PostgreSQL), the failover scan, and the tally's
//! writes (one statement over arrays on PostgreSQL, a prepared row at a
//! time on SQLite). Its DDL, migrations and the mapping of its errors stay
//! in its own module.
//!
//! The shared SQL is PostgreSQL's dialect where the two differ only in
//! spelling: `$1` placeholders (the SQLite backend reads them as `?1`),
//! `CAST(… AS …)` rather than `::`, `ON CONFLICT DO NOTHING`, `RETURNING`,
//! `FILTER (WHERE …)` and `NOT won` on booleans, all of which SQLite has.

use super::StoreError;
use super::tally::DayTally;
use super::{LiveMove, PlayerStatus};
use patience_shared::game::GameKind;

/// A value bound to a statement's placeholder. Integers are 64-bit (every
/// count and id is `BIGINT` in PostgreSQL, and an unsigned 64-bit value is
/// kept with the same bits, see [`int`](super::columns::int)).
#[derive(Clone, Copy, Debug)]
pub(super) enum Param<'a> {
    /// An integer, or NULL.
    Int(Option<i64>),
    /// A boolean (0 or 1 in SQLite).
    Bool(bool),
    /// A text, or NULL.
    Text(Option<&'a str>),
    /// Bytes.
    Bytes(&'a [u8]),
    /// A floating point number.
    Real(f64),
}

impl<'a> Param<'a> {
    /// An integer.
    pub(super) fn int(value: impl Into<i64>) -> Param<'a> {
        Param::Int(Some(value.into()))
    }

    /// An unsigned 64-bit value, kept with the same bits.
    pub(super) fn uint(value: u64) -> Param<'a> {
        Param::Int(Some(value.cast_signed()))
    }

    /// A text.
    pub(super) fn text(value: &'a str) -> Param<'a> {
        Param::Text(Some(value))
    }

    /// A game, by its slug.
    pub(super) fn game(game: GameKind) -> Param<'a> {
        Param::Text(Some(game.slug()))
    }

    /// A status, by its stored name.
    pub(super) fn status(status: PlayerStatus) -> Param<'a> {
        Param::Text(Some(super::columns::status_name(status)))
    }
}

/// One row of an answer, its columns read by index (from 0).
pub(super) trait Row {
    /// An integer column; `None` for NULL.
    fn optional_int(&self, index: usize) -> Result<Option<i64>, StoreError>;
    /// A text column; `None` for NULL.
    fn optional_text(&self, index: usize) -> Result<Option<String>, StoreError>;
    /// A boolean column (an integer in SQLite).
    fn boolean(&self, index: usize) -> Result<bool, StoreError>;
    /// A bytes column.
    fn bytes(&self, index: usize) -> Result<Vec<u8>, StoreError>;
    /// A floating point column.
    fn real(&self, index: usize) -> Result<f64, StoreError>;

    /// An integer column that may not be NULL.
    fn int(&self, index: usize) -> Result<i64, StoreError> {
        self.optional_int(index)?.ok_or_else(|| null(index))
    }
    /// An unsigned 64-bit column, kept with the same bits.
    fn uint(&self, index: usize) -> Result<u64, StoreError> {
        Ok(self.int(index)?.cast_unsigned())
    }
    /// A text column that may not be NULL.
    fn text(&self, index: usize) -> Result<String, StoreError> {
        self.optional_text(index)?.ok_or_else(|| null(index))
    }
}

/// Implements [`Row`] for a client's row type through its typed getter
/// (`get` in rusqlite, `try_get` in postgres), whose errors become
/// [`StoreError`]s.
macro_rules! row_through {
    ($row:ty, $get:ident) => {
        impl $crate::store::backend::Row for $row {
            fn optional_int(&self, index: usize) -> Result<Option<i64>, StoreError> {
                Ok(self.$get(index)?)
            }

            fn optional_text(&self, index: usize) -> Result<Option<String>, StoreError> {
                Ok(self.$get(index)?)
            }

            fn boolean(&self, index: usize) -> Result<bool, StoreError> {
                Ok(self.$get(index)?)
            }

            fn bytes(&self, index: usize) -> Result<Vec<u8>, StoreError> {
                Ok(self.$get(index)?)
            }

            fn real(&self, index: usize) -> Result<f64, StoreError> {
                Ok(self.$get(index)?)
            }
        }
    };
}
pub(super) use row_through;

fn null(index: usize) -> StoreError {
    StoreError::Corrupt(format!("column {} is NULL", index + 1))
}

/// An integer column read back into its narrower Rust type.
pub(super) fn count<T: TryFrom<i64>>(row: &dyn Row, index: usize) -> Result<T, StoreError> {
    let value = row.int(index)?;
    narrow(value, index)
}

/// An integer column that may be NULL, read back into its narrower type.
pub(super) fn optional_count<T: TryFrom<i64>>(
    row: &dyn Row,
    index: usize,
) -> Result<Option<T>, StoreError> {
    row.optional_int(index)?
        .map(|value| narrow(value, index))
        .transpose()
}

fn narrow<T: TryFrom<i64>>(value: i64, index: usize) -> Result<T, StoreError> {
    T::try_from(value).map_err(|_| {
        StoreError::Corrupt(format!("{value} is out of range in column {}", index + 1))
    })
}

/// A database the store's SQL runs on: a connection and what of its
/// dialect differs. Every call runs on the database thread.
pub(super) trait Backend: Send {
    /// The condition that finds the player named `$1` whatever its case, as
    /// the name's unique index folds it.
    const NAME_MATCHES: &'static str;
    /// What follows a `SELECT` of a running race's claim to lock its row
    /// until the transaction ends, so that a claim made meanwhile by
    /// another server waits for it ("" where one writer at a time holds the
    /// whole database).
    const LOCK_ROW: &'static str;

    /// Runs a statement; how many rows it changed.
    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, StoreError>;
    /// Runs a query and reads each row of its answer with `read`.
    fn query<T>(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        read: impl FnMut(&dyn Row) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError>;
    /// The first row of a query's answer, read with `read`, if it has one.
    fn query_opt<T>(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        read: impl FnOnce(&dyn Row) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        let mut read = Some(read);
        let mut rows = self.query(sql, params, |row| match read.take() {
            Some(read) => read(row).map(Some),
            None => Ok(None),
        })?;
        Ok(if rows.is_empty() {
            None
        } else {
            rows.swap_remove(0)
        })
    }
    /// The one row of a query that always answers one (an aggregate).
    fn query_one<T>(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        read: impl FnOnce(&dyn Row) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.query_opt(sql, params, read)?
            .ok_or_else(|| StoreError::Corrupt("a query of one row answered none".to_string()))
    }

    /// Runs `work` so that it keeps all of its writes or none, and so that
    /// its failure leaves the transaction usable.
    fn atomically<T>(
        &mut self,
        work: impl FnOnce(&mut Self) -> Result<T, StoreError>,
    ) -> Result<T, StoreError>;

    /// [`Store::begin`](super::Store::begin).
    fn begin(&mut self) -> Result<(), StoreError>;
    /// [`Store::commit`](super::Store::commit).
    fn commit(&mut self) -> Result<(), StoreError>;
    /// [`Store::rollback`](super::Store::rollback).
    fn rollback(&mut self);
    /// [`Store::savepoint`](super::Store::savepoint).
    fn savepoint(&mut self) -> Result<(), StoreError>;
    /// [`Store::release_savepoint`](super::Store::release_savepoint).
    fn release_savepoint(&mut self) -> Result<(), StoreError>;
    /// [`Store::rollback_to_savepoint`](super::Store::rollback_to_savepoint).
    fn rollback_to_savepoint(&mut self) -> Result<(), StoreError>;
    /// [`Store::connection_lost`](super::Store::connection_lost).
    fn connection_lost(&self) -> bool {
        false
    }
    /// [`Store::reconnect`](super::Store::reconnect).
    fn reconnect(&mut self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Keeps one move of the running race `code` under its claim, as
    /// [`Store::record_live_move`](super::Store::record_live_move) says:
    /// the one call made per move, so each backend makes it as cheap as it
    /// can. [`StoreError::Fenced`] if no race is kept under that claim.
    fn record_live_move(&mut self, code: &str, kept: &LiveMove) -> Result<(), StoreError>;
    /// The codes of the running races of nodes whose lease ended before
    /// `now_ms`, by code, reading neither a move nor a race of a node
    /// whose lease runs
    /// ([`Store::orphaned_races`](super::Store::orphaned_races)).
    fn orphaned_races(&mut self, now_ms: u64) -> Result<Vec<String>, StoreError>;
    /// Writes what the tally of `date` found: final ranks, period totals
    /// and player records (the day's counts are the caller's).
    fn write_tally(
        &mut self,
        game: GameKind,
        date: &str,
        tally: &DayTally,
    ) -> Result<(), StoreError>;
}
