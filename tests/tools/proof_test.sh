#!/usr/bin/env bash
# End-to-end tests of offline proofs: evledger checkpoint, proof inclusion|consistency|verify.
# Real processes, a real ledger on disk; the proofs are checked by `proof verify` from the proof
# file, the entry bytes and the log's verifier key only, and their leaf hashes by sha256sum.
# Usage: proof_test.sh EVLEDGER_BINARY SOURCE_DIR
set -uo pipefail
E="$1"
SRC="$2"
source "$(dirname "$0")/testlib.sh"


# expect CODE DESCRIPTION -- COMMAND...: runs COMMAND, checks its exit code.
# contains FILE TEXT DESCRIPTION
size_of() { "$E" log --ledger "$1" | wc -l; }
# The RFC 6962 leaf hash of an entry file, SHA-256(0x00 || entry), as hex.
leaf_hex() { { printf '\000'; cat "$1"; } | sha256sum | cut -d' ' -f1; }
# A manifest entry signed by the importer; $1 makes each body distinct.
make_entry() {
  printf '(schemaVersion = 1, author = 0x"%s", claimedTimeMs = %s, manifest = (canonical = "{\\"apiVersion\\":\\"kernelindex.dev/v1alpha1\\",\\"kind\\":\\"ExecutionEnvironment\\",\\"spec\\":{\\"n\\":%s}}"))' \
    "$(pubkey_hex "$T/imp.key.vkey")" "$((1780000000000 + $1))" "$1" \
    | capnp convert text:canonical "$SRC/events/event.capnp" EventBody > "$T/body$1.bin" \
    && "$E" sign --key "$T/imp.key" --out "$T/new$1.bin" "$T/body$1.bin" >/dev/null
}
# flip_line FILE LINE: replaces the first base64 character of that line by another.
flip_line() {
  awk -v l="$2" 'NR==l { c=substr($0,1,1); $0=((c=="A")?"B":"A") substr($0,2) } { print }' "$1"
}

L="$T/ledger"
VK="$L/keys/log.vkey"

# ---- a ledger built with the CLI: genesis, a grant, then entries in two commits ----
"$E" init --ledger "$L" --origin proof.evledger.invalid/log >/dev/null && ok || bad "init"
"$E" key new imp@sol-execbench --out "$T/imp.key" >/dev/null && ok || bad "key new"
"$E" key grant --ledger "$L" --key "$T/imp.key.vkey" --role importer --scope sol-execbench \
  --signer "$L/keys/admin.key" >/dev/null && ok || bad "grant"
for i in 1 2 3 4 5 6 7; do make_entry "$i" || bad "make entry $i"; done
expect 0 "append three entries" -- "$E" append --ledger "$L" "$T/new1.bin" "$T/new2.bin" "$T/new3.bin"
[ "$(size_of "$L")" -eq 5 ] && ok || bad "ledger size 5 after the first entries"

# ---- checkpoint ----
expect 0 "checkpoint" -- "$E" checkpoint --ledger "$L"
cp "$T/out" "$T/cp5"
[ "$(sed -n 1p "$T/cp5")" = "proof.evledger.invalid/log" ] && ok || bad "checkpoint origin line"
[ "$(sed -n 2p "$T/cp5")" = "5" ] && ok || bad "checkpoint size line"
[ -z "$(sed -n 4p "$T/cp5")" ] && ok || bad "checkpoint blank line"
contains "$T/cp5" "— proof.evledger.invalid/log " "checkpoint signature line"
expect 0 "checkpoint --json" -- "$E" checkpoint --ledger "$L" --json
contains "$T/out" '"origin":"proof.evledger.invalid/log","size":5,"root":"' "checkpoint json"
expect 0 "checkpoint of the genesis commit" -- "$E" checkpoint --ledger "$L" --size 1
[ "$(sed -n 2p "$T/out")" = "1" ] && ok || bad "checkpoint --size 1 is of size 1"
expect 1 "checkpoint of a size no commit ended at" -- "$E" checkpoint --ledger "$L" --size 4
contains "$T/err" "the newest is of size 5" "missing checkpoint names the newest size"
expect 3 "checkpoint of a missing ledger" -- "$E" checkpoint --ledger "$T/none"

