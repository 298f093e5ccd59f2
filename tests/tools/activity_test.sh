#!/usr/bin/env bash
# End-to-end tests of the evidence-writing commands: rerun, attest, retract, supersede,
# disqualify and gen --activity. Real processes, a real ledger on disk.
# Usage: activity_test.sh EVLEDGER_BINARY SOURCE_DIR
#
# Exit codes under test (tools/cli.h): 1 when the ledger's key policy or a content check
# (the rerun manifest, the cases file) refuses the event; 2 when an argument breaks a rule
# that needs no ledger (digest form, attestation text over 2000 characters, a URL that is not
# https, an unknown type, a malformed slug or time): nothing is opened or signed then.
set -uo pipefail
E="$1"
source "$(dirname "$0")/testlib.sh"


# expect CODE DESCRIPTION -- COMMAND...: runs COMMAND, checks its exit code.
# contains FILE TEXT DESCRIPTION
size_of() { "$E" log --ledger "$L" | wc -l; }
# member NAME: the value of "NAME":"..." in a line of canonical JSON on standard input.
member() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" | head -1; }

L="$T/ledger"
A="$L/keys/admin.key"

# ---- a ledger with an importer, two runners, an attestor and a curator ----------------------
activity_ledger test.evledger.invalid/activity stranger

"$E" gen --runs 50 --out "$T/catalog.jsonl" 2>/dev/null && ok || bad "gen --runs 50"
"$E" gen --runs 50 2>/dev/null | "$E" import --ledger "$L" --key "$T/imp.key" --json - >"$T/import.jsonl" 2>"$T/err" \
  && ok || bad "gen --runs 50 | import"
grep '"kind":"BenchmarkRun"' "$T/import.jsonl" > "$T/runs.jsonl"
[ "$(wc -l < "$T/runs.jsonl")" -eq 50 ] && ok || bad "import added 50 observations"
RUN=$(sed -n 1p "$T/runs.jsonl" | member digest)
RUN2=$(sed -n 2p "$T/runs.jsonl" | member digest)
RUN3=$(sed -n 3p "$T/runs.jsonl" | member digest)
NAME=$(sed -n 1p "$T/runs.jsonl" | member name)
OBS=$(grep -F "\"name\":\"$NAME\"" "$T/catalog.jsonl")
[ -n "$RUN" ] && [ -n "$OBS" ] && ok || bad "found an observed run and its manifest"

# ---- rerun ----------------------------------------------------------------------------------
# The rerun's own manifest, in YAML: the observation's digests, no sourceNative.
cat > "$T/rerun.yaml" <<EOF
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata:
  name: rerun-lab-a-1
  title: Controlled rerun by lab a
spec:
  implementationDigest: $(echo "$OBS" | member implementationDigest)
  workloadDigest: $(echo "$OBS" | member workloadDigest)
  protocolDigest: $(echo "$OBS" | member protocolDigest)
  environmentDigest: $(echo "$OBS" | member environmentDigest)
  status: passed
  correctness:
    comparator: sol_execbench_eval
    matchedRatio: 1.0
  timing:
    primaryStatistic: mean
    samples: 200
    latencyNs:
      mean: 123456
      median: 123001
  observedAt: 2026-10-01T08:00:00Z
EOF
echo '[{"case": "0", "status": "passed", "latencyNs": 120000}, {"case": "1", "status": "passed", "latencyNs": 126912}]' > "$T/cases.json"
expect 0 "rerun --help" -- "$E" rerun --help
contains "$T/out" "owner:<id>" "rerun help names the runner scope"
expect 0 "rerun" -- "$E" rerun --ledger "$L" --key "$T/runa.key" --target "$RUN" --cases "$T/cases.json" "$T/rerun.yaml"
contains "$T/out" "rerun of $RUN appended at index" "rerun prints its index"
expect 0 "the same rerun again" -- "$E" rerun --ledger "$L" --key "$T/runa.key" --target "$RUN" --cases "$T/cases.json" --json "$T/rerun.yaml"
contains "$T/out" '"status":"present"' "a repeated rerun is one event"
contains "$T/out" "\"target\":\"$RUN\"" "rerun --json names the target"
"$E" get --ledger "$L" "$(member event < "$T/out")" --json > "$T/get.json" 2>&1
contains "$T/get.json" '"kind":"rerun"' "the rerun is stored as a rerun event"

