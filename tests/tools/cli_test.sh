#!/usr/bin/env bash
# End-to-end tests of the evledger command line: real processes, a real ledger on disk.
# Usage: cli_test.sh EVLEDGER_BINARY SOURCE_DIR
set -uo pipefail
E="$1"
SRC="$2"
source "$(dirname "$0")/testlib.sh"


# expect CODE DESCRIPTION -- COMMAND...: runs COMMAND, checks its exit code.
# contains FILE TEXT DESCRIPTION
size_of() { "$E" log --ledger "$1" | wc -l; }

L="$T/ledger"

expect 0 "help" -- "$E" --help
expect 2 "unknown command" -- "$E" frobnicate
expect 2 "init without --origin" -- "$E" init --ledger "$L"
contains "$T/err" "--origin is required" "init without --origin"
expect 2 "bad origin" -- "$E" init --ledger "$L" --origin "has space"
expect 2 "unknown option" -- "$E" log --ledger "$L" --bogus
expect 3 "log of a missing ledger" -- "$E" log --ledger "$T/none"
contains "$T/err" "evledger init" "missing ledger message"

expect 0 "init" -- "$E" init --ledger "$L" --origin test.evledger.invalid/log
contains "$T/out" "test.evledger.invalid/log+" "init prints the log verifier key"
[ "$(stat -c %a "$L/keys/admin.key")" = 600 ] && ok || bad "admin.key is not mode 0600"
expect 1 "init twice" -- "$E" init --ledger "$L" --origin test.evledger.invalid/log
contains "$T/err" "exists" "init twice message"

expect 0 "key new" -- "$E" key new imp@sol-execbench --out "$T/imp.key"
expect 2 "key new with a bad name" -- "$E" key new "bad+name" --out "$T/x.key"
expect 3 "key new refuses to overwrite" -- "$E" key new imp@sol-execbench --out "$T/imp.key"
expect 2 "grant with an unknown role" -- "$E" key grant --ledger "$L" --key "$T/imp.key.vkey" --role boss --signer "$L/keys/admin.key"
chmod 644 "$L/keys/admin.key"
expect 1 "a secret key readable by others is refused" -- "$E" key grant --ledger "$L" --key "$T/imp.key.vkey" --role importer --scope sol-execbench --signer "$L/keys/admin.key"
contains "$T/err" "chmod 600" "key mode message"
chmod 600 "$L/keys/admin.key"
expect 0 "grant" -- "$E" key grant --ledger "$L" --key "$T/imp.key.vkey" --role importer --scope sol-execbench --signer "$L/keys/admin.key"
contains "$T/out" "at index 1" "grant index"
expect 1 "grant by a non-admin" -- "$E" key grant --ledger "$L" --key "$T/imp.key.vkey" --role admin --signer "$T/imp.key"
contains "$T/err" "has no admin role" "non-admin grant message"

# A body made with the standard capnp tool, signed by evledger.
printf '(schemaVersion = 1, author = 0x"%s", claimedTimeMs = 1780000000000, manifest = (canonical = "{\\"apiVersion\\":\\"kernelindex.dev/v1alpha1\\",\\"kind\\":\\"ExecutionEnvironment\\",\\"spec\\":{}}"))' \
  "$(pubkey_hex "$T/imp.key.vkey")" | capnp convert text:canonical "$SRC/events/event.capnp" EventBody > "$T/body.bin" \
  && ok || bad "capnp convert text:canonical"
expect 1 "sign with a key that is not the author" -- "$E" sign --key "$L/keys/admin.key" --out "$T/e.bin" "$T/body.bin"
contains "$T/err" "author" "wrong author message"
expect 0 "sign" -- "$E" sign --key "$T/imp.key" --out "$T/entry.bin" "$T/body.bin"
expect 0 "append" -- "$E" append --ledger "$L" "$T/entry.bin"
contains "$T/out" "appended at index 2" "append index"
expect 0 "append again" -- "$E" append --ledger "$L" "$T/entry.bin"
contains "$T/out" "already present at index 2" "idempotent append"
[ "$(size_of "$L")" -eq 3 ] && ok || bad "ledger size after duplicate append"