# ---- inclusion proofs of every entry, in both formats, verified from the entry file ----
for i in 0 1 2 3 4; do
  "$E" get --ledger "$L" "$i" --raw > "$T/e$i.bin" || bad "get --raw $i"
  expect 0 "tlog-proof of entry $i" -- "$E" proof inclusion --ledger "$L" --index "$i"
  cp "$T/out" "$T/p$i.tlog-proof"
  [ "$(head -n 2 "$T/p$i.tlog-proof")" = $'c2sp.org/tlog-proof@v1\nindex '"$i" ] && ok \
    || bad "tlog-proof $i header and index lines"
  expect 0 "verify the tlog-proof of entry $i" -- "$E" proof verify --vkey "$VK" --proof "$T/p$i.tlog-proof" --entry "$T/e$i.bin"
  contains "$T/out" "verified: entry $i (leaf hash" "verify prints what it verified ($i)"
  contains "$T/out" "in the tree of size 5 of proof.evledger.invalid/log" "verify names the tree ($i)"
  expect 0 "JSON proof of entry $i" -- "$E" proof inclusion --ledger "$L" --index "$i" --format json
  cp "$T/out" "$T/p$i.json"
  contains "$T/p$i.json" "{\"type\":\"inclusion\",\"index\":$i,\"size\":5,\"leafHash\":\"" "JSON proof $i"
  expect 0 "verify the JSON proof of entry $i" -- "$E" proof verify --vkey "$VK" --proof "$T/p$i.json" --entry "$T/e$i.bin"
  expect 0 "verify entry $i by its leaf hash, computed by sha256sum" -- \
    "$E" proof verify --vkey "$VK" --proof "$T/p$i.tlog-proof" --leaf-hash "$(leaf_hex "$T/e$i.bin")"
done
# The proof's checkpoint is the log's checkpoint, verbatim.
sed -n '/^$/,$p' "$T/p2.tlog-proof" | tail -n +2 | cmp -s - "$T/cp5" && ok || bad "tlog-proof embeds the checkpoint verbatim"
# The leaf hash in base64, and the verifier key given as text rather than a file.
b64leaf=$(leaf_hex "$T/e3.bin" | xxd -r -p | base64)
expect 0 "verify by a base64 leaf hash and a verifier key given as text" -- \
  "$E" proof verify --vkey "$(cat "$VK")" --proof "$T/p3.json" --leaf-hash "$b64leaf" --json
contains "$T/out" '"ok":true,"type":"inclusion","index":3' "verify --json"
# By event id, into a file.
"$E" get --ledger "$L" 4 --json > "$T/get4.json"
id=$(sed -n 's/.*"id":"\(sha256:[0-9a-f]*\)".*/\1/p' "$T/get4.json")
expect 0 "proof by event id to a file" -- "$E" proof inclusion --ledger "$L" --id "$id" --out "$T/by-id.tlog-proof"
cmp -s "$T/by-id.tlog-proof" "$T/p4.tlog-proof" && ok || bad "proof by id equals proof by index"
expect 1 "proof of an unknown event id" -- "$E" proof inclusion --ledger "$L" --id "sha256:$(printf x | sha256sum | cut -d' ' -f1)"
expect 1 "proof of an index beyond the log" -- "$E" proof inclusion --ledger "$L" --index 99

