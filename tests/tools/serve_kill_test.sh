#!/usr/bin/env bash
# Crash consistency of `evledger serve` under load: 64 concurrent publishers post entries while
# the server is killed with SIGKILL at random moments, ROUNDS times (default 20). After each
# restart the ledger verifies, and every entry acknowledged with a 200 is in the log at the
# index it was given. A last round without kills resends everything: each entry comes back
# stored or already present. Prints: kills, entries acknowledged, entries lost (must be 0), and
# the line kills=K acknowledged=A lost=L.
# Usage: serve_kill_test.sh EVLEDGER_BINARY SOURCE_DIR [ROUNDS]
set -uo pipefail
E="$1"
SRC="$2"
ROUNDS="${3:-20}"
LOAD="$SRC/tests/tools/append_load.py"
source "$(dirname "$0")/testlib.sh"
SERVER=""
cleanup() {
  [ -n "$SERVER" ] && kill -9 "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT

start_server() {
  : > "$T/serve.out"
  "$E" serve --ledger "$L" --listen 127.0.0.1:0 >"$T/serve.out" 2>>"$T/serve.err" &
  SERVER=$!
  for _ in $(seq 200); do
    grep -q '^serving http://' "$T/serve.out" 2>/dev/null && break
    sleep 0.05
  done
  URL=$(sed -n 's/^serving \(http:[^ ]*\).*/\1/p' "$T/serve.out")
  [ -n "$URL" ]
}

kill_catalog kill.evledger.invalid/log 5000 || { finish; exit 1; }

kills=0
for round in $(seq "$ROUNDS"); do
  start_server || { bad "round $round: the server did not start"; cat "$T/serve.err" >&2; break; }
  python3 "$LOAD" "$URL" "$T/entries.bin" "$T/acks" --clients 64 --batch $((round % 3 == 0 ? 20 : 1)) \
    --until-error --skip-acked --seed "$round" >"$T/load.out" 2>"$T/load.err" &
  load=$!
  sleep "$(python3 -c "import random; random.seed($round); print(0.2 + random.random() * 1.2)")"
  kill -9 "$SERVER"
  wait "$SERVER" 2>/dev/null
  SERVER=""
  kills=$((kills + 1))
  wait "$load"
  # After the restart: the log verifies and holds every acknowledged entry at its index.
  if ! "$E" verify --ledger "$L" --vkey "$VKEY" >"$T/verify.out" 2>&1; then
    bad "round $round: verify after SIGKILL"; sed 's/^/  | /' "$T/verify.out" >&2
  fi
done

# The last round: no kill; every entry ends stored or already present.
start_server || bad "the last server did not start"
python3 "$LOAD" "$URL" "$T/entries.bin" "$T/final-acks" --clients 64 --batch 5 >"$T/load.out" 2>"$T/load.err" \
  && ok || { bad "the last round: every entry stored or present"; cat "$T/load.out" "$T/load.err" >&2; }
kill -TERM "$SERVER"; wait "$SERVER"; SERVER=""

"$E" log --ledger "$L" --json > "$T/log.jsonl" || bad "log"
python3 - "$T/acks" "$T/final-acks" "$T/log.jsonl" "$kills" <<'EOF' && ok || bad "every acknowledged entry is at its index"
import json, sys
log = {}
for line in open(sys.argv[3]):
    e = json.loads(line)
    log[e["index"]] = e["id"]
acked, lost = 0, 0
seen = {}
for path in sys.argv[1:3]:
    for line in open(path):
        if not line.strip():
            continue
        index, eid, kind, pos = line.split()
        index, pos = int(index), int(pos)
        acked += path == sys.argv[1]
        if log.get(index) != eid:
            lost += 1
            print("lost: entry %s acknowledged at %d, log has %s" % (eid, index, log.get(index)), file=sys.stderr)
        if seen.setdefault(pos, index) != index:
            lost += 1
            print("entry %d acknowledged at two indices" % pos, file=sys.stderr)
print("serve under SIGKILL: kills %s, entries acknowledged %d (before the last round), lost %d, log size %d" % (sys.argv[4], acked, lost, len(log)))
print("kills=%s acknowledged=%d lost=%d" % (sys.argv[4], acked, lost))
sys.exit(1 if lost else 0)
EOF
expect 0 "the ledger verifies at the end" -- "$E" verify --ledger "$L" --vkey "$VKEY"
finish
