#!/usr/bin/env bash
# CI check (.ci/run): generates the Python modules, starts the built sidecar on a free port with a
# throwaway embedded store, runs recall_example.py against it, and stops the sidecar.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
./generate.sh
work=$(mktemp -d)
log="$work/sidecar.log"
RECALL_PORT=0 RECALL_DATA_DIR="$work/data" node ../../dist/cli/main.js serve 2>"$log" &
sidecar=$!
trap 'kill "$sidecar" 2>/dev/null; wait "$sidecar" 2>/dev/null; rm -rf "$work"' EXIT
port=""
for _ in $(seq 1 120); do
  port=$(node -e 'const l = require("fs").readFileSync(process.argv[1], "utf8").split("\n").find((x) => x.includes("\"recall sidecar listening\"")); if (l) console.log(JSON.parse(l).port)' "$log")
  [ -n "$port" ] && break
  kill -0 "$sidecar" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.5
done
[ -n "$port" ] || { echo "the sidecar did not start" >&2; cat "$log" >&2; exit 1; }
"$PYTHON" recall_example.py "127.0.0.1:${port}"
