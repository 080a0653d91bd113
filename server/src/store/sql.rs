//! The [`Store`] written once: every query and its row mapping, over the
//! `Backend` interface that SQLite and PostgreSQL each implement.
//!
//! [`SqlStore`] holds a backend and the node it writes for. What the two
//! databases do differently (transactions, the running race's move, the
//! failover scan, the tally's writes, name folding and row locks) is the
//! backend's; everything else is here, once, in one dialect (see
//! `store/backend.rs`).

use std::collections::{HashMap, HashSet};

use patience_shared::any::AnyGame;
use patience_shared::game::GameKind;
use patience_shared::protocol::{
    self, BotLevel, DaySummary, LeaderboardRow, MoveLog, PlayerRecord, PlayerStatus, Progress,
    RaceRecord, RaceResult, Reveal, Standing, StandingRow, cards_in_order,
};
use patience_shared::rating::Rating;
use patience_shared::replay::final_position;
use patience_shared::rules::Rules as _;

use super::backend::{Backend, Param, Row, count, optional_count};
use super::columns::{OPEN, decode_log, encode_log, int, parse_bot, parse_game, parse_status};
use super::tally::{self, DayAttempt, RecordCounters, Totals};
use super::{
    Attempt, AttemptFinish, AttemptKey, DailyDeal, DaysFound, Eligibility, ExpiredAttempt,
    HistoryRow, Leaderboard, LiveMove, LiveRace, NewRace, PeriodSpan, Player, PlayerId,
    PlayerLookup, Rank, RatedRace, RatingHistory, Standings, Store, StoreError, StoredRating,
    TokenHash,
};
use crate::signup::SavedBucket;

/// A [`Store`] on a `Backend`: the SQLite store
/// ([`SqliteStore`](super::sqlite::SqliteStore)) and the PostgreSQL one
/// ([`PostgresStore`](super::postgres::PostgresStore)) are this over their
/// connections.
#[derive(Debug)]
pub struct SqlStore<B> {
    pub(super) backend: B,
    /// The node whose running races this store saves and claims
    /// ([`Store::set_node`]).
    node: String,
}

/// The leaderboard columns of `daily_attempts a JOIN players p`, in the
/// order [`leaderboard_row`] reads them (the rank comes separately).
const ROW_COLUMNS: &str =
    "p.name, a.status, a.elapsed_ms, a.moves, a.cards_home, a.race_id, a.new_account, a.review";

/// The finished attempts of `daily_attempts a` that rank.
const RANKED: &str = "a.race_id IS NOT NULL AND NOT a.new_account AND NOT a.review";

/// The ranking order of finished attempts: won first (`true` sorts after
/// `false`, hence `DESC`), then less time, then fewer moves; then who
/// finished first, then who registered first. The row-value comparison in
/// [`Store::rank`] must say the same.
const RANKING: &str = "a.won DESC, a.elapsed_ms, a.moves, a.finished_at_ms, a.player_id";

/// The record counters of `player_records r`, in the order
/// [`record_counters`] reads them.
const RECORD_COLUMNS: &str = "r.days_played, r.wins, r.ranked_days, r.best_rank, r.best_time_ms,
    r.play_streak, r.best_play_streak, r.last_played, r.win_streak, r.best_win_streak, r.last_won";

/// The columns of `period_totals t JOIN players p`, in the order
/// [`totals`] reads them.
const TOTALS_COLUMNS: &str = "t.player_id, p.name, t.points, t.days, t.wins, t.win_time_ms";

/// The standings order of `period_totals t`: more points, more wins, less
/// winning time, then the lower id (registered first). The row-value
/// comparison of the own row's rank must say the same.
const STANDING: &str = "t.points DESC, t.wins DESC, t.win_time_ms, t.player_id";

/// The rows of a day's podium.
const PODIUM: u32 = 3;

/// The columns of `ratings r JOIN players p`, in the order
/// [`stored_rating`] reads them.
const RATING_COLUMNS: &str = "r.player_id, p.name, r.mu, r.sigma, r.races, r.last_race_ms";

fn stored_rating(row: &dyn Row) -> Result<StoredRating, StoreError> {
    Ok(StoredRating {
        player: row.uint(0)?,
        name: row.text(1)?,
        rating: Rating {
            mu: row.real(2)?,
            sigma: row.real(3)?,
        },
        races: count(row, 4)?,
        last_race_ms: row.uint(5)?,
    })
}

fn history_row(row: &dyn Row) -> Result<HistoryRow, StoreError> {
    Ok(HistoryRow {
        race_id: row.uint(0)?,
        at_ms: row.uint(1)?,
        place: count(row, 2)?,
        racers: count(row, 3)?,
        before: Rating {
            mu: row.real(4)?,
            sigma: row.real(5)?,
        },
        after: Rating {
            mu: row.real(6)?,
            sigma: row.real(7)?,
        },
    })
}

/// One player's stored rating at `game`, if the player has one.
fn rating_of<B: Backend>(
    backend: &mut B,
    game: GameKind,
    player: PlayerId,
) -> Result<Option<StoredRating>, StoreError> {
    backend.query_opt(
        &format!(
            "SELECT {RATING_COLUMNS} FROM ratings r JOIN players p ON p.id = r.player_id
             WHERE r.player_id = $1 AND r.game = $2"
        ),
        &[Param::uint(player), Param::game(game)],
        stored_rating,
    )
}

/// A player's id and registered name.
fn find_player<B: Backend>(
    backend: &mut B,
    player: PlayerLookup<'_>,
) -> Result<Option<(u64, String)>, StoreError> {
    let read = |row: &dyn Row| Ok((row.uint(0)?, row.text(1)?));
    match player {
        PlayerLookup::Id(id) => backend.query_opt(
            "SELECT id, name FROM players WHERE id = $1",
            &[Param::uint(id)],
            read,
        ),
        PlayerLookup::Name(name) => backend.query_opt(
            &format!("SELECT id, name FROM players WHERE {}", B::NAME_MATCHES),
            &[Param::text(name)],
            read,
        ),
    }
}

fn record_counters(row: &dyn Row) -> Result<RecordCounters, StoreError> {
    Ok(RecordCounters {
        days_played: count(row, 0)?,
        wins: count(row, 1)?,
        ranked_days: count(row, 2)?,
        best_rank: optional_count(row, 3)?,
        best_time_ms: row.optional_int(4)?.map(i64::cast_unsigned),
        play_streak: count(row, 5)?,
        best_play_streak: count(row, 6)?,
        last_played: row.optional_text(7)?,
        win_streak: count(row, 8)?,
        best_win_streak: count(row, 9)?,
        last_won: row.optional_text(10)?,
    })
}

