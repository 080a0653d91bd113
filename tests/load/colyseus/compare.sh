#!/bin/sh
# The same race load against patience-server, the echo baseline and the
# Colyseus room of this directory, one after the other in one run, each
# measured with --server-pid, so that server CPU per move, the p99s and the
# ratios between them come from the same generator on the same machine at
# the same time. Prints one JSON line per server on stdout (patience-server,
# then the baseline patience-server if BASELINE_SERVER is set, then echo,
# then Colyseus), the runs' human summaries and a side-by-side on stderr.
#
# Usage: tests/load/colyseus/compare.sh [extra patience-load flags...]
#
# The load comes from the environment (defaults in brackets):
#   ROOMS [100]  PLAYERS [4]  SPECTATORS [2]  MOVE_INTERVAL_MS [500; 0 = closed loop]
#   WARMUP_S [15]  DURATION_S [30]
#   SERVERS ["patience echo colyseus"]  which servers to run, in that order
#     (add "baseline" to run BASELINE_SERVER, another patience-server binary,
#     right after the first, with the same settings)
#   STORE [memory]  memory: --in-memory; sqlite: a fresh data directory, every
#     move written to an SQLite file at synchronous = FULL
#   SERVER_CPU [0]  LOAD_CPU [1]  the cores (taskset -c) the server under test
#     and the load tool are pinned to; empty to pin neither
#   COUNT_SYSCALLS [1 if perf is installed]  count each server's system calls
#     and context switches over the window (perf stat, which needs
#     kernel.perf_event_paranoid <= 1 or root): figures per move that do not
#     move with the machine's load as CPU time does
#   PATIENCE_SETTINGS  more lines for the settings file of patience-server
#     (not the baseline's), e.g. "progress_tick_ms = 250"
#   NO_BUILD=1   use the release binaries already built
#   PATIENCE_SERVER, PATIENCE_LOAD, PATIENCE_ECHO  other binaries to run
# Extra flags are passed to every run of patience-load.
#
# patience-server runs as docs/BENCHMARKS.md describes for closed loop: a
# release build, Three Blind Mice, a 3 s countdown, a deal pool as large as
# the rooms, and per-connection rate limits out of the way (a settings
# file). Its racers run with --endless (they take a move back rather than
# win), since the Colyseus room's races never end either: in neither run do
# rooms re-form. The echo baseline gets rooms × players sockets, each
# sending a move-sized frame at the same pace. Each server is started
# fresh, alone: the one before is stopped first.
#
# Needs Node 20 and npm (runs `npm ci` here if node_modules is missing) and
# cargo. It starts only its own server processes and stops them by pid
# when it ends, however it ends.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
target_dir=${CARGO_TARGET_DIR:-$root/target}

rooms=${ROOMS:-100}
players=${PLAYERS:-4}
spectators=${SPECTATORS:-2}
move_interval_ms=${MOVE_INTERVAL_MS:-500}
warmup_s=${WARMUP_S:-15}
duration_s=${DURATION_S:-30}
servers=${SERVERS:-patience echo colyseus}
store=${STORE:-memory}
server_cpu=${SERVER_CPU-0}
load_cpu=${LOAD_CPU-1}
if command -v perf > /dev/null 2>&1; then
    count_syscalls=${COUNT_SYSCALLS:-1}
else
    count_syscalls=${COUNT_SYSCALLS:-0}
fi

case " $servers " in
*" baseline "*)
    if [ -z "${BASELINE_SERVER:-}" ]; then
        echo "compare.sh: SERVERS names baseline but BASELINE_SERVER is not set" >&2
        exit 1
    fi
    ;;
esac
case "$store" in
memory | sqlite) ;;
*)
    echo "compare.sh: STORE is memory or sqlite, not $store" >&2
    exit 1
    ;;
esac

if [ "${NO_BUILD:-}" != 1 ]; then
    (cd "$root" && cargo build --release -p patience-server -p patience-tests \
        --bin patience-server --bin patience-load --bin patience-echo)
fi
case " $servers " in
*" colyseus "*)
    if [ ! -d "$here/node_modules/@colyseus/core" ]; then
        (cd "$here" && npm ci --no-audit --no-fund)
    fi
    ;;
