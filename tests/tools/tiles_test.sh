#!/usr/bin/env bash
# End-to-end tests of the tile export: a ledger built with the CLI, exported with
# `evledger export-tiles`, checked by an independent tlog client (tests/tools/tlog_client.py, no
# evledger code), grown and re-exported incrementally, then served by a real nginx and checked
# over HTTP (and by `evledger verify --url` when this evledger has it).
# Usage: tiles_test.sh EVLEDGER_BINARY SOURCE_DIR
# Needs python3 with python3-cryptography; the nginx part is skipped (and said so) without nginx.
set -uo pipefail
E="$1"
SRC="$2"
CLIENT="$SRC/tests/tools/tlog_client.py"
source "$(dirname "$0")/testlib.sh"
NGINX_PID=""
cleanup() {
  if [ -n "$NGINX_PID" ]; then kill "$NGINX_PID" 2>/dev/null; wait "$NGINX_PID" 2>/dev/null; fi
  rm -rf "$T"
}
trap cleanup EXIT


# expect CODE DESCRIPTION -- COMMAND...: runs COMMAND, checks its exit code.
# contains FILE TEXT DESCRIPTION
# stamp FILE: inode and modification time, to show a file was not rewritten or touched.
stamp() { stat -c '%i %Y.%y %Z' "$1"; }
flip_byte() {  # flip_byte FILE OFFSET
  local b
  b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "\\x$(printf %02x $((b ^ 1)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# append_manifests FROM TO: signs manifest events FROM..TO-1 (each a distinct environment,
# encoded by the standard capnp tool) and appends them as one length-prefixed stream.
append_manifests() {
  local i n
  : > "$T/stream.bin"
  for ((i = $1; i < $2; i++)); do
    printf '(schemaVersion = 1, author = 0x"%s", claimedTimeMs = %d, manifest = (canonical = "{\\"apiVersion\\":\\"kernelindex.dev/v1alpha1\\",\\"kind\\":\\"ExecutionEnvironment\\",\\"spec\\":{\\"hostname\\":\\"host-%d\\"}}"))' \
      "$IMP_HEX" $((1780000000000 + i)) "$i" \
      | capnp convert text:canonical "$SRC/events/event.capnp" EventBody > "$T/body.bin" || return 1
    "$E" sign --key "$T/imp.key" --out "$T/entry.bin" "$T/body.bin" || return 1
    n=$(stat -c %s "$T/entry.bin")
    printf "\\x$(printf %02x $((n >> 8)))\\x$(printf %02x $((n & 255)))" >> "$T/stream.bin"
    cat "$T/entry.bin" >> "$T/stream.bin"
  done
  "$E" append --ledger "$L" - < "$T/stream.bin" > "$T/append.out"
}

L="$T/ledger"
X="$T/export"
expect 0 "init" -- "$E" init --ledger "$L" --origin tiles.evledger.invalid/log
VKEY=$(cat "$L/keys/log.vkey")
expect 0 "key new" -- "$E" key new imp@tiles --out "$T/imp.key"
expect 0 "grant" -- "$E" key grant --ledger "$L" --key "$T/imp.key.vkey" --role importer --scope tiles --signer "$L/keys/admin.key"
IMP_HEX=$(pubkey_hex "$T/imp.key.vkey")

# 2 + 298 = 300 entries: one full bundle and level-0 tile, a partial of each, a level-1 tile.
append_manifests 0 298 && ok || bad "append 298 manifests"
[ "$("$E" log --ledger "$L" | wc -l)" -eq 300 ] && ok || bad "ledger size 300"

expect 2 "export-tiles without --out" -- "$E" export-tiles --ledger "$L"
expect 3 "export-tiles of a missing ledger" -- "$E" export-tiles --ledger "$T/none" --out "$X"
expect 0 "export-tiles --help" -- "$E" export-tiles --help
expect 0 "export" -- "$E" export-tiles --ledger "$L" --out "$X" --json
contains "$T/out" '"size":300' "export size"
contains "$T/out" '"previousSize":0' "first export"
contains "$T/out" '"bundlesWritten":2' "first export bundles"
for f in checkpoint tile/0/000 tile/0/001.p/44 tile/1/000.p/1 tile/entries/000 tile/entries/001.p/44; do
  [ -f "$X/$f" ] && ok || bad "export lacks $f"
done
[ "$(find "$X" -name '*.tmp' | wc -l)" -eq 0 ] && ok || bad "temporary files left behind"
"$E" checkpoint --ledger "$L" > "$T/cp" 2>/dev/null && { cmp -s "$T/cp" "$X/checkpoint" && ok || bad "checkpoint file is not the ledger's checkpoint verbatim"; }

expect 0 "the independent client verifies the export" -- python3 "$CLIENT" "$X" "$VKEY"
contains "$T/out" "ok: $X is a valid tlog of tiles.evledger.invalid/log at size 300" "client summary"
contains "$T/out" "hash tiles: 3 checked" "client checked the hash tiles"
expect 1 "the client refuses another key" -- python3 "$CLIENT" "$X" "$(cat "$L/keys/admin.vkey")"

# Grow the log and export again: only new files; full tiles untouched.
before_tile=$(stamp "$X/tile/0/000")
before_bundle=$(stamp "$X/tile/entries/000")
sleep 1.1  # so that a rewrite would show in the modification time, too
append_manifests 298 598 && ok || bad "append 300 more manifests"
expect 0 "re-export" -- "$E" export-tiles --ledger "$L" --out "$X" --json
contains "$T/out" '"size":600' "re-export size"
contains "$T/out" '"previousSize":300' "re-export is incremental"
contains "$T/out" '"bundlesWritten":2' "re-export writes bundles 001 and 002.p/88 only"
[ "$(stamp "$X/tile/0/000")" = "$before_tile" ] && ok || bad "full tile tile/0/000 was rewritten"
[ "$(stamp "$X/tile/entries/000")" = "$before_bundle" ] && ok || bad "full bundle 000 was rewritten"
[ -f "$X/tile/0/001.p/44" ] && ok || bad "the old partial tile was removed"
expect 0 "the client verifies the grown export" -- python3 "$CLIENT" "$X" "$VKEY"
contains "$T/out" "at size 600" "client size after growth"
expect 0 "export with nothing new" -- "$E" export-tiles --ledger "$L" --out "$X"
contains "$T/out" "up to date" "nothing to export"

# Another log's export directory is refused, and nothing in it changes.
expect 0 "init a second log" -- "$E" init --ledger "$T/other" --origin other.evledger.invalid/log
cp "$X/checkpoint" "$T/checkpoint.before"
expect 1 "export into another log's directory" -- "$E" export-tiles --ledger "$T/other" --out "$X"
contains "$T/err" "another log" "another log message"
cmp -s "$T/checkpoint.before" "$X/checkpoint" && ok || bad "the refused export changed the checkpoint"

# The client catches tampering.
cp -r "$X" "$T/bad-tile"
flip_byte "$T/bad-tile/tile/0/001" 100
expect 1 "the client catches a flipped byte in a hash tile" -- python3 "$CLIENT" "$T/bad-tile" "$VKEY"
contains "$T/err" "tile/0/001" "client names the tile"
cp -r "$X" "$T/bad-bundle"
flip_byte "$T/bad-bundle/tile/entries/001" 300
expect 1 "the client catches a flipped byte in a bundle" -- python3 "$CLIENT" "$T/bad-bundle" "$VKEY"
cp -r "$X" "$T/bad-checkpoint"
sed -i '2s/600/599/' "$T/bad-checkpoint/checkpoint"
expect 1 "the client catches an edited checkpoint" -- python3 "$CLIENT" "$T/bad-checkpoint" "$VKEY"
contains "$T/err" "does not verify" "client checkpoint signature message"

verify_has() { "$E" verify --help 2>&1 | grep -qF -- "$1"; }
if verify_has "--tiles"; then
  expect 0 "evledger verify --tiles" -- "$E" verify --tiles "$X" --vkey "$VKEY"
  expect 1 "evledger verify --tiles finds a flipped tile byte" -- "$E" verify --tiles "$T/bad-tile" --vkey "$VKEY"
else
  echo "note: evledger verify has no --tiles yet; skipped its checks" >&2
fi

# A real web server: nginx on a free port of 127.0.0.1 serving the export.
if command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; then
  NGINX=$(command -v nginx || echo /usr/sbin/nginx)
  PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  N="$T/nginx"
  nginx_conf "$N" "$PORT" "default_type application/octet-stream;" "root $X; location / { }"
  "$NGINX" -e "$N/error.log" -p "$N" -c "$N/nginx.conf" 2>"$N/stderr" &
  NGINX_PID=$!
  URL="http://127.0.0.1:$PORT/"
  for _ in $(seq 50); do
    python3 -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1] + 'checkpoint', timeout=1)" "$URL" 2>/dev/null && break
    sleep 0.1
  done
  expect 0 "the client verifies the export over HTTP (nginx)" -- python3 "$CLIENT" "$URL" "$VKEY"
  contains "$T/out" "at size 600" "client over HTTP"
  if verify_has "--url"; then
    expect 0 "evledger verify --url" -- "$E" verify --url "$URL" --vkey "$VKEY"
    expect 1 "evledger verify --url with another key" -- "$E" verify --url "$URL" --vkey "$(cat "$T/other/keys/log.vkey")"
  else
    echo "note: evledger verify has no --url yet; skipped its checks" >&2
  fi
  # The export keeps serving while the log grows: re-export under nginx, verify again.
  append_manifests 598 700 && ok || bad "append 102 more manifests"
  expect 0 "re-export under nginx" -- "$E" export-tiles --ledger "$L" --out "$X"
  expect 0 "the client verifies the grown export over HTTP" -- python3 "$CLIENT" "$URL" "$VKEY"
  contains "$T/out" "at size 702" "client over HTTP after growth"
  kill "$NGINX_PID" 2>/dev/null
  wait "$NGINX_PID" 2>/dev/null
  NGINX_PID=""
else
  echo "note: nginx is not installed; skipped the HTTP part (tools/scripts/install-deps.sh installs it)" >&2
fi

finish
