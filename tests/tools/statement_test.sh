#!/usr/bin/env bash
# End-to-end: every commit stores a projection statement signed by the log key; 'evledger
# statement' prints it; 'evledger rebuild --check' folds the log and compares every statement,
# and catches a changed projection record and a forged statement (tampered with mdb_load).
# Usage: statement_test.sh EVLEDGER_BINARY SOURCE_DIR
set -uo pipefail
E="$1"
source "$(dirname "$0")/testlib.sh"

L="$T/ledger"
"$E" init --ledger "$L" --origin stmt.evledger.invalid/log >/dev/null 2>&1 || bad "init"
"$E" key new imp@sol-execbench --out "$T/imp.key" >/dev/null
"$E" key grant --ledger "$L" --key "$T/imp.key.vkey" --role importer --scope sol-execbench \
  --signer "$L/keys/admin.key" >/dev/null || bad "grant"
"$E" gen --runs 60 --seed 3 --out "$T/catalog.jsonl" 2>/dev/null || bad "gen"
expect 0 "import" -- "$E" import --ledger "$L" --key "$T/imp.key" "$T/catalog.jsonl"
size=$("$E" log --ledger "$L" | wc -l)

# The command's face: help, usage errors, I/O errors, unknown sizes.
expect 0 "statement --help" -- "$E" statement --help
contains "$T/out" "usage: evledger statement" "statement --help"
"$E" --help | grep -q "^  statement " && ok || bad "the command list names statement"
expect 2 "statement with an unknown option" -- "$E" statement --ledger "$L" --bogus
expect 2 "statement with an argument" -- "$E" statement --ledger "$L" extra
expect 2 "statement with a bad size" -- "$E" statement --ledger "$L" --size ten
expect 2 "statement without --ledger" -- "$E" statement
expect 3 "statement of a missing ledger" -- "$E" statement --ledger "$T/none"
expect 1 "statement of a size without a checkpoint" -- "$E" statement --ledger "$L" --size 3
contains "$T/err" "no statement was signed at size 3" "unknown size message"
contains "$T/err" "the newest checkpoint is of size $size" "unknown size names the newest"

# The newest statement, and the one of the genesis commit, verbatim and as JSON.
expect 0 "statement" -- "$E" statement --ledger "$L"
head -1 "$T/out" | grep -qx "evledger/projections/v3" && ok || bad "statement's first line"
sed -n 2p "$T/out" | grep -qx "stmt.evledger.invalid/log" && ok || bad "statement names the origin"
sed -n 3p "$T/out" | grep -qx "$size" && ok || bad "the newest statement is of size $size"
contains "$T/out" "— stmt.evledger.invalid/log " "statement is signed by the log key"
cp "$T/out" "$T/newest.statement"
expect 0 "statement --json" -- "$E" statement --ledger "$L" --json
contains "$T/out" "\"size\":$size" "statement --json size"
contains "$T/out" '"digest":"' "statement --json digest"
expect 0 "statement of the genesis commit" -- "$E" statement --ledger "$L" --size 1
sed -n 3p "$T/out" | grep -qx "1" && ok || bad "the genesis commit's statement is of size 1"
expect 0 "statement of the grant's commit" -- "$E" statement --ledger "$L" --size 2

# The rebuild states the same digest as the stored statement.
expect 0 "rebuild" -- "$E" rebuild --ledger "$L" --json
contains "$T/out" '"identical":true' "rebuild equals the incremental projections"
contains "$T/out" '"matchesStatement":true' "rebuild equals the signed statement"
digest=$(sed -n 4p "$T/newest.statement")
contains "$T/out" "\"digest\":\"$digest\"" "rebuild's digest is the statement's"

# The auditor's check, on a ledger more commits have grown.
"$E" gen --runs 20 --seed 8 --out "$T/more.jsonl" 2>/dev/null
expect 0 "a second import" -- "$E" import --ledger "$L" --key "$T/imp.key" "$T/more.jsonl"
expect 0 "rebuild --check" -- "$E" rebuild --ledger "$L" --check
contains "$T/out" "match a fresh fold" "check reports the fold"
contains "$T/out" "stored projections: match" "check compares the stored projections"
expect 0 "rebuild --check --json" -- "$E" rebuild --ledger "$L" --check --json
contains "$T/out" '"ok":true' "check --json ok"
contains "$T/out" '"checkpointsWithoutStatement":0' "every checkpoint has a statement"
expect 2 "--check with --log-key" -- "$E" rebuild --ledger "$L" --check --log-key "$L/keys/log.key"
expect 2 "--vkey without --check" -- "$E" rebuild --ledger "$L" --vkey "$L/keys/log.vkey"
"$E" key new other.evledger.invalid/log --out "$T/other.key" >/dev/null
expect 1 "check against another key" -- "$E" rebuild --ledger "$L" --check --vkey "$T/other.key.vkey"
contains "$T/err" "does not verify" "a statement by another key fails"

# mdb_load replaces records of one database: the tampering an attacker with disk access does.
header() { mdb_dump -p -s "$1" "$L/db" 2>/dev/null | sed -n '1,/^HEADER=END$/p' | grep -v '^db_pagesize='; }
tamper() {  # DB KEY_LINE VALUE_LINE (mdb_dump's printable form, without the leading space)
  { header "$1"; printf ' %s\n %s\nDATA=END\n' "$2" "$3"; } | mdb_load -s "$1" "$L/db" || bad "mdb_load $1"
}