# Bad input changes nothing.
head -c 100 /dev/urandom > "$T/garbage.bin"
expect 1 "append garbage" -- "$E" append --ledger "$L" "$T/garbage.bin"
contains "$T/err" "rejected" "garbage message"
head -c 47 "$T/entry.bin" > "$T/truncated.bin"
expect 1 "append a truncated entry" -- "$E" append --ledger "$L" "$T/truncated.bin"
cp "$T/entry.bin" "$T/flipped.bin"
# The last byte is the signature's: invert it (writing a fixed value would leave it unchanged
# when it already had that value).
last=$(( $(stat -c %s "$T/entry.bin") - 1 ))
byte=$(od -An -tu1 -j "$last" -N1 "$T/entry.bin" | tr -d ' ')
printf "\\x$(printf %02x $(( byte ^ 0xff )))" | dd of="$T/flipped.bin" bs=1 seek="$last" conv=notrunc 2>/dev/null
cmp -s "$T/entry.bin" "$T/flipped.bin" && bad "the flipped entry is unchanged"
expect 1 "append an entry with a wrong signature" -- "$E" append --ledger "$L" "$T/flipped.bin"
[ "$(size_of "$L")" -eq 3 ] && ok || bad "bad input changed the ledger"

# A length-prefixed stream: the same entry twice and one new one.
"$E" sign --key "$T/imp.key" --out "$T/entry2.bin" <(printf '(schemaVersion = 1, author = 0x"%s", claimedTimeMs = 1780000000001, manifest = (canonical = "{}"))' "$(pubkey_hex "$T/imp.key.vkey")" | capnp convert text:canonical "$SRC/events/event.capnp" EventBody)
frame() { local n; n=$(stat -c %s "$1"); printf "\\x$(printf %02x $((n >> 8)))\\x$(printf %02x $((n & 255)))"; cat "$1"; }
{ frame "$T/entry.bin"; frame "$T/entry2.bin"; } > "$T/stream.bin"
"$E" append --ledger "$L" --json - < "$T/stream.bin" > "$T/out" 2>"$T/err" && ok || bad "stream append"
contains "$T/out" '"status":"present","index":2' "stream duplicate"
contains "$T/out" '"status":"added","index":3' "stream new entry"

# A manifest digest is registered once; a manifest that is not RFC 8785 canonical is refused.
"$E" sign --key "$T/imp.key" --out "$T/samedigest.bin" <(printf '(schemaVersion = 1, author = 0x"%s", claimedTimeMs = 1780000000009, manifest = (canonical = "{}"))' "$(pubkey_hex "$T/imp.key.vkey")" | capnp convert text:canonical "$SRC/events/event.capnp" EventBody)
expect 0 "the same manifest in another event" -- "$E" append --ledger "$L" "$T/samedigest.bin"
contains "$T/out" "already present at index 3" "manifest digest dedup"
"$E" sign --key "$T/imp.key" --out "$T/noncanon.bin" <(printf '(schemaVersion = 1, author = 0x"%s", claimedTimeMs = 1780000000010, manifest = (canonical = "{ \\"a\\": 1 }"))' "$(pubkey_hex "$T/imp.key.vkey")" | capnp convert text:canonical "$SRC/events/event.capnp" EventBody)
expect 1 "a manifest that is not canonical JSON" -- "$E" append --ledger "$L" "$T/noncanon.bin"
contains "$T/err" "not RFC 8785 canonical JSON" "non-canonical manifest message"

# Reading back.
expect 0 "get by index" -- "$E" get --ledger "$L" 2 --json
contains "$T/out" '"kind":"manifest"' "get json kind"
id=$(sed -n 's/.*"id":"\(sha256:[0-9a-f]*\)".*/\1/p' "$T/out")
expect 0 "get by id" -- "$E" get --ledger "$L" "$id"
expect 1 "get a missing index" -- "$E" get --ledger "$L" 99
expect 2 "get nonsense" -- "$E" get --ledger "$L" nonsense
"$E" get --ledger "$L" 2 --raw > "$T/raw.bin"
cmp -s "$T/raw.bin" "$T/entry.bin" && ok || bad "get --raw returns the stored bytes"
capnp convert canonical:text "$SRC/events/event.capnp" SignedEvent < "$T/raw.bin" > "$T/decoded.txt" && ok || bad "capnp decodes a stored entry"
contains "$T/decoded.txt" "signatures = [" "capnp decoding shows the signatures"
expect 0 "log json" -- "$E" log --ledger "$L" --json --from 1 --limit 2
[ "$(wc -l < "$T/out")" -eq 2 ] && ok || bad "log --limit"

