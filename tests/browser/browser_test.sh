#!/usr/bin/env bash
# The pages in a real headless Chromium: a generated catalog (gen, then gen --activity) with one
# run whose title is hostile markup, served by `evledger serve` on loopback, and
# pages_test.js driving Debian's /usr/bin/chromium through playwright-core. The citation's
# .tlog-proof that the browser downloaded is then verified with `evledger proof verify`.
# Then every link of every page type, at serve --prefix /p and behind nginx at a sub-path.
# Screenshots of every page type stay in BUILD_DIR/browser/screenshots.
# Usage: browser_test.sh EVLEDGER_BINARY SOURCE_DIR BUILD_DIR
set -uo pipefail
E="$1"
SRC="$2"
OUT="$3/browser"
source "$SRC/tests/tools/testlib.sh"

[ -x /usr/bin/chromium ] || { bad "no /usr/bin/chromium (tools/scripts/install-deps.sh installs it)"; finish; exit 1; }
command -v npm >/dev/null || { bad "no npm (tools/scripts/install-deps.sh installs it)"; finish; exit 1; }
expect 0 "npm ci of playwright-core" -- bash "$SRC/tests/browser/install.sh" "$OUT"

L="$T/ledger"
A="$L/keys/admin.key"
activity_ledger pages.evledger.invalid/log
HOSTILE='<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
"$E" gen --runs 200 2>/dev/null | HOSTILE="$HOSTILE" python3 -c '
import json, os, sys
done = False
for line in sys.stdin:
    m = json.loads(line)
    if not done and m.get("kind") == "BenchmarkRun":
        m["metadata"]["title"] = os.environ["HOSTILE"]
        done = True
    print(json.dumps(m))
' > "$T/catalog.jsonl"
expect 0 "import the catalog" -- "$E" import --ledger "$L" --key "$T/imp.key" "$T/catalog.jsonl"
expect 0 "gen --activity" -- "$E" gen --activity 150 --seed 3 --ledger "$L" \
  --runner-key "$T/runa.key" --runner-key "$T/runb.key" --attestor-key "$T/att.key" --curator-key "$T/cur.key"

start_server ro --ledger "$L" --read-only || { finish; exit 1; }

NODE_PATH="$OUT/node_modules" node "$SRC/tests/browser/pages_test.js" "$URL_ro" "$OUT" "$HOSTILE" >"$T/browser.out" 2>&1
code=$?
cat "$T/browser.out"
[ "$code" -eq 0 ] && ok || bad "the browser checks (above)"

if [ -f "$OUT/run.tlog-proof" ]; then
  expect 0 "the downloaded .tlog-proof verifies with the CLI" -- "$E" proof verify \
    --vkey "$L/keys/log.vkey" --proof "$OUT/run.tlog-proof" --entry "$OUT/run.entry"
  contains "$T/out" "$(cat "$OUT/run.index")" "proof verify names the entry's index"
else
  bad "the browser downloaded no .tlog-proof"
fi
# The same pages at a --prefix, and behind nginx at a sub-path that the server never sees
# (the proxy strips it): every link of every page type must work there too.
start_server pre --ledger "$L" --read-only --prefix /p || { finish; exit 1; }
NODE_PATH="$OUT/node_modules" node "$SRC/tests/browser/pages_test.js" "$URL_pre" "$OUT" "$HOSTILE" links >"$T/prefix.out" 2>&1
code=$?
cat "$T/prefix.out"
[ "$code" -eq 0 ] && ok || bad "the pages' links under serve --prefix /p (above)"

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ -x "$NGINX" ]; then
  PORT=$(free_port)
  N="$T/nginx"
  nginx_conf "$N" "$PORT" "" "location /mirror/of/ledger/ { proxy_pass ${URL_ro}; }"
  "$NGINX" -e "$N/error.log" -p "$N" -c "$N/nginx.conf" 2>"$N/stderr" &
  NGINX_PID=$!
  PIDS+=("$NGINX_PID")
  SUB="http://127.0.0.1:$PORT/mirror/of/ledger/"
  for _ in $(seq 100); do curl -s -f -o /dev/null "${SUB}checkpoint" && break; sleep 0.05; done
  NODE_PATH="$OUT/node_modules" node "$SRC/tests/browser/pages_test.js" "$SUB" "$OUT" "$HOSTILE" links >"$T/nginx.out" 2>&1
  code=$?
  cat "$T/nginx.out"
  [ "$code" -eq 0 ] && ok || bad "the pages' links behind nginx at a sub-path (above)"
  kill "$NGINX_PID" 2>/dev/null; wait "$NGINX_PID" 2>/dev/null  # TERM: its workers stop with it
else
  bad "no nginx (tools/scripts/install-deps.sh installs it)"
fi
ls "$OUT/screenshots" | sed 's/^/  screenshot: /'
finish
