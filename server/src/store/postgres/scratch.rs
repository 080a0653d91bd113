//! Test support, compiled only into tests (`cfg(test)`) and into builds
//! that ask for the `test-support` feature (the end-to-end tests and the
//! PostgreSQL benchmark): a throwaway database per test on the server that
//! `tests/with-services` starts. The production server has none of it.

use std::str::FromStr as _;

use postgres::NoTls;

use super::StoreError;
use crate::store::backend::Row as _;

/// A database of its own for one test, created on the PostgreSQL server
/// that `PATIENCE_TEST_POSTGRES_URL` names (`tests/with-services` starts
/// one and sets it) and dropped with this value. For tests only.
#[derive(Debug)]
pub struct ScratchDatabase {
    admin_url: String,
    name: String,
    url: String,
}

/// The variable that names the test server.
pub const TEST_URL_VARIABLE: &str = "PATIENCE_TEST_POSTGRES_URL";

impl ScratchDatabase {
    /// Creates a database with a unique name on the test server. Panics,
    /// naming `tests/with-services`, if no test server is given: a test of
    /// PostgreSQL without one must fail, not pass unseen.
    pub fn create() -> ScratchDatabase {
        let admin_url = std::env::var(TEST_URL_VARIABLE).unwrap_or_else(|_| {
            panic!(
                "{TEST_URL_VARIABLE} is not set, so the PostgreSQL tests have no server: \
                 run the tests through tests/with-services, which starts a throwaway \
                 PostgreSQL and sets it (e.g. `tests/with-services cargo test --workspace`)"
            )
        });
        ScratchDatabase::create_on(admin_url)
    }

    /// [`ScratchDatabase::create`] on the server `admin_url` names (a
    /// database there that this may create others beside), for benchmarks
    /// that bring their own server.
    pub fn create_on(admin_url: String) -> ScratchDatabase {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let serial = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.subsec_nanos())
            .unwrap_or_default();
        let name = format!("patience_test_{}_{serial}_{nanos}", std::process::id());
        let url = with_dbname(&admin_url, &name);
        let sql = format!("CREATE DATABASE {name}");
        if let Err(error) = admin(&admin_url, &sql) {
            panic!("cannot create a test database on {TEST_URL_VARIABLE}: {error}");
        }
        ScratchDatabase {
            admin_url,
            name,
            url,
        }
    }

    /// The URL of the database.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Ends every session connected to the database, as a restart of the
    /// server or a cut network would: how many there were.
    pub fn terminate_sessions(&self) -> Result<u64, StoreError> {
        let sql = format!(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE datname = '{}' AND pid <> pg_backend_pid()",
            self.name
        );
        std::thread::scope(|scope| {
            scope
                .spawn(|| -> Result<u64, StoreError> {
                    let mut client = postgres::Config::from_str(&self.admin_url)?.connect(NoTls)?;
                    let row = client.query_one(&sql, &[])?;
                    row.uint(0)
                })
                .join()
                .unwrap_or_else(|_| Err(StoreError::Panicked))
        })
    }
}

impl Drop for ScratchDatabase {
    fn drop(&mut self) {
        // FORCE: a server process killed by its test may still hold a
        // connection for a moment.
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        if let Err(error) = admin(&self.admin_url, &sql) {
            eprintln!("cannot drop the test database {}: {error}", self.name);
        }
    }
}

/// Runs `sql` on a connection of its own, on a thread of its own: the
/// client's runtime may not start inside a test's async runtime.
fn admin(url: &str, sql: &str) -> Result<(), StoreError> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| -> Result<(), StoreError> {
                let mut client = postgres::Config::from_str(url)?.connect(NoTls)?;
                client.batch_execute(sql)?;
                Ok(())
            })
            .join()
            .unwrap_or_else(|_| Err(StoreError::Panicked))
    })
}

/// `url` with its database name replaced by `name`: in a URL the path, in
/// `key=value` pairs one more pair (the last of a key wins).
pub fn with_dbname(url: &str, name: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return format!("{url} dbname={name}");
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let query = tail.find('?').map(|at| &tail[at..]).unwrap_or_default();
    format!("{scheme}://{authority}/{name}{query}")
}
