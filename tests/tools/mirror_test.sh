#!/usr/bin/env bash
# End-to-end tests of `evledger mirror` with real processes on loopback: a mirror of a live
# `evledger serve`, following it while entries are appended; another pulling from nginx serving
# an export-tiles directory. Each copy ends byte-identical to its upstream (the export of both,
# the checkpoints, the statement) and verifies; `serve --read-only` of a mirror answers the
# upstream's URLs byte for byte (every tile at every width; tests/tools/same_tiles.py), and its
# own projection digest is the upstream's statement's. A resumed pull fetches only what is
# missing. Hostile upstreams (a tampered entry bundle, a bad checkpoint signature, a tampered
# hash tile) fail with a clear message and store nothing. A fork made on purpose (a copy of the ledger, the same log key,
# different appends to each) stops the mirror with evidence that `verify --evidence` accepts,
# and a doctored copy of it is refused; `verify --from-checkpoint --evidence-dir` writes the same.
# Usage: mirror_test.sh EVLEDGER_BINARY SOURCE_DIR
set -uo pipefail
E="$1"
source "$(dirname "$0")/testlib.sh"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "nginx is not installed (tools/scripts/install-deps.sh)" >&2; exit 1; }

wait_for() {  # SECONDS COMMAND...
  local tries=$(($1 * 10))
  shift
  for _ in $(seq "$tries"); do "$@" && return 0; sleep 0.1; done
  return 1
}
stop() { kill -TERM "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
size_of() { "$E" checkpoint --ledger "$1" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["size"])' 2>/dev/null || echo 0; }
mirror_size_is() { [ "$(size_of "$1")" = "$2" ]; }
# same_copy A B WHAT: the export of ledger B is byte-identical to the export of ledger A.
same_copy() {
  rm -rf "$T/xa" "$T/xb"
  "$E" export-tiles --ledger "$1" --out "$T/xa" >/dev/null 2>&1 &&
    "$E" export-tiles --ledger "$2" --out "$T/xb" >/dev/null 2>&1 &&
    diff -r "$T/xa" "$T/xb" >/dev/null && ok || bad "$3: the tiles, bundles and checkpoint are identical"
  "$E" statement --ledger "$1" > "$T/sa" 2>/dev/null
  "$E" statement --ledger "$2" > "$T/sb" 2>/dev/null
  [ -s "$T/sa" ] && cmp -s "$T/sa" "$T/sb" && ok || bad "$3: the mirror holds the upstream's statement"
}
# start_nginx NAME ROOT: a static host of ROOT; sets URL_<NAME>.
start_nginx() {
  local name=$1 root=$2 port
  port=$(free_port)
  local n="$T/nginx-$name"
  chmod 755 "$root"
  chmod -R a+rX "$root"
  nginx_conf "$n" "$port" "default_type application/octet-stream;" "root $root;"
  "$NGINX" -e "$n/error.log" -p "$n" -c "$n/nginx.conf" 2>"$n/stderr" &
  PIDS+=($!)
  printf -v "URL_$name" '%s' "http://127.0.0.1:$port/"
  printf -v "PID_$name" '%s' "$!"
  wait_for 5 curl -s -f -o /dev/null "http://127.0.0.1:$port/checkpoint" && ok ||
    bad "nginx $name serves $root"
}

A="$T/a"
expect 0 "init" -- "$E" init --ledger "$A" --origin mirror.evledger.invalid/log
VKEY="$T/log.vkey"
cp "$A/keys/log.vkey" "$VKEY"
"$E" key new imp@sol --out "$T/imp.key" >/dev/null
"$E" key grant --ledger "$A" --key "$T/imp.key.vkey" --role importer --scope sol-execbench --signer "$A/keys/admin.key" >/dev/null
"$E" gen --runs 200 > "$T/c1.jsonl" 2>/dev/null
"$E" gen --runs 60 --seed 2 > "$T/c2.jsonl" 2>/dev/null
"$E" gen --runs 60 --seed 3 > "$T/c3.jsonl" 2>/dev/null
"$E" gen --runs 40 --seed 4 > "$T/c4.jsonl" 2>/dev/null
"$E" gen --runs 30 --seed 5 > "$T/c5.jsonl" 2>/dev/null
expect 0 "import into A" -- "$E" import --ledger "$A" --key "$T/imp.key" "$T/c1.jsonl"
N1=$(size_of "$A")
[ "$N1" -gt 300 ] && ok || bad "A holds a few hundred entries ($N1)"

# --- a mirror of a live server, following it ---------------------------------------------
start_server s --ledger "$A" || { finish; exit 1; }
M="$T/m"
expect 0 "mirror from serve" -- "$E" mirror --from "$URL_s" --ledger "$M" --vkey "$VKEY" --json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ok"] and r["size"] == int(sys.argv[2]) and r["previousSize"] == 0 and r["statementChecked"], r' "$T/out" "$N1" &&
  ok || bad "the mirror holds the upstream's size and checked its statement"
expect 0 "a second pull is up to date" -- "$E" mirror --from "$URL_s" --ledger "$M" --vkey "$VKEY"
contains "$T/out" "up to date at size $N1" "a pull with nothing new says so"
expect 0 "the mirror verifies" -- "$E" verify --ledger "$M" --vkey "$VKEY"
expect 0 "the mirror's projections follow from its entries" -- "$E" rebuild --ledger "$M" --check
expect 2 "a mirror takes no appends of its own" -- "$E" import --ledger "$M" --key "$T/imp.key" "$T/c2.jsonl"
contains "$T/err" "a mirror holds no log key and takes no entries of its own; publish to that log with --to URL" "the refusal says why and how to publish"
expect 1 "a mirror refuses another log's key" -- "$E" mirror --from "$URL_s" --ledger "$M" --vkey "$T/imp.key.vkey"
"$E" key new w1.mirror.invalid --cosigner --out "$T/w1.key" >/dev/null
printf 'log %s\nwitness w1 %s\nquorum w1\n' "$(cat "$VKEY")" "$(cat "$T/w1.key.vkey")" > "$T/policy"
expect 1 "--policy refuses a checkpoint without its quorum" -- "$E" mirror --from "$URL_s" --ledger "$T/mp" --vkey "$VKEY" --policy "$T/policy"
contains "$T/err" "missing w1" "the refusal names the witness"

"$E" mirror --from "$URL_s" --ledger "$M" --vkey "$VKEY" --follow 1 --connections 2 >"$T/follow.out" 2>"$T/follow.err" &
PID_follow=$!
PIDS+=($!)
expect 0 "append while the mirror follows" -- "$E" import --to "$URL_s" --key "$T/imp.key" "$T/c2.jsonl"
N2=$(curl -sf "${URL_s}checkpoint" | sed -n 2p)
[ "$N2" -gt "$N1" ] && ok || bad "the upstream grew ($N1 -> $N2)"
sleep 1.5
expect 0 "append more while the mirror follows" -- "$E" import --to "$URL_s" --key "$T/imp.key" "$T/c4.jsonl"
N3=$(curl -sf "${URL_s}checkpoint" | sed -n 2p)
wait_for 30 mirror_size_is "$M" "$N3" && ok || bad "the following mirror reached size $N3 ($(size_of "$M"))"
stop "$PID_follow"
stop "$PID_s"
same_copy "$A" "$M" "mirror of serve"
"$E" rebuild --ledger "$M" --json > "$T/m.digest" 2>/dev/null
contains "$T/m.digest" "$(sed -n 4p "$T/sa")" "the mirror's own projection digest equals the upstream's statement"

# --- serve --read-only of the mirror: the same URLs, byte for byte ------------------------
# Every tile of the tree (entry bundles, hash tiles at every level, each at its width and at
# every narrower partial width) and the checkpoint; the statement of the newest and of an
# older size.
start_server s --ledger "$A" || { finish; exit 1; }
start_server r --ledger "$M" --read-only || { finish; exit 1; }
python3 "$(dirname "$0")/same_tiles.py" "$N3" "$URL_s" "$URL_r" --every-width > "$T/same" && ok ||
  bad "serve --read-only of the mirror answers every tile and the checkpoint as the upstream does"
contains "$T/same" "byte-identical" "the tiles were compared"
for path in "api/v1/statement" "api/v1/statement?size=$N1"; do
  curl -sf "$URL_s$path" > "$T/up" ; curl -sf "$URL_r$path" > "$T/down"
  [ -s "$T/up" ] && cmp -s "$T/up" "$T/down" && ok || bad "serve --read-only of the mirror answers $path as the upstream does"
done
expect 0 "a mirror of the mirror" -- "$E" mirror --from "$URL_r" --ledger "$T/mm" --vkey "$VKEY"
stop "$PID_r"

# --- from nginx serving an export ----------------------------------------------------------
X="$T/export"
expect 0 "export A" -- "$E" export-tiles --ledger "$A" --out "$X"
start_nginx x "$X"
expect 0 "mirror from nginx" -- "$E" mirror --from "$URL_x" --ledger "$T/mx" --vkey "$VKEY" --connections 8 --json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ok"] and r["size"] == int(sys.argv[2]) and not r["statementChecked"], r' "$T/out" "$N3" &&
  ok || bad "the nginx mirror holds every entry (no statement on a static host)"
rm -rf "$T/xb"
"$E" export-tiles --ledger "$T/mx" --out "$T/xb" >/dev/null 2>&1
diff -r "$X" "$T/xb" >/dev/null && ok || bad "the nginx mirror's export is the export it pulled"
start_server rx --ledger "$T/mx" --read-only || { finish; exit 1; }
python3 "$(dirname "$0")/same_tiles.py" "$N3" "$URL_x" "$URL_rx" --dir "$X" > "$T/same" && ok ||
  bad "serve --read-only of the nginx mirror answers every file nginx serves, byte for byte"
stop "$PID_rx"
"$E" rebuild --ledger "$T/mx" --json > "$T/mx.digest" 2>/dev/null
"$E" statement --ledger "$A" > "$T/sa" 2>/dev/null
D=$(sed -n 4p "$T/sa")
contains "$T/mx.digest" "$D" "the nginx mirror's projection digest equals the upstream's statement"

stop "$PID_x"

# --- hostile upstreams: nothing stored --------------------------------------------------------
hostile() {  # NAME WHAT EXPECTED-TEXT: mirror from $URL_h into a fresh directory
  rm -rf "$T/mh"
  expect 1 "$2 is refused" -- "$E" mirror --from "$URL_h" --ledger "$T/mh" --vkey "$VKEY"
  contains "$T/err" "$3" "$2: the message says what"
  [ "$(size_of "$T/mh")" = 0 ] && ok || bad "$2: nothing is stored"
}
H="$T/hostile"
cp -a "$X" "$H"
start_nginx h "$H"
python3 - "$H/tile/entries/000" <<'EOF'
import sys
p = sys.argv[1]; b = bytearray(open(p, 'rb').read()); b[400] ^= 1; open(p, 'wb').write(bytes(b))
EOF
hostile h "a tampered entry bundle" "of the upstream"
cp "$X/tile/entries/000" "$H/tile/entries/000"
python3 - "$H/checkpoint" <<'EOF'
import sys
p = sys.argv[1]; t = open(p).read().split('\n')
sig = t[-2]; i = len(sig) - 10
t[-2] = sig[:i] + ('B' if sig[i] != 'B' else 'C') + sig[i + 1:]
open(p, 'w').write('\n'.join(t))
EOF
hostile h "a checkpoint with a bad signature" "checkpoint"
cp "$X/checkpoint" "$H/checkpoint"
python3 - "$H/tile/entries/000" <<'EOF'
import sys
p = sys.argv[1]; b = open(p, 'rb').read(); frames = []; i = 0
while i < len(b):
    n = b[i] << 8 | b[i + 1]; frames.append(b[i:i + 2 + n]); i += 2 + n
frames[10], frames[11] = frames[11], frames[10]  # valid entries, in another order
open(p, 'wb').write(b''.join(frames))
EOF
hostile h "a bundle of valid entries in another order" "root"
stop "$PID_h"

# --- a fork on purpose: the same log key, two histories ----------------------------------------
stop "$PID_s"
F="$T/fork"
cp -a "$A" "$F"
expect 0 "branch A appends" -- "$E" import --ledger "$A" --key "$T/imp.key" "$T/c3.jsonl"
"$E" checkpoint --ledger "$A" > "$T/saved.cp"
expect 0 "branch F appends other events, more of them" -- "$E" import --ledger "$F" --key "$T/imp.key" "$T/c5.jsonl" "$T/c3.jsonl"
start_server s --ledger "$A" || { finish; exit 1; }
start_server fk --ledger "$F" || { finish; exit 1; }
expect 0 "the mirror follows branch A" -- "$E" mirror --from "$URL_s" --ledger "$M" --vkey "$VKEY"
expect 1 "branch F shows a split view" -- "$E" mirror --from "$URL_fk" --ledger "$M" --vkey "$VKEY"
contains "$T/err" "split view" "the mirror says split view"
EV=$(ls "$M"/evidence/split-view-*.txt 2>/dev/null | head -n 1)
[ -n "$EV" ] && grep -qF "$EV" "$T/err" && ok || bad "the evidence file is written and named on stderr"
expect 0 "verify --evidence accepts it" -- "$E" verify --evidence "$EV" --vkey "$VKEY"
contains "$T/out" "split view proven" "verify --evidence says what it proves"
expect 0 "the mirror is still sound after the split view" -- "$E" verify --ledger "$M" --vkey "$VKEY"
python3 - "$EV" "$T/doctored" <<'EOF'
import sys
lines = open(sys.argv[1]).read().split('\n')
lines[2] = 'A' * 43 + '='  # another path hash
open(sys.argv[2], 'w').write('\n'.join(lines))
EOF
expect 1 "a doctored path is refused" -- "$E" verify --evidence "$T/doctored" --vkey "$VKEY"
contains "$T/err" "proves nothing" "the refusal says why"
head -n 3 "$EV" > "$T/cut"
expect 1 "an incomplete file is refused" -- "$E" verify --evidence "$T/cut" --vkey "$VKEY"
expect 1 "another key's evidence is refused" -- "$E" verify --evidence "$EV" --vkey "$T/imp.key.vkey"
expect 1 "verify --from-checkpoint against branch F" -- "$E" verify --url "$URL_fk" --vkey "$VKEY" --from-checkpoint "$T/saved.cp" --evidence-dir "$T/ev"
EV2=$(ls "$T"/ev/evidence/split-view-*.txt 2>/dev/null | head -n 1)
[ -n "$EV2" ] && grep -qF "$EV2" "$T/err" && ok || { bad "verify --evidence-dir writes and names the evidence"; cat "$T/err" >&2; }
expect 0 "verify --evidence accepts verify's evidence" -- "$E" verify --evidence "$EV2" --vkey "$VKEY"
expect 0 "verify --from-checkpoint of branch A passes" -- "$E" verify --url "$URL_s" --vkey "$VKEY" --from-checkpoint "$T/saved.cp" --evidence-dir "$T/ev2"
[ ! -e "$T/ev2/evidence" ] && ok || bad "no evidence for a consistent log"
stop "$PID_fk"
stop "$PID_s"
finish