# ---- tampered proofs, wrong keys, wrong entries: exit 1 with the reason ----
hash_line=3  # header, index, then the first proof hash
flip_line "$T/p2.tlog-proof" "$hash_line" > "$T/bad-hash.tlog-proof"
cmp -s "$T/bad-hash.tlog-proof" "$T/p2.tlog-proof" && bad "flip_line changed nothing"
expect 1 "a flipped proof hash fails" -- "$E" proof verify --vkey "$VK" --proof "$T/bad-hash.tlog-proof" --entry "$T/e2.bin"
contains "$T/err" "the proof leads to root" "flipped hash message"
sed 's/^index 2$/index 3/' "$T/p2.tlog-proof" > "$T/bad-index.tlog-proof"
expect 1 "a wrong index fails" -- "$E" proof verify --vkey "$VK" --proof "$T/bad-index.tlog-proof" --entry "$T/e2.bin"
sed 's/^index 2$/index 7/' "$T/p2.tlog-proof" > "$T/far-index.tlog-proof"
expect 1 "an index beyond the checkpoint fails" -- "$E" proof verify --vkey "$VK" --proof "$T/far-index.tlog-proof" --entry "$T/e2.bin"
contains "$T/err" "not in the checkpoint's tree of size 5" "index beyond the checkpoint message"
root_line=$(( $(grep -n '^$' "$T/p2.tlog-proof" | head -1 | cut -d: -f1) + 3 ))
flip_line "$T/p2.tlog-proof" "$root_line" > "$T/bad-root.tlog-proof"
expect 1 "an altered checkpoint root fails" -- "$E" proof verify --vkey "$VK" --proof "$T/bad-root.tlog-proof" --entry "$T/e2.bin"
contains "$T/err" "does not verify" "altered checkpoint message"
expect 1 "another entry fails" -- "$E" proof verify --vkey "$VK" --proof "$T/p2.tlog-proof" --entry "$T/e3.bin"
expect 1 "another entry fails against a JSON proof" -- "$E" proof verify --vkey "$VK" --proof "$T/p2.json" --entry "$T/e3.bin"
contains "$T/err" "it proves another entry" "JSON leaf hash mismatch message"
expect 1 "a wrong verifier key fails" -- "$E" proof verify --vkey "$L/keys/admin.vkey" --proof "$T/p2.tlog-proof" --entry "$T/e2.bin"
contains "$T/err" "no signature by a known key" "wrong key message"
"$E" key new proof.evledger.invalid/log --out "$T/impostor.key" >/dev/null
expect 1 "a key with the log's name but not its key fails" -- "$E" proof verify --vkey "$T/impostor.key.vkey" --proof "$T/p2.tlog-proof" --entry "$T/e2.bin"
sed 's/"size":5/"size":4/' "$T/p2.json" > "$T/bad-size.json"
expect 1 "a JSON proof whose size is not its checkpoint's fails" -- "$E" proof verify --vkey "$VK" --proof "$T/bad-size.json" --entry "$T/e2.bin"
contains "$T/err" "not the stated 4" "JSON size mismatch message"
head -n 2 "$T/p2.tlog-proof" > "$T/truncated.tlog-proof"
expect 1 "a truncated proof fails" -- "$E" proof verify --vkey "$VK" --proof "$T/truncated.tlog-proof" --entry "$T/e2.bin"
{ cat "$T/p2.tlog-proof"; echo garbage; } > "$T/trailing.tlog-proof"
expect 1 "a proof with trailing garbage fails" -- "$E" proof verify --vkey "$VK" --proof "$T/trailing.tlog-proof" --entry "$T/e2.bin"
echo "not a proof" > "$T/nonsense"
expect 1 "a file that is no proof fails" -- "$E" proof verify --vkey "$VK" --proof "$T/nonsense" --entry "$T/e2.bin"
contains "$T/err" "not a proof" "no proof message"

