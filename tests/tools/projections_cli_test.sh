#!/usr/bin/env bash
# End-to-end: a generated catalog imported into a real ledger keeps projections in every
# append; the CLI lists and shows them; a rebuild from the log gives the same digest.
# Usage: projections_cli_test.sh EVLEDGER_BINARY SOURCE_DIR
set -uo pipefail
E="$1"
source "$(dirname "$0")/testlib.sh"

L="$T/ledger"
"$E" init --ledger "$L" --origin proj.evledger.invalid/log >/dev/null 2>&1 || bad "init"
"$E" key new imp@sol-execbench --out "$T/imp.key" >/dev/null
"$E" key grant --ledger "$L" --key "$T/imp.key.vkey" --role importer --scope sol-execbench \
  --signer "$L/keys/admin.key" >/dev/null || bad "grant"
"$E" gen --runs 120 --seed 5 --out "$T/catalog.jsonl" 2>/dev/null || bad "gen"
expect 0 "import" -- "$E" import --ledger "$L" --key "$T/imp.key" "$T/catalog.jsonl"

expect 0 "runs" -- "$E" runs --ledger "$L" --json
[ "$(wc -l < "$T/out")" -eq 120 ] && ok || bad "runs lists one view per observation ($(wc -l < "$T/out"))"
contains "$T/out" '"evidence":"reported"' "run views carry evidence"
run=$(head -1 "$T/out" | sed 's/.*"run":"\(sha256:[0-9a-f]*\)".*/\1/')
group=$(grep -m1 '"rank":1,' "$T/out" | sed 's/.*"comparisonKey":"\(sha256:[0-9a-f]*\)".*/\1/')
expect 0 "show" -- "$E" show --ledger "$L" "$run"
contains "$T/out" "Primary measurement" "show renders the page"
contains "$T/out" "Cite this record" "show gives a citation"
contains "$T/out" "In the checkpoint of size" "the citation names a checkpoint"
expect 0 "show --json" -- "$E" show --ledger "$L" "$run" --json
for field in '"run"' '"event"' '"index"' '"title"' '"benchmark"' '"source"' '"externalId"' '"status"' \
  '"observedAt"' '"protocolDigest"' '"environmentDigest"' '"workloadDigest"' '"implementationDigest"' \
  '"operationDigest"' '"correctnessKey"' '"comparisonKey"' '"primary"' '"sourceNative"' '"evidence"' \
  '"flags"' '"rank"' '"tied"' '"groupSize"' '"leader"' '"reruns"' '"attestations"' '"corrections"' '"history"'; do
  contains "$T/out" "$field:" "run view field $field"