esac
server_binary=${PATIENCE_SERVER:-$target_dir/release/patience-server}
load_binary=${PATIENCE_LOAD:-$target_dir/release/patience-load}
echo_binary=${PATIENCE_ECHO:-$target_dir/release/patience-echo}
for binary in "$server_binary" "$load_binary" "$echo_binary" ${BASELINE_SERVER:-}; do
    if [ ! -x "$binary" ]; then
        echo "compare.sh: $binary is missing (build it, or drop NO_BUILD)" >&2
        exit 1
    fi
done

# Runs a command on the given core, or as it is without one.
on_core() {
    core=$1
    shift
    if [ -n "$core" ]; then
        exec taskset -c "$core" "$@"
    else
        exec "$@"
    fi
}

work=$(mktemp -d)
server_pid=
stop_server() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=
    fi
}
cleanup() {
    stop_server
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits up to 60 s for the server's first stdout line in $1 to match the
# sed expression $2 (which prints the address); prints the address.
wait_for_address() {
    tries=0
    while [ "$tries" -lt 600 ]; do
        address=$(sed -n "$2" "$1" 2>/dev/null | head -n 1)
        if [ -n "$address" ]; then
            echo "$address"
            return 0
        fi
        if ! kill -0 "$server_pid" 2>/dev/null; then
            echo "compare.sh: the server exited before listening:" >&2
            cat "$1" >&2
            return 1
        fi
        sleep 0.1
        tries=$((tries + 1))
    done
    echo "compare.sh: the server printed no address within 60 s" >&2
    return 1
}

# Counts the server's system calls and context switches over the load's
# window, in the background, into $work/counts (perf's CSV). The count
# keeps the caller's stdout open, so a "$(...)" around the load returns
# only once it is written.
start_counting() {
    rm -f "$work/counts"
    if [ "$count_syscalls" = 1 ]; then
        (sleep "$warmup_s" && perf stat -x, -e raw_syscalls:sys_enter,context-switches \
            -p "$server_pid" -- sleep "$duration_s" 2> "$work/counts") &
    fi
}

# Prints the last count as "syscalls context-switches" (or nothing).
counted() {
    if [ "$count_syscalls" = 1 ]; then
        awk -F, '$3 == "raw_syscalls:sys_enter" { s = $1 } $3 == "context-switches" { c = $1 }
            END { if (s != "" && c != "") print s, c }' "$work/counts" 2>/dev/null
    fi
}

load() {
    start_counting
    (on_core "$load_cpu" "$load_binary" --rooms "$rooms" --players "$players" \
        --spectators "$spectators" --move-interval-ms "$move_interval_ms" \
        --warmup-s "$warmup_s" --duration-s "$duration_s" --server-pid "$server_pid" "$@")
}

cat > "$work/load.toml" <<'EOF'
messages_per_second = 100000
message_burst = 100000
moves_per_second = 100000
move_burst = 100000
EOF
cp "$work/load.toml" "$work/patience.toml"
printf '%s\n' "${PATIENCE_SETTINGS:-}" >> "$work/patience.toml"

# Runs patience-server binary $1 under the label $2 with the settings file
# $3; prints its JSON line.
race() {
    settings=$3
    if [ "$store" = sqlite ]; then
        rm -rf "$work/data"
        mkdir "$work/data"
        where="--data $work/data"
    else
        where=--in-memory
    fi
    # $where is one flag, or a flag and a path without spaces (mktemp's).
    # shellcheck disable=SC2086
    RUST_LOG=${RUST_LOG:-warn} on_core "$server_cpu" "$1" --config "$settings" \
        --listen 127.0.0.1:0 --no-admin $where --games tbm --max-connections 20000 \
        --deal-pool-size "$rooms" --countdown-ms 3000 --max-rooms 5000 \
        > "$work/patience.out" 2> "$work/patience.err" &
    server_pid=$!
    address=$(wait_for_address "$work/patience.out" 's/^patience-server listening on ws:\/\///p')
    echo "compare.sh: $2 (pid $server_pid) on $address" >&2
    shift 3
    load --scenario race --url "ws://$address" --endless "$@"
    stop_server
}

lines=
counts=
for server in $servers; do
    case "$server" in
    patience)
        line=$(race "$server_binary" patience-server "$work/patience.toml" "$@")
        ;;
    baseline)
        line=$(race "$BASELINE_SERVER" baseline "$work/load.toml" "$@")
        ;;
    echo)
        on_core "$server_cpu" "$echo_binary" --listen 127.0.0.1:0 \
            > "$work/echo.out" 2> "$work/echo.err" &
        server_pid=$!
        address=$(wait_for_address "$work/echo.out" 's/^patience-echo listening on ws:\/\///p')
        echo "compare.sh: echo (pid $server_pid) on $address" >&2
        line=$(load --scenario echo --url "ws://$address" "$@")
        stop_server
        ;;
    colyseus)
        (cd "$here" && on_core "$server_cpu" node server.mjs --host 127.0.0.1 --port 0) \
            > "$work/colyseus.out" 2> "$work/colyseus.err" &
        server_pid=$!
        address=$(wait_for_address "$work/colyseus.out" 's/^listening //p')
        echo "compare.sh: colyseus (pid $server_pid) on $address" >&2
        line=$(load --scenario colyseus --url "ws://$address" "$@")
        stop_server
        ;;
    *)
        echo "compare.sh: unknown server $server (patience, baseline, echo, colyseus)" >&2
        exit 1
        ;;
    esac
    echo "$line"
    lines="$lines$server $line
