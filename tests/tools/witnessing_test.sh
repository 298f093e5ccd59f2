#!/usr/bin/env bash
# End-to-end tests of the log's side of witnessing with real processes on loopback: `evledger
# serve --policy` with three `evledger witness` processes and a quorum of two. Before any
# quorum /checkpoint is 503 and appends go on; then it serves cosigned checkpoints only; one
# witness down, publication continues; two down, it waits and appends do not; restarted, it
# catches up; a restarted witness kept its state. ?wait=witnessed receipts verify with
# `proof verify --policy`, `verify --policy` passes against the served checkpoint and names a
# witness that did not sign; /metrics counts submissions and the publication delay. A fork
# made on purpose (a copy of the ledger, the same log key, other appends, served against the
# same witnesses) is never cosigned by any witness on both branches; shown without the policy,
# it stops a mirror of each branch with evidence that `verify --evidence` confirms.
# Usage: witnessing_test.sh EVLEDGER_BINARY SOURCE_DIR
set -uo pipefail
E="$1"
source "$(dirname "$0")/testlib.sh"

# wait_for SECONDS COMMAND...: run COMMAND every 0.1 s until it succeeds; false after SECONDS.
wait_for() {
  local tries=$(($1 * 10))
  shift
  for _ in $(seq "$tries"); do "$@" && return 0; sleep 0.1; done
  return 1
}
# The size of the checkpoint URL serves at /checkpoint (empty when it serves none).
served_size() { curl -sf "$1checkpoint" | sed -n 2p; }
size_of_ledger() { "$E" checkpoint --ledger "$1" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["size"])' 2>/dev/null; }
size_at_least() { local s; s=$(served_size "$1"); [ -n "$s" ] && [ "$s" -ge "$2" ]; }
# post URL INDEX [QUERY]: posts the publisher's entry INDEX; body in $T/post.json, code printed.
post() {
  curl -s -o "$T/post.json" -w '%{http_code}' -H 'Content-Type: application/octet-stream' \
    --data-binary "@$T/e/$2.bin" "$1add-event${3:-}"
}
start_witness() {  # NAME PORT
  start_process "$1" witnessing "$E" witness serve --key "$T/$1.key" --dir "$T/state-$1" \
    --log "$T/log.vkey" --listen "127.0.0.1:$2"
}
stop() { kill -TERM "$1"; wait "$1" 2>/dev/null; }

# The publisher's ledger A holds the entries; B, a copy after its genesis and grant, is served.
A="$T/a"
B="$T/b"
expect 0 "init" -- "$E" init --ledger "$A" --origin witnessing.evledger.invalid/log
cp "$A/keys/log.vkey" "$T/log.vkey"
expect 0 "key new" -- "$E" key new imp@sol --out "$T/imp.key"
expect 0 "grant" -- "$E" key grant --ledger "$A" --key "$T/imp.key.vkey" --role importer --scope sol-execbench --signer "$A/keys/admin.key"
cp -a "$A" "$B"
"$E" gen --runs 12 > "$T/catalog.jsonl"
expect 0 "import into A" -- "$E" import --ledger "$A" --key "$T/imp.key" "$T/catalog.jsonl"
N=$("$E" checkpoint --ledger "$A" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["size"])')
[ "$N" -ge 40 ] && ok || bad "A holds at least 40 entries ($N)"
mkdir "$T/e"
for i in $(seq 2 $((N - 1))); do "$E" get --ledger "$A" "$i" --raw > "$T/e/$i.bin"; done

# Three witnesses on fixed ports (a restart must come back at its URL), a quorum of two; and a
# stricter policy that also demands w4, which never runs.
P1=$(free_port); P2=$(free_port); P3=$(free_port)
for w in w1 w2 w3 w4; do "$E" key new "$w.witnessing.invalid" --cosigner --out "$T/$w.key" >/dev/null; done
{
  echo "log $(cat "$T/log.vkey")"
  echo "witness w1 $(cat "$T/w1.key.vkey") http://127.0.0.1:$P1/"
  echo "witness w2 $(cat "$T/w2.key.vkey") http://127.0.0.1:$P2/"
  echo "witness w3 $(cat "$T/w3.key.vkey") http://127.0.0.1:$P3/"
} > "$T/witnesses"
{ cat "$T/witnesses"; echo "group two 2 w1 w2 w3"; echo "quorum two"; } > "$T/policy"
{ cat "$T/witnesses"; echo "witness w4 $(cat "$T/w4.key.vkey") http://127.0.0.1:9/"
  echo "group all4 all w1 w2 w3 w4"; echo "quorum all4"; } > "$T/strict"