done
# The truncated digest that the text listing prints names the run too.
"$E" runs --ledger "$L" > "$T/listing" 2>/dev/null || bad "runs (text)"
short=$(grep -m1 -o "^${run:0:19}[^ ]*" "$T/listing")
[ -n "$short" ] && ok || bad "the text listing prints the run as sha256:<12 hex>… ($short)"
expect 0 "show by the listing's truncated digest" -- "$E" show --ledger "$L" "$short" --json
contains "$T/out" "\"run\":\"$run\"" "the truncated digest names the run"
expect 0 "show by 8 hex digits" -- "$E" show --ledger "$L" "${run:7:8}" --json
contains "$T/out" "\"run\":\"$run\"" "8 hex digits name the run"
expect 2 "show by too few digits" -- "$E" show --ledger "$L" "${run:7:5}"
expect 1 "show an unknown run" -- "$E" show --ledger "$L" sha256:0000000000000000000000000000000000000000000000000000000000000000
expect 2 "show a malformed digest" -- "$E" show --ledger "$L" nonsense
expect 0 "groups" -- "$E" groups --ledger "$L" --json
contains "$T/out" '"leader"' "groups name their leader"
expect 0 "runs of one group" -- "$E" runs --ledger "$L" --group "$group" --json
contains "$T/out" '"rank":1,' "a group lists its leader"
# The shortened comparison key that show prints names the group too.
leader_run=$(grep -m1 '"rank":1,' "$T/out" | sed 's/.*"run":"\(sha256:[0-9a-f]*\)".*/\1/')
expect 0 "show the group's leader" -- "$E" show --ledger "$L" "$leader_run"
shown_key=$(grep "comparison key" "$T/out" | awk '{print $3}')
[ "${shown_key:0:27}" = "${group:0:27}" ] && ok || bad "show prints the run's comparison key ($shown_key)"
expect 0 "runs by the key show prints" -- "$E" runs --ledger "$L" --group "$shown_key" --json
contains "$T/out" "\"run\":\"$leader_run\"" "the shortened key names the group"
expect 0 "leaders by 8 hex digits of the key" -- "$E" leaders --ledger "$L" --group "${group:7:8}" --json
contains "$T/out" "\"group\":\"$group\"" "leaders keeps the group named by its start"
expect 1 "runs of an unknown group" -- "$E" runs --ledger "$L" --group sha256:000000
expect 2 "runs of a malformed group key" -- "$E" runs --ledger "$L" --group nonsense
expect 0 "leaders" -- "$E" leaders --ledger "$L" --json
contains "$T/out" '"cause":"new_run"' "leadership history"
# The text tables: a header, then a line per row in the units people read.
expect 0 "runs of one group (text)" -- "$E" runs --ledger "$L" --group "$group"
head -1 "$T/out" | grep -q '^RUN  *RANK  *PRIMARY  *EVIDENCE  *STATUS  *FLAGS  *TITLE$' && ok || bad "runs prints its header"
sed -n 2p "$T/out" | grep -Eq '^sha256:[0-9a-f]{12}… +=?1/[0-9]+ +[0-9.]+ (ns|µs|ms|s) [a-z]+ ' && ok || bad "the group's leader is 1/N with its measurement in units ($(sed -n 2p "$T/out"))"
expect 0 "groups (text)" -- "$E" groups --ledger "$L"
head -1 "$T/out" | grep -q '^GROUP  *RANKED  *MEMBERS  *LEADER  *LEADING VALUE$' && ok || bad "groups prints its header"
contains "$T/out" "$group" "groups lists the group by its full key, as --group takes it"
expect 0 "leaders (text)" -- "$E" leaders --ledger "$L"
head -1 "$T/out" | grep -q '^INDEX  *GROUP  *CAUSE  *LEADER  *PREVIOUS$' && ok || bad "leaders prints its header"
grep -Eq '^[0-9]+ +sha256:[0-9a-f]{12}… +new_run +sha256:[0-9a-f]{12}… +(none|sha256:)' "$T/out" && ok || bad "a leadership change names the new and previous leader"

# Late manifests, re-imports and single appends keep the incremental state equal to a rebuild.
"$E" gen --runs 40 --seed 9 --out "$T/more.jsonl" 2>/dev/null
expect 0 "a second import" -- "$E" import --ledger "$L" --key "$T/imp.key" "$T/more.jsonl"
expect 0 "rebuild" -- "$E" rebuild --ledger "$L" --json
contains "$T/out" '"identical":true' "a rebuild equals the incremental projections"
expect 0 "verify" -- "$E" verify --ledger "$L"

# The evidence benchmark runs end to end on a small catalog, its activity included.
expect 0 "bench import (small)" -- "$E" bench import --entries 200 --memory-events 0 --json --dir "$T/bench"
contains "$T/out" '"manifestsPerSecond":' "bench import reports the import rate"
contains "$T/out" '"rebuildWithActivity":{"events":' "bench import rebuilds with activity too"
contains "$T/out" '"targetRatioToVerifyAllCores":' "bench import gives the rebuild target as a ratio"
grep -q '"activityEvents":0,' "$T/out" && bad "bench import appended no activity" || ok

finish