fn leaderboard_row(row: &dyn Row, rank: u32, place: u32) -> Result<LeaderboardRow, StoreError> {
    Ok(LeaderboardRow {
        rank,
        place,
        name: row.text(0)?,
        status: parse_status(&row.text(1)?)?,
        elapsed_ms: row.uint(2)?,
        moves: count(row, 3)?,
        cards_home: count(row, 4)?,
        race_id: row.uint(5)?,
        unranked: Eligibility {
            new_account: row.boolean(6)?,
            review: row.boolean(7)?,
        }
        .unranked(),
    })
}

fn totals(row: &dyn Row) -> Result<Totals, StoreError> {
    Ok(Totals {
        player: row.uint(0)?,
        name: row.text(1)?,
        points: count(row, 2)?,
        days: count(row, 3)?,
        wins: count(row, 4)?,
        win_time_ms: row.uint(5)?,
    })
}

fn player(row: &dyn Row) -> Result<Player, StoreError> {
    Ok(Player {
        id: row.uint(0)?,
        name: row.text(1)?,
        created_at_ms: row.uint(2)?,
    })
}

fn attempt_key(row: &dyn Row) -> Result<AttemptKey, StoreError> {
    Ok(AttemptKey {
        player: row.uint(0)?,
        game: parse_game(&row.text(1)?)?,
        date: row.text(2)?,
    })
}

/// The three parameters that name an attempt: `$1` player, `$2` game,
/// `$3` date.
fn attempt_params(key: &AttemptKey) -> [Param<'_>; 3] {
    [
        Param::uint(key.player),
        Param::game(key.game),
        Param::text(&key.date),
    ]
}

/// A store on `backend`, whose schema is up to date: every player
/// registered before names had keys gets one.
pub(super) fn open<B: Backend>(mut backend: B) -> Result<SqlStore<B>, StoreError> {
    key_older_names(&mut backend)?;
    Ok(SqlStore {
        backend,
        node: String::new(),
    })
}

/// Gives every player registered before names had keys its
/// [`protocol::name_key`], in the order they registered; a name that looks
/// like an earlier one keeps no key (it stays, and nobody else can take the
/// look it shares with the earlier one). Servers starting at once may both
/// try a key: the loser's row stays unkeyed.
fn key_older_names<B: Backend>(backend: &mut B) -> Result<(), StoreError> {
    let unkeyed = backend.query(
        "SELECT id, name FROM players WHERE name_key IS NULL ORDER BY id",
        &[],
        |row| Ok((row.int(0)?, row.text(1)?)),
    )?;
    for (id, name) in unkeyed {
        backend.execute(
            "UPDATE players SET name_key = $1 WHERE id = $2
             AND NOT EXISTS (SELECT 1 FROM players WHERE name_key = $1)",
            &[Param::text(&protocol::name_key(&name)), Param::int(id)],
        )?;
    }
    Ok(())
}

/// Stores a finished race and its seats; its id.
fn insert_race<B: Backend>(backend: &mut B, race: &NewRace) -> Result<u64, StoreError> {
    let reveal = &race.result.reveal;
    let race_id = backend.query_one(
        "INSERT INTO races (game, seed, salt, daily_date, ended_at_ms, open_boards, room_code)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        &[
            Param::game(reveal.game),
            Param::uint(reveal.seed),
            Param::text(&reveal.salt),
            Param::Text(race.daily.as_deref()),
            Param::uint(race.ended_at_ms),
            Param::Bool(race.result.open_boards),
            Param::Text(race.room_code.as_deref()),
        ],
        |row| row.uint(0),
    )?;
    for standing in &race.result.standings {
        let player = race
            .players
            .iter()
            .find(|(seat, _)| *seat == standing.seat)
            .map(|(_, player)| int(*player));
        let log = race
            .result
            .logs
            .iter()
            .find(|log| log.seat == standing.seat)
            .map(|log| log.moves.as_slice())
            .unwrap_or_default();
        let progress = &standing.progress;
        backend.execute(
            "INSERT INTO race_players (race_id, seat, player_id, name, rank, status, moves,
                                       cards_home, elapsed_ms, log, runs_home,
                                       cards_uncovered, stock_turned, bot)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
            &[
                Param::uint(race_id),
                Param::int(standing.seat),
                Param::Int(player),
                Param::text(&standing.name),
                Param::int(standing.rank),
                Param::status(standing.status),
                Param::int(progress.moves),
                Param::int(progress.cards_home),
                Param::uint(progress.elapsed_ms),
                Param::Bytes(&encode_log(log)),
                Param::int(progress.runs_home),
                Param::int(progress.cards_uncovered),
                Param::int(progress.stock_turned),
                Param::Text(standing.bot.map(BotLevel::as_str)),
            ],
        )?;
    }
    Ok(race_id)
}

/// Gives `node` a row among the nodes' leases, if it has none (an ended
/// lease, until the node renews it), so that the failover scan, which
/// starts from the leases, finds its races.
fn enrol_node<B: Backend>(backend: &mut B, node: &str) -> Result<(), StoreError> {
    backend.execute(
        "INSERT INTO live_nodes (node, lease_until_ms) VALUES ($1, 0)
         ON CONFLICT DO NOTHING",
        &[Param::text(node)],
    )?;
    Ok(())
}

/// The running race `code` kept as `body` under the claim `epoch`, with
/// every move recorded since it was saved.
fn read_live_race<B: Backend>(
    backend: &mut B,
    code: &str,
    body: &[u8],
    epoch: u64,
) -> Result<LiveRace, StoreError> {
    let room: LiveRace = rmp_serde::from_slice(body)
        .map_err(|error| StoreError::Corrupt(format!("running race {code}: {error}")))?;
    let kept = backend.query(
        "SELECT seat, idx, text, elapsed_ms, seq FROM live_moves
         WHERE code = $1 ORDER BY seat, idx",
        &[Param::text(code)],
        |row| {
            Ok(LiveMove {
                seat: count(row, 0)?,
                index: count(row, 1)?,
                text: row.text(2)?,
                elapsed_ms: row.uint(3)?,
                seq: row.uint(4)?,
                epoch,
            })
        },
    )?;
    Ok(LiveRace { epoch, ..room }.with_moves(kept)?)
}

impl<B: Backend> Store for SqlStore<B> {
    fn begin(&mut self) -> Result<(), StoreError> {
        self.backend.begin()
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        self.backend.commit()
    }

    fn rollback(&mut self) {
        self.backend.rollback();
    }

    fn savepoint(&mut self) -> Result<(), StoreError> {
        self.backend.savepoint()
    }

    fn release_savepoint(&mut self) -> Result<(), StoreError> {
        self.backend.release_savepoint()
    }

    fn rollback_to_savepoint(&mut self) -> Result<(), StoreError> {
        self.backend.rollback_to_savepoint()
    }

    fn connection_lost(&self) -> bool {
        self.backend.connection_lost()
    }

    fn reconnect(&mut self) -> Result<(), StoreError> {
        self.backend.reconnect()
    }

