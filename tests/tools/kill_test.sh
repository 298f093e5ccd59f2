#!/usr/bin/env bash
# Crash consistency under SIGKILL at random moments, ROUNDS times, of one command (MODE):
#   append   `evledger append -`, 32 to 288 entries of a stream at a time;
#   import   `evledger import --batch 16 --json -`, 32 to 288 lines of a catalog at a time;
#   rebuild  `evledger rebuild` refolding the projections of a 6,000-entry log;
#   witness  `evledger witness serve`, killed while a C2SP log (foreign_log.py grow) sends it
#            one add-checkpoint after another.
# Each is killed at a random point of the time a whole run took (adjusted as runs go). After every kill the ledger
# verifies (rebuild: and `rebuild --check` holds every 5th run), every entry acknowledged (a line of append, a JSON line of import) is at its index, and the
# next run resumes; a witness never holds a size smaller than one it cosigned (each run's
# first request from the newest size it cosigned finds that size or a later one). A last
# run without a kill completes. Runs go on until ROUNDS kills landed while the command was
# running (a run that ended first is not a kill; at most 3 x ROUNDS runs). Prints one line:
# kills=K acknowledged=A lost=L (L must be 0).
# Usage: kill_test.sh EVLEDGER_BINARY SOURCE_DIR MODE [ROUNDS]
set -uo pipefail
E="$1"
SRC="$2"
MODE="$3"
ROUNDS="${4:-40}"
source "$(dirname "$0")/testlib.sh"
FLOG="$SRC/tests/tools/foreign_log.py"

# delay ROUND SCALE: a pseudo-random pause in (0.05, 0.95) x SCALE seconds, fixed by ROUND.
delay() { python3 -c "import random, sys; r = random.Random(int(sys.argv[1])); print(round(float(sys.argv[2]) * (0.05 + 0.9 * r.random()), 3))" "$1" "$2"; }

# slice FILE FROM COUNT FRAMED OUT: items FROM..FROM+COUNT-1 of FILE into OUT (an item: a
# uint16-framed entry when FRAMED is 1, else a line). Prints how many it wrote.
slice() {
  python3 - "$@" <<'EOF'
import sys
data, first, count, framed = open(sys.argv[1], "rb").read(), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
items, pos = [], 0
while pos < len(data):
    end = pos + 2 + (data[pos] << 8 | data[pos + 1]) if framed else data.index(b"\n", pos) + 1
    items.append(data[pos:end])
    pos = end
part = items[first:first + count]
open(sys.argv[5], "wb").write(b"".join(part))
print(len(part))
EOF
}

# seconds COMMAND...: how long COMMAND took (its output discarded).
seconds() {
  local start
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || bad "a run without a kill: $*"
  python3 -c "import sys; print(max(0.05, float(sys.argv[2]) - float(sys.argv[1])))" "$start" "$(date +%s.%N)"
}

# scaled SECONDS FACTOR: the time the next kill aims within, after a run that was killed (up)
# or ended first (down), so that kills land while the command runs on a machine whose speed
# changes.
scaled() { awk -v t="$1" -v f="$2" 'BEGIN { t *= f; if (t < 0.02) t = 0.02; print t }'; }

# kill_mid PID SECONDS: waits, then SIGKILLs PID; returns 0 when PID was still running (not
# ended, nor a zombie that ended and waits to be reaped).
kill_mid() {
  sleep "$2"
  local running=1 state
  state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
  [ -n "$state" ] && [ "$state" != Z ] && running=0
  kill -9 "$1" 2>/dev/null
  wait "$1" 2>/dev/null
  return $running
}

# lost_of ACKS LEDGER: how many acknowledgements "index id" of ACKS are not at their index.
lost_of() {
  python3 - "$1" <("$E" log --ledger "$2" --json) <<'EOF'
import json, sys
log = {}
for line in open(sys.argv[2]):
    e = json.loads(line)
    log[e["index"]] = e["id"]
lost = 0
for line in open(sys.argv[1]):
    if line.strip():
        index, eid = line.split()[:2]
        if log.get(int(index)) != eid:
            lost += 1
            print("lost: %s acknowledged at %s" % (eid, index), file=sys.stderr)
print(lost)
EOF
}

