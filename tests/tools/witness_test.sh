#!/usr/bin/env bash
# End-to-end tests of `evledger witness serve` with real processes on loopback: a C2SP log that
# evledger never made (tests/tools/foreign_log.py: its own key, origin and tree, checked with
# nothing but the specs) drives the witness through every status of add-checkpoint, good and
# bad consistency proofs and proofs from 0; the state survives a clean stop and a SIGKILL;
# racing updates from one old size have exactly one winner; and an evledger ledger's real
# checkpoints (served by `evledger serve`) and consistency proofs get cosigned too.
# Usage: witness_test.sh EVLEDGER_BINARY SOURCE_DIR
set -uo pipefail
E="$1"
SRC="$2"
LOG="$SRC/tests/tools/foreign_log.py"
source "$(dirname "$0")/testlib.sh"
# start NAME PREFIX ARGS...: `evledger ARGS` on a free loopback port (start_process).
start() {
  local name=$1 prefix=$2
  shift 2
  start_process "$name" "$prefix" "$E" "$@" --listen 127.0.0.1:0
}

# The witness's key: a tlog-cosignature vkey (type 0x04), the secret key file as any other.
expect 0 "key new --cosigner" -- "$E" key new witness.test/w1 --cosigner --out "$T/w.key"
WVKEY=$(cat "$T/w.key.vkey")
contains "$T/out" "$WVKEY" "key new --cosigner prints the vkey it writes"
[ "$(cut -d+ -f3- "$T/w.key.vkey" | base64 -d | head -c1 | od -An -tx1 | tr -d ' ')" = 04 ] &&
  ok || bad "the cosigner vkey has signature type 0x04"
grep -q '^PRIVATE+KEY+witness.test/w1+' "$T/w.key" && ok || bad "the secret key file is a note key file"

# A foreign log, and an evledger ledger whose log key comes in through a tlog-policy file.
FVKEY=$(python3 "$LOG" keygen "$T/flog.json" "foreign.test/log-$$" "$(printf '5a%.0s' $(seq 32))")
L="$T/ledger"
expect 0 "init" -- "$E" init --ledger "$L" --origin witness-test.evledger.invalid/log
printf '# the logs this witness watches\nlog %s\nwitness w1 %s\nquorum w1\n' \
  "$(cat "$L/keys/log.vkey")" "$WVKEY" > "$T/policy"

expect 2 "witness serve needs a log" -- "$E" witness serve --key "$T/w.key" --dir "$T/state"
expect 2 "a cosigner key is no log key" -- "$E" witness serve --key "$T/w.key" --dir "$T/state" --log "$WVKEY"
contains "$T/err" "0x04" "the refusal names the key type"
expect 2 "witness takes one subcommand" -- "$E" witness run
cp "$T/w.key" "$T/open.key" && chmod 644 "$T/open.key"
expect 1 "a secret key readable by others is refused" -- "$E" witness serve --key "$T/open.key" --dir "$T/state" --log "$FVKEY"

start w witnessing witness serve --key "$T/w.key" --dir "$T/state" --log "$FVKEY" \
  --log "$T/policy" --header-timeout 3000 || { finish; exit 1; }
contains "$T/w.out" "cosigner key: $WVKEY" "the witness prints its cosigner key"
contains "$T/w.out" "(2 logs" "the witness counts the --log key and the policy's log"
expect 0 "the foreign log drives every status of add-checkpoint" -- \
  python3 "$LOG" drive "$URL_w" "$WVKEY" "$T/flog.json"
[ "$failures" -eq 0 ] || cat "$T/out" "$T/err" >&2
expect 3 "a second witness on the same state is refused" -- \
  "$E" witness serve --key "$T/w.key" --dir "$T/state" --log "$FVKEY" --listen 127.0.0.1:0
contains "$T/err" "in use by another witness" "the refusal says why"

# A clean stop, then the same state again: old 0 gets 409 with the size cosigned before.
kill -TERM "$PID_w"
wait "$PID_w"
[ $? -eq 0 ] && ok || bad "witness exits 0 on SIGTERM"
contains "$T/w.err" "cosigned checkpoints" "the witness says what it did"
start w2 witnessing witness serve --key "$T/w.key" --dir "$T/state" --log "$FVKEY" --log "$T/policy" || { finish; exit 1; }
expect 0 "after a restart the state is there" -- python3 "$LOG" expect-size "$URL_w2" "$WVKEY" "$T/flog.json" 30

# Racing updates from one old size on two connections: exactly one wins, every round.
expect 0 "racing updates: exactly one of two wins" -- python3 "$LOG" race "$URL_w2" "$WVKEY" "$T/flog.json" 30
SIZE=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["size"])' "$T/flog.json")

# SIGKILL right after the last answer: what was answered was on disk.
{ kill -9 "$PID_w2"; wait "$PID_w2"; } 2>/dev/null
start w3 witnessing witness serve --key "$T/w.key" --dir "$T/state" --log "$FVKEY" --log "$T/policy" || { finish; exit 1; }
expect 0 "after SIGKILL the last cosigned size is there" -- python3 "$LOG" expect-size "$URL_w3" "$WVKEY" "$T/flog.json" "$SIZE"

# An evledger log: its served /checkpoint, then a consistency proof from the ledger.
start s serving serve --ledger "$L" --read-only || { finish; exit 1; }
curl -sf "${URL_s}checkpoint" > "$T/cp0" && ok || bad "GET /checkpoint of evledger serve"
expect 0 "the evledger log's first checkpoint is cosigned" -- python3 "$LOG" submit "$URL_w3" "$WVKEY" 0 "$T/cp0"
OLD=$(sed -n 1p "$T/out")
expect 0 "key new" -- "$E" key new imp@witness-test --out "$T/imp.key"
expect 0 "grant" -- "$E" key grant --ledger "$L" --key "$T/imp.key.vkey" --role importer --scope sol-execbench --signer "$L/keys/admin.key"
"$E" gen --runs 20 > "$T/catalog.jsonl" 2>/dev/null
expect 0 "import" -- "$E" import --ledger "$L" --key "$T/imp.key" "$T/catalog.jsonl"
expect 0 "proof consistency" -- "$E" proof consistency --ledger "$L" --from "$OLD"
cp "$T/out" "$T/consistency.json"
curl -sf "${URL_s}checkpoint" > "$T/cp1" && ok || bad "GET /checkpoint after the import"
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["checkpoint"] != open(sys.argv[2]).read())' \
  "$T/consistency.json" "$T/cp1" && ok || bad "the proof's checkpoint is the one evledger serve serves"
expect 0 "a stale old size gets 409" -- python3 "$LOG" submit "$URL_w3" "$WVKEY" 0 "$T/cp1" --expect 409
expect 0 "the evledger log's next checkpoint is cosigned with its consistency proof" -- \
  python3 "$LOG" submit "$URL_w3" "$WVKEY" "$OLD" "$T/cp1" "$T/consistency.json"
ORIGIN_HASH=$(printf '%s' witness-test.evledger.invalid/log | sha256sum | cut -d' ' -f1)
curl -sf "${URL_w3}$ORIGIN_HASH/checkpoint" > "$T/witnessed" && ok || bad "GET the evledger log's witnessed checkpoint"
contains "$T/witnessed" "$(sed -n 3p "$T/cp1")" "the witnessed checkpoint has the newest root"
contains "$T/witnessed" "— witness.test/w1 " "and the witness's cosignature"

kill -TERM "$PID_w3" "$PID_s"
wait "$PID_w3" "$PID_s"
finish
