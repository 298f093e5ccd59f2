#!/usr/bin/env bash
# Power loss, not just process death: `evledger append` and `evledger serve` (8 publishers
# posting /add-event) run under the power-loss shim (tests/powerloss/shim.c), which journals
# every write and sync to the ledger's files. Each round the power is cut: the process exits
# after its N-th sync (N chosen per round), or is SIGKILLed. tests/powerloss/materialise.py
# then builds the directory the disk could hold (synced writes, plus a seeded subset of the
# unsynced 4 KiB pieces: none, all, or a random share), and the next round runs on that.
# After every cut the ledger opens and verifies, and every entry acknowledged (a line of
# append, a 200 from serve) is at its index. Prints: cuts, acknowledged, lost (must be 0).
# A self-check runs the same check on a disk that lies (the shim's EVLEDGER_PL_UNSAFE=nosync:
# synced writes may be dropped) and expects it to find lost entries.
# Usage: powerloss_test.sh EVLEDGER_BINARY SHIM_LIBRARY SOURCE_DIR [APPEND_ROUNDS] [SERVE_ROUNDS]
set -uo pipefail
E="$1"
SHIM="$2"
SRC="$3"
APPEND_ROUNDS="${4:-40}"
SERVE_ROUNDS="${5:-20}"
LOAD="$SRC/tests/tools/append_load.py"
MATERIALISE="$SRC/tests/powerloss/materialise.py"
source "$(dirname "$0")/testlib.sh"
if ldd "$E" | grep -q 'lib[at]san'; then
  echo "skipped: the power-loss shim is not preloaded into a sanitizer build"
  exit 0