    fn server_secret(&mut self, fresh: [u8; 32]) -> Result<[u8; 32], StoreError> {
        self.backend.execute(
            "INSERT INTO meta (key, value) VALUES ('daily_secret', $1) ON CONFLICT DO NOTHING",
            &[Param::Bytes(fresh.as_slice())],
        )?;
        let stored = self.backend.query_one(
            "SELECT value FROM meta WHERE key = 'daily_secret'",
            &[],
            |row| row.bytes(0),
        )?;
        stored
            .try_into()
            .map_err(|_| StoreError::Corrupt("the daily secret is not 32 bytes".to_string()))
    }

    fn register(
        &mut self,
        name: &str,
        token: &TokenHash,
        now_ms: u64,
    ) -> Result<Player, StoreError> {
        // A duplicate (name, look or token) inserts nothing instead of
        // failing, which in PostgreSQL would abort the transaction.
        let inserted = self.backend.query_opt(
            "INSERT INTO players (name, token_hash, created_at_ms, name_key)
             VALUES ($1, $2, $3, $4)
             ON CONFLICT DO NOTHING RETURNING id",
            &[
                Param::text(name),
                Param::Bytes(token.as_slice()),
                Param::uint(now_ms),
                Param::text(&protocol::name_key(name)),
            ],
            |row| row.uint(0),
        )?;
        let Some(id) = inserted else {
            return Err(StoreError::NameTaken(name.to_string()));
        };
        self.backend.execute(
            "INSERT INTO player_tokens (token_hash, player_id, created_at_ms) VALUES ($1, $2, $3)",
            &[
                Param::Bytes(token.as_slice()),
                Param::uint(id),
                Param::uint(now_ms),
            ],
        )?;
        Ok(Player {
            id,
            name: name.to_string(),
            created_at_ms: now_ms,
        })
    }

    fn player_by_token(&mut self, token: &TokenHash) -> Result<Option<Player>, StoreError> {
        self.backend.query_opt(
            "SELECT p.id, p.name, p.created_at_ms
             FROM player_tokens t JOIN players p ON p.id = t.player_id
             WHERE t.token_hash = $1",
            &[Param::Bytes(token.as_slice())],
            player,
        )
    }

    fn revoke_token(&mut self, token: &TokenHash) -> Result<bool, StoreError> {
        let deleted = self.backend.execute(
            "DELETE FROM player_tokens WHERE token_hash = $1",
            &[Param::Bytes(token.as_slice())],
        )?;
        Ok(deleted > 0)
    }

    fn save_registration_bucket(&mut self, bucket: &SavedBucket) -> Result<(), StoreError> {
        self.backend.execute(
            "INSERT INTO registration_buckets (source, tokens, updated_ms) VALUES ($1, $2, $3)
             ON CONFLICT (source) DO UPDATE
             SET tokens = excluded.tokens, updated_ms = excluded.updated_ms",
            &[
                Param::text(&bucket.source.to_string()),
                Param::Real(bucket.tokens),
                Param::uint(bucket.updated_ms),
            ],
        )?;
        Ok(())
    }

    fn registration_buckets(&mut self, limit: usize) -> Result<Vec<SavedBucket>, StoreError> {
        let rows = self.backend.query(
            "SELECT source, tokens, updated_ms FROM registration_buckets
             ORDER BY updated_ms DESC LIMIT $1",
            &[Param::int(i64::try_from(limit).unwrap_or(i64::MAX))],
            |row| Ok((row.text(0)?, row.real(1)?, row.uint(2)?)),
        )?;
        Ok(rows
            .into_iter()
            .filter_map(|(source, tokens, updated_ms)| {
                Some(SavedBucket {
                    source: source.parse().ok()?,
                    tokens,
                    updated_ms,
                })
            })
            .collect())
    }

    fn save_sign_in_code(
        &mut self,
        player: PlayerId,
        code: &TokenHash,
        now_ms: u64,
        expires_at_ms: u64,
    ) -> Result<(), StoreError> {
        // Expired codes are kept no longer than until the next code is
        // asked for: nothing else needs a sweeper.
        self.backend.execute(
            "DELETE FROM sign_in_codes WHERE player_id = $1 OR expires_at_ms <= $2",
            &[Param::uint(player), Param::uint(now_ms)],
        )?;
        // A clash of two codes' hashes inserts nothing rather than fail;
        // the code is then simply never redeemable.
        self.backend.execute(
            "INSERT INTO sign_in_codes (code_hash, player_id, expires_at_ms) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING",
            &[
                Param::Bytes(code.as_slice()),
                Param::uint(player),
                Param::uint(expires_at_ms),
            ],
        )?;
        Ok(())
    }

    fn redeem_sign_in_code(
        &mut self,
        code: &TokenHash,
        token: &TokenHash,
        now_ms: u64,
    ) -> Result<Option<Player>, StoreError> {
        let redeemed = self.backend.query_opt(
            "DELETE FROM sign_in_codes WHERE code_hash = $1 AND expires_at_ms > $2
             RETURNING player_id",
            &[Param::Bytes(code.as_slice()), Param::uint(now_ms)],
            |row| row.int(0),
        )?;
        let Some(player) = redeemed else {
            return Ok(None);
        };
        self.backend.execute(
            "INSERT INTO player_tokens (token_hash, player_id, created_at_ms) VALUES ($1, $2, $3)",
            &[
                Param::Bytes(token.as_slice()),
                Param::int(player),
                Param::uint(now_ms),
            ],
        )?;
        self.player_by_token(token)
    }

    fn daily_deal(&mut self, game: GameKind, date: &str) -> Result<Option<DailyDeal>, StoreError> {
        self.backend.query_opt(
            "SELECT seed, salt FROM daily_deals WHERE game = $1 AND date = $2",
            &[Param::game(game), Param::text(date)],
            |row| {
                Ok(DailyDeal {
                    game,
                    date: date.to_string(),
                    seed: row.uint(0)?,
                    salt: row.text(1)?,
                })
            },
        )
    }

    fn save_daily_deal(&mut self, deal: &DailyDeal) -> Result<DailyDeal, StoreError> {
        // The next statement sees a deal another server committed
        // meanwhile (PostgreSQL's READ COMMITTED): the first one found
        // stays.
        self.backend.execute(
            "INSERT INTO daily_deals (game, date, seed, salt) VALUES ($1, $2, $3, $4)
             ON CONFLICT DO NOTHING",
            &[
                Param::game(deal.game),
                Param::text(&deal.date),
                Param::uint(deal.seed),
                Param::text(&deal.salt),
            ],
        )?;
        self.daily_deal(deal.game, &deal.date)?
            .ok_or_else(|| StoreError::Corrupt("a saved daily deal is missing".to_string()))
    }