expect 2 "--policy on a read-only server is refused" -- "$E" serve --ledger "$B" --read-only --policy "$T/policy"
printf 'witness w1 %s\nquorum w1\n' "$(cat "$T/w1.key.vkey")" > "$T/nourl"
expect 2 "a witness without a URL is refused" -- "$E" serve --ledger "$B" --policy "$T/nourl" --listen 127.0.0.1:0
contains "$T/err" "no submission URL" "the refusal says what is missing"

# Before any quorum: /checkpoint is 503 and says why; appends are answered at the commit;
# ?wait=witnessed answers 504 after the server's wait, with the entry stored.
start_server s --ledger "$B" --policy "$T/policy" --wait-timeout 1500 --witness-timeout 2000 || { finish; exit 1; }
U="$URL_s"
contains "$T/s.out" "quorum two" "the server says it publishes witnessed checkpoints"
code=$(curl -s -o "$T/cp" -w '%{http_code}' "${U}checkpoint")
[ "$code" = 503 ] && ok || bad "/checkpoint before the first quorum: HTTP $code, expected 503"
contains "$T/cp" "no checkpoint of this log has its witnesses' quorum" "the 503 says why"
[ "$(post "$U" 2)" = 200 ] && ok || bad "an append without witnesses is answered"
[ "$(post "$U" 3 '?wait=witnessed')" = 504 ] && ok || bad "wait=witnessed without witnesses: 504"
contains "$T/post.json" '"index":3' "the 504 lists the stored entry"
contains "$T/post.json" "waiting for w1" "the 504 names the witnesses it waits for"
expect 1 "status --policy before the first quorum" -- "$E" status --url "$U" --policy "$T/policy"
contains "$T/out" "published     none" "status says nothing is published yet"
curl -sf "$U" > "$T/home.html" && ok || bad "the home page before the first quorum"
contains "$T/home.html" "no checkpoint has its quorum of cosignatures yet" "the home page says nothing is witnessed yet"
[ "$(post "$U" 4 '?wait=forever')" = 400 ] && ok || bad "an unknown wait is 400"
[ "$(post "$U" 4)" = 200 ] && ok || bad "and appended nothing: the entry goes in after it"
contains "$T/post.json" '"index":4' "at the next index"

# The witnesses come up: the log catches up and publishes a cosigned checkpoint.
start_witness w1 "$P1" && start_witness w2 "$P2" && start_witness w3 "$P3" || { finish; exit 1; }
wait_for 15 size_at_least "$U" 4 && ok || bad "publication starts once the witnesses answer"
wait_for 10 bash -c "curl -sf '${U}checkpoint' | grep -c '^— w[123].witnessing.invalid ' | grep -qx 3" &&
  ok || bad "the published checkpoint gathers all three cosignatures"
curl -sf "${U}checkpoint" > "$T/served.cp"
curl -sf "$U" > "$T/home.html" && ok || bad "the home page under --policy"
contains "$T/home.html" "size 5, cosigned by 3 of 3 witnesses: w1, w2, w3" "the home page names the cosigners"
contains "$T/home.html" "— w2.witnessing.invalid" "the home page shows the cosigned note"
expect 0 "status --url --policy" -- "$E" status --url "$U" --policy "$T/policy" --json
python3 - "$T/out" <<'EOF' && ok || bad "status --json: size, published checkpoint, age, a valid cosignature per witness"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["logSize"] == 5 and s["published"]["size"] == 5, s
assert s["quorum"] is True and 0 <= s["ageSeconds"] < 60, s
assert [(c["witness"], c["state"]) for c in s["cosignatures"]] == [("w1", "valid"), ("w2", "valid"), ("w3", "valid")], s
assert all(c["time"] > 1700000000 for c in s["cosignatures"]), s
EOF
expect 1 "status under a quorum the checkpoint lacks" -- "$E" status --url "$U" --policy "$T/strict"
contains "$T/out" "w4                       missing" "status names the missing witness"
expect 0 "status without a policy lists the lines unverified" -- "$E" status --url "$U" --vkey "$T/log.vkey"
contains "$T/out" "w2.witnessing.invalid    unverified" "each line, unverified"
expect 0 "verify --url --policy passes against the served checkpoint" -- "$E" verify --url "$U" --policy "$T/policy"
contains "$T/out" "witnessed: the published checkpoint of size" "verify says what was witnessed"
expect 1 "verify --policy fails for a quorum no checkpoint has" -- "$E" verify --url "$U" --policy "$T/strict"
matches "$T/err" "missing (w[0-9], )*w4" "the failure names the witness that did not sign"

