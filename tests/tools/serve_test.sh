#!/usr/bin/env bash
# End-to-end tests of `evledger serve` with real processes on loopback: a publisher's entries
# posted to a fresh server and answered with receipts that verify offline, every tile served
# byte for byte what export-tiles writes, `evledger verify --url` and an independent tlog
# client against the server, HTTP details (HEAD, keep-alive, ETag), hostile requests, a
# read-only server, and a clean stop on SIGTERM.
# Usage: serve_test.sh EVLEDGER_BINARY SOURCE_DIR
set -uo pipefail
E="$1"
SRC="$2"
CLIENT="$SRC/tests/tools/tlog_client.py"
HTTP="$SRC/tests/tools/http_probe.py"
source "$(dirname "$0")/testlib.sh"
# A publisher's ledger A, and B: a copy of A taken after its genesis and grant, served.
A="$T/a"
B="$T/b"
expect 0 "init" -- "$E" init --ledger "$A" --origin serve.evledger.invalid/log
VKEY=$(cat "$A/keys/log.vkey")
expect 0 "key new" -- "$E" key new imp@sol --out "$T/imp.key"
expect 0 "grant" -- "$E" key grant --ledger "$A" --key "$T/imp.key.vkey" --role importer --scope sol-execbench --signer "$A/keys/admin.key"
cp -a "$A" "$B"
"$E" gen --runs 150 > "$T/catalog.jsonl"
expect 0 "import into A" -- "$E" import --ledger "$A" --key "$T/imp.key" "$T/catalog.jsonl"
SIZE=$("$E" checkpoint --ledger "$A" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["size"])')
[ "$SIZE" -gt 300 ] && ok || bad "A holds more than 300 entries ($SIZE)"
expect 0 "export A" -- "$E" export-tiles --ledger "$A" --out "$T/xa"

start_server b --ledger "$B" --header-timeout 3000 --body-timeout 1500 || { finish; exit 1; }
U="$URL_b"
contains "$T/b.out" "log key: $VKEY" "the server prints the log's verifier key"

# Post A's entries to B, bundle by bundle (framed, the bundle's own bytes): the first two are
# already present; every stored entry comes back with a receipt.
for f in $(cd "$T/xa" && find tile/entries -type f | sort); do
  curl -s -o "$T/post.json" -w '%{http_code}' -H 'Content-Type: application/vnd.evledger.entries' \
    --data-binary "@$T/xa/$f" "${U}add-event" > "$T/code" || bad "post $f"
  [ "$(cat "$T/code")" = 200 ] && ok || { bad "post $f: HTTP $(cat "$T/code")"; head -c 400 "$T/post.json" >&2; }
  cat "$T/post.json" >> "$T/posts.jsonl"
  echo >> "$T/posts.jsonl"
done
expect 0 "posted entries land at A's indices, with receipts" -- python3 - "$T/posts.jsonl" "$T/receipts" <<'EOF'
import json, os, sys
os.makedirs(sys.argv[2], exist_ok=True)
expected, present, receipts = 0, 0, 0
for line in open(sys.argv[1]):
    if not line.strip():
        continue
    for r in json.loads(line)["results"]:
        assert r["index"] == expected, (r, expected)
        if r["present"]:
            present += 1
        else:
            assert r["receipt"].startswith("c2sp.org/tlog-proof@v1\nindex %d\n" % expected)
            receipts += 1
            if expected % 37 == 0:
                open(os.path.join(sys.argv[2], "%d.tlog-proof" % expected), "w").write(r["receipt"])
        expected += 1
assert present == 2, present
print(expected, present, receipts)
EOF
for p in "$T"/receipts/*.tlog-proof; do
  i=$(basename "$p" .tlog-proof)
  "$E" get --ledger "$A" "$i" --raw > "$T/entry.bin"
  expect 0 "receipt $i verifies offline with the log key alone" -- "$E" proof verify --vkey "$VKEY" --proof "$p" --entry "$T/entry.bin"
done

# B now holds A's log: the same root at the same size.
root_of() { "$E" checkpoint --ledger "$1" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["size"], d["root"])'; }
[ "$(root_of "$A")" = "$(root_of "$B")" ] && ok || bad "B has A's tree after the posts"

# Every resource of B's export, fetched from the server: byte for byte.
expect 0 "export B while it is served" -- "$E" export-tiles --ledger "$B" --out "$T/xb"
n=0
for f in $(cd "$T/xb" && find checkpoint tile -type f | sort); do
  curl -s -f -o "$T/got" "$U$f" && cmp -s "$T/got" "$T/xb/$f" || bad "GET $f differs from the export"
  n=$((n + 1))
done
[ "$n" -gt 5 ] && ok || bad "compared $n resources"
expect 0 "evledger verify --url against the server" -- "$E" verify --url "$U" --vkey "$VKEY"
expect 0 "an independent tlog client verifies the server" -- python3 "$CLIENT" "$U" "$VKEY"

# HTTP details.
expect 0 "HTTP details: HEAD, keep-alive, ETag, cache headers" -- python3 "$HTTP" details "$U"
# Hostile requests get their status and change nothing.
before=$(root_of "$B")
expect 0 "hostile requests get their status" -- python3 "$HTTP" hostile "$U"
expect 0 "the server still serves everyone else" -- curl -s -f -o /dev/null "${U}checkpoint"
[ "$(root_of "$B")" = "$before" ] && ok || bad "hostile requests changed the log"

# A read-only server on A answers reads and refuses appends.
start_server ro --ledger "$A" --read-only || { finish; exit 1; }
code=$(curl -s -o "$T/ro.json" -w '%{http_code}' -H 'Content-Type: application/octet-stream' --data-binary "@$T/entry.bin" "${URL_ro}add-event")
[ "$code" = 405 ] && ok || bad "read-only POST: HTTP $code"
expect 0 "verify --url against the read-only server" -- "$E" verify --url "$URL_ro" --vkey "$VKEY"

# SIGTERM: a clean stop, exit 0.
kill -TERM "$PID_b"
wait "$PID_b"
[ $? -eq 0 ] && ok || bad "serve exits 0 on SIGTERM"
contains "$T/b.err" "stopped at" "serve says where it stopped"
kill -INT "$PID_ro"
wait "$PID_ro"
[ $? -eq 0 ] && ok || bad "serve exits 0 on SIGINT"
expect 0 "B verifies after the server stopped" -- "$E" verify --ledger "$B" --vkey "$VKEY"

# Usage errors.
expect 2 "a bad --listen" -- "$E" serve --ledger "$B" --listen nowhere
expect 2 "a bad --prefix" -- "$E" serve --ledger "$B" --prefix log
expect 2 "an option out of bounds" -- "$E" serve --ledger "$B" --max-connections 0
expect 3 "a ledger that is not there" -- "$E" serve --ledger "$T/none" --listen 127.0.0.1:0

finish