    fn attempt(&mut self, key: &AttemptKey) -> Result<Option<Attempt>, StoreError> {
        let params = attempt_params(key);
        let header = self.backend.query_opt(
            "SELECT started_at_ms, status, moves, cards_home, elapsed_ms, finished_at_ms, race_id,
                    new_account, review
             FROM daily_attempts WHERE player_id = $1 AND game = $2 AND date = $3",
            &params,
            |row| {
                let started_at_ms = row.uint(0)?;
                let finish = match row.optional_int(6)? {
                    Some(race_id) => Some(AttemptFinish {
                        status: parse_status(&row.text(1)?)?,
                        progress: Progress {
                            moves: count(row, 2)?,
                            cards_home: count(row, 3)?,
                            elapsed_ms: row.uint(4)?,
                            ..Progress::default()
                        },
                        finished_at_ms: row.uint(5)?,
                        race_id: race_id.cast_unsigned(),
                        eligibility: Eligibility {
                            new_account: row.boolean(7)?,
                            review: row.boolean(8)?,
                        },
                    }),
                    None => None,
                };
                Ok((started_at_ms, finish))
            },
        )?;
        let Some((started_at_ms, finish)) = header else {
            return Ok(None);
        };
        let moves = self.backend.query(
            "SELECT text, at_ms FROM daily_moves
             WHERE player_id = $1 AND game = $2 AND date = $3 ORDER BY idx",
            &params,
            |row| Ok((row.text(0)?, row.optional_int(1)?.map(i64::cast_unsigned))),
        )?;
        let (moves, move_times_ms) = moves.into_iter().unzip();
        Ok(Some(Attempt {
            started_at_ms,
            moves,
            move_times_ms,
            finish,
        }))
    }