verified() {
  "$E" verify --ledger "$L" --vkey "$VKEY" >"$T/verify.out" 2>&1 && return 0
  bad "$1: verify after SIGKILL"; sed 's/^/  | /' "$T/verify.out" >&2
}

kills=0
: > "$T/acks"
case "$MODE" in
  append | import)
    kill_catalog "$MODE-kill.evledger.invalid/log" 800 || { finish; exit 1; }
    "$E" gen --runs 800 > "$T/catalog.jsonl" 2>/dev/null
    # Each run takes up to 288 items, from a little before the first one not yet acknowledged
    # (some resent); the kill comes at a random point of the time 288 items took at first.
    file="$T/entries.bin" framed=1
    [ "$MODE" = import ] && file="$T/catalog.jsonl" framed=0
    # run_one LEDGER < ITEMS: the command under test, in place of the (sub)shell that runs it.
    run_one() {
      if [ "$MODE" = append ]; then exec "$E" append --ledger "$1" -; else
        exec "$E" import --ledger "$1" --key "$T/imp.key" --batch 16 --json -; fi
    }
    slice "$file" 0 288 "$framed" "$T/batch" >/dev/null
    cp -a "$L" "$T/scratch"
    took=$(seconds eval '(run_one "$T/scratch" < "$T/batch")')
    rm -rf "$T/scratch"
    next=0
    attempt=0
    while [ "$kills" -lt "$ROUNDS" ] && [ "$attempt" -lt $((3 * ROUNDS)) ]; do
      attempt=$((attempt + 1))
      from=$((next > 5 ? next - attempt % 6 : 0))
      if [ "$(slice "$file" "$from" $((32 + attempt * 97 % 257)) "$framed" "$T/batch")" = 0 ]; then
        from=0
        slice "$file" 0 288 "$framed" "$T/batch" >/dev/null
      fi
      pause=$(delay "$attempt" "$took")
      run_one "$L" < "$T/batch" >"$T/run.out" 2>"$T/run.err" &
      if kill_mid $! "$pause"; then kills=$((kills + 1)); took=$(scaled "$took" 1.15); else
        took=$(scaled "$took" 0.6); fi
      if [ "$MODE" = append ]; then
        # "stream entry N: appended at index I sha256:<64 hex>" (N counts from this run's first;
        # a line the kill cut short is no acknowledgement)
        sed -n 's/^stream entry \([0-9]*\): \(appended\|already present\) at index \([0-9]*\) \(sha256:[0-9a-f]\{64\}\)$/\3 \4 \1/p' \
          "$T/run.out" | awk -v from="$from" '{ print $1, $2, $3 + from }' >> "$T/acks"
      else
        python3 -c '
