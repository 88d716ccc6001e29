#!/bin/bash
# Starts the two players of tournaments/ponder.toml as separate `factotum serve` processes
# (logs with each move's and each ponder's iterations in matches/ponder/serve-*.log), runs
# the tournament (resumable: run again to go on), and stops the players.
set -euo pipefail
F=${FACTOTUM:-./target/release/factotum}
mkdir -p matches/ponder
RUST_LOG=info "$F" serve --port 9311 --agent agents/serve_ponder.toml --log-json >> matches/ponder/serve-ponder.log 2>&1 &
A=$!
RUST_LOG=info "$F" serve --port 9312 --agent agents/serve_noponder.toml --log-json >> matches/ponder/serve-noponder.log 2>&1 &
B=$!
trap 'kill $A $B 2>/dev/null || true' EXIT
sleep 1
"$F" tournament tournaments/ponder.toml "$@"