# ?wait=witnessed: the receipt carries a cosigned checkpoint and verifies under the policy.
[ "$(post "$U" 5 '?wait=witnessed')" = 200 ] && ok || bad "wait=witnessed with the witnesses up: 200"
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["receipt"], end="")' "$T/post.json" > "$T/r5"
contains "$T/r5" "— w" "the receipt carries cosignatures"
expect 0 "proof verify --policy accepts the witnessed receipt" -- "$E" proof verify --policy "$T/policy" --proof "$T/r5" --entry "$T/e/5.bin"
expect 1 "proof verify --policy refuses it under a stricter quorum" -- "$E" proof verify --policy "$T/strict" --proof "$T/r5" --entry "$T/e/5.bin"
contains "$T/err" "w4" "and names the missing witness"
[ "$(post "$U" 6)" = 200 ] && ok || bad "a plain append"
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["receipt"], end="")' "$T/post.json" > "$T/r6"
expect 1 "a receipt without cosignatures fails proof verify --policy" -- "$E" proof verify --policy "$T/policy" --proof "$T/r6" --entry "$T/e/6.bin"
contains "$T/err" "quorum two not met" "the failure says the quorum is not met"

# One witness down: publication continues with two.
stop "$PID_w3"
for i in 7 8 9; do [ "$(post "$U" "$i" '?wait=witnessed')" = 200 ] && ok || bad "wait=witnessed with w3 down ($i)"; done
wait_for 10 size_at_least "$U" 10 && ok || bad "publication continues with one witness down"

# Two down: appends go on, publication waits.
curl -sf "${URL_w2}$(printf '%s' witnessing.evledger.invalid/log | sha256sum | cut -d' ' -f1)/checkpoint" > "$T/w2.before"
stop "$PID_w2"
PUBLISHED=$(served_size "$U")
for i in $(seq 10 14); do [ "$(post "$U" "$i")" = 200 ] && ok || bad "append $i with two witnesses down"; done
[ "$(post "$U" 15 '?wait=witnessed')" = 504 ] && ok || bad "wait=witnessed with two witnesses down: 504"
sleep 1
[ "$(served_size "$U")" = "$PUBLISHED" ] && ok || bad "publication waits without a quorum"
[ "$(curl -s "${U}healthz" | python3 -c 'import json,sys; print(json.load(sys.stdin)["size"])')" = 16 ] &&
  ok || bad "the log itself grew to 16 entries"

# w2's state survives a restart: on a port the log does not know, it still holds its size.
start_process w2x witnessing "$E" witness serve --key "$T/w2.key" --dir "$T/state-w2" --log "$T/log.vkey" --listen 127.0.0.1:0 || { finish; exit 1; }
curl -sf "${URL_w2x}$(printf '%s' witnessing.evledger.invalid/log | sha256sum | cut -d' ' -f1)/checkpoint" > "$T/w2.after"
cmp -s "$T/w2.before" "$T/w2.after" && ok || bad "a restarted witness serves the checkpoint it cosigned last"
curl -sf "${URL_w2x}metrics" > "$T/wmetrics"
contains "$T/wmetrics" 'evledger_http_requests_total{route="witnessed-checkpoint",status="200"} 1' "witness /metrics counts requests by route and status"
contains "$T/wmetrics" "evledger_witness_cosigned_total" "witness /metrics counts cosigned checkpoints"
stop "$PID_w2x"

