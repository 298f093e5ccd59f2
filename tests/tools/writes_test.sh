#!/usr/bin/env bash
# End-to-end tests of what writes a ledger when something goes wrong: init is all or nothing;
# text from events reaches a terminal with its control characters made visible; a primary
# measurement of 0 (or below) is refused; and a full disk stops an import or an append stream
# at its first failed commit, with exit 3, leaving the log in input order so that running the
# same command again resumes it.
# The full-disk part mounts small tmpfs file systems (root or CAP_SYS_ADMIN); where that is
# refused it says so and skips that part.
# Usage: writes_test.sh EVLEDGER_BINARY SOURCE_DIR
set -uo pipefail
E="$1"
SRC="$2"
source "$(dirname "$0")/testlib.sh"
mounts=()
cleanup() {
  for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT

# Nothing in directory $1 but what $2 names (a glob-free list of names, or "").
holds_only() { [ "$(ls -A "$1" | tr '\n' ' ' | sed 's/ $//')" = "$2" ]; }
# The event ids of a ledger's entries from index 2 on (after its genesis and one grant).
ids_from_2() { "$E" log --ledger "$1" --from 2 --json | grep -o '"id":"sha256:[0-9a-f]*"'; }

# --- init: validated first, then all or nothing ---
mkdir "$T/init"
long=$(printf 'a%.0s' $(seq 1 40000))
expect 2 "an origin too long for the genesis" -- "$E" init --ledger "$T/init/L" --origin "$long"
contains "$T/err" "an origin takes at most 32591 bytes" "the genesis bound is named"
holds_only "$T/init" "" && ok || bad "a refused init left $(ls -A "$T/init")"
expect 2 "an origin with a control character" -- "$E" init --ledger "$T/init/L" --origin $'a\x1b[31m'
mkdir -p "$T/init/old/db"  # what an older evledger's failed init left behind
expect 0 "init over an empty db/" -- "$E" init --ledger "$T/init/old" --origin old.evledger.invalid/log
expect 0 "the ledger made over an empty db/ verifies" -- "$E" verify --ledger "$T/init/old"
expect 1 "init over a ledger" -- "$E" init --ledger "$T/init/old" --origin old.evledger.invalid/log
contains "$T/err" "a ledger exists" "init over a ledger says so"
mkdir "$T/init/busy" && touch "$T/init/busy/notes"
expect 1 "init into a directory that holds files" -- "$E" init --ledger "$T/init/busy" --origin b.evledger.invalid/log
holds_only "$T/init/busy" "notes" && ok || bad "init touched a directory that holds files"
expect 0 "init with keys elsewhere" -- "$E" init --ledger "$T/init/K" --keys "$T/init/keys" --origin k.evledger.invalid/log
holds_only "$T/init/keys" "admin.key admin.vkey log.key log.vkey" && ok || bad "key directory holds $(ls -A "$T/init/keys")"
mkdir "$T/init/empty"
expect 0 "init into an empty directory" -- "$E" init --ledger "$T/init/empty" --origin e.evledger.invalid/log
expect 0 "the ledger made in an empty directory verifies" -- "$E" verify --ledger "$T/init/empty"
# A step that fails after the build began (the key directory cannot be made under a file):
# the parents made for DIR go too.
touch "$T/init/afile"
expect 3 "init whose --keys cannot be created" -- "$E" init --ledger "$T/init/N/sub/L" --keys "$T/init/afile/keys" --origin m.evledger.invalid/log
contains "$T/err" "cannot create $T/init/afile/keys" "the failed step names the directory"
holds_only "$T/init" "K afile busy empty keys old" && ok || bad "a failed init left $(ls -A "$T/init")"
expect 0 "init again, with keys that can be made" -- "$E" init --ledger "$T/init/N/sub/L" --keys "$T/init/mkeys" --origin m.evledger.invalid/log
expect 0 "that ledger verifies" -- "$E" verify --ledger "$T/init/N/sub/L"

# --- text from events: control characters made visible in every command that prints it ---
# Whether file $1 holds, raw, ESC, CR, DEL, a C1 control, or a bidi or line-separator mark.
raw_controls() {
  LC_ALL=C grep -qP '[\x1b\r\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]' "$1"
}
X="$T/tx"
mkdir "$X"
"$E" init --ledger "$X/L" --origin tx.evledger.invalid/log >/dev/null 2>&1 || bad "init $X/L"
"$E" key new imp@sol-execbench --out "$X/imp.key" >/dev/null 2>&1
"$E" key grant --ledger "$X/L" --key "$X/imp.key.vkey" --role importer --scope sol-execbench \
  --signer "$X/L/keys/admin.key" >/dev/null 2>&1 || bad "grant the importer"
# A key name may hold a bidi override (C2SP forbids only spaces and '+').
"$E" key new $'att\u202egnp@x' --out "$X/att.key" >/dev/null 2>&1
expect 0 "grant a key whose name holds U+202E" -- "$E" key grant --ledger "$X/L" --key "$X/att.key.vkey" --role attestor --signer "$X/L/keys/admin.key"
raw_controls "$T/out" && bad "the grant printed the name's bidi mark raw" || ok
"$E" gen --runs 1 2>/dev/null | sed 's/"title":"Meridian Kernels/"title":"\\u001b[31mMeridian\\r\\u0085\\u202e\\u2066 Kernels\\u007f/' > "$X/cat.jsonl"
grep -q 'u001b\[31mMeridian' "$X/cat.jsonl" || bad "the run's title was not rewritten"
expect 0 "import a run whose title holds ESC, CR, DEL, U+0085 and bidi marks" -- "$E" import --ledger "$X/L" --key "$X/imp.key" "$X/cat.jsonl"
run=$("$E" runs --ledger "$X/L" --json | grep -o '"run":"sha256:[0-9a-f]*"' | head -1 | cut -d'"' -f4)
# An attestation with the same, as an older evledger (or another encoder) could write it.
printf '(schemaVersion = 1, author = 0x"%s", claimedTimeMs = 1780000000000, attestation = (target = 0x"%s", type = reproduced, text = "\\x1b[2J\\x1b[31mreproduced\\rnot \\xc2\\x9b\\xe2\\x80\\xae", environment = "\\x1b]0;title\\x07"))' \
  "$(pubkey_hex "$X/att.key.vkey")" "${run#sha256:}" |
  capnp convert text:canonical "$SRC/events/event.capnp" EventBody > "$X/body.bin" || bad "capnp convert"
"$E" sign --key "$X/att.key" --out "$X/att.bin" "$X/body.bin" >/dev/null 2>&1 || bad "sign the attestation"
expect 0 "append the attestation" -- "$E" append --ledger "$X/L" "$X/att.bin"
size=$("$E" log --ledger "$X/L" | wc -l)
for command in "show $run" "runs" "groups" "log" "get $((size - 1))" "get $((size - 2))" "key list" "verify"; do
  expect 0 "$command" -- "$E" $command --ledger "$X/L"
  cat "$T/err" >> "$T/out"
  raw_controls "$T/out" && bad "'$command' printed control characters raw: $(LC_ALL=C grep -aoP '.{0,20}[\x1b\r]' "$T/out" | head -2 | od -c | head -3)" || ok
done
"$E" show "$run" --ledger "$X/L" > "$T/out"
contains "$T/out" '\x1b[31mMeridian\r\u0085\u202e\u2066 Kernels\x7f' "show makes the title's controls visible"
contains "$T/out" 'att\u202egnp@x (log index' "show makes the attestor's bidi mark visible"
contains "$T/out" '\x1b[2J\x1b[31mreproduced\rnot \u009b\u202e' "show makes the attestation's controls visible"
"$E" log --ledger "$X/L" > "$T/out"
contains "$T/out" 'att\u202egnp@x' "log makes a key name's bidi mark visible"
# evledger itself writes no control character into an attestation.
for text in $'seen\e[31m' $'seen\rgone' $'seen\u009b' $'seen\x7f'; do
  expect 2 "attest --text with a control character" -- "$E" attest --ledger "$X/L" --key "$X/att.key" --target "$run" --type reproduced --text "$text"
  contains "$T/err" "holds the control character" "the refusal names the control character"
  raw_controls "$T/err" && bad "the refusal echoed the control character raw" || ok
done
expect 2 "attest --environment with a line feed" -- "$E" attest --ledger "$X/L" --key "$X/att.key" --target "$run" --type reproduced --text seen --environment $'B200\nCUDA 12'
expect 0 "attest --text over several lines, with a tab" -- "$E" attest --ledger "$X/L" --key "$X/att.key" --target "$run" --type reproduced --text $'seen\n\ton B200'

# --- a primary measurement must be positive; numbers that underflow are refused ---
run_line=$("$E" gen --runs 1 2>/dev/null | tail -1)
for v in 0 -0 1e-999 -1e-400; do echo "$run_line" | sed "s/\"mean\":1551318/\"mean\":$v/"; done > "$X/zero.jsonl"
expect 1 "import runs whose mean latency is 0, -0 or underflows" -- "$E" import --ledger "$X/L" --key "$X/imp.key" "$X/zero.jsonl"
contains "$T/err" "the primary measurement (latency:mean:ns) is 0 [primary-value]" "0 ns is refused"
contains "$T/err" "the primary measurement (latency:mean:ns) is -0 [primary-value]" "-0 ns is refused"
contains "$T/err" "number 1e-999 underflows a double" "1e-999 is refused at parse"
contains "$T/err" "number -1e-400 underflows a double" "-1e-400 is refused at parse"
contains "$T/out" "4 rejected" "every such run is rejected"
python3 -c 'import json, sys, yaml
d = json.loads(sys.argv[1]); d["spec"]["timing"]["latencyNs"]["mean"] = "MEAN"
print(yaml.safe_dump(d).replace("mean: MEAN", "mean: 1e-999"))' "$run_line" > "$X/tiny.yaml"
grep -q "mean: 1e-999" "$X/tiny.yaml" || bad "the YAML run was not written"
expect 1 "import a YAML run whose mean latency underflows" -- "$E" import --ledger "$X/L" --key "$X/imp.key" "$X/tiny.yaml"
contains "$T/err" "the number 1e-999 underflows a double" "YAML refuses 1e-999 as JSON does"
echo "$run_line" | sed 's/"mean":1551318/"mean":1e999/' > "$X/huge.jsonl"
expect 1 "import a run whose mean latency overflows" -- "$E" import --ledger "$X/L" --key "$X/imp.key" "$X/huge.jsonl"
contains "$T/err" "overflows a double" "1e999 is refused at parse"
expect 2 "--observed-ns 2^53" -- "$E" attest --ledger "$X/L" --key "$X/att.key" --target "$run" --type reproduced --text seen --observed-ns 9007199254740992
contains "$T/err" "give 1 to 9007199254740991" "the range of --observed-ns is named"
expect 2 "--observed-ns 2^64-1" -- "$E" attest --ledger "$X/L" --key "$X/att.key" --target "$run" --type reproduced --text seen --observed-ns 18446744073709551615
expect 0 "--observed-ns 2^53-1" -- "$E" attest --ledger "$X/L" --key "$X/att.key" --target "$run" --type reproduced --text seen --observed-ns 9007199254740991

# --- a full disk ---
small_disk() {  # mounts a tmpfs of size $2 on $1
  mkdir -p "$1" && mount -t tmpfs -o "size=$2" tmpfs "$1" 2>"$T/mount.err" || return 1
  mounts+=("$1")
}
if ! small_disk "$T/d0" 64k; then
  echo "skipped the full-disk tests: cannot mount a tmpfs here ($(cat "$T/mount.err"); needs root or CAP_SYS_ADMIN)"
  finish
  exit $?
fi
expect 3 "init on a full disk" -- "$E" init --ledger "$T/d0/L" --origin full.evledger.invalid/log
contains "$T/err" "the disk is full" "init names the full disk"
holds_only "$T/d0" "" && ok || bad "init on a full disk left $(ls -A "$T/d0")"
mount -o remount,size=1m "$T/d0"
expect 0 "init once there is room" -- "$E" init --ledger "$T/d0/L" --origin full.evledger.invalid/log

"$E" key new imp@sol-execbench --out "$T/imp.key" >/dev/null 2>&1
"$E" gen --runs 1500 > "$T/cat.jsonl" 2>/dev/null
setup() {  # a ledger in $1 with the importer granted
  "$E" init --ledger "$1" --origin "w.evledger.invalid/log" >/dev/null 2>&1 &&
    "$E" key grant --ledger "$1" --key "$T/imp.key.vkey" --role importer --scope sol-execbench \
      --signer "$1/keys/admin.key" >/dev/null || bad "setting up $1"
}
setup "$T/ref"
"$E" import --ledger "$T/ref" --key "$T/imp.key" "$T/cat.jsonl" >/dev/null 2>&1 || bad "reference import"
ids_from_2 "$T/ref" > "$T/ref.ids"

# Small batches, so that some commits fit before the disk is full (about 1,000 of the 3,132
# entries on 5 MiB).
small_disk "$T/d1" 5m || bad "mount"
setup "$T/d1/L"
expect 3 "an import on a full disk" -- "$E" import --ledger "$T/d1/L" --key "$T/imp.key" --batch 250 "$T/cat.jsonl"
contains "$T/err" "import stopped at document" "the import says where it stopped"
contains "$T/err" "the disk is full" "the import names the full disk"
contains "$T/out" "not stored (the import stopped)" "the summary counts what was not stored"
if grep -q "rejected:" "$T/err"; then bad "documents were reported rejected for a full disk"; else ok; fi
stored=$("$E" log --ledger "$T/d1/L" | wc -l)
[ "$stored" -gt 2 ] && [ "$stored" -lt "$(( $(wc -l < "$T/ref.ids") + 2 ))" ] && ok ||
  bad "the disk should fill in the middle of the import (log size $stored)"
ids_from_2 "$T/d1/L" > "$T/d1.ids"
cmp -s "$T/d1.ids" <(head -n "$(wc -l < "$T/d1.ids")" "$T/ref.ids") && ok ||
  bad "what the full disk kept is not the import's prefix in input order"
expect 0 "the ledger a full disk stopped verifies" -- "$E" verify --ledger "$T/d1/L"
mount -o remount,size=64m "$T/d1"
expect 0 "the same import again resumes it" -- "$E" import --ledger "$T/d1/L" --key "$T/imp.key" "$T/cat.jsonl"
ids_from_2 "$T/d1/L" > "$T/d1.ids"
cmp -s "$T/d1.ids" "$T/ref.ids" && ok || bad "the resumed import's log differs from an import in one go"

# An append stream: the reference ledger's entries as uint16-framed records.
"$E" export-tiles --ledger "$T/ref" --out "$T/tiles" >/dev/null 2>&1 || bad "export"
find "$T/tiles/tile/entries" -type f | sort | xargs cat > "$T/stream.bin"
small_disk "$T/d2" 10m || bad "mount"  # a commit of 4,096 entries fits, not the rest
setup "$T/d2/L"
expect 3 "an append stream on a full disk" -- "$E" append --ledger "$T/d2/L" - < "$T/stream.bin"
contains "$T/err" "not stored: " "the stream names the first entry not stored"
contains "$T/err" "the disk is full" "the stream names the full disk"
ids_from_2 "$T/d2/L" > "$T/d2.ids"
[ -s "$T/d2.ids" ] && cmp -s "$T/d2.ids" <(head -n "$(wc -l < "$T/d2.ids")" "$T/ref.ids") && ok ||
  bad "what the full disk kept of the stream is not its prefix in order"
mount -o remount,size=64m "$T/d2"
expect 1 "the stream again (its genesis and grant are refused, the rest appended)" -- \
  "$E" append --ledger "$T/d2/L" - < "$T/stream.bin"
ids_from_2 "$T/d2/L" > "$T/d2.ids"
cmp -s "$T/d2.ids" "$T/ref.ids" && ok || bad "the resumed stream's log differs from the input"

# A single event on a full disk: not 'rejected', exit 3.
small_disk "$T/d3" 1m || bad "mount"
setup "$T/d3/L"
dd if=/dev/zero of="$T/d3/fill" bs=4k count=1000 2>/dev/null
"$E" key new a@x --out "$T/a.key" >/dev/null 2>&1
expect 3 "a grant on a full disk" -- "$E" key grant --ledger "$T/d3/L" --key "$T/a.key.vkey" --role attestor --signer "$T/d3/L/keys/admin.key"
contains "$T/err" "not stored" "a single event says it was not stored"
contains "$T/err" "the disk is full" "a single event names the full disk"

finish