import json, sys
for line in open(sys.argv[1]):
    try:
        d = json.loads(line)
    except ValueError:
        break  # the line the kill cut short
    if d.get("status") in ("added", "present"):
        print(d["index"], d["event"], int(sys.argv[2]) + int(d["document"].split()[1]) - 1)' \
          "$T/run.out" "$from" >> "$T/acks"
      fi
      # The next run starts past the longest acknowledged prefix of the input.
      next=$(python3 -c '
import sys
seen = {int(l.split()[2]) for l in open(sys.argv[1]) if l.strip()}
n = 0
while n in seen:
    n += 1
print(n)' "$T/acks")
      verified "run $attempt"
    done
    # The last run: everything, no kill; every item ends stored or already present.
    if [ "$MODE" = append ]; then
      expect 0 "the whole stream, without a kill" -- "$E" append --ledger "$L" "-" < "$file"
    else
      expect 0 "the whole catalog, without a kill" -- "$E" import --ledger "$L" --key "$T/imp.key" "$file"
    fi
    ;;
  rebuild)
    kill_catalog rebuild-kill.evledger.invalid/log 3000 || { finish; exit 1; }
    L="$A"  # the ledger that holds the catalog
    "$E" log --ledger "$L" --json | python3 -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    print(e["index"], e["id"])' > "$T/acks"
    took=$(seconds "$E" rebuild --ledger "$L")
    attempt=0
    while [ "$kills" -lt "$ROUNDS" ] && [ "$attempt" -lt $((3 * ROUNDS)) ]; do
      attempt=$((attempt + 1))
      pause=$(delay "$attempt" "$took")
      "$E" rebuild --ledger "$L" >"$T/run.out" 2>"$T/run.err" &
      if kill_mid $! "$pause"; then kills=$((kills + 1)); took=$(scaled "$took" 1.15); else
        took=$(scaled "$took" 0.6); fi
      verified "run $attempt"
      if [ $((attempt % 5)) -eq 0 ]; then
        "$E" rebuild --ledger "$L" --check --vkey "$VKEY" >"$T/check.out" 2>&1 ||
          { bad "run $attempt: rebuild --check after SIGKILL"; sed 's/^/  | /' "$T/check.out" >&2; }
      fi
    done
    expect 0 "a rebuild without a kill" -- "$E" rebuild --ledger "$L"
    expect 0 "rebuild --check at the end" -- "$E" rebuild --ledger "$L" --check --vkey "$VKEY"
    ;;
  witness)
    "$E" key new kill.test/w --cosigner --out "$T/w.key" >/dev/null 2>&1 || bad "cosigner key"
    WVKEY=$(cat "$T/w.key.vkey")
    FVKEY=$(python3 "$FLOG" keygen "$T/flog.json" "witness-kill.test/log" "$(printf '3c%.0s' $(seq 32))")
    : > "$T/sizes"
    L=""
    for round in $(seq "$ROUNDS"); do
      start_process w witnessing "$E" witness serve --key "$T/w.key" --dir "$T/state" \
        --log "$FVKEY" --listen 127.0.0.1:0 || break
      pause=$(delay "$round" 0.8)
      python3 "$FLOG" grow "$URL_w" "$WVKEY" "$T/flog.json" "$T/sizes" >"$T/grow.out" 2>"$T/grow.err" &
      client=$!
      kill_mid "$PID_w" "$pause" && kills=$((kills + 1))
      wait "$client" || { bad "round $round: the log's checks of the witness"; sed 's/^/  | /' "$T/grow.err" >&2; }
      grep -q "smaller than the" "$T/grow.err" && echo "$round" >> "$T/smaller"
    done
    # The last round's first request is the check of the last kill (a later kill is not counted).
    start_process w witnessing "$E" witness serve --key "$T/w.key" --dir "$T/state" \
      --log "$FVKEY" --listen 127.0.0.1:0 || bad "the last witness did not start"
    python3 "$FLOG" grow "$URL_w" "$WVKEY" "$T/flog.json" "$T/sizes" >"$T/grow.out" 2>"$T/grow.err" &
    client=$!
    sleep 0.3
    kill -9 "$PID_w"; wait "$PID_w" 2>/dev/null
    wait "$client" && ok || { bad "the last round"; sed 's/^/  | /' "$T/grow.err" >&2; }
    grep -q "smaller than the" "$T/grow.err" && echo last >> "$T/smaller"
    acked=$(wc -l < "$T/sizes")
    lost=$(cat "$T/smaller" 2>/dev/null | wc -l)
    [ "$acked" -gt 0 ] && ok || bad "the witness cosigned nothing"
    echo "witness under SIGKILL: $(tail -n1 "$T/sizes") the newest size cosigned, $acked cosignatures"
    echo "kills=$kills acknowledged=$acked lost=$lost"
    [ "$lost" = 0 ] && ok || bad "the witness went back to a size smaller than one it cosigned"
    finish
    exit
    ;;
  *) echo "kill_test.sh: MODE is append, import, rebuild or witness, not '$MODE'" >&2; exit 2 ;;
esac

verified "the end"
acked=$(wc -l < "$T/acks")
lost=$(lost_of "$T/acks" "$L")
echo "$MODE under SIGKILL: $kills kills in $attempt runs (the others ended first), log size $("$E" log --ledger "$L" | wc -l)"
echo "kills=$kills acknowledged=$acked lost=$lost"
[ "$lost" = 0 ] && ok || bad "acknowledged entries lost"
[ "$kills" -eq "$ROUNDS" ] && ok || bad "only $kills of $ROUNDS kills landed while $MODE ran"
finish
