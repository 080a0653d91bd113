#!/bin/sh
# The same race load against patience-server and against the Colyseus room
# of this directory, one after the other, each measured with --server-pid,
# so that server CPU per move and the p99s come from the same generator
# (issue #13, item 3). Prints the two JSON lines on stdout (patience-server
# first, then Colyseus), the runs' human summaries and a short side-by-side
# on stderr.
#
# Usage: tests/load/colyseus/compare.sh [extra patience-load flags...]
#
# The load comes from the environment (defaults in brackets):
#   ROOMS [100]  PLAYERS [4]  SPECTATORS [2]  MOVE_INTERVAL_MS [500; 0 = closed loop]
#   WARMUP_S [15]  DURATION_S [30]
#   NO_BUILD=1   use the release binaries already built
# Extra flags are passed to both runs of patience-load.
#
# patience-server runs as docs/BENCHMARKS.md describes for closed loop: a
# release build, in memory, Three Blind Mice, a 3 s countdown, a deal pool
# as large as the rooms, and per-connection rate limits out of the way
# (a settings file). Its racers run with --endless (they take a move back
# rather than win), since the Colyseus room's races never end either: in
# neither run do rooms re-form. Each server is started fresh, alone: the
# first is stopped before the second starts.
#
# Needs Node 20 and npm (runs `npm ci` here if node_modules is missing) and
# cargo. It starts only its own two server processes and stops them by pid
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

if [ "${NO_BUILD:-}" != 1 ]; then
    (cd "$root" && cargo build --release -p patience-server -p patience-tests \
        --bin patience-server --bin patience-load)
fi
if [ ! -d "$here/node_modules/@colyseus/core" ]; then
    (cd "$here" && npm ci --no-audit --no-fund)
fi
server_binary=$target_dir/release/patience-server
load_binary=$target_dir/release/patience-load
for binary in "$server_binary" "$load_binary"; do
    if [ ! -x "$binary" ]; then
        echo "compare.sh: $binary is missing (build it, or drop NO_BUILD)" >&2
        exit 1
    fi
done

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

load() {
    "$load_binary" --rooms "$rooms" --players "$players" --spectators "$spectators" \
        --move-interval-ms "$move_interval_ms" --warmup-s "$warmup_s" \
        --duration-s "$duration_s" --server-pid "$server_pid" "$@"
}

# 1. patience-server.
cat > "$work/load.toml" <<'EOF'
messages_per_second = 100000
message_burst = 100000
moves_per_second = 100000
move_burst = 100000
EOF
RUST_LOG=${RUST_LOG:-warn} "$server_binary" --config "$work/load.toml" \
    --listen 127.0.0.1:0 --no-admin --in-memory --games tbm \
    --deal-pool-size "$rooms" --countdown-ms 3000 --max-rooms 5000 \
    > "$work/patience.out" 2> "$work/patience.err" &
server_pid=$!
address=$(wait_for_address "$work/patience.out" 's/^patience-server listening on ws:\/\///p')
echo "compare.sh: patience-server (pid $server_pid) on $address" >&2
patience_line=$(load --scenario race --url "ws://$address" --endless "$@")
echo "$patience_line"
stop_server

# 2. Colyseus.
(cd "$here" && exec node server.mjs --host 127.0.0.1 --port 0) \
    > "$work/colyseus.out" 2> "$work/colyseus.err" &
server_pid=$!
address=$(wait_for_address "$work/colyseus.out" 's/^listening //p')
echo "compare.sh: colyseus (pid $server_pid) on $address" >&2
colyseus_line=$(load --scenario colyseus --url "ws://$address" "$@")
echo "$colyseus_line"
stop_server

# Side by side, for people (node is here anyway).
PATIENCE_LINE=$patience_line COLYSEUS_LINE=$colyseus_line node --input-type=module -e '
const rows = [["patience-server", process.env.PATIENCE_LINE], ["colyseus", process.env.COLYSEUS_LINE]];
const ms = (us) => (us == null ? "-" : (us / 1000).toFixed(2));
const fixed = (value, digits) => (value == null ? "-" : value.toFixed(digits));
console.error("server            moves/s  cpu us/move  (w/o deal prover)  cpu share  p99 ack ms  p99 opp ms  p99 spec ms  errors  disconnects");
for (const [name, text] of rows) {
  const line = JSON.parse(text);
  const server = line.server ?? {};
  console.error([
    name.padEnd(16),
    fixed(line.moves_accepted_per_s, 1).padStart(8),
    fixed(server.cpu_us_per_accepted_move, 1).padStart(12),
    fixed(server.cpu_us_per_accepted_move_without_deal_prover, 1).padStart(18),
    fixed(server.cpu_share_of_a_core, 2).padStart(10),
    ms(line.move_to_ack_us.p99).padStart(11),
    ms(line.move_to_opponent_us.p99).padStart(11),
    ms(line.move_to_spectator_us.p99).padStart(12),
    String(line.errors).padStart(7),
    String(line.disconnects).padStart(12),
  ].join(" "));
}
'
