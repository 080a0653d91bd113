//! The open-files limit, fitted at start to the sockets the server may hold.
//!
//! Every socket is a file descriptor. Under a soft limit below what
//! `max_connections` needs (1,024 is a common default), `accept` fails with
//! `EMFILE` once the limit is reached, and a client beyond it hangs in its
//! handshake instead of being told `server_full`. So at start the server
//! raises its soft limit as far as it needs, up to the hard limit (which an
//! unprivileged process may not pass). If even the hard limit is too low,
//! it lowers its own cap on connections to what fits and says so: then the
//! cap, not the kernel, turns clients away, with `server_full`.

/// Descriptors kept for everything but the players' and spectators'
/// sockets: standard streams, the listeners, the runtime's epoll and
/// wakers, the SQLite file with its journal and shared memory, PostgreSQL
/// and Redis connections, and a margin. The sockets over the cap (told
/// `server_full`) and the admin port's are counted on top of this.
pub const BASE_RESERVED: u64 = 64;

/// The soft and hard limits on open files; `None` is unlimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The limit in force, which a process may raise up to `hard`.
    pub soft: Option<u64>,
    /// The ceiling.
    pub hard: Option<u64>,
}

/// What fitting the limit decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fit {
    /// The soft limit to set, if it must be raised.
    pub raise_to: Option<u64>,
    /// The cap on connections that fits under the limit: `max_connections`
    /// unless the hard limit is too low.
    pub max_connections: usize,
}

/// Decides, without touching the process, how to fit `max_connections`
/// sockets plus `reserved` other descriptors under `limits`.
pub fn fit(max_connections: usize, reserved: u64, limits: Limits) -> Fit {
    let wanted = u64::try_from(max_connections)
        .unwrap_or(u64::MAX)
        .saturating_add(reserved);
    let enough = |limit: Option<u64>| limit.is_none_or(|limit| limit >= wanted);
    if enough(limits.soft) {
        return Fit {
            raise_to: None,
            max_connections,
        };
    }
    if enough(limits.hard) {
        return Fit {
            raise_to: Some(wanted),
            max_connections,
        };
    }
    // Both are finite here: an unlimited hard limit is always enough.
    let ceiling = limits.hard.unwrap_or(wanted);
    let fits = usize::try_from(ceiling.saturating_sub(reserved)).unwrap_or(usize::MAX);
    Fit {
        raise_to: limits.soft.filter(|&soft| soft < ceiling).map(|_| ceiling),
        // At least one connection, so that the server still serves; it is
        // told plainly at start that it is squeezed.
        max_connections: fits.max(1).min(max_connections),
    }
}

/// Fits the process's open-files limit to `max_connections` sockets plus
/// `reserved` other descriptors (see [`fit`]), and returns the cap on
/// connections that fits. Says at start what it did, and plainly when the
/// cap had to be lowered.
pub fn fit_process_limit(max_connections: usize, reserved: u64) -> usize {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

        let current = getrlimit(Resource::Nofile);
        let limits = Limits {
            soft: current.current,
            hard: current.maximum,
        };
        let planned = fit(max_connections, reserved, limits);
        let mut soft = limits.soft;
        if let Some(raise_to) = planned.raise_to {
            let raised = Rlimit {
                current: Some(raise_to),
                maximum: limits.hard,
            };
            match setrlimit(Resource::Nofile, raised) {
                Ok(()) => {
                    tracing::info!(from = ?limits.soft, to = raise_to, "raised the open-files limit");
                    soft = Some(raise_to);
                }
                Err(error) => {
                    tracing::warn!(%error, "cannot raise the open-files limit");
                }
            }
        }
        // What fits under the limit now in force (the raise may have failed).
        let fitted = fit(max_connections, reserved, Limits { soft, hard: soft }).max_connections;
        if fitted < max_connections {
            tracing::warn!(
                soft_limit = ?soft,
                hard_limit = ?limits.hard,
                "the open-files limit is too low for max_connections = {max_connections}: this \
                 server holds at most {fitted} connections and tells the rest `server_full`; raise \
                 the hard limit (ulimit -Hn, LimitNOFILE= in systemd) to serve them all"
            );
        }
        fitted
    }
    #[cfg(not(unix))]
    {
        let _ = reserved;
        max_connections
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESERVED: u64 = 100;

    #[test]
    fn the_limit_is_raised_as_far_as_needed_and_the_cap_lowered_only_under_a_low_hard_limit() {
        /// max_connections, soft limit, hard limit → soft limit to set, cap.
        type Case = (usize, Option<u64>, Option<u64>, Option<u64>, usize);
        let cases: [Case; 8] = [
            // Enough already: nothing changes.
            (900, Some(1_024), Some(1_024), None, 900),
            (10_000, None, None, None, 10_000),
            (924, Some(1_024), Some(4_096), None, 924),
            // Raised to what is needed, not to the ceiling.
            (10_000, Some(1_024), Some(1_048_576), Some(10_100), 10_000),
            (10_000, Some(1_024), None, Some(10_100), 10_000),
            // The ceiling is too low: raised to it, and the cap fits under it.
            (10_000, Some(1_024), Some(4_096), Some(4_096), 3_996),
            (10_000, Some(4_096), Some(4_096), None, 3_996),
            // A ceiling below the reserve still serves one connection.
            (10_000, Some(50), Some(50), None, 1),
        ];
        for (max_connections, soft, hard, raise_to, fitted) in cases {
            let limits = Limits { soft, hard };
            assert_eq!(
                fit(max_connections, RESERVED, limits),
                Fit {
                    raise_to,
                    max_connections: fitted
                },
                "{max_connections} connections under {limits:?}"
            );
        }
    }
}