# Both back: publication catches up with the log.
start_witness w2 "$P2" && start_witness w3 "$P3" || { finish; exit 1; }
wait_for 20 size_at_least "$U" 16 && ok || bad "publication catches up once the witnesses return"
curl -sf "${U}metrics" > "$T/metrics"
contains "$T/metrics" 'evledger_witness_submissions_total{witness="w1",outcome="cosigned"}' "/metrics counts submissions by witness"
python3 - "$T/metrics" <<'EOF' && ok || bad "/metrics: failures of the stopped witnesses and publication delays"
import re, sys
m = open(sys.argv[1]).read()
def v(name):
    return float(re.search("^" + re.escape(name) + r" (\S+)$", m, re.M).group(1))
assert v('evledger_witness_submissions_total{witness="w2",outcome="failed"}') > 0
assert v('evledger_witness_submissions_total{witness="w3",outcome="failed"}') > 0
assert v('evledger_witness_publication_delay_seconds_count') >= 10
assert v('evledger_witnessed_size') == 16
EOF

# A restart of the log serves the stored publication at once.
stop "$PID_s"
test -s "$B/witnessing/checkpoint" && ok || bad "the publication is stored in the ledger directory"
expect 0 "verify --ledger --policy checks the stored publication" -- "$E" verify --ledger "$B" --policy "$T/policy"
expect 1 "verify --ledger --policy names a witness it lacks" -- "$E" verify --ledger "$B" --policy "$T/strict"
matches "$T/err" "missing (w[0-9], )*w4" "the ledger's failure names w4"
expect 0 "status --ledger shows the witnessed publication" -- "$E" status --ledger "$B" --policy "$T/policy"
contains "$T/out" "(the witnessed checkpoint of serve --policy)" "status says it is the witnessed one"

# A fork on purpose: C is a copy of B with the same log key; B and C append different entries.
cp -a "$B" "$T/c"
start_server s --ledger "$B" --policy "$T/policy" --wait-timeout 3000 --witness-timeout 2000 || { finish; exit 1; }
U="$URL_s"
[ "$(served_size "$U")" = 16 ] && ok || bad "a restarted log serves its stored publication"
start_server c --ledger "$T/c" --policy "$T/policy" --wait-timeout 1500 --witness-timeout 2000 || { finish; exit 1; }
for i in $(seq 16 20); do [ "$(post "$U" "$i" '?wait=witnessed')" = 200 ] && ok || bad "branch B: append $i witnessed"; done
for i in $(seq 21 30); do [ "$(post "$URL_c" "$i")" = 200 ] && ok || bad "branch C: append $i"; done
[ "$(post "$URL_c" 31 '?wait=witnessed')" = 504 ] && ok || bad "branch C never gets a quorum"
[ "$(served_size "$URL_c")" = 16 ] && ok || bad "branch C publishes nothing past the fork"
expect 0 "status of branch C against branch B as its upstream" -- "$E" status --url "$URL_c" --upstream "$U" --json
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["logSize"] == 27 and s["upstreamSize"] == 21 and s["lag"] == 5, s' "$T/out" &&
  ok || bad "status shows the log size beyond the published one and the lag behind the upstream"
ORIGIN_HASH=$(printf '%s' witnessing.evledger.invalid/log | sha256sum | cut -d' ' -f1)
for w in w1 w2 w3; do
  url_var="URL_$w"
  curl -sf "${!url_var}$ORIGIN_HASH/checkpoint" > "$T/$w.cp"
  size=$(sed -n 2p "$T/$w.cp")
  "$E" checkpoint --ledger "$B" --size "$size" > "$T/b.cp" 2>/dev/null
  [ "$(sed -n 3p "$T/$w.cp")" = "$(sed -n 3p "$T/b.cp")" ] && ok || bad "witness $w holds branch B's tree at size $size"