fi
SERVER=""
cleanup() {
  [ -n "$SERVER" ] && kill -9 "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT

# The entries (testlib's kill_catalog); the self-check's ledger is another copy of L.
kill_catalog powerloss.evledger.invalid/log 400 || { finish; exit 1; }
cp -a "$L" "$T/self"
: > "$T/acks"

# slice FIRST COUNT OUT: entries FIRST.. of entries.bin, framed, into OUT.
slice() {
  python3 - "$T/entries.bin" "$1" "$2" "$3" <<'EOF'
import sys
data, out, pos = open(sys.argv[1], "rb").read(), [], 0
while pos < len(data):
    n = data[pos] << 8 | data[pos + 1]
    out.append(data[pos:pos + 2 + n])
    pos += 2 + n
first, count = int(sys.argv[2]), int(sys.argv[3])
open(sys.argv[4], "wb").write(b"".join(out[first:first + count]))
EOF
}

# append_acks FIRST < append's output >> acks: "index id kind position" per entry stored.
append_acks() {
  sed -n 's/^stream entry \([0-9]*\): \(appended\|already present\) at index \([0-9]*\) \(sha256:[0-9a-f]*\)$/\3 \4 \2 \1/p' |
    awk -v first="$1" '{ print $1, $2, ($3 == "appended" ? "added" : "present"), $NF + first }'
}

# cut_and_materialise DIR BASE ROUND: the power cut: DIR becomes what the disk holds.
cut_and_materialise() {
  local modes=(nothing everything random random)
  local mode=${modes[$(($3 % 4))]}
  rm -rf "$1.cut"
  if ! python3 "$MATERIALISE" "$2" "$T/journal" "$1.cut" --seed "$3" --mode "$mode" >>"$T/materialise.out"; then
    bad "round $3: materialise"; return 1
  fi
  rm -rf "$1" "$2" "$T/journal"
  mv "$1.cut" "$1"
}

# check_acks LEDGER ACKS: prints "acknowledged lost" for the acknowledgements in ACKS.
check_acks() {
  "$E" log --ledger "$1" --json > "$T/log.jsonl" || { echo "0 -1"; return; }
  python3 - "$2" "$T/log.jsonl" <<'EOF'
import json, sys
log = {}
for line in open(sys.argv[2]):
    e = json.loads(line)
    log[e["index"]] = e["id"]
acked = lost = 0
for line in open(sys.argv[1]):
    if not line.strip():
        continue
    index, eid = line.split()[:2]
    acked += 1
    if log.get(int(index)) != eid:
        lost += 1
print(acked, lost)
EOF
}

verify_after_cut() {
  "$E" verify --ledger "$L" --vkey "$VKEY" >"$T/verify.out" 2>&1 && return
  bad "$1: verify after the cut"; sed 's/^/  | /' "$T/verify.out" >&2
}

SHIM_ENV=(env LD_PRELOAD="$SHIM" EVLEDGER_PL_DIR="$L" EVLEDGER_PL_JOURNAL="$T/journal")
shim_env() {
  "${SHIM_ENV[@]}" "$@"
}

cuts=0
at_sync=0
next=2
total=$(python3 -c "import sys; d=open(sys.argv[1],'rb').read(); p=n=0
while p < len(d): p += 2 + (d[p] << 8 | d[p+1]); n += 1
print(n)" "$T/entries.bin")

# Rounds of `evledger append`: a batch of 1..40 entries (some resent), cut after 1..4 syncs
# (a commit is an fdatasync of the data pages, then the meta page written O_DSYNC).
for round in $(seq "$APPEND_ROUNDS"); do
  count=$((1 + (round * 7919) % 40))
  first=$((next > 3 ? next - round % 3 : next))
  [ $((first + count)) -gt "$total" ] && first=2
  slice "$first" "$count" "$T/batch.bin"
  cp -a "$L" "$T/base"
  shim_env EVLEDGER_PL_CUT_AFTER_SYNCS=$((1 + round % 4)) "$E" append --ledger "$L" - \
    <"$T/batch.bin" >"$T/append.out" 2>"$T/append.err"
  rc=$?
  [ "$rc" -eq 86 ] && at_sync=$((at_sync + 1))
  if [ "$rc" -ne 86 ] && [ "$rc" -ne 0 ]; then
    bad "append round $round: exit $rc"; sed 's/^/  | /' "$T/append.err" >&2
  fi
  append_acks "$first" <"$T/append.out" >>"$T/acks"
  cut_and_materialise "$L" "$T/base" "$round" || break
  cuts=$((cuts + 1))
  next=$((first + count))
  verify_after_cut "append round $round"
done
read -r append_acked append_lost < <(check_acks "$L" "$T/acks")
echo "powerloss append: cuts $cuts ($at_sync mid-run, at a sync), acknowledged $append_acked, lost $append_lost"
[ "$append_lost" = 0 ] && ok || bad "append: acknowledged entries lost after a power cut"

# Rounds of `evledger serve`: 8 publishers post until the server's power is cut, after its
# N-th sync (N in 2..25), or by SIGKILL when the publishers ran out of entries first.
start_server() {
  : > "$T/serve.out"
  # Not through shim_env: a function in the background is a subshell, whose pid is not the
  # server's, and the SIGKILL of a round that ends without a cut must reach the server.
  "${SHIM_ENV[@]}" EVLEDGER_PL_CUT_AFTER_SYNCS="$1" "$E" serve --ledger "$L" --listen 127.0.0.1:0 \
    >"$T/serve.out" 2>>"$T/serve.err" &
  SERVER=$!
  for _ in $(seq 200); do
    grep -q '^serving http://' "$T/serve.out" 2>/dev/null && break
    kill -0 "$SERVER" 2>/dev/null || break
    sleep 0.05
  done
  URL=$(sed -n 's/^serving \(http:[^ ]*\).*/\1/p' "$T/serve.out")
  [ -n "$URL" ]
}
: > "$T/serve-acks"
serve_cuts=0
serve_at_sync=0
for round in $(seq "$SERVE_ROUNDS"); do
  cp -a "$L" "$T/base"
  start_server $((2 + (round * 7) % 24)) || { bad "serve round $round: the server did not start"; cat "$T/serve.err" >&2; break; }
  python3 "$LOAD" "$URL" "$T/entries.bin" "$T/serve-acks" --clients 8 --batch $((1 + round % 4)) \
    --until-error --skip-acked --seed "$round" >"$T/load.out" 2>"$T/load.err"
  kill -9 "$SERVER" 2>/dev/null
  wait "$SERVER" 2>/dev/null
  [ $? -eq 86 ] && serve_at_sync=$((serve_at_sync + 1))
  SERVER=""
  cut_and_materialise "$L" "$T/base" "$round" || break
  serve_cuts=$((serve_cuts + 1))
  verify_after_cut "serve round $round"
done
read -r serve_acked serve_lost < <(check_acks "$L" "$T/serve-acks")
echo "powerloss serve: cuts $serve_cuts ($serve_at_sync at a sync, the others by SIGKILL), acknowledged $serve_acked, lost $serve_lost"
[ "$serve_lost" = 0 ] && ok || bad "serve: acknowledged entries lost after a power cut"
read -r append_acked append_lost < <(check_acks "$L" "$T/acks")
[ "$append_lost" = 0 ] && ok || bad "append's acknowledged entries lost during the serve rounds"

# The self-check: the same append and check on a disk that drops synced writes must lose
# entries (and on an honest disk, with the same seed and mode, must not).
for unsafe in "" nosync; do
  rm -rf "$T/self.base" "$T/journal"
  cp -a "$T/self" "$T/self.base"
  slice 2 30 "$T/batch.bin"
  env LD_PRELOAD="$SHIM" EVLEDGER_PL_DIR="$T/self" EVLEDGER_PL_JOURNAL="$T/journal" \
    EVLEDGER_PL_UNSAFE="$unsafe" "$E" append --ledger "$T/self" - <"$T/batch.bin" >"$T/append.out" 2>&1
  append_acks 2 <"$T/append.out" >"$T/self-acks"
  rm -rf "$T/self.cut"
  python3 "$MATERIALISE" "$T/self.base" "$T/journal" "$T/self.cut" --seed 1 --mode nothing >/dev/null
  read -r acked lost < <(check_acks "$T/self.cut" "$T/self-acks")
  if [ -n "$unsafe" ]; then
    echo "self-check, a disk that drops synced writes: acknowledged $acked, lost $lost"
    [ "$lost" -gt 0 ] && ok || bad "the self-check: a lying disk must lose acknowledged entries"
  else
    [ "$acked" -gt 0 ] && [ "$lost" = 0 ] && ok || bad "the self-check's control: acknowledged $acked, lost $lost"
    rm -rf "$T/self"; mv "$T/self.base" "$T/self"
  fi
done

echo "kills=$((cuts + serve_cuts)) acknowledged=$((append_acked + serve_acked)) lost=$((append_lost + serve_lost))"
finish
