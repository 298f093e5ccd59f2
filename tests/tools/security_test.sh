#!/usr/bin/env bash
# The security promises of issue #22, end to end with real processes on loopback:
#   - secret keys are never printed or logged (every output of a session is searched for
#     every secret seed), key files are 0600, and a damaged key file's message holds none of
#     its text;
#   - the server reads nothing outside its ledger directory: every route it registers is
#     tried with traversal paths, and none answers with a file;
#   - a read-only server cannot be made to write, by any method on any route;
#   - replaying a signed event is idempotent over HTTP and writes nothing;
#   - a compromised key's revocation voids exactly its events from --void-from on, and the
#     API and the pages say so.
# Usage: security_test.sh EVLEDGER_BINARY SOURCE_DIR
set -uo pipefail
E="$1"
SRC="$2"
source "$(dirname "$0")/testlib.sh"

# Every command's output goes to $T/session.log too: the secrets must appear in none of it.
run() { "$@" >"$T/out" 2>"$T/err"; local rc=$?; cat "$T/out" "$T/err" >> "$T/session.log"; return $rc; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

L="$T/ledger"
run "$E" init --ledger "$L" --origin security.evledger.invalid/log && ok || bad "init"
run "$E" key new imp@security.test --out "$T/imp.key" && ok || bad "key new"
run "$E" key new w.security.test/w1 --cosigner --out "$T/w.key" && ok || bad "key new --cosigner"
run "$E" key new att@security.test --out "$T/att.key" && ok || bad "key new att"
for f in "$L/keys/log.key" "$L/keys/admin.key" "$T/imp.key" "$T/w.key" "$T/att.key"; do
  [ "$(stat -c %a "$f")" = 600 ] && ok || bad "$f has mode $(stat -c %a "$f"), not 600"
done
run "$E" key grant --ledger "$L" --key "$T/imp.key.vkey" --role importer --scope sol-execbench \
  --signer "$L/keys/admin.key" && ok || bad "grant"
run "$E" gen --runs 20 --out "$T/catalog.jsonl" && ok || bad "gen"
run "$E" import --ledger "$L" --key "$T/imp.key" "$T/catalog.jsonl" && ok || bad "import"
run "$E" verify --ledger "$L" && ok || bad "verify"

# A key file whose secret is damaged: the message names the file, never what it holds.
sed 's/+\([A-Za-z0-9/+]\{10\}\)[A-Za-z0-9/+]\{4\}/+\1!!!!/' "$T/imp.key" > "$T/damaged.key"
chmod 600 "$T/damaged.key"
expect 1 "a damaged key file" -- "$E" import --ledger "$L" --key "$T/damaged.key" "$T/catalog.jsonl"
cat "$T/out" "$T/err" >> "$T/session.log"
contains "$T/err" "$T/damaged.key" "the message names the damaged key file"
grep -qF -- "$(cut -d+ -f5- "$T/damaged.key" | cut -c1-12)" "$T/err" &&
  bad "the message quotes the damaged key's secret: $(cat "$T/err")" || ok

serve_with_witness "$L" "$T/w.key" "$T/wstate" || { finish; exit 1; }
run "$E" status --url "$U/" --vkey "$L/keys/log.vkey" && ok || bad "status"
for url in "$U" "$R" "$W"; do curl -s "$url/metrics" >> "$T/session.log"; done

# ---- routes: traversal, and methods a read-only server must refuse --------------------------
# Every path the server and the witness register (tools/server), so a new route is covered.
grep -ho 'router\.\(get\|post\)("[^"]*"' "$SRC"/tools/server/*.cpp | sed 's/.*("//; s/"$//' |
  sort -u > "$T/routes"
[ "$(wc -l < "$T/routes")" -ge 20 ] && ok || bad "found $(wc -l < "$T/routes") routes in tools/server"
suffixes=('../../db/data.mdb' '..%2f..%2fdb%2fdata.mdb' '%2e%2e/%2e%2e/keys/log.key'
          '..\..\keys\log.key' '....//....//db/data.mdb' '%00../keys/log.key'
          '/etc/passwd' '../../../../../../etc/passwd')
LEAK='PRIVATE+KEY|root:x:0:0'
served=0
leaks=0
for route in $(cat "$T/routes"); do
  base=${route%/}
  for s in "${suffixes[@]}"; do
    for url in "$U" "$R" "$W"; do
      code=$(curl --path-as-is -s -o "$T/body" -w '%{http_code}' "$url$base/$s")
      served=$((served + 1))
      # An LMDB data file starts its meta pages with the magic 0xBEEFC0DE (little-endian).
      if grep -qaE "$LEAK" "$T/body" || od -An -tx1 "$T/body" | tr -d ' \n' | grep -q 'dec0efbe'; then
        leaks=$((leaks + 1))
        bad "GET $base/$s on $url answered $code with a file"
      fi
      [[ $code == 4* ]] || [[ $code == 405 ]] || { bad "GET $base/$s on $url: $code"; }
    done
  done
done
[ "$leaks" -eq 0 ] && ok
echo "traversal: $served requests on $(wc -l < "$T/routes") routes, $leaks answered with a file"

before=$(sha256sum "$L/db/data.mdb")
printf 'x' > "$T/x.bin"
refused=0
for route in $(cat "$T/routes") /; do
  for m in POST PUT DELETE PATCH; do
    code=$(curl --path-as-is -s -o /dev/null -w '%{http_code}' -X "$m" \
      -H 'Content-Type: application/octet-stream' --data-binary @"$T/x.bin" "$R$route")
    [[ $code == 4* ]] && refused=$((refused + 1)) || bad "$m $route on the read-only server: $code"
  done
done
"$E" get --ledger "$L" 3 --raw > "$T/entry3.bin"
code=$(curl -s -o "$T/body" -w '%{http_code}' -H 'Content-Type: application/octet-stream' \
  --data-binary @"$T/entry3.bin" "$R/add-event")
[ "$code" = 405 ] && ok || bad "a valid entry posted to the read-only server: $code"
[ "$(sha256sum "$L/db/data.mdb")" = "$before" ] && ok || bad "the read-only server wrote"
echo "read-only: $refused requests refused, the database file unchanged"

# ---- replay: a signed event sent again is the same event, and nothing is written -----------
cp "$L/keys/admin.key" "$T/admin.key"
run "$E" key grant --to "$U/" --key "$T/att.key.vkey" --role attestor --signer "$T/admin.key" --json &&
  ok || bad "a grant over HTTP"
grant_index=$(json "$T/out" 'd["index"]')
"$E" get --ledger "$L" "$grant_index" --raw > "$T/grant.bin" 2>/dev/null ||
  curl -s "$U/api/v1/events/$grant_index?format=raw" > "$T/grant.bin"
before=$(sha256sum "$L/db/data.mdb")
for i in 1 2 3; do
  code=$(curl -s -o "$T/replay.json" -w '%{http_code}' -H 'Content-Type: application/octet-stream' \
    --data-binary @"$T/grant.bin" "$U/add-event")
  [ "$code" = 200 ] && ok || bad "replay $i: $code"
  [ "$(json "$T/replay.json" '(d["results"][0]["index"], d["results"][0]["present"])')" = "($grant_index, True)" ] &&
    ok || bad "replay $i is answered present at index $grant_index: $(cat "$T/replay.json")"
done
[ "$(sha256sum "$L/db/data.mdb")" = "$before" ] && ok || bad "replays wrote to the database"

# ---- a compromised key: its events from --void-from on are void, and the API says so -------
obs=$(curl -s "$U/api/v1/events?limit=1000" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join(str(e["index"]) for e in d["items"] if e["kind"] == "observation"))')
set -- $obs
[ $# -ge 4 ] && ok || bad "the catalog has observations: $obs"
first=$1
shift 2
from=$1
run "$E" key revoke --to "$U/" --key "$T/imp.key.vkey" --reason compromised --void-from "$from" \
  --signer "$T/admin.key" && ok || bad "revoke as compromised from $from"
sleep 0.5
curl -s "$U/api/v1/events/$first" > "$T/first.json"
curl -s "$U/api/v1/events/$from" > "$T/voided.json"
[ "$(json "$T/first.json" 'd.get("void")')" = None ] && ok || bad "an event before --void-from is not void: $(head -c 300 "$T/first.json")"
[ "$(json "$T/voided.json" 'bool(d.get("void"))')" = True ] && ok || bad "the event at --void-from is void: $(head -c 300 "$T/voided.json")"
curl -s "$U/api/v1/runs?limit=1000" > "$T/runs.json"
python3 - "$T/runs.json" "$from" <<'EOF' && ok || bad "the API marks void exactly the runs observed from --void-from on"
import json, sys
runs = json.load(open(sys.argv[1]))["items"]
void_from = int(sys.argv[2])
void = {r["index"] for r in runs if r.get("void")}
want = {r["index"] for r in runs if r["index"] >= void_from}
assert void == want and len(runs) > len(void) > 0, (sorted(void), sorted(want))
EOF
digest=$(python3 -c '
import json, sys
print(next(r["run"] for r in json.load(open(sys.argv[1]))["items"] if r.get("void")))' "$T/runs.json")
curl -s "$U/runs/$digest" > "$T/page.html"
grep -qi "void" "$T/page.html" && ok || bad "the run page of a voided run says void"
expect 0 "verify passes with voided events" -- "$E" verify --ledger "$L" --json
cat "$T/out" "$T/err" >> "$T/session.log"
curl -s "$U/api/v1/events?limit=1000" > "$T/events.json"
python3 - "$T/out" "$T/events.json" "$from" <<'EOF' && ok || bad "verify voids exactly the importer's events from --void-from on"
import json, sys
verified = json.load(open(sys.argv[1]))
events = json.load(open(sys.argv[2]))["items"]
theirs = [e for e in events if e["index"] >= int(sys.argv[3]) and e["kind"] in ("manifest", "observation")]
assert verified["voided"] == len(theirs) > 0, (verified["voided"], len(theirs))
EOF

# ---- the secrets appear in nothing a session printed or logged ------------------------------
cat "$T"/*.out "$T"/*.err >> "$T/session.log" 2>/dev/null
for f in "$L/keys/log.key" "$L/keys/admin.key" "$T/imp.key" "$T/w.key" "$T/att.key"; do
  secret=$(cut -d+ -f5- "$f")
  hex=$(printf '%s' "$secret" | base64 -d 2>/dev/null | od -An -tx1 | tr -d ' \n')
  [ ${#secret} -ge 40 ] && ok || bad "read the secret of $f"
  if grep -qF -- "$secret" "$T/session.log" || grep -qiF -- "$hex" "$T/session.log"; then
    bad "the secret of $f was printed or logged"
  else ok; fi
done
echo "secrets: $(wc -c < "$T/session.log") bytes of output and logs searched"
finish