done
contains "$T/c.err" "witness w1" "branch C's server reports what the witnesses answer"
curl -sf "${URL_c}metrics" > "$T/cmetrics"
python3 - "$T/cmetrics" <<'EOF' && ok || bad "no witness cosigned branch C"
import re, sys
m = open(sys.argv[1]).read()
for w in ("w1", "w2", "w3"):
    n = float(re.search(r'evledger_witness_submissions_total\{witness="%s",outcome="cosigned"\} (\S+)' % w, m).group(1))
    assert n == 0, (w, n)
EOF

expect 0 "status of branch C under the policy" -- "$E" status --url "$URL_c" --policy "$T/policy"
contains "$T/out" "published     size 16," "branch C still publishes the checkpoint before the fork"

# Branch C's operator shows its unwitnessed branch without the policy (serve --read-only): a
# mirror under the policy refuses it; mirrors of each branch, shown the other, stop with
# evidence that verify --evidence accepts; the served cosignatures are all of branch B.
stop "$PID_c"
start_server cr --ledger "$T/c" --read-only || { finish; exit 1; }
NC=$(served_size "$URL_cr")
[ "$NC" -gt 21 ] && ok || bad "branch C shows its own checkpoint read-only ($NC)"
expect 1 "a mirror under the policy refuses branch C's unwitnessed checkpoint" -- "$E" mirror --from "$URL_cr" --ledger "$T/mp" --vkey "$T/log.vkey" --policy "$T/policy"
contains "$T/err" "quorum two" "the refusal names the quorum"
expect 0 "a mirror of branch B, under the policy" -- "$E" mirror --from "$U" --ledger "$T/mb" --vkey "$T/log.vkey" --policy "$T/policy"
expect 0 "a mirror of branch C, without it" -- "$E" mirror --from "$URL_cr" --ledger "$T/mc" --vkey "$T/log.vkey"
for m in mb mc; do
  [ "$m" = mb ] && from="$URL_cr" || from="$U"
  expect 1 "the mirror of one branch, shown the other, stops ($m)" -- timeout 60 "$E" mirror --from "$from" --ledger "$T/$m" --vkey "$T/log.vkey" --follow 1
  contains "$T/err" "split view" "$m says split view"
  ev=$(ls "$T/$m"/evidence/split-view-*.txt 2>/dev/null | head -n 1)
  [ -n "$ev" ] && grep -qF "$ev" "$T/err" && ok || bad "$m writes its evidence and names it"
  expect 0 "verify --evidence confirms $m's evidence" -- "$E" verify --evidence "$ev" --vkey "$T/log.vkey"
  contains "$T/out" "split view proven" "$m's evidence proves a split view"
done
[ "$(size_of_ledger "$T/mb")" = 21 ] && [ "$(size_of_ledger "$T/mc")" = "$NC" ] && ok ||
  bad "a mirror that found a split view keeps what it verified before"
# Every cosigned checkpoint anyone serves (both logs' /checkpoint, each witness's monitoring
# endpoint) is of branch B: its root is B's at its size, and C's holds nothing past the fork.
curl -sf "${U}checkpoint" > "$T/s.cp"
curl -sf "${URL_cr}checkpoint" > "$T/cr.cp"
for w in w1 w2 w3; do url_var="URL_$w"; curl -sf "${!url_var}$ORIGIN_HASH/checkpoint" > "$T/$w.cp"; done
for f in s w1 w2 w3; do
  size=$(sed -n 2p "$T/$f.cp")
  "$E" checkpoint --ledger "$B" --size "$size" > "$T/b.cp" 2>/dev/null
  "$E" checkpoint --ledger "$T/c" --size "$size" > "$T/c.cp" 2>/dev/null
  [ "$(sed -n 3p "$T/$f.cp")" = "$(sed -n 3p "$T/b.cp")" ] && [ "$(sed -n 3p "$T/$f.cp")" != "$(sed -n 3p "$T/c.cp")" ] &&
    grep -q '^— w[123].witnessing.invalid ' "$T/$f.cp" && ok || bad "the cosigned checkpoint of $f (size $size) is of branch B only"
done
! grep -q "^— w[123].witnessing.invalid " "$T/cr.cp" && ok || bad "no witness cosigned branch C's own checkpoint"

stop "$PID_cr"
stop "$PID_s"
for w in w1 w2 w3; do pid_var="PID_$w"; stop "${!pid_var}"; done
finish