size=$(size_of)
expect 1 "rerun by a non-runner" -- "$E" rerun --ledger "$L" --key "$T/att.key" --target "$RUN" "$T/rerun.yaml"
contains "$T/err" "has no runner role" "non-runner rerun message"
contains "$T/err" "--role runner --scope owner:ID --scope host:ID" "non-runner rerun message says the fix"
echo "$OBS" > "$T/observation.json"
expect 1 "rerun with an observation's manifest" -- "$E" rerun --ledger "$L" --key "$T/runa.key" --target "$RUN2" "$T/observation.json"
contains "$T/err" "remove spec.sourceNative" "sourceNative rerun message"
sed 's/workloadDigest: .*/workloadDigest: md5:abc/' "$T/rerun.yaml" > "$T/bad-rerun.yaml"
expect 1 "rerun manifest with a malformed reference" -- "$E" rerun --ledger "$L" --key "$T/runa.key" --target "$RUN" "$T/bad-rerun.yaml"
contains "$T/err" "[digest-format]" "rerun manifest check names the rule"
echo '{"case": "0"}' > "$T/cases-object.json"
expect 1 "rerun cases that are not an array" -- "$E" rerun --ledger "$L" --key "$T/runa.key" --target "$RUN" --cases "$T/cases-object.json" "$T/rerun.yaml"
contains "$T/err" "JSON array" "cases message"
expect 2 "rerun with a bad digest" -- "$E" rerun --ledger "$L" --key "$T/runa.key" --target "sha256:XYZ" "$T/rerun.yaml"
contains "$T/err" "64 lowercase hex digits" "bad digest message"
expect 3 "rerun of a missing manifest file" -- "$E" rerun --ledger "$L" --key "$T/runa.key" --target "$RUN" "$T/none.yaml"
[ "$(size_of)" -eq "$size" ] && ok || bad "refused reruns changed the ledger"

# ---- attest ---------------------------------------------------------------------------------
expect 0 "attest" -- "$E" attest --ledger "$L" --key "$T/att.key" --target "$RUN" --type reproduced \
  --text "Reproduced on our B200 node: 123.9 µs against the reported 123.5 µs." \
  --evidence-url https://gist.example.org/att/1 --observed-ns 123900 --environment "NVIDIA B200, CUDA 13.0"
contains "$T/out" "reproduced attestation of $RUN appended at index" "attest prints its index"
expect 0 "attest by a runner, --json" -- "$E" attest --ledger "$L" --key "$T/runb.key" --target "$RUN" --type environment_note --text "Clocks were locked." --json
contains "$T/out" '"type":"environment_note"' "attest --json"
long=$(head -c 2001 /dev/zero | tr '\0' 'x')
expect 2 "attestation text over 2000 characters" -- "$E" attest --ledger "$L" --key "$T/att.key" --target "$RUN" --type reproduced --text "$long"
contains "$T/err" "--text has 2001 characters" "long text message"
contains "$T/err" "at most 2000" "long text message names the limit"
# The limit counts characters, not bytes: 2000 two-byte characters pass.
wide=$(for i in $(seq 2000); do printf 'é'; done)
expect 0 "attestation text of 2000 characters (4000 bytes)" -- "$E" attest --ledger "$L" --key "$T/att.key" --target "$RUN" --type environment_note --text "$wide"
expect 2 "a non-https evidence URL" -- "$E" attest --ledger "$L" --key "$T/att.key" --target "$RUN" --type reproduced --text t --evidence-url http://gist.example.org/x
contains "$T/err" "must start with https://" "http URL message"
expect 2 "an unknown attestation type" -- "$E" attest --ledger "$L" --key "$T/att.key" --target "$RUN" --type liked --text t
contains "$T/err" "could_not_reproduce" "type message lists the types"
expect 2 "attest with a bad digest" -- "$E" attest --ledger "$L" --key "$T/att.key" --target "$RUN:x" --type reproduced --text t
expect 1 "attest by a key the ledger never granted" -- "$E" attest --ledger "$L" --key "$T/stranger.key" --target "$RUN" --type reproduced --text t
contains "$T/err" "is not a key of this ledger" "ungranted attestor message"

# ---- corrections ----------------------------------------------------------------------------
size=$(size_of)
expect 1 "retract by a non-curator" -- "$E" retract --ledger "$L" --key "$T/runa.key" --target "$RUN2" --reason "harness bug"
contains "$T/err" "has no curator role" "non-curator retract message"
expect 2 "retract with a bad digest" -- "$E" retract --ledger "$L" --key "$T/cur.key" --target "sha256:1234" --reason "harness bug"
contains "$T/err" "--target sha256:1234 is not a run digest" "retract bad digest message"
expect 2 "retract without a reason" -- "$E" retract --ledger "$L" --key "$T/cur.key" --target "$RUN2"
expect 2 "supersede a run by itself" -- "$E" supersede --ledger "$L" --key "$T/cur.key" --target "$RUN2" --by "$RUN2" --reason r
expect 1 "disqualify by an importer outside its scope" -- "$E" disqualify --ledger "$L" --key "$T/imp.key" --target "$RUN3" --source other-board --reason "withdrawn"
contains "$T/err" "has no importer role for source other-board" "out-of-scope disqualify message"
expect 2 "disqualify with a malformed time" -- "$E" disqualify --ledger "$L" --key "$T/imp.key" --target "$RUN3" --source sol-execbench --at yesterday --reason r
contains "$T/err" "RFC 3339" "bad --at message"
expect 2 "disqualify with a malformed source" -- "$E" disqualify --ledger "$L" --key "$T/imp.key" --target "$RUN3" --source "Sol ExecBench" --reason r
[ "$(size_of)" -eq "$size" ] && ok || bad "refused corrections changed the ledger"