# ---- consistency: save a checkpoint, append more, prove the log only grew ----
expect 0 "append four more entries, two commits" -- "$E" append --ledger "$L" "$T/new4.bin" "$T/new5.bin"
expect 0 "append the last two" -- "$E" append --ledger "$L" "$T/new6.bin" "$T/new7.bin"
[ "$(size_of "$L")" -eq 9 ] && ok || bad "ledger size 9"
expect 0 "consistency proof from the saved checkpoint" -- "$E" proof consistency --ledger "$L" --from 5
cp "$T/out" "$T/c5-9.json"
contains "$T/c5-9.json" '{"type":"consistency","from":5,"to":9,"hashes":["' "consistency JSON"
expect 0 "verify consistency" -- "$E" proof verify --vkey "$VK" --proof "$T/c5-9.json" --old-checkpoint "$T/cp5"
contains "$T/out" "verified: the tree of size 9 of proof.evledger.invalid/log" "consistency verified message"
contains "$T/out" "extends the tree of size 5" "consistency verified message, old size"
expect 0 "consistency to an earlier checkpoint, into a file" -- "$E" proof consistency --ledger "$L" --from 2 --to 5 --out "$T/c2-5.json"
"$E" checkpoint --ledger "$L" --size 2 > "$T/cp2"
expect 0 "verify consistency 2 to 5" -- "$E" proof verify --vkey "$VK" --proof "$T/c2-5.json" --old-checkpoint "$T/cp2" --json
contains "$T/out" '"ok":true,"type":"consistency"' "consistency verify --json"
expect 0 "consistency from 5 to 5" -- "$E" proof consistency --ledger "$L" --from 5 --to 5 --out "$T/c5-5.json"
expect 0 "verify consistency 5 to 5" -- "$E" proof verify --vkey "$VK" --proof "$T/c5-5.json" --old-checkpoint "$T/cp5"
# Old proofs still verify: they carry their checkpoint. New ones prove against size 9.
expect 0 "an old inclusion proof still verifies" -- "$E" proof verify --vkey "$VK" --proof "$T/p1.tlog-proof" --entry "$T/e1.bin"
expect 0 "inclusion proof at the old size" -- "$E" proof inclusion --ledger "$L" --index 1 --size 5
cmp -s "$T/out" "$T/p1.tlog-proof" && ok || bad "a proof at size 5 is the same bytes as before"
for i in 5 8; do
  "$E" get --ledger "$L" "$i" --raw > "$T/e$i.bin"
  expect 0 "tlog-proof of entry $i at size 9" -- "$E" proof inclusion --ledger "$L" --index "$i" --out "$T/p$i.tlog-proof"
  expect 0 "verify entry $i at size 9" -- "$E" proof verify --vkey "$VK" --proof "$T/p$i.tlog-proof" --entry "$T/e$i.bin"
done
expect 1 "inclusion at a size no commit ended at" -- "$E" proof inclusion --ledger "$L" --index 1 --size 6
contains "$T/err" "the newest is of size 9" "missing size lists the newest"
expect 1 "inclusion of an entry beyond the chosen size" -- "$E" proof inclusion --ledger "$L" --index 6 --size 5
contains "$T/err" "not in the tree of size 5" "entry beyond size message"

# Tampered consistency proofs and mismatched checkpoints fail.
sed 's/"hashes":\["./"hashes":["\//' "$T/c5-9.json" > "$T/bad-c.json"
cmp -s "$T/bad-c.json" "$T/c5-9.json" && sed 's/"hashes":\["./"hashes":["+/' "$T/c5-9.json" > "$T/bad-c.json"
expect 1 "a tampered consistency hash fails" -- "$E" proof verify --vkey "$VK" --proof "$T/bad-c.json" --old-checkpoint "$T/cp5"
contains "$T/err" "consistency proof from size 5 to size 9" "tampered consistency message"
expect 1 "an old checkpoint of another size fails" -- "$E" proof verify --vkey "$VK" --proof "$T/c5-9.json" --old-checkpoint "$T/cp2"
contains "$T/err" "ask for a proof from 2" "old checkpoint size mismatch message"
expect 1 "consistency with a wrong verifier key fails" -- "$E" proof verify --vkey "$T/impostor.key.vkey" --proof "$T/c5-9.json" --old-checkpoint "$T/cp5"
flip_line "$T/cp5" 3 > "$T/cp5-bad"
expect 1 "an altered old checkpoint fails" -- "$E" proof verify --vkey "$VK" --proof "$T/c5-9.json" --old-checkpoint "$T/cp5-bad"
contains "$T/err" "old checkpoint" "altered old checkpoint message"

