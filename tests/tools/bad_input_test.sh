#!/usr/bin/env bash
# Runs every row of tools/BAD_INPUT.md, the table of bad input and what users get for it: the
# command (or HTTP request) of the row, its exit code (or HTTP status), the message it prints
# (or the problem's detail), and that nothing was written: the LMDB files of the CLI's ledger,
# the served ledger, its mirror and the witness's state are byte for byte what they were before the row,
# and no file came or went.
# Usage: bad_input_test.sh EVLEDGER_BINARY SOURCE_DIR
#   BAD_INPUT_SHOW=1 also prints what each row got (to write a new row's message).
set -uo pipefail
E="$1"
SRC="$2"
TABLE="$SRC/tools/BAD_INPUT.md"
source "$(dirname "$0")/testlib.sh"

# ---- what the rows act on ---------------------------------------------------------------------
# L: a ledger for the CLI's rows, with an importer and an attestor. S: another ledger, served
# by `evledger serve` at $U and read-only at $R. A witness of S's log at $W with state $WS.
# M: a mirror of S, pulled from $R.
L="$T/ledger"
S="$T/served"
M="$T/mirror"
WS="$T/witness-state"
"$E" init --ledger "$L" --origin bad-input.evledger.invalid/log >/dev/null 2>&1 || bad "init L"
"$E" init --ledger "$S" --origin bad-input.evledger.invalid/served >/dev/null 2>&1 || bad "init S"
for k in imp att stranger; do "$E" key new "$k@test" --out "$T/$k.key" >/dev/null || bad "key $k"; done
for d in "$L" "$S"; do
  "$E" key grant --ledger "$d" --key "$T/imp.key.vkey" --role importer --scope sol-execbench \
    --signer "$d/keys/admin.key" >/dev/null || bad "grant imp"
done
"$E" key grant --ledger "$L" --key "$T/att.key.vkey" --role attestor --signer "$L/keys/admin.key" \
  >/dev/null || bad "grant att"
"$E" key new bad-input.test/w1 --cosigner --out "$T/w.key" >/dev/null || bad "cosigner key"

# Files: a catalog, entries too large, malformed, foreign to S and with a broken signature.
"$E" gen --runs 3 --out "$T/catalog.jsonl" 2>/dev/null || bad "gen"
head -c 70000 /dev/urandom > "$T/big.bin"
printf 'not an entry' > "$T/garbage.bin"
"$E" get --ledger "$L" 1 --raw > "$T/foreign.bin" || bad "get --raw"
python3 - "$T" <<'EOF' || bad "fixture files"
import base64, json, sys
t = sys.argv[1]
entry = bytearray(open(t + "/foreign.bin", "rb").read())
entry[-1] ^= 1  # the last byte of the signature
open(t + "/badsig.bin", "wb").write(entry)
open(t + "/deep.json", "w").write("[" * 100000 + "]" * 100000 + "\n")
wide = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "BenchmarkRun",
        "metadata": {"name": "wide"}, "spec": {"values": list(range(1000000))}}
open(t + "/wide.json", "w").write(json.dumps(wide) + "\n")
open(t + "/broken.jsonl", "w").write('{"apiVersion": "kernelindex.dev/v1alpha1"\n')
open(t + "/broken.yaml", "w").write("a: [unclosed\n")
open(t + "/malformed.req", "w").write("hello\n")
EOF
grep -m1 '"kind":"BenchmarkRun"' "$T/catalog.jsonl" |
  sed 's/"observedAt":"[^"]*"/"observedAt":"2099-01-01T00:00:00Z"/' > "$T/future.jsonl"
cp "$T/imp.key" "$T/open.key" && chmod 644 "$T/open.key"
"$E" checkpoint --ledger "$L" > "$T/L.checkpoint" || bad "checkpoint L"
"$E" checkpoint --ledger "$S" > "$T/S.checkpoint" || bad "checkpoint S"
python3 - "$T" <<'EOF' || bad "witness requests"
import base64, sys
t = sys.argv[1]
cp = open(t + "/S.checkpoint").read()
lines = cp.split("\n")
head, sig = lines[-2].rsplit(" ", 1)
raw = bytearray(base64.b64decode(sig))
raw[-1] ^= 1
lines[-2] = head + " " + base64.b64encode(bytes(raw)).decode()
open(t + "/unknown.req", "w").write("old 0\n\n" + open(t + "/L.checkpoint").read())
open(t + "/old99.req", "w").write("old 99\n\n" + cp)
open(t + "/badsig.req", "w").write("old 0\n\n" + "\n".join(lines))
open(t + "/first.req", "w").write("old 0\n\n" + cp)
EOF

