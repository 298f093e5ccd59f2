#!/usr/bin/env bash
# End-to-end tests of the JSON API of `evledger serve` with real processes on loopback: a
# generated catalog with reruns, attestations and corrections, served read-only; every route's
# answers (and error answers) validated against tools/server/openapi.json with
# python3-jsonschema; the API's answers equal to the CLI's --json output for the same
# question; and the read-only server following the commits of another process.
# Usage: api_test.sh EVLEDGER_BINARY SOURCE_DIR
set -uo pipefail
E="$1"
SRC="$2"
API="$SRC/tests/tools/api_schema_test.py"
source "$(dirname "$0")/testlib.sh"

python3 -c 'import jsonschema' 2>/dev/null || { bad "python3-jsonschema is missing (tools/scripts/install-deps.sh)"; finish; exit 1; }

L="$T/ledger"
A="$L/keys/admin.key"
activity_ledger api.evledger.invalid/log
"$E" gen --runs 200 2>/dev/null | "$E" import --ledger "$L" --key "$T/imp.key" - >/dev/null 2>"$T/err" \
  && ok || bad "gen --runs 200 | import"
expect 0 "gen --activity" -- "$E" gen --activity 150 --seed 3 --ledger "$L" \
  --runner-key "$T/runa.key" --runner-key "$T/runb.key" --attestor-key "$T/att.key" --curator-key "$T/cur.key"

start_server ro --ledger "$L" --read-only || { finish; exit 1; }
U="$URL_ro"

expect 0 "every route's answers hold to the OpenAPI document" -- python3 "$API" check "$U" "$SRC/tools/server/openapi.json"
grep -q "hold to the document" "$T/out" && ok || bad "the schema check reports what it checked"
cat "$T/out"

# The API answers what the CLI prints for the same question.
same() {  # same DESCRIPTION TARGET -- CLI ARGS...
  local what=$1 target=$2
  shift 3
  "$E" "$@" >"$T/cli.jsonl" 2>"$T/err" || { bad "$what: the CLI failed"; sed 's/^/  | /' "$T/err" >&2; return; }
  expect 0 "$what" -- python3 "$API" same "$U" "$target" "$T/cli.jsonl"
}
RUN=$("$E" runs --ledger "$L" --json | sed -n '7s/.*"run":"\(sha256:[0-9a-f]*\)".*/\1/p')
GROUP=$("$E" groups --ledger "$L" --json | sed -n '3s/.*"group":"\(sha256:[0-9a-f]*\)".*/\1/p')
BENCH=$("$E" runs --ledger "$L" --json | sed -n '1s/.*"benchmark":"\([^"]*\)".*/\1/p')
[ -n "$RUN" ] && [ -n "$GROUP" ] && [ -n "$BENCH" ] && ok || bad "found a run, a group and a benchmark"
same "runs" /api/v1/runs -- runs --ledger "$L" --json
same "runs of a group" "/api/v1/runs?group=$GROUP" -- runs --ledger "$L" --group "$GROUP" --json
same "runs of a benchmark" "/api/v1/runs?benchmark=$BENCH" -- runs --ledger "$L" --benchmark "$BENCH" --json
same "show" "/api/v1/runs/$RUN" -- show --ledger "$L" "$RUN" --json
same "groups" /api/v1/groups -- groups --ledger "$L" --json
same "leaders" /api/v1/leaders -- leaders --ledger "$L" --json
same "leaders of a group" "/api/v1/leaders?group=${GROUP:7:12}" -- leaders --ledger "$L" --group "$GROUP" --json
same "keys" /api/v1/keys -- key list --ledger "$L" --json
same "statement" /api/v1/statement -- statement --ledger "$L" --json
CP3=$(curl -s "${U}api/v1/checkpoints?limit=3" | python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][2]["size"])')
same "checkpoint of a size" "/api/v1/checkpoints?from=$CP3&limit=1" -- checkpoint --ledger "$L" --size "$CP3" --json
same "get" /api/v1/events/11 -- get --ledger "$L" 11 --json
same "log" "/api/v1/events?from=3" -- log --ledger "$L" --from 3 --json
SIZE=$("$E" checkpoint --ledger "$L" --json | sed 's/.*"size":\([0-9]*\).*/\1/')
same "proof inclusion" "/api/v1/proofs/inclusion?index=5&size=$SIZE" -- proof inclusion --ledger "$L" --index 5 --format json
same "proof consistency" "/api/v1/proofs/consistency?from=$CP3" -- proof consistency --ledger "$L" --from "$CP3"
curl -s -f "${U}api/v1/events/11?format=raw" -o "$T/api.bin" && "$E" get --ledger "$L" 11 --raw > "$T/cli.bin" \
  && cmp -s "$T/api.bin" "$T/cli.bin" && ok || bad "events/11?format=raw is the stored entry"
curl -s -f "${U}api/v1/proofs/inclusion?index=11&format=tlog-proof" -o "$T/p.tlog-proof" || bad "a tlog-proof"
expect 0 "the API's tlog-proof verifies offline" -- "$E" proof verify --vkey "$L/keys/log.vkey" --proof "$T/p.tlog-proof" --entry "$T/cli.bin"

# A read-only server reads the state as it is at each request: another process's grant and
# import show up, with a new ETag.
etag=$(curl -s -D - -o /dev/null "${U}api/v1/keys" | tr -d '\r' | sed -n 's/^[Ee][Tt]ag: //p')
[ -n "$etag" ] && ok || bad "keys has an ETag"
"$E" key new late@test --out "$T/late.key" >/dev/null 2>&1
grant late --role attestor
"$E" gen --runs 30 --seed 9 2>/dev/null | "$E" import --ledger "$L" --key "$T/imp.key" - >/dev/null 2>&1 \
  && ok || bad "a second import while the server reads"
code=$(curl -s -o "$T/keys.json" -w '%{http_code}' -H "If-None-Match: $etag" "${U}api/v1/keys")
[ "$code" = 200 ] && ok || bad "keys after a grant by another process: HTTP $code"
contains "$T/keys.json" '"name":"late@test"' "the read-only server lists the key granted since it started"
same "runs after the second import" /api/v1/runs -- runs --ledger "$L" --json
same "events after the second import" "/api/v1/events?from=$SIZE" -- log --ledger "$L" --from "$SIZE" --json

# Under a prefix, the API moves with everything else.
start_server pre --ledger "$L" --read-only --prefix /log || { finish; exit 1; }
expect 0 "the API under --prefix" -- curl -s -f -o /dev/null "${URL_pre}api/v1/runs?limit=1"
code=$(curl -s -o /dev/null -w '%{http_code}' "${URL_pre%/log/}/api/v1/runs")
[ "$code" = 404 ] && ok || bad "the API outside the prefix: HTTP $code"
# So do the pages and their links: the home page at /log and /log/, its links relative to it
# and so under /log/ ("log/records" from /log, "./records" from /log/).
for home in "${URL_pre%/}" "$URL_pre"; do
  curl -s -f "$home" -o "$T/home.html" && ok || bad "the home page at $home"
  up=./
  [ "${home: -1}" = / ] || up=log/
  contains "$T/home.html" "<link rel=\"stylesheet\" href=\"${up}assets/app.css\">" "the home page's style under the prefix"
  contains "$T/home.html" "<a href=\"${up}records\">" "the home page's links under the prefix"
  curl -s -f -o /dev/null "${URL_pre}assets/app.css" && ok || bad "the style at the prefix"
done

finish
