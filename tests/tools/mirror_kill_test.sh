#!/usr/bin/env bash
# Crash consistency of `evledger mirror`: a mirror pulling a few tens of thousands of entries
# from a local `evledger serve`, which grows by some 3,000 entries before each round, is killed
# with SIGKILL at random moments (in a window that adapts to the machine's load), ROUNDS times
# (default 20). After every kill its size never goes back and it verifies (to its newest
# checkpoint: the entries past it were proved against the one it pulls towards); each restart
# resumes after what it stored (its --json previousSize is the size it held). A last pull
# completes, and the mirror then verifies and is byte-identical to its upstream (export-tiles
# of both, the statement).
# Prints: kills that landed mid-pull, and how many left part of the pull stored; and the line
# kills=K acknowledged=A lost=L (K the kills mid-pull, A the entries held after the last one).
# Usage: mirror_kill_test.sh EVLEDGER_BINARY SOURCE_DIR [ROUNDS]
set -uo pipefail
E="$1"
ROUNDS="${3:-20}"
source "$(dirname "$0")/testlib.sh"
size_of() { "$E" checkpoint --ledger "$1" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["size"])' 2>/dev/null || echo 0; }
# The mirror's own count of entries (past its last checkpoint while a pull is unfinished),
# by bisection over `evledger get`.
held_of() {
  local lo=0 hi=$((N + 1)) mid
  while [ $((hi - lo)) -gt 1 ]; do
    mid=$(((lo + hi) / 2))
    if "$E" get --ledger "$1" $((mid - 1)) >/dev/null 2>&1; then lo=$mid; else hi=$mid; fi
  done
  echo "$lo"
}

A="$T/a"
M="$T/m"
"$E" init --ledger "$A" --origin mirrorkill.evledger.invalid/log >/dev/null 2>&1 || { bad "init"; finish; exit 1; }
VKEY="$T/log.vkey"
cp "$A/keys/log.vkey" "$VKEY"
"$E" key new imp@sol --out "$T/imp.key" >/dev/null
"$E" key grant --ledger "$A" --key "$T/imp.key.vkey" --role importer --scope sol-execbench --signer "$A/keys/admin.key" >/dev/null
"$E" gen --runs 12000 2>/dev/null > "$T/catalog.jsonl"
"$E" import --ledger "$A" --key "$T/imp.key" "$T/catalog.jsonl" >/dev/null 2>&1 || bad "import"
N=$(size_of "$A")
[ "$N" -gt 20000 ] && ok || bad "the upstream holds over 20,000 entries ($N)"
command -v curl >/dev/null || { bad "curl is needed"; finish; exit 1; }
start_server s --ledger "$A" || { finish; exit 1; }

mid=0
between=0
last=0
lost=0
# The kill comes at a random moment up to `window` tenths of a second into the pull. The window
# adapts to the machine's load: wider after a kill that came before anything was stored,
# narrower after a pull that finished first.
window=20
for round in $(seq "$ROUNDS"); do
  # The log grows between rounds, so that every round has a pull to interrupt.
  "$E" gen --runs 1500 --seed $((round + 100)) 2>/dev/null > "$T/more.jsonl"
  "$E" import --to "$URL_s" --key "$T/imp.key" "$T/more.jsonl" >/dev/null 2>&1 || bad "round $round: the upstream grows"
  N=$(curl -sf "${URL_s}checkpoint" | sed -n 2p)
  "$E" mirror --from "$URL_s" --ledger "$M" --vkey "$VKEY" --connections 2 --json >"$T/pull.out" 2>"$T/pull.err" &
  pid=$!
  delay=$((RANDOM % window + 1))
  sleep "$((delay / 10)).$((delay % 10))"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  now=$(held_of "$M")
  if [ -s "$T/pull.out" ]; then
    prev=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["previousSize"])' "$T/pull.out")
    [ "$prev" -ge "$last" ] && ok || bad "round $round: the pull resumed at $prev, behind the $last stored"
  fi
  [ "$now" -ge "$last" ] && ok || { bad "round $round: the mirror went back from $last to $now"; lost=$((lost + last - now)); }
  [ "$now" -lt "$N" ] && mid=$((mid + 1))
  if [ "$now" -gt 0 ] && [ "$now" -lt "$N" ]; then
    between=$((between + 1))
  fi
  if [ "$now" -lt "$N" ] && [ "$(size_of "$M")" -gt 0 ]; then
    "$E" verify --ledger "$M" --vkey "$VKEY" >/dev/null 2>"$T/verify.err" && ok ||
      { bad "round $round: the mirror part way through a pull verifies"; cat "$T/verify.err" >&2; }
  fi
  if [ "$now" -ge "$N" ]; then
    window=$((window > 15 ? window - 5 : 10))
  elif [ "$now" -eq "$last" ]; then
    window=$((window + 10))
  fi
  last=$now
done
echo "kills mid-pull: $mid of $ROUNDS, $between of them with part of the pull stored"
# Acknowledged: the entries the mirror held after its last kill; lost: what it ever went back by.
echo "kills=$mid acknowledged=$last lost=$lost"
[ "$mid" -gt 0 ] && ok || bad "at least one kill landed mid-pull"
[ "$between" -gt 0 ] && ok || bad "at least one kill left part of a pull stored, to resume after"
expect 0 "the last pull completes" -- "$E" mirror --from "$URL_s" --ledger "$M" --vkey "$VKEY" --json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ok"] and r["size"] == int(sys.argv[2]), r' "$T/out" "$N" &&
  ok || bad "the mirror holds every entry"
expect 0 "the mirror verifies" -- "$E" verify --ledger "$M" --vkey "$VKEY"
"$E" export-tiles --ledger "$A" --out "$T/xa" >/dev/null 2>&1
"$E" export-tiles --ledger "$M" --out "$T/xm" >/dev/null 2>&1
diff -r "$T/xa" "$T/xm" >/dev/null && ok || bad "the mirror's tiles, bundles and checkpoint equal the upstream's"
"$E" statement --ledger "$A" > "$T/sa" 2>/dev/null
"$E" statement --ledger "$M" > "$T/sm" 2>/dev/null
[ -s "$T/sa" ] && cmp -s "$T/sa" "$T/sm" && ok || bad "the mirror holds the upstream's statement"
finish