# RO: L through a read-only bind mount (root ignores mode bits), unmounted at exit; empty
# when mounting is refused here, and then the rows that use it are skipped.
RO="$T/ro"
mkdir "$RO"
trap 'stop_servers; umount -l "$RO" 2>/dev/null; rm -rf "$T"' EXIT
if ! { mount --bind "$L" "$RO" && mount -o remount,ro,bind "$RO"; } 2>"$T/mount.err"; then
  echo "the rows on a read-only ledger are skipped: cannot mount one ($(tr '\n' ' ' < "$T/mount.err"))"
  umount -l "$RO" 2>/dev/null
  RO=""
fi

serve_with_witness "$S" "$T/w.key" "$WS" || { finish; exit 1; }
# The witness has cosigned S at its size once: an old size of 0 is then a conflict (409).
[ "$(curl -s -o /dev/null -w '%{http_code}' --data-binary @"$T/first.req" "$W/add-checkpoint")" = 200 ] &&
  ok || bad "the witness cosigns S's checkpoint"
"$E" mirror --from "$R/" --ledger "$M" --vkey "$S/keys/log.vkey" >/dev/null 2>&1 && ok || bad "mirror S into M"

# http METHOD URL [FILE [CONTENT_TYPE]]: the request; the status goes to $T/status and the
# answer's text (a problem's detail, or the body) to standard error.
http() {
  local method=$1 url=$2 file=${3:-} type=${4:-application/octet-stream}
  local args=(--path-as-is -s -o "$T/body" -w '%{http_code}' -X "$method" "$url")
  [ -n "$file" ] && args+=(-H "Content-Type: $type" --data-binary @"$file")
  curl "${args[@]}" > "$T/status"
  python3 -c '
import json, sys
text = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
try:
    text = json.loads(text)["detail"]
except Exception:
    pass
sys.stderr.write(text)' "$T/body"
}

# The LMDB files and the list of files of every store a row might write.
state() {
  find "$L" "$S" "$M" "$WS" -type f -name '*.mdb' ! -name lock.mdb -exec sha256sum {} + | sort
  find "$L" "$S" "$M" "$WS" | sort
}

# first_code CELL: the text of the cell's first `code span`.
first_code() { sed -n 's/^[^`]*`\([^`]*\)`.*/\1/p' <<< "$1"; }

# says MESSAGE FILE: FILE holds MESSAGE, where each «...» in MESSAGE stands for any text.
says() {
  python3 - "$1" "$2" <<'EOF'
import re, sys
message, path = sys.argv[1], sys.argv[2]
text = open(path, "rb").read().decode("utf-8", "replace")
pattern = ".*?".join(re.escape(part) for part in re.split("«[^»]*»", message))
sys.exit(0 if re.search(pattern, text, re.S) else 1)
EOF
}

# ---- the rows -----------------------------------------------------------------------------------
rows=0
while IFS= read -r line; do
  [[ $line =~ ^\|\ ([A-Z][0-9]+)\ \| ]] || continue
  IFS='|' read -r _ id _ input message result _ <<< "$line"
  id=${id// /}
  input=$(first_code "$input")
  message=$(first_code "$message")
  result=$(sed 's/^ *//; s/ *$//' <<< "$result")
  if [[ $input == *'$RO'* ]] && [ -z "$RO" ]; then continue; fi
  for v in RO T L S M U R W; do message=${message//\$$v/${!v}}; done
  rows=$((rows + 1))
  before=$(state)
  ( eval "$input" ) > "$T/out" 2> "$T/err"
  got=$?
  [[ $result == HTTP* ]] && got="HTTP $(cat "$T/status")" || got="exit $got"
  if [ "${BAD_INPUT_SHOW:-}" = 1 ]; then echo "$id: $got: $(head -c 600 "$T/err")"; fi
  [ "$got" = "$result" ] && ok || bad "$id ($input): $got, the table says $result"
  says "$message" "$T/err" && ok ||
    { bad "$id: the message is not the table's"; echo "  | got: $(head -c 600 "$T/err")" >&2; }
  [ "$(state)" = "$before" ] && ok || bad "$id wrote something"
done < "$TABLE"
[ "$rows" -ge 40 ] && ok || bad "the table has $rows rows; it had at least 40"
echo "$rows rows of $TABLE"
finish