# A changed projection record: the fold still matches every statement, the stored state not.
group=$(mdb_dump -p -s projections "$L/db" 2>/dev/null | grep -m1 '^ G/' | cut -c2-)
cp -r "$L" "$T/pristine"
tamper projections "$group" '{"tampered":true}'
expect 1 "check catches a changed projection record" -- "$E" rebuild --ledger "$L" --check --json
contains "$T/out" '"storedState":"DIFFERENT"' "check names the stored projections"
contains "$T/out" "\"expected\":\"$(sed -n 4p <("$E" statement --ledger "$L"))\"" \
  "check gives the expected digest"
contains "$T/out" '"failedSize":' "check gives the size"
expect 1 "a rebuild replaces the changed projections, and says so" -- "$E" rebuild --ledger "$L"
contains "$T/err" "changed outside evledger" "the rebuild names what happened"
contains "$T/out" "the signed statement below states it" "the rebuilt digest is the signed one"
expect 0 "check after the rebuild" -- "$E" rebuild --ledger "$L" --check

# A state of another projection format (its #/version names another): a writer refolds it when
# it opens the ledger, and says so; the statements still hold.
tamper projections "#/version" "evledger/projections/v2"
entries=$("$E" log --ledger "$L" | wc -l)
: > "$T/nothing.jsonl"
expect 0 "a writer opens a state of another format" -- \
  "$E" import --ledger "$L" --key "$T/imp.key" "$T/nothing.jsonl"
contains "$T/err" "folding the projections of $entries entries afresh" "the writer says it refolds"
expect 0 "check after the refold" -- "$E" rebuild --ledger "$L" --check
contains "$T/out" "stored projections: match" "the refolded state is the stated one"

# A forged statement: a changed digest line breaks the log key's signature.
last=$(mdb_dump -p -s statements "$L/db" | tail -3 | head -2)
key_line=$(echo "$last" | sed -n 1p | cut -c2-)
note_line=$(echo "$last" | sed -n 2p | cut -c2-)
d=$("$E" statement --ledger "$L" | sed -n 4p)
case "$d" in A*) d2="B${d#?}" ;; *) d2="A${d#?}" ;; esac
forged=$(echo "$note_line" | sed 's|\\0a'"$d"'\\0a|\\0a'"$d2"'\\0a|')
[ "$forged" != "$note_line" ] && ok || bad "the forgery changed the digest line"
tamper statements "$key_line" "$forged"
expect 1 "check catches a forged statement" -- "$E" rebuild --ledger "$L" --check
contains "$T/err" "does not verify" "the forged statement fails its signature"
expect 1 "statement refuses to print a forged statement" -- "$E" statement --ledger "$L"
contains "$T/err" "rebuild --check" "statement points at the check"

# A statement re-signed by the log key (a compromised log key, or a bug) stating another digest:
# its signature is good, so only folding the log catches it. Python signs it (the log key file
# is Go's note format: PRIVATE+KEY+<name>+<key id>+<base64(0x01 ‖ seed)>).
L="$T/pristine"
first=$(mdb_dump -p -s statements "$L/db" 2>/dev/null | sed -n '/^HEADER=END$/{n;p;n;p;q}')
fkey=$(echo "$first" | sed -n 1p | cut -c2-)
fsize=$(echo "$first" | sed -n 2p | sed 's/^ evledger\/projections\/v3\\0a[^\\]*\\0a\([0-9]*\)\\0a.*/\1/')
[ "$fsize" = 1 ] && ok || bad "the first statement is of size 1 (got '$fsize')"
resigned=$(python3 - "$L/keys/log.key" "$fsize" <<'PY'
import base64, hashlib, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
_, _, name, key_id, key = open(sys.argv[1]).read().strip().split("+", 4)
seed = base64.b64decode(key)[1:]
digest = base64.b64encode(hashlib.sha256(b"not the state").digest()).decode()
text = f"evledger/projections/v3\n{name}\n{sys.argv[2]}\n{digest}\n"
signature = Ed25519PrivateKey.from_private_bytes(seed).sign(text.encode())
note = f"{text}\n\u2014 {name} {base64.b64encode(bytes.fromhex(key_id) + signature).decode()}\n"
# mdb_dump's printable form: printable ASCII as is, backslash and everything else as \xx.
print("".join(chr(b) if 0x20 <= b < 0x7f and b != 0x5c else "\\%02x" % b for b in note.encode()))
PY
)
[ -n "$resigned" ] && ok || bad "python signed the wrong statement"
tamper statements "$fkey" "$resigned"
expect 0 "the re-signed statement verifies" -- "$E" statement --ledger "$L" --size 1
expect 1 "check catches a re-signed wrong statement" -- "$E" rebuild --ledger "$L" --check --json
contains "$T/out" '"failedSize":1' "check names the size of the wrong statement"
contains "$T/out" "\"found\":\"$(python3 -c 'import base64, hashlib; print(base64.b64encode(hashlib.sha256(b"not the state").digest()).decode())')\"" \
  "check gives the digest found"
contains "$T/out" '"expected":"' "check gives the digest expected"

finish