# ---- usage errors exit 2 ----
expect 2 "proof without a subcommand" -- "$E" proof
expect 2 "an unknown proof subcommand" -- "$E" proof frobnicate
expect 0 "proof --help" -- "$E" proof --help
expect 0 "proof inclusion --help" -- "$E" proof inclusion --help
contains "$T/out" "tlog-proof" "inclusion help"
expect 0 "checkpoint --help" -- "$E" checkpoint --help
expect 2 "inclusion without an entry" -- "$E" proof inclusion --ledger "$L"
expect 2 "inclusion with both --id and --index" -- "$E" proof inclusion --ledger "$L" --index 1 --id "$id"
expect 2 "inclusion with an unknown format" -- "$E" proof inclusion --ledger "$L" --index 1 --format xml
expect 2 "inclusion with a bad index" -- "$E" proof inclusion --ledger "$L" --index one
expect 2 "inclusion with a bad id" -- "$E" proof inclusion --ledger "$L" --id sha256:xyz
expect 2 "inclusion without --ledger" -- "$E" proof inclusion --index 1
expect 2 "consistency without --from" -- "$E" proof consistency --ledger "$L"
expect 2 "consistency from size 0" -- "$E" proof consistency --ledger "$L" --from 0
expect 2 "consistency from beyond the checkpoint" -- "$E" proof consistency --ledger "$L" --from 10
expect 1 "consistency to a size no commit ended at" -- "$E" proof consistency --ledger "$L" --from 2 --to 6
expect 2 "verify without --vkey" -- "$E" proof verify --proof "$T/p2.tlog-proof" --entry "$T/e2.bin"
expect 2 "verify without --proof" -- "$E" proof verify --vkey "$VK" --entry "$T/e2.bin"
expect 2 "verify inclusion without the entry" -- "$E" proof verify --vkey "$VK" --proof "$T/p2.tlog-proof"
expect 2 "verify inclusion with both --entry and --leaf-hash" -- "$E" proof verify --vkey "$VK" --proof "$T/p2.tlog-proof" --entry "$T/e2.bin" --leaf-hash "$(leaf_hex "$T/e2.bin")"
expect 2 "verify with a malformed leaf hash" -- "$E" proof verify --vkey "$VK" --proof "$T/p2.tlog-proof" --leaf-hash abc
expect 2 "verify inclusion with --old-checkpoint" -- "$E" proof verify --vkey "$VK" --proof "$T/p2.tlog-proof" --entry "$T/e2.bin" --old-checkpoint "$T/cp5"
expect 2 "verify consistency without --old-checkpoint" -- "$E" proof verify --vkey "$VK" --proof "$T/c5-9.json"
expect 2 "verify consistency with --entry" -- "$E" proof verify --vkey "$VK" --proof "$T/c5-9.json" --entry "$T/e2.bin" --old-checkpoint "$T/cp5"
expect 2 "checkpoint with a bad size" -- "$E" checkpoint --ledger "$L" --size x
expect 2 "checkpoint with an unknown option" -- "$E" checkpoint --ledger "$L" --bogus

# ---- I/O errors exit 3 ----
expect 3 "verify a missing proof file" -- "$E" proof verify --vkey "$VK" --proof "$T/missing" --entry "$T/e2.bin"
expect 3 "verify with a missing entry file" -- "$E" proof verify --vkey "$VK" --proof "$T/p2.tlog-proof" --entry "$T/missing"
expect 3 "inclusion from a missing ledger" -- "$E" proof inclusion --ledger "$T/none" --index 0

finish
