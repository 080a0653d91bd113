#!/bin/sh
# End-to-end check of the Colyseus baseline: installs the pinned packages if
# needed, then builds patience-load's unit tests with `--cfg colyseus_smoke`
# (which adds the test that starts `server.mjs`, creates a room of 2 players
# + 1 spectator through tests/load/colyseus.rs, sends moves and checks the
# acks and progress frames) and runs the colyseus tests. The cfg is passed to
# this one crate only (`cargo rustc`), so nothing else is rebuilt and the
# default `cargo test` never needs Node.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

if [ ! -d "$here/node_modules/@colyseus/core" ]; then
    (cd "$here" && npm ci --no-audit --no-fund)
fi

cd "$root"
binary=$(cargo rustc -p patience-tests --bin patience-load --profile test \
        --message-format=json-render-diagnostics -- --cfg colyseus_smoke \
    | grep -o '"executable":"[^"]*"' | tail -n 1 | cut -d '"' -f 4)
if [ -z "$binary" ]; then
    echo "smoke.sh: cargo rustc built no test binary" >&2
    exit 1
fi
"$binary" colyseus:: --nocapture
