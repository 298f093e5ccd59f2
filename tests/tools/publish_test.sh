#!/usr/bin/env bash
# Publishers pushing from their own machines, end to end with real processes on loopback:
# `import --to` a generated catalog into a fresh `evledger serve`, every receipt verified
# offline with `proof verify`; the served ledger's log and runs equal a local import's; the
# other write commands with --to answer as they do locally; a publisher started before its
# server; a read-only server; a key without the role (403); a server killed and restarted in
# the middle of an import, which loses nothing and duplicates nothing.
# Usage: publish_test.sh EVLEDGER_BINARY SOURCE_DIR
set -uo pipefail
E="$1"
SRC="$2"
source "$(dirname "$0")/testlib.sh"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT


# serve NAME PORT ARGS...: starts `evledger serve ARGS` on 127.0.0.1:PORT, waits until it
# serves, and sets PID_<NAME>.
serve() {
  local name=$1 port=$2
  shift 2
  "$E" serve --listen "127.0.0.1:$port" "$@" >"$T/$name.out" 2>>"$T/$name.err" &
  local pid=$!
  PIDS+=("$pid")
  printf -v "PID_$name" '%s' "$pid"
  for _ in $(seq 200); do
    grep -q '^serving http://' "$T/$name.out" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  bad "server $name did not start"; cat "$T/$name.err" >&2
  return 1
}

json_member() { python3 -c "import json,sys; print(json.loads(sys.stdin.readline())['$1'])"; }

# A fresh ledger F with an importer, a runner, a curator and an attestor granted; S is served,
# C stays on this machine: the same ledger, copied before anything is published.
F="$T/f"
expect 0 "init" -- "$E" init --ledger "$F" --origin publish.evledger.invalid/log
VKEY="$F/keys/log.vkey"
ADMIN="$F/keys/admin.key"
for k in imp run cur att other nobody; do "$E" key new "$k@publish" --out "$T/$k.key" >/dev/null; done
grant() { expect 0 "grant $1" -- "$E" key grant --ledger "$F" --key "$T/$1.key.vkey" --signer "$ADMIN" "${@:2}"; }
grant imp --role importer --scope sol-execbench
grant run --role runner --scope owner:lab --scope host:gpu1
grant cur --role curator
grant att --role attestor
cp -a "$F" "$T/s"
cp -a "$F" "$T/c"
S="$T/s"
C="$T/c"
"$E" gen --runs 60 > "$T/catalog.jsonl" 2>/dev/null
"$E" gen --runs 5 --seed 77 > "$T/other.jsonl" 2>/dev/null

PORT=$(free_port)
U="http://127.0.0.1:$PORT/"

# A publisher started before its server: it keeps trying until the server answers.
"$E" import --to "$U" --key "$T/imp.key" --receipts "$T/receipts" --vkey "$VKEY" --json \
  "$T/catalog.jsonl" >"$T/import.jsonl" 2>"$T/import.err" &
publisher=$!
sleep 1
serve s "$PORT" --ledger "$S" || { finish; exit 1; }
wait "$publisher" && ok || { bad "import --to, started before the server"; cat "$T/import.err" >&2; }
contains "$T/import.err" "retrying for up to 60" "the publisher says it waits for the server"
contains "$T/import.err" "answers again" "and that the server answered"
docs=$(wc -l < "$T/catalog.jsonl")
tail -1 "$T/import.jsonl" > "$T/summary.json"
[ "$(json_member summary < "$T/summary.json" | python3 -c 'import ast,sys; d=ast.literal_eval(sys.stdin.read()); print(d["added"], d["rejected"], d["ledgerSize"])')" = "$docs 0 $((docs + 5))" ] \
  && ok || { bad "the import added every document"; cat "$T/summary.json" >&2; }

# The same import on this machine, and the two logs are byte for byte one log.
expect 0 "import locally" -- "$E" import --ledger "$C" --key "$T/imp.key" "$T/catalog.jsonl"
root_of() { "$E" checkpoint --ledger "$1" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["size"], d["root"])'; }
[ "$(root_of "$S")" = "$(root_of "$C")" ] && ok || bad "the served log equals the local import's"
"$E" runs --ledger "$S" --json > "$T/runs.s" && "$E" runs --ledger "$C" --json > "$T/runs.c"
[ -s "$T/runs.s" ] && cmp -s "$T/runs.s" "$T/runs.c" && ok || bad "the served ledger's runs equal the local import's"

# Every receipt verifies offline, with the entry and the log key alone: the entries come
# from an export of the served ledger, their ids from its log.
expect 0 "export S" -- "$E" export-tiles --ledger "$S" --out "$T/xs"
"$E" log --ledger "$S" --json > "$T/log.s"
python3 - "$T/xs" "$T/log.s" "$T/entries" <<'PY' && ok || bad "the export splits into entries"
import json, os, sys
os.makedirs(sys.argv[3])
ids = {}
for line in open(sys.argv[2]):
    e = json.loads(line)
    ids[e["index"]] = e["id"]