# Revocation and compromise.
expect 2 "compromise without --void-from" -- "$E" key revoke --ledger "$L" --key "$T/imp.key.vkey" --reason compromised --signer "$L/keys/admin.key"
expect 0 "revoke as compromised" -- "$E" key revoke --ledger "$L" --key "$T/imp.key.vkey" --reason compromised --void-from 3 --signer "$L/keys/admin.key"
"$E" sign --key "$T/imp.key" --out "$T/entry3.bin" <(printf '(schemaVersion = 1, author = 0x"%s", claimedTimeMs = 1780000000002, manifest = (canonical = "{\\"n\\":3}"))' "$(pubkey_hex "$T/imp.key.vkey")" | capnp convert text:canonical "$SRC/events/event.capnp" EventBody)
expect 1 "a revoked key cannot append" -- "$E" append --ledger "$L" "$T/entry3.bin"
contains "$T/err" "was revoked at index 4 (compromised)" "revoked key message"
expect 0 "verify" -- "$E" verify --ledger "$L" --json
contains "$T/out" '"ok":true' "verify ok"
contains "$T/out" '"voided":1' "verify counts the voided event"
expect 1 "the last admin cannot be revoked" -- "$E" key revoke --ledger "$L" --key "$L/keys/admin.vkey" --reason retired --signer "$L/keys/admin.key"

# Tampering is found: flip one byte inside the stored entries with LMDB's own tools.
cp -r "$L" "$T/tampered"
if command -v mdb_dump >/dev/null; then
  mdb_dump -s entries "$T/tampered/db" > "$T/dump.txt"
  # The value line of entry 2: flip one hex digit in its middle.
  line=$(grep -n '^ 0000000000000002$' "$T/dump.txt" | cut -d: -f1)
  awk -v l=$((line + 1)) 'NR==l { m=int(length($0)/2); c=substr($0,m,1); c=(c=="0")?"1":"0"; $0=substr($0,1,m-1) c substr($0,m+1) } { print }' "$T/dump.txt" > "$T/dump2.txt"
  mdb_load -s entries -f "$T/dump2.txt" "$T/tampered/db" 2>/dev/null && ok || bad "mdb_load"
  expect 1 "verify finds the tampered entry" -- "$E" verify --ledger "$T/tampered"
  contains "$T/err" "entry 2" "verify names the tampered index"
fi

# The append benchmark runs end to end on a few entries: every entry is appended once, by the
# publishers it names, and each figure is reported.
expect 0 "bench append (small)" -- "$E" bench append --entries 4500 --memory-entries 0 --json --dir "$T"
contains "$T/out" '"entries":4500,' "bench append appends every entry once"
contains "$T/out" '"mode":"batches of 1000 from 8 publisher threads' "bench append names its publishers"
for field in ratioToVerifyAllCores perSecondWithoutTree treeCost p99Ms lmdbSingleCommitMs; do
  contains "$T/out" "\"$field\":" "bench append reports $field"
done

# The mirror benchmark keeps its upstream with --keep: a second run loads only the entries it
# lacks, and one that asks for fewer than the kept upstream holds is refused.
expect 0 "bench mirror --keep (small)" -- "$E" bench mirror --entries 300 --memory-entries 200 --keep "$T/bench-up" --json --dir "$T"
contains "$T/out" '"mirror":{"entries":300,' "bench mirror mirrors the whole upstream"
contains "$T/out" '{"entries":200,"peakRssMB":' "bench mirror reports the memory of the first pull"
test -f "$T/bench-up/keys/bench-importer.key" && ok || bad "bench mirror --keep saves the upstream's keys"
expect 0 "bench mirror reuses the kept upstream" -- "$E" bench mirror --entries 400 --memory-entries 0 --keep "$T/bench-up" --dir "$T"
contains "$T/out" "catch-up of 400 entries" "the kept upstream grows to the entries asked"
expect 0 "bench mirror with the kept upstream as it is" -- "$E" bench mirror --entries 400 --memory-entries 0 --keep "$T/bench-up" --dir "$T"
contains "$T/out" "catch-up of 400 entries" "the kept upstream is mirrored again"
grep -q "loading the upstream" "$T/err" && bad "a kept upstream of the size asked is loaded again" || ok
expect 2 "bench mirror refuses a kept upstream larger than asked" -- "$E" bench mirror --entries 300 --memory-entries 0 --keep "$T/bench-up" --dir "$T"
contains "$T/err" "holds 400 entries, more than the 300" "the refusal says what the kept upstream holds"

finish