expect 0 "retract" -- "$E" retract --ledger "$L" --key "$T/cur.key" --target "$RUN2" --reason "Withdrawn: the harness skipped the final synchronization."
contains "$T/out" "retraction of $RUN2 appended at index" "retract prints its index"
expect 0 "supersede" -- "$E" supersede --ledger "$L" --key "$T/cur.key" --target "$RUN" --by "$RUN3" --reason "Resubmission with the fix." --json
contains "$T/out" "\"replacement\":\"$RUN3\"" "supersede --json"
expect 0 "disqualify by an importer in its scope" -- "$E" disqualify --ledger "$L" --key "$T/imp.key" --target "$RUN3" --source sol-execbench --at 2026-09-01T12:00:00Z --reason "The source withdrew the result."
contains "$T/out" "disqualification of $RUN3 by source sol-execbench appended" "disqualify prints its index"
expect 0 "disqualify --help" -- "$E" disqualify --help
contains "$T/out" "Exit status" "disqualify help"

# ---- gen --activity -------------------------------------------------------------------------
activity() { "$E" gen --activity 200 --ledger "$L" --runner-key "$T/runa.key" --runner-key "$T/runb.key" --attestor-key "$T/att.key" --curator-key "$T/cur.key" "$@"; }
expect 1 "activity with an attestor as runner" -- "$E" gen --activity 10 --ledger "$L" --runner-key "$T/att.key" --attestor-key "$T/att.key" --curator-key "$T/cur.key"
contains "$T/err" "has no runner role" "activity role message"
expect 2 "gen --runs above what gen makes" -- "$E" gen --runs 100000001 --out "$T/never.jsonl"
contains "$T/err" "give 0 to 100000000" "gen names its limit"
[ ! -s "$T/never.jsonl" ] && ok || bad "gen wrote output before refusing --runs"
expect 2 "activity without a curator key" -- "$E" gen --activity 10 --ledger "$L" --runner-key "$T/runa.key" --attestor-key "$T/att.key"
size=$(size_of)
expect 0 "gen --activity 200" -- activity --seed 7
contains "$T/out" "0 rejected" "activity: nothing rejected"
grep -q "replications" "$T/out" && ok || bad "activity summary"
after=$(size_of)
[ "$after" -ge $((size + 200)) ] && ok || bad "activity appended 200 events (size $size -> $after)"
"$E" log --ledger "$L" --json --from "$size" > "$T/activity.jsonl"
for kind in rerun attestation correction manifest; do
  grep -q "\"kind\":\"$kind\"" "$T/activity.jsonl" && ok || bad "activity made a $kind"
done
for type in reproduced could_not_reproduce environment_note regression_observed; do
  grep -q "\"type\":\"$type\"" "$T/activity.jsonl" && ok || bad "activity made a $type attestation"
done
expect 0 "gen --activity 200 again" -- activity --seed 7
contains "$T/out" "0 events appended" "the same seed gives the same events"
[ "$(size_of)" -eq "$after" ] && ok || bad "a repeated activity changed the ledger"
# What the projections derive from the activity (when this build has them): every verdict
# and the evidence levels that reruns earn.
if "$E" runs --help >/dev/null 2>&1; then
  "$E" runs --ledger "$L" --json > "$T/views.jsonl" 2>"$T/err" && ok || bad "runs --json"
  for level in replicated verified; do
    grep -q "\"evidence\":\"$level\"" "$T/views.jsonl" && ok || bad "activity made a $level run"
  done
  for r in $(sed -n 's/.*"run":"\(sha256:[0-9a-f]*\)".*/\1/p' "$T/views.jsonl"); do
    "$E" show --ledger "$L" --json "$r"
  done > "$T/shown.jsonl" 2>"$T/err"
  for verdict in confirmed contradicted refuted inconclusive; do
    grep -q "\"verdict\":\"$verdict\"" "$T/shown.jsonl" && ok || bad "activity made a $verdict rerun"
  done
  # The page of a superseded run names the correction, its replacement and why it has no rank.
  old=$(grep -m1 '"supersededBy":"sha256' "$T/shown.jsonl" | sed 's/.*"run":"\(sha256:[0-9a-f]*\)".*/\1/')
  new=$(grep -m1 '"supersededBy":"sha256' "$T/shown.jsonl" | sed 's/.*"supersededBy":"\(sha256:[0-9a-f]*\)".*/\1/')
  if [ -n "$old" ]; then
    expect 0 "show a superseded run" -- "$E" show --ledger "$L" "$old"
    contains "$T/out" "Not ranked: superseded by ${new:0:27}" "the page says why there is no rank"
    contains "$T/out" "- supersede: replaced by ${new:0:27}" "the page lists the correction"
  else
    bad "activity superseded no run"
  fi
fi
expect 0 "verify" -- "$E" verify --ledger "$L" --json
contains "$T/out" '"ok":true' "verify passes after the activity"

finish