"
    counts="$counts$server $(counted)
"
done

# Side by side, for people (node is here anyway). Echo's figures are per
# round trip; "x echo" is a server's CPU per move in echo round trips.
LINES=$lines COUNTS=$counts WINDOW_S=$duration_s node --input-type=module -e '
const rows = process.env.LINES.trim().split("\n").map((row) => {
  const space = row.indexOf(" ");
  return [row.slice(0, space), JSON.parse(row.slice(space + 1))];
});
const ms = (us) => (us == null ? "-" : (us / 1000).toFixed(2));
const fixed = (value, digits) => (value == null ? "-" : value.toFixed(digits));
const echo = rows.find(([name]) => name === "echo")?.[1];
const echoUs = echo?.server?.cpu_us_per_accepted_move;
const echoRate = echo?.moves_accepted_per_s;
// Per server: [system calls, context switches] over the window, if counted.
const counts = new Map(process.env.COUNTS.trim().split("\n").map((row) => {
  const [name, syscalls, switches] = row.trim().split(/\s+/);
  return [name, syscalls == null ? null : [Number(syscalls), Number(switches)]];
}));
console.error("server      moves/s  % echo  cpu us/move  (w/o prover)  x echo  cpu share  p99 ack ms  p99 opp ms  p99 spec ms  errors  disconnects  load  syscalls/move  switches/move");
for (const [name, line] of rows) {
  const server = line.server ?? {};
  const moves = line.moves_accepted_per_s * Number(process.env.WINDOW_S);
  const counted = counts.get(name);
  const perMove = server.cpu_us_per_accepted_move_without_deal_prover;
  console.error([
    name.padEnd(10),
    fixed(line.moves_accepted_per_s, 1).padStart(8),
    (echoRate ? fixed((100 * line.moves_accepted_per_s) / echoRate, 1) : "-").padStart(7),
    fixed(server.cpu_us_per_accepted_move, 1).padStart(12),
    fixed(perMove, 1).padStart(13),
    (echoUs && perMove != null ? fixed(perMove / echoUs, 2) : "-").padStart(7),
    fixed(server.cpu_share_of_a_core, 2).padStart(10),
    ms(line.move_to_ack_us?.p99).padStart(11),
    ms(line.move_to_opponent_us?.p99).padStart(11),
    ms(line.move_to_spectator_us?.p99).padStart(12),
    String(line.errors).padStart(7),
    String(line.disconnects).padStart(12),
    String(line.load_average_start?.[0] ?? "-").padStart(5),
    (counted && moves ? fixed(counted[0] / moves, 2) : "-").padStart(14),
    (counted && moves ? fixed(counted[1] / moves, 2) : "-").padStart(14),
  ].join(" "));
}
'