    fn begin_attempt(&mut self, key: &AttemptKey, started_at_ms: u64) -> Result<(), StoreError> {
        let [player, game, date] = attempt_params(key);
        let inserted = self.backend.execute(
            "INSERT INTO daily_attempts (player_id, game, date, started_at_ms, status)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            &[
                player,
                game,
                date,
                Param::uint(started_at_ms),
                Param::text(OPEN),
            ],
        )?;
        if inserted == 1 {
            Ok(())
        } else {
            Err(StoreError::AttemptExists)
        }
    }

    fn record_move(
        &mut self,
        key: &AttemptKey,
        index: u32,
        text: &str,
        at_ms: u64,
    ) -> Result<(), StoreError> {
        let params = attempt_params(key);
        let [player, game, date] = params;
        let inserted = self.backend.execute(
            "INSERT INTO daily_moves (player_id, game, date, idx, text, at_ms)
             SELECT player_id, game, date, CAST($4 AS BIGINT), CAST($5 AS TEXT),
                    CAST($6 AS BIGINT)
             FROM daily_attempts
             WHERE player_id = $1 AND game = $2 AND date = $3 AND race_id IS NULL
             ON CONFLICT DO NOTHING",
            &[
                player,
                game,
                date,
                Param::int(index),
                Param::text(text),
                Param::uint(at_ms),
            ],
        )?;
        if inserted == 1 {
            return Ok(());
        }
        // Nothing inserted: the attempt is not open, or the move is there.
        let open = self.backend.query_opt(
            "SELECT player_id FROM daily_attempts
             WHERE player_id = $1 AND game = $2 AND date = $3 AND race_id IS NULL",
            &params,
            |_| Ok(()),
        )?;
        match open {
            Some(()) => Err(StoreError::MoveConflict(index)),
            None => Err(StoreError::AttemptNotOpen),
        }
    }

    fn finish_attempt(
        &mut self,
        key: &AttemptKey,
        status: PlayerStatus,
        progress: Progress,
        race: &NewRace,
        eligibility: Eligibility,
    ) -> Result<u64, StoreError> {
        self.backend.atomically(|backend| {
            let race_id = insert_race(backend, race)?;
            let [player, game, date] = attempt_params(key);
            let updated = backend.execute(
                "UPDATE daily_attempts
                 SET status = $4, won = $5, moves = $6, cards_home = $7, elapsed_ms = $8,
                     finished_at_ms = $9, race_id = $10, new_account = $11, review = $12
                 WHERE player_id = $1 AND game = $2 AND date = $3 AND race_id IS NULL",
                &[
                    player,
                    game,
                    date,
                    Param::status(status),
                    Param::Bool(status == PlayerStatus::Won),
                    Param::int(progress.moves),
                    Param::int(progress.cards_home),
                    Param::uint(progress.elapsed_ms),
                    Param::uint(race.ended_at_ms),
                    Param::uint(race_id),
                    Param::Bool(eligibility.new_account),
                    Param::Bool(eligibility.review),
                ],
            )?;
            if updated == 1 {
                Ok(race_id)
            } else {
                Err(StoreError::AttemptNotOpen)
            }
        })
    }

    fn attempt_of_race(&mut self, race_id: u64) -> Result<Option<AttemptKey>, StoreError> {
        self.backend.query_opt(
            "SELECT player_id, game, date FROM daily_attempts WHERE race_id = $1",
            &[Param::uint(race_id)],
            attempt_key,
        )
    }

    fn expired_attempts(&mut self, started_by_ms: u64) -> Result<Vec<ExpiredAttempt>, StoreError> {
        let rows = self.backend.query(
            "SELECT a.player_id, a.game, a.date, a.started_at_ms, p.name, p.created_at_ms
             FROM daily_attempts a JOIN players p ON p.id = a.player_id
             WHERE a.race_id IS NULL AND a.started_at_ms <= $1",
            &[Param::uint(started_by_ms)],
            |row| Ok((attempt_key(row)?, row.uint(3)?, row.text(4)?, row.uint(5)?)),
        )?;
        let mut expired = Vec::with_capacity(rows.len());
        for (key, started_at_ms, name, registered_at_ms) in rows {
            let (moves, move_times_ms) = self
                .attempt(&key)?
                .map(|attempt| (attempt.moves, attempt.move_times_ms))
                .unwrap_or_default();
            expired.push(ExpiredAttempt {
                key,
                name,
                registered_at_ms,
                started_at_ms,
                moves,
                move_times_ms,
            });
        }
        Ok(expired)
    }

    fn winning_times(
        &mut self,
        game: GameKind,
        date: &str,
        limit: u32,
    ) -> Result<(u32, Vec<u64>), StoreError> {
        let finishers = self.backend.query_one(
            &format!(
                "SELECT COUNT(*) FROM daily_attempts a WHERE a.game = $1 AND a.date = $2 AND {RANKED}"
            ),
            &[Param::game(game), Param::text(date)],
            |row| count(row, 0),
        )?;
        let times = self.backend.query(
            &format!(
                "SELECT a.elapsed_ms FROM daily_attempts a
                 WHERE a.game = $1 AND a.date = $2 AND {RANKED} AND a.won
                 ORDER BY {RANKING} LIMIT $3"
            ),
            &[Param::game(game), Param::text(date), Param::int(limit)],
            |row| row.uint(0),
        )?;
        Ok((finishers, times))
    }

    fn rank(&mut self, key: &AttemptKey) -> Result<Option<Rank>, StoreError> {
        // `NOT won` sorts a win first, as `RANKING`'s `won DESC` does.
        self.backend.query_opt(
            "SELECT
                (SELECT COUNT(*) FROM daily_attempts b
                 WHERE b.game = a.game AND b.date = a.date AND b.race_id IS NOT NULL
                   AND NOT b.new_account AND NOT b.review
                   AND (NOT b.won, b.elapsed_ms, b.moves, b.finished_at_ms, b.player_id)
                     < (NOT a.won, a.elapsed_ms, a.moves, a.finished_at_ms, a.player_id)),
                (SELECT COUNT(*) FROM daily_attempts c
                 WHERE c.game = a.game AND c.date = a.date AND c.race_id IS NOT NULL
                   AND NOT c.new_account AND NOT c.review),
                (SELECT COUNT(*) FROM daily_attempts d
                 WHERE d.game = a.game AND d.date = a.date AND d.race_id IS NOT NULL
                   AND (NOT d.won, d.elapsed_ms, d.moves, d.finished_at_ms, d.player_id)
                     < (NOT a.won, a.elapsed_ms, a.moves, a.finished_at_ms, a.player_id))
             FROM daily_attempts a
             WHERE a.player_id = $1 AND a.game = $2 AND a.date = $3 AND a.race_id IS NOT NULL",
            &attempt_params(key),
            |row| {
                Ok(Rank {
                    rank: count::<u32>(row, 0)? + 1,
                    finishers: count(row, 1)?,
                    place: count::<u32>(row, 2)? + 1,
                })
            },
        )
    }

    fn leaderboard(
        &mut self,
        game: GameKind,
        date: &str,
        limit: u32,
        player: Option<PlayerId>,
    ) -> Result<Leaderboard, StoreError> {
        let day = [Param::game(game), Param::text(date)];
        let (finished, playing, finishers): (u32, u32, u32) = self.backend.query_one(
            &format!(
                "SELECT COUNT(a.race_id), COUNT(*) - COUNT(a.race_id),
                        COUNT(*) FILTER (WHERE {RANKED})
                 FROM daily_attempts a WHERE a.game = $1 AND a.date = $2"
            ),
            &day,
            |row| Ok((count(row, 0)?, count(row, 1)?, count(row, 2)?)),
        )?;
        // Every finished attempt, in the ranking's order: one off the
        // ranking stands where it would have ranked, marked, and its rank
        // is that place (the ranked attempts before it, and one).
        let mut place = 0;
        let rows = self.backend.query(
            &format!(
                "SELECT {ROW_COLUMNS},
                        SUM(CASE WHEN {RANKED} THEN 1 ELSE 0 END)
                            OVER (ORDER BY {RANKING} ROWS UNBOUNDED PRECEDING)
                 FROM daily_attempts a JOIN players p ON p.id = a.player_id
                 WHERE a.game = $1 AND a.date = $2 AND a.race_id IS NOT NULL
                 ORDER BY {RANKING} LIMIT $3"
            ),
            &[day[0], day[1], Param::int(limit)],
            |row| {
                place += 1;
                let ranked_so_far: u32 = count(row, 8)?;
                let line = leaderboard_row(row, ranked_so_far, place)?;
                Ok(match line.unranked {
                    Some(_) => LeaderboardRow {
                        rank: ranked_so_far + 1,
                        ..line
                    },
                    None => line,
                })
            },
        )?;
        let own = match player {
            Some(player) => {
                let key = AttemptKey {
                    player,
                    game,
                    date: date.to_string(),
                };
                match self.rank(&key)? {
                    Some(Rank { rank, place, .. }) => self.backend.query_opt(
                        &format!(
                            "SELECT {ROW_COLUMNS} FROM daily_attempts a
                             JOIN players p ON p.id = a.player_id
                             WHERE a.player_id = $1 AND a.game = $2 AND a.date = $3"
                        ),
                        &attempt_params(&key),
                        |row| leaderboard_row(row, rank, place),
                    )?,
                    None => None,
                }
            }
            None => None,
        };
        Ok(Leaderboard {
            finishers,
            unranked: finished.saturating_sub(finishers),
            playing,
            rows,
            own,
        })
    }

    fn tally_day(&mut self, game: GameKind, date: &str) -> Result<bool, StoreError> {
        self.backend.atomically(|backend| {
            let day = [Param::game(game), Param::text(date)];
            // A second server tallying the same day waits here on the
            // first one's row, then finds it and does nothing.
            let marked = backend.execute(
                "INSERT INTO daily_tallies (game, date, finished, finishers, winners)
                 VALUES ($1, $2, 0, 0, 0) ON CONFLICT DO NOTHING",
                &day,
            )?;
            if marked == 0 {
                return Ok(false);
            }
            let newest_before = backend.query_one(
                "SELECT MAX(date) FROM daily_tallies WHERE game = $1 AND date <> $2",
                &day,
                |row| row.optional_text(0),
            )?;
            let attempts = backend.query(
                &format!(
                    "SELECT a.player_id, a.won, a.elapsed_ms, NOT a.new_account AND NOT a.review
                     FROM daily_attempts a
                     WHERE a.game = $1 AND a.date = $2 AND a.race_id IS NOT NULL
                     ORDER BY {RANKING}"
                ),
                &day,
                |row| {
                    Ok(DayAttempt {
                        player: row.uint(0)?,
                        won: row.boolean(1)?,
                        elapsed_ms: row.uint(2)?,
                        ranked: row.boolean(3)?,
                    })
                },
            )?;
            let before = backend
                .query(
                    &format!(
                        "SELECT {RECORD_COLUMNS}, r.player_id FROM player_records r
                         JOIN daily_attempts a ON a.player_id = r.player_id AND a.game = r.game
                         WHERE a.game = $1 AND a.date = $2 AND a.race_id IS NOT NULL"
                    ),
                    &day,
                    |row| Ok((row.uint(11)?, record_counters(row)?)),
                )?
                .into_iter()
                .collect::<HashMap<_, _>>();
            let tally = tally::tally_day(date, newest_before.as_deref(), &attempts, &before);
            backend.write_tally(game, date, &tally)?;
            backend.execute(
                "UPDATE daily_tallies SET finished = $3, finishers = $4, winners = $5
                 WHERE game = $1 AND date = $2",
                &[
                    day[0],
                    day[1],
                    Param::int(tally.finished),
                    Param::int(tally.finishers),
                    Param::int(tally.winners),
                ],
            )?;
            Ok(true)
        })
    }

    fn untallied_days(
        &mut self,
        closed_through: &str,
    ) -> Result<Vec<(GameKind, String)>, StoreError> {
        self.backend.query(
            "SELECT d.game, d.date FROM daily_deals d
             WHERE d.date <= $1 AND NOT EXISTS (
                 SELECT 1 FROM daily_tallies t WHERE t.game = d.game AND t.date = d.date)
             ORDER BY d.game, d.date",
            &[Param::text(closed_through)],
            |row| Ok((parse_game(&row.text(0)?)?, row.text(1)?)),
        )
    }

    fn daily_days(
        &mut self,
        game: GameKind,
        before: Option<&str>,
        limit: u32,
    ) -> Result<DaysFound, StoreError> {
        let mut days = self.backend.query(
            "SELECT t.date, t.finishers, t.winners, d.seed, d.salt
             FROM daily_tallies t JOIN daily_deals d ON d.game = t.game AND d.date = t.date
             WHERE t.game = $1 AND t.finished > 0
               AND (CAST($2 AS TEXT) IS NULL OR t.date < CAST($2 AS TEXT))
             ORDER BY t.date DESC LIMIT $3",
            &[
                Param::game(game),
                Param::Text(before),
                Param::int(i64::from(limit) + 1),
            ],
            |row| {
                Ok(DaySummary {
                    date: row.text(0)?,
                    finishers: count(row, 1)?,
                    winners: count(row, 2)?,
                    podium: Vec::new(),
                    reveal: Reveal {
                        game,
                        seed: row.uint(3)?,
                        salt: row.text(4)?,
                    },
                })
            },
        )?;
        let more = days.len() > limit as usize;
        days.truncate(limit as usize);
        for day in &mut days {
            day.podium = self.backend.query(
                &format!(
                    "SELECT {ROW_COLUMNS}, a.final_rank FROM daily_attempts a
                     JOIN players p ON p.id = a.player_id
                     WHERE a.game = $1 AND a.date = $2 AND a.final_rank IS NOT NULL
                     ORDER BY a.final_rank LIMIT {PODIUM}"
                ),
                &[Param::game(game), Param::text(&day.date)],
                |row| {
                    let rank = count(row, 8)?;
                    Ok(LeaderboardRow {
                        unranked: None,
                        ..leaderboard_row(row, rank, rank)?
                    })
                },
            )?;
        }
        Ok(DaysFound { days, more })
    }

    fn player_record(
        &mut self,
        player: PlayerLookup<'_>,
    ) -> Result<Option<PlayerRecord>, StoreError> {
        let Some((id, name)) = find_player(&mut self.backend, player)? else {
            return Ok(None);
        };
        let through =
            self.backend
                .query_one("SELECT MAX(date) FROM daily_tallies", &[], |row| {
                    row.optional_text(0)
                })?;
        let counters = self.backend.query(
            &format!(
                "SELECT {RECORD_COLUMNS}, r.game,
                        (SELECT MAX(t.date) FROM daily_tallies t WHERE t.game = r.game)
                 FROM player_records r WHERE r.player_id = $1"
            ),
            &[Param::uint(id)],
            |row| {
                Ok((
                    record_counters(row)?,
                    parse_game(&row.text(11)?)?,
                    row.optional_text(12)?,
                ))
            },
        )?;
        let mut games = Vec::with_capacity(counters.len());
        for (counters, game, game_through) in counters {
            let median_rank = self.backend.query_opt(
                "SELECT final_rank FROM daily_attempts
                 WHERE player_id = $1 AND game = $2 AND final_rank IS NOT NULL
                 ORDER BY final_rank LIMIT 1 OFFSET $3",
                &[
                    Param::uint(id),
                    Param::game(game),
                    Param::int(tally::lower_median_offset(counters.ranked_days)),
                ],
                |row| count(row, 0),
            )?;
            let median_time_ms = self.backend.query_opt(
                "SELECT a.elapsed_ms FROM daily_attempts a
                 JOIN daily_tallies t ON t.game = a.game AND t.date = a.date
                 WHERE a.player_id = $1 AND a.game = $2 AND a.race_id IS NOT NULL AND a.won
                 ORDER BY a.elapsed_ms LIMIT 1 OFFSET $3",
                &[
                    Param::uint(id),
                    Param::game(game),
                    Param::int(tally::lower_median_offset(counters.wins)),
                ],
                |row| row.uint(0),
            )?;
            games.push(tally::game_record(
                game,
                counters,
                game_through.as_deref(),
                median_rank,
                median_time_ms,
            ));
        }
        tally::sort_games(&mut games);
        Ok(Some(PlayerRecord {
            name,
            through,
            games,
        }))
    }

    fn standings(
        &mut self,
        game: GameKind,
        span: &PeriodSpan,
        today: &str,
        limit: u32,
        player: Option<PlayerId>,
    ) -> Result<Standings, StoreError> {
        let period = tally::period_name(span.period);
        let tallied: HashSet<String> = self
            .backend
            .query(
                "SELECT date FROM daily_tallies WHERE game = $1 AND date BETWEEN $2 AND $3",
                &[
                    Param::game(game),
                    Param::text(&span.first_date),
                    Param::text(&span.last_date),
                ],
                |row| row.text(0),
            )?
            .into_iter()
            .collect();
        let mut live = Vec::new();
        let ranking = format!(
            "SELECT a.player_id, p.name, a.won, a.elapsed_ms
             FROM daily_attempts a JOIN players p ON p.id = a.player_id
             WHERE a.game = $1 AND a.date = $2 AND {RANKED}
             ORDER BY {RANKING}"
        );
        for date in span.dates_through(today) {
            if tallied.contains(&date) {
                continue;
            }
            let ranked =
                self.backend
                    .query(&ranking, &[Param::game(game), Param::text(&date)], |row| {
                        Ok((row.uint(0)?, row.text(1)?, row.boolean(2)?, row.uint(3)?))
                    })?;
            live.extend(tally::live_additions(&ranked));
        }
        let key = [
            Param::game(game),
            Param::text(period),
            Param::text(&span.key),
        ];
        if !live.is_empty() {
            // Live points can lift anyone: every line of the period is read
            // and ranked again.
            let tallied = self.backend.query(
                &format!(
                    "SELECT {TOTALS_COLUMNS} FROM period_totals t
                     JOIN players p ON p.id = t.player_id
                     WHERE t.game = $1 AND t.period_kind = $2 AND t.period_key = $3"
                ),
                &key,
                totals,
            )?;
            let (players, rows, own) = tally::rank_standings(tallied, live, limit, player);
            return Ok(Standings { players, rows, own });
        }
        // Nothing live: the top rows come straight off the standings index.
        let players = self.backend.query_one(
            "SELECT COUNT(*) FROM period_totals
             WHERE game = $1 AND period_kind = $2 AND period_key = $3",
            &key,
            |row| count(row, 0),
        )?;
        let mut rank = 0;
        let rows: Vec<StandingRow> = self.backend.query(
            &format!(
                "SELECT {TOTALS_COLUMNS} FROM period_totals t
                 JOIN players p ON p.id = t.player_id
                 WHERE t.game = $1 AND t.period_kind = $2 AND t.period_key = $3
                 ORDER BY {STANDING} LIMIT $4"
            ),
            &[key[0], key[1], key[2], Param::int(limit)],
            |row| {
                rank += 1;
                Ok(totals(row)?.row(rank))
            },
        )?;
        let own = match player {
            Some(player) => self.backend.query_opt(
                &format!(
                    "SELECT {TOTALS_COLUMNS},
                        (SELECT COUNT(*) FROM period_totals b
                         WHERE b.game = t.game AND b.period_kind = t.period_kind
                           AND b.period_key = t.period_key
                           AND (-b.points, -b.wins, b.win_time_ms, b.player_id)
                             < (-t.points, -t.wins, t.win_time_ms, t.player_id))
                     FROM period_totals t JOIN players p ON p.id = t.player_id
                     WHERE t.game = $1 AND t.period_kind = $2 AND t.period_key = $3
                       AND t.player_id = $4"
                ),
                &[key[0], key[1], key[2], Param::uint(player)],
                |row| Ok(totals(row)?.row(count::<u32>(row, 6)? + 1)),
            )?,
            None => None,
        };
        Ok(Standings { players, rows, own })
    }

    fn record_race(&mut self, race: &NewRace) -> Result<u64, StoreError> {
        self.backend
            .atomically(|backend| insert_race(backend, race))
    }

    fn ratings_of(
        &mut self,
        game: GameKind,
        players: &[PlayerId],
    ) -> Result<Vec<StoredRating>, StoreError> {
        let mut found = Vec::with_capacity(players.len());
        for player in players {
            found.extend(rating_of(&mut self.backend, game, *player)?);
        }
        Ok(found)
    }

    fn record_ratings(&mut self, race: &RatedRace) -> Result<bool, StoreError> {
        self.backend.atomically(|backend| {
            let rated_before = backend.query_one(
                "SELECT EXISTS (SELECT 1 FROM rating_history WHERE race_id = $1)",
                &[Param::uint(race.race_id)],
                |row| row.boolean(0),
            )?;
            if rated_before {
                return Ok(false);
            }
            let racers = i64::try_from(race.changes.len()).unwrap_or(i64::MAX);
            for change in &race.changes {
                backend.execute(
                    "INSERT INTO rating_history (race_id, player_id, game, at_ms, place, racers,
                                                 mu_before, sigma_before, mu_after, sigma_after)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                    &[
                        Param::uint(race.race_id),
                        Param::uint(change.player),
                        Param::game(race.game),
                        Param::uint(race.ended_at_ms),
                        Param::int(change.place),
                        Param::int(racers),
                        Param::Real(change.before.mu),
                        Param::Real(change.before.sigma),
                        Param::Real(change.after.mu),
                        Param::Real(change.after.sigma),
                    ],
                )?;
                backend.execute(
                    "INSERT INTO ratings (player_id, game, mu, sigma, races, last_race_ms)
                     VALUES ($1, $2, $3, $4, 1, $5)
                     ON CONFLICT (player_id, game) DO UPDATE SET
                         mu = excluded.mu, sigma = excluded.sigma,
                         races = ratings.races + 1, last_race_ms = excluded.last_race_ms",
                    &[
                        Param::uint(change.player),
                        Param::game(race.game),
                        Param::Real(change.after.mu),
                        Param::Real(change.after.sigma),
                        Param::uint(race.ended_at_ms),
                    ],
                )?;
            }
            Ok(true)
        })
    }

    fn ratings_since(
        &mut self,
        game: GameKind,
        since_ms: u64,
    ) -> Result<Vec<StoredRating>, StoreError> {
        self.backend.query(
            &format!(
                "SELECT {RATING_COLUMNS} FROM ratings r JOIN players p ON p.id = r.player_id
                 WHERE r.game = $1 AND r.last_race_ms >= $2"
            ),
            &[Param::game(game), Param::uint(since_ms)],
            stored_rating,
        )
    }

    fn rating_history(
        &mut self,
        player: PlayerLookup<'_>,
        game: GameKind,
        limit: u32,
    ) -> Result<Option<RatingHistory>, StoreError> {
        let Some((id, name)) = find_player(&mut self.backend, player)? else {
            return Ok(None);
        };
        let current = rating_of(&mut self.backend, game, id)?;
        let rows = self.backend.query(
            "SELECT race_id, at_ms, place, racers, mu_before, sigma_before, mu_after, sigma_after
             FROM rating_history WHERE player_id = $1 AND game = $2
             ORDER BY at_ms DESC, race_id DESC LIMIT $3",
            &[Param::uint(id), Param::game(game), Param::int(limit)],
            history_row,
        )?;
        Ok(Some(RatingHistory {
            name,
            current,
            rows,
        }))
    }

    fn race_of_room(&mut self, code: &str) -> Result<Option<u64>, StoreError> {
        self.backend.query_opt(
            "SELECT id FROM races WHERE room_code = $1 ORDER BY id DESC LIMIT 1",
            &[Param::text(code)],
            |row| row.uint(0),
        )
    }

    fn race(&mut self, race_id: u64) -> Result<Option<RaceRecord>, StoreError> {
        let header = self.backend.query_opt(
            "SELECT game, seed, salt, daily_date, ended_at_ms, open_boards FROM races WHERE id = $1",
            &[Param::uint(race_id)],
            |row| {
                Ok((
                    Reveal {
                        game: parse_game(&row.text(0)?)?,
                        seed: row.uint(1)?,
                        salt: row.text(2)?,
                    },
                    row.optional_text(3)?,
                    row.uint(4)?,
                    row.boolean(5)?,
                ))
            },
        )?;
        let Some((reveal, daily, ended_at_ms, open_boards)) = header else {
            return Ok(None);
        };
        let seats = self.backend.query(
            "SELECT seat, name, rank, status, moves, cards_home, elapsed_ms, log,
                    runs_home, cards_uncovered, stock_turned, bot
             FROM race_players WHERE race_id = $1 ORDER BY rank",
            &[Param::uint(race_id)],
            |row| {
                let seat = count(row, 0)?;
                let standing = Standing {
                    rank: count(row, 2)?,
                    seat,
                    name: row.text(1)?,
                    status: parse_status(&row.text(3)?)?,
                    progress: Progress {
                        moves: count(row, 4)?,
                        cards_home: count(row, 5)?,
                        // Not a column: counted below from the move log.
                        cards_in_order: 0,
                        runs_home: count(row, 8)?,
                        cards_uncovered: count(row, 9)?,
                        stock_turned: count(row, 10)?,
                        elapsed_ms: row.uint(6)?,
                    },
                    bot: row
                        .optional_text(11)?
                        .as_deref()
                        .map(parse_bot)
                        .transpose()?,
                };
                let log = MoveLog {
                    seat,
                    moves: decode_log(&row.bytes(7)?)?,
                };
                Ok((standing, log))
            },
        )?;
        let (mut standings, mut logs): (Vec<_>, Vec<_>) = seats.into_iter().unzip();
        logs.sort_by_key(|log| log.seat);
        // The race counted each board's cards in order as it ended; the
        // deal and the log give that board back, so the record says the
        // same as `race_ended` did without a column of its own.
        for standing in &mut standings {
            if let Some(log) = logs.iter().find(|log| log.seat == standing.seat) {
                let deal = AnyGame::deal(reveal.game, reveal.seed);
                let dealt = deal.view();
                let board = final_position(deal, &log.moves);
                standing.progress.cards_in_order = cards_in_order(&dealt, &board.view());
            }
        }
        Ok(Some(RaceRecord {
            race_id,
            daily,
            ended_at_ms,
            result: RaceResult {
                race_id: Some(race_id),
                standings,
                reveal,
                logs,
                open_boards,
            },
        }))
    }

    fn save_live_race(&mut self, room: &LiveRace) -> Result<(), StoreError> {
        let body = rmp_serde::to_vec_named(room)
            .map_err(|error| StoreError::Corrupt(format!("running race {}: {error}", room.code)))?;
        let node = &self.node;
        self.backend.atomically(|backend| {
            let saved = backend.execute(
                "INSERT INTO live_races (code, body, epoch, owner) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (code) DO UPDATE SET body = excluded.body, owner = excluded.owner
                 WHERE live_races.epoch = excluded.epoch",
                &[
                    Param::text(&room.code),
                    Param::Bytes(&body),
                    Param::uint(room.epoch),
                    Param::text(node),
                ],
            )?;
            if saved == 0 {
                return Err(StoreError::Fenced {
                    code: room.code.clone(),
                });
            }
            enrol_node(backend, node)?;
            backend.execute(
                "DELETE FROM proved_deals WHERE game = $1 AND seed = $2",
                &[Param::game(room.game), Param::uint(room.seed)],
            )?;
            for seat in &room.seats {
                backend.execute(
                    "DELETE FROM live_moves WHERE code = $1 AND seat = $2 AND idx < $3",
                    &[
                        Param::text(&room.code),
                        Param::int(seat.seat),
                        Param::int(i64::try_from(seat.log.len()).unwrap_or(i64::MAX)),
                    ],
                )?;
            }
            Ok(())
        })
    }

    fn record_live_move(&mut self, code: &str, kept: &LiveMove) -> Result<(), StoreError> {
        self.backend.record_live_move(code, kept)
    }

    fn end_live_race(&mut self, code: &str, epoch: u64) -> Result<(), StoreError> {
        self.backend.atomically(|backend| {
            let claim = backend.query_opt(
                &format!(
                    "SELECT epoch FROM live_races WHERE code = $1{}",
                    B::LOCK_ROW
                ),
                &[Param::text(code)],
                |row| row.uint(0),
            )?;
            if claim.is_some_and(|claim| claim != epoch) {
                return Err(StoreError::Fenced {
                    code: code.to_string(),
                });
            }
            backend.execute(
                "DELETE FROM live_moves WHERE code = $1",
                &[Param::text(code)],
            )?;
            backend.execute(
                "DELETE FROM live_races WHERE code = $1",
                &[Param::text(code)],
            )?;
            Ok(())
        })
    }

    fn claim_live_race(&mut self, code: &str) -> Result<Option<LiveRace>, StoreError> {
        let node = &self.node;
        self.backend.atomically(|backend| {
            let claimed = backend.query_opt(
                "UPDATE live_races SET epoch = epoch + 1, owner = $2 WHERE code = $1
                 RETURNING body, epoch",
                &[Param::text(code), Param::text(node)],
                |row| Ok((row.bytes(0)?, row.uint(1)?)),
            )?;
            let Some((body, epoch)) = claimed else {
                return Ok(None);
            };
            enrol_node(backend, node)?;
            read_live_race(backend, code, &body, epoch).map(Some)
        })
    }

    fn set_node(&mut self, node: &str) {
        node.clone_into(&mut self.node);
    }

    fn renew_node_lease(&mut self, node: &str, until_ms: u64) -> Result<(), StoreError> {
        self.backend.execute(
            "INSERT INTO live_nodes (node, lease_until_ms) VALUES ($1, $2)
             ON CONFLICT (node) DO UPDATE SET lease_until_ms = excluded.lease_until_ms",
            &[Param::text(node), Param::uint(until_ms)],
        )?;
        Ok(())
    }

    fn orphaned_races(&mut self, now_ms: u64) -> Result<Vec<String>, StoreError> {
        self.backend.orphaned_races(now_ms)
    }

    fn keeps_live_race(&mut self, code: &str) -> Result<bool, StoreError> {
        Ok(self
            .backend
            .query_opt(
                "SELECT code FROM live_races WHERE code = $1",
                &[Param::text(code)],
                |_| Ok(()),
            )?
            .is_some())
    }

    fn live_races(&mut self) -> Result<Vec<LiveRace>, StoreError> {
        let rooms = self.backend.query(
            "SELECT code, body, epoch FROM live_races ORDER BY code",
            &[],
            |row| Ok((row.text(0)?, row.bytes(1)?, row.uint(2)?)),
        )?;
        rooms
            .into_iter()
            .map(|(code, body, epoch)| read_live_race(&mut self.backend, &code, &body, epoch))
            .collect()
    }

    fn live_race_of_token(&mut self, token: &TokenHash) -> Result<Option<String>, StoreError> {
        let rooms = self.backend.query(
            "SELECT code, body FROM live_races ORDER BY code",
            &[],
            |row| Ok((row.text(0)?, row.bytes(1)?)),
        )?;
        for (code, body) in rooms {
            if LiveRace::body_holds_token(&code, &body, token)? {
                return Ok(Some(code));
            }
        }
        Ok(None)
    }

    fn keep_proved_deal(
        &mut self,
        owner: &str,
        game: GameKind,
        seed: u64,
    ) -> Result<(), StoreError> {
        // A deal kept twice (two nodes drew the same seed) stays once, with
        // its first owner: it is dealt once either way.
        self.backend.execute(
            "INSERT INTO proved_deals (owner, game, seed) VALUES ($1, $2, $3)
             ON CONFLICT (game, seed) DO NOTHING",
            &[Param::text(owner), Param::game(game), Param::uint(seed)],
        )?;
        Ok(())
    }

    fn proved_deals(&mut self, owner: &str) -> Result<Vec<(GameKind, u64)>, StoreError> {
        self.backend.query(
            "SELECT game, seed FROM proved_deals WHERE owner = $1 ORDER BY id",
            &[Param::text(owner)],
            |row| Ok((parse_game(&row.text(0)?)?, row.uint(1)?)),
        )
    }
}