index = 0
bundles = sorted(os.path.join(r, f) for r, _, fs in os.walk(os.path.join(sys.argv[1], "tile/entries")) for f in fs)
for path in sorted(bundles, key=lambda p: (p.count(".p"), p)):
    data = open(path, "rb").read()
    at = 0
    while at < len(data):
        n = data[at] << 8 | data[at + 1]
        name = ids[index][len("sha256:"):]
        open(os.path.join(sys.argv[3], name + ".bin"), "wb").write(data[at + 2:at + 2 + n])
        at += 2 + n
        index += 1
assert index == len(ids), (index, len(ids))
PY
[ "$(ls "$T/receipts" | wc -l)" = "$docs" ] && ok || bad "one receipt per event ($(ls "$T/receipts" | wc -l) of $docs)"
ls "$T/receipts" | grep -qv '^[0-9a-f]\{64\}\.tlog-proof$' && bad "receipts are named <event id hex>.tlog-proof" || ok
unverified=0
for f in "$T/receipts"/*.tlog-proof; do
  id=$(basename "$f" .tlog-proof)
  "$E" proof verify --vkey "$VKEY" --proof "$f" --entry "$T/entries/$id.bin" >/dev/null 2>&1 || unverified=$((unverified + 1))
done
[ "$unverified" = 0 ] && ok || bad "$unverified receipts do not verify offline"

# Again over the network: signed again, answered present, nothing appended.
expect 0 "a re-import over the network" -- "$E" import --to "$U" --key "$T/imp.key" "$T/catalog.jsonl"
contains "$T/out" "0 new (0 observations, 0 manifests), $docs already present" "a re-import finds every event present"
[ "$(root_of "$S")" = "$(root_of "$C")" ] && ok || bad "a re-import appends nothing"

# The other write commands answer with --to as they do locally, in the same shapes: a rerun
# (deterministic, so the very same event at the same index on both ledgers), then the rest.
RUN=$(head -1 "$T/runs.s" | json_member run)
cat > "$T/rerun.json" <<EOF
$(grep -m1 '"kind":"BenchmarkRun"' "$T/catalog.jsonl" | python3 -c '
import json, sys
m = json.loads(sys.stdin.read())
del m["spec"]["sourceNative"]
m["metadata"] = {"name": "publish-rerun"}
print(json.dumps(m))')
EOF
for where in "--to $U" "--ledger $C"; do
  # shellcheck disable=SC2086
  expect 0 "rerun $where" -- "$E" rerun $where --key "$T/run.key" --target "$RUN" --json "$T/rerun.json"
  cp "$T/out" "$T/rerun.$(echo "$where" | cut -c3-4)"
done
cmp -s "$T/rerun.to" "$T/rerun.le" && ok || { bad "rerun --to answers as a local rerun"; cat "$T/rerun.to" "$T/rerun.le" >&2; }
shape() { python3 -c 'import json,sys; print(sorted(json.loads(sys.stdin.readline())))'; }
check_same_shape() {  # DESCRIPTION ARGS...: the command with --to and with --ledger C
  local what=$1
  shift
  "$E" "$@" --to "$U" --json >"$T/remote.out" 2>"$T/remote.err" || bad "$what --to: $(cat "$T/remote.err")"
  "$E" "$@" --ledger "$C" --json >"$T/local.out" 2>"$T/local.err" || bad "$what --ledger: $(cat "$T/local.err")"
  [ "$(shape < "$T/remote.out")" = "$(shape < "$T/local.out")" ] && ok || bad "$what --to prints what it prints locally"
}
check_same_shape "attest" attest --key "$T/att.key" --target "$RUN" --type reproduced --text "reproduced on our B200"
check_same_shape "retract" retract --key "$T/cur.key" --target "$RUN" --reason "withdrawn by the team"
RUN2=$(sed -n 2p "$T/runs.s" | json_member run)
RUN3=$(sed -n 3p "$T/runs.s" | json_member run)
check_same_shape "supersede" supersede --key "$T/cur.key" --target "$RUN2" --by "$RUN3" --reason "resubmitted"
check_same_shape "disqualify" disqualify --key "$T/imp.key" --target "$RUN3" --source sol-execbench --at 2026-09-01T12:00:00Z --reason "rules"
check_same_shape "key grant" key grant --key "$T/other.key.vkey" --role attestor --signer "$ADMIN"
check_same_shape "key revoke" key revoke --key "$T/other.key.vkey" --reason retired --signer "$ADMIN"
# A disqualification with --at is one event: sent again, it is present at its first index.
expect 0 "disqualify --to again" -- "$E" disqualify --to "$U" --key "$T/imp.key" --target "$RUN3" --source sol-execbench --at 2026-09-01T12:00:00Z --reason rules --json
contains "$T/out" '"status":"present"' "the same disqualification is one event"

# append --to: C's log posted as one uint16-framed stream to a fresh server holds C's entries.
expect 0 "export C" -- "$E" export-tiles --ledger "$C" --out "$T/xc"
: > "$T/stream.bin"
for f in $(cd "$T/xc" && find tile/entries -type f | sort); do cat "$T/xc/$f" >> "$T/stream.bin"; done
cp -a "$F" "$T/d"
PORT_D=$(free_port)
serve d "$PORT_D" --ledger "$T/d" || { finish; exit 1; }
expect 0 "append --to a stream" -- sh -c "'$E' append --to http://127.0.0.1:$PORT_D/ --json - < '$T/stream.bin'"
contains "$T/out" '"status":"added"' "append --to prints each entry"
contains "$T/err" "already present" "append --to counts the entries the server held"
kill -TERM "$PID_d"; wait "$PID_d"
[ "$(root_of "$T/d")" = "$(root_of "$C")" ] && ok || bad "the appended stream is C's log, in order"

# Refusals: usage, a read-only server, a key without the role.
expect 2 "--to and --ledger together" -- "$E" import --to "$U" --ledger "$C" --key "$T/imp.key" "$T/catalog.jsonl"
contains "$T/err" "--to and --ledger are exclusive" "the usage message says so"
expect 2 "--log-key with --to" -- "$E" attest --to "$U" --log-key "$F/keys/log.key" --key "$T/att.key" --target "$RUN" --type reproduced --text x
expect 2 "--retry-for without --to" -- "$E" import --ledger "$C" --retry-for 5 --key "$T/imp.key" "$T/catalog.jsonl"
PORT_RO=$(free_port)
serve ro "$PORT_RO" --ledger "$C" --read-only || { finish; exit 1; }
expect 3 "import --to a read-only server" -- "$E" import --to "http://127.0.0.1:$PORT_RO/" --key "$T/imp.key" "$T/catalog.jsonl"
contains "$T/err" "is read-only (405)" "a read-only server is named as such"
contains "$T/out" "not stored (the import stopped)" "the summary says the import stopped"
expect 3 "attest --to a read-only server" -- "$E" attest --to "http://127.0.0.1:$PORT_RO/" --key "$T/att.key" --target "$RUN" --type reproduced --text x
contains "$T/err" "not stored" "a single event says it was not stored"
kill -TERM "$PID_ro"; wait "$PID_ro"
expect 1 "import --to by a key without the importer role" -- "$E" import --to "$U" --key "$T/run.key" "$T/other.jsonl"
contains "$T/err" "has no importer role" "the server's 403 detail reaches the publisher"
expect 1 "rerun --to by a key that is not granted" -- "$E" rerun --to "$U" --key "$T/nobody.key" --target "$RUN2" "$T/rerun.json"
contains "$T/err" "is not a key of this ledger" "a denied rerun says why"
contains "$T/err" "--role runner" "and who may sign it"

# A server that never answers: the publisher gives up after --retry-for and says so.
DEAD=$(free_port)
expect 3 "import --to a server that is not there" -- "$E" import --to "http://127.0.0.1:$DEAD/" --retry-for 1 --key "$T/imp.key" "$T/catalog.jsonl"
contains "$T/err" "still failing after" "the publisher says how long it tried"
contains "$T/err" "run the same import again" "and how to resume"

# A server killed (SIGKILL) and restarted on its port in the middle of an import: nothing is
# lost, nothing is stored twice, the log is the local import's (two fresh copies of F).
kill -TERM "$PID_s"; wait "$PID_s"
S="$T/s2"
C="$T/c2"
cp -a "$F" "$S"
cp -a "$F" "$C"
"$E" gen --runs 3000 --seed 9 > "$T/big.jsonl" 2>/dev/null
big=$(wc -l < "$T/big.jsonl")
expect 0 "import the big catalog locally" -- "$E" import --ledger "$C" --key "$T/imp.key" --batch 400 "$T/big.jsonl"
serve s "$PORT" --ledger "$S" || { finish; exit 1; }
before=$("$E" checkpoint --ledger "$S" --json | json_member size)
"$E" import --to "$U" --key "$T/imp.key" --batch 400 --json "$T/big.jsonl" >"$T/big.out" 2>"$T/big.err" &
publisher=$!
for _ in $(seq 400); do
  [ "$("$E" checkpoint --ledger "$S" --json 2>/dev/null | json_member size)" -gt $((before + 800)) ] && break
  sleep 0.02
done
kill -9 "$PID_s"; wait "$PID_s" 2>/dev/null
mid=$("$E" checkpoint --ledger "$S" --json | json_member size)
sleep 0.5
serve s "$PORT" --ledger "$S" || { finish; exit 1; }
wait "$publisher" && ok || { bad "the import across a restart"; tail -5 "$T/big.err" >&2; }
[ "$mid" -gt "$before" ] && [ "$mid" -lt $((before + big)) ] && ok || bad "the server was killed mid-import ($before < $mid < $((before + big)))"
tail -1 "$T/big.out" | python3 -c '
import json, sys
s = json.loads(sys.stdin.readline())["summary"]
assert s["added"] + s["present"] == s["documents"] == '"$big"' and s["rejected"] == 0, s' \
  && ok || bad "every document of the big catalog added or present"
kill -TERM "$PID_s"; wait "$PID_s"
[ "$(root_of "$S")" = "$(root_of "$C")" ] && ok || bad "after the restart the log is the local import's: nothing lost or doubled"
expect 0 "the served ledger verifies" -- "$E" verify --ledger "$S" --vkey "$VKEY"
finish
