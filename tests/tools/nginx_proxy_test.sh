#!/usr/bin/env bash
# nginx in front of `evledger serve`, with the project's own proxy and cache rules
# (tools/nginx/evledger-locations.conf), on loopback without TLS: `evledger verify --url` and
# an independent tlog client pass through it, tiles come from its cache after the first fetch,
# appends pass through uncached with receipts that verify, and the checkpoint follows the log.
# Usage: nginx_proxy_test.sh EVLEDGER_BINARY SOURCE_DIR
set -uo pipefail
E="$1"
SRC=$(cd "$2" && pwd)
CLIENT="$SRC/tests/tools/tlog_client.py"
source "$(dirname "$0")/testlib.sh"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$NGINX" ]; then
  echo "nginx is not installed (tools/scripts/install-deps.sh installs it)" >&2
  exit 1
fi

A="$T/a"
L="$T/l"
"$E" init --ledger "$A" --origin nginx.evledger.invalid/log >/dev/null 2>&1 || bad "init"
VKEY=$(cat "$A/keys/log.vkey")
"$E" key new imp@sol --out "$T/imp.key" >/dev/null
"$E" key grant --ledger "$A" --key "$T/imp.key.vkey" --role importer --scope sol-execbench --signer "$A/keys/admin.key" >/dev/null
cp -a "$A" "$L"
"$E" gen --runs 400 2>/dev/null > "$T/catalog.jsonl"
"$E" import --ledger "$A" --key "$T/imp.key" "$T/catalog.jsonl" >/dev/null 2>&1 || bad "import into A"
"$E" import --ledger "$L" --key "$T/imp.key" "$T/catalog.jsonl" >/dev/null 2>&1 || bad "import into L"
"$E" gen --runs 420 2>/dev/null | tail -n 40 > "$T/more.jsonl"
"$E" import --ledger "$A" --key "$T/imp.key" "$T/more.jsonl" >/dev/null 2>&1 || bad "more into A"

"$E" serve --ledger "$L" --listen 127.0.0.1:0 >"$T/serve.out" 2>"$T/serve.err" &
PIDS+=($!)
for _ in $(seq 100); do grep -q '^serving' "$T/serve.out" && break; sleep 0.05; done
UPSTREAM=$(sed -n 's|^serving http://\([^/]*\)/.*|\1|p' "$T/serve.out")
[ -n "$UPSTREAM" ] && ok || { bad "serve did not start"; cat "$T/serve.err" >&2; finish; exit 1; }

PORT=$(free_port)
N="$T/nginx"
mkdir -p "$N/cache"
chmod 777 "$N/cache"  # the workers run as another user
nginx_conf "$N" "$PORT" "upstream evledger { server $UPSTREAM; keepalive 16; }
  proxy_cache_path $N/cache levels=1:2 keys_zone=evledger:8m max_size=256m inactive=1d use_temp_path=off;" \
  "include $SRC/tools/nginx/evledger-locations.conf;"
"$NGINX" -t -e "$N/error.log" -p "$N" -c "$N/nginx.conf" >"$N/t.out" 2>&1 && ok || { bad "nginx -t accepts the configuration"; cat "$N/t.out" >&2; }
"$NGINX" -e "$N/error.log" -p "$N" -c "$N/nginx.conf" 2>"$N/stderr" &
PIDS+=($!)
U="http://127.0.0.1:$PORT/"
for _ in $(seq 100); do curl -s -f -o /dev/null "${U}checkpoint" && break; sleep 0.05; done

expect 0 "evledger verify --url through nginx" -- "$E" verify --url "$U" --vkey "$VKEY"
expect 0 "the independent tlog client through nginx" -- python3 "$CLIENT" "$U" "$VKEY"
cache_status() { curl -s -D - -o "$T/body" "$1" | tr -d '\r' | sed -n 's/^X-Cache-Status: //Ip'; }
s1=$(cache_status "${U}tile/entries/000")
s2=$(cache_status "${U}tile/entries/000")
[ "$s2" = HIT ] && ok || bad "a full bundle comes from nginx's cache the second time ($s1, $s2)"
"$E" export-tiles --ledger "$L" --out "$T/xl" >/dev/null
cmp -s "$T/body" "$T/xl/tile/entries/000" && ok || bad "the cached bundle is the export's"
[ "$(cache_status "${U}metrics")" != HIT ] && [ "$(cache_status "${U}metrics")" != HIT ] && ok || bad "/metrics is never cached"

# An append through nginx: the 40 new documents of A, as A holds them.
"$E" export-tiles --ledger "$A" --out "$T/xa" >/dev/null
SIZE_L=$(curl -s "${U}checkpoint" | sed -n 2p)
python3 - "$T/xa" "$SIZE_L" "$T/batch.bin" <<'EOF' || bad "cut A's new entries"
import os, sys
root, start = os.path.join(sys.argv[1], "tile/entries"), int(sys.argv[2])
# Every bundle, full and partial, keyed by the indices of its entries (partials repeat some).
by_index = {}
for dp, _, names in os.walk(root):
    for name in names:
        rel = os.path.relpath(os.path.join(dp, name), root)
        n = int(rel.split(".p/")[0].replace("x", "").replace("/", ""))
        data, pos, k = open(os.path.join(dp, name), "rb").read(), 0, 0
        while pos < len(data):
            ln = data[pos] << 8 | data[pos + 1]
            by_index[n * 256 + k] = data[pos:pos + 2 + ln]
            pos, k = pos + 2 + ln, k + 1
open(sys.argv[3], "wb").write(b"".join(by_index[i] for i in sorted(by_index) if i >= start))
EOF
code=$(curl -s -o "$T/post.json" -w '%{http_code}' -H 'Content-Type: application/vnd.evledger.entries' --data-binary "@$T/batch.bin" "${U}add-event")
[ "$code" = 200 ] && ok || { bad "POST /add-event through nginx: HTTP $code"; head -c 300 "$T/post.json" >&2; }
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["added"] > 0 and d["rejected"] == 0, d; open(sys.argv[2],"w").write(d["results"][-1]["receipt"]); print(d["results"][-1]["index"])' "$T/post.json" "$T/last.tlog-proof" > "$T/last.index" && ok || bad "the append was answered with receipts"
"$E" get --ledger "$A" "$(cat "$T/last.index")" --raw > "$T/last.bin"
expect 0 "the receipt through nginx verifies offline" -- "$E" proof verify --vkey "$VKEY" --proof "$T/last.tlog-proof" --entry "$T/last.bin"
# The checkpoint follows the log within its short cache.
NEW_SIZE=$(( $(cat "$T/last.index") + 1 ))
for _ in $(seq 40); do [ "$(curl -s "${U}checkpoint" | sed -n 2p)" = "$NEW_SIZE" ] && break; sleep 0.1; done
[ "$(curl -s "${U}checkpoint" | sed -n 2p)" = "$NEW_SIZE" ] && ok || bad "nginx's checkpoint reaches size $NEW_SIZE"
expect 0 "verify --url through nginx after the append" -- "$E" verify --url "$U" --vkey "$VKEY"
finish
