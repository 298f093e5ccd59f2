#!/usr/bin/env bash
# Hostile inputs end to end: files read under their limits (huge, endless, special), bounded
# numeric options and single-valued options, a read-only auditor, and the messages and exit
# codes of mistyped paths and URLs.
# Usage: reads_test.sh EVLEDGER_BINARY SOURCE_DIR
set -uo pipefail
E="$1"
SRC="$2"
source "$(dirname "$0")/testlib.sh"

# expect_soon CODE DESCRIPTION -- COMMAND...: as expect, but a command that hangs (exit 124
# after 20 s) or grows without end is a failure, not a stuck test.
expect_soon() {
  local want=$1 what=$2
  shift 3
  expect "$want" "$what" -- timeout 20 "$@"
}

L="$T/ledger"
expect 0 "init" -- "$E" init --ledger "$L" --origin test.evledger.invalid/reads
expect 0 "export tiles" -- "$E" export-tiles --ledger "$L" --out "$T/tiles"
V="$L/keys/log.vkey"
expect 0 "checkpoint" -- "$E" checkpoint --ledger "$L"
cp "$T/out" "$T/saved.checkpoint"

# ---- every input file is read under its limit, and only if it is a regular file -----------

truncate -s 1G "$T/big.bin"
mkfifo "$T/fifo"
ln -s /dev/zero "$T/zero"
mkdir "$T/dir"
# Without a cap on reads these exhaust a 1.5 GB address space (or hang: the FIFO, /dev/zero).
# Under AddressSanitizer (test.sh --sanitize) the address space holds ASan's shadow memory, so
# the same 1.5 GB bound is ASan's own limit on resident memory.
if [[ "${EVLEDGER_SANITIZER:-}" == *address* ]]; then
  limited=(env "ASAN_OPTIONS=${ASAN_OPTIONS:-}:hard_rss_limit_mb=1500")
else
  limited=(bash -c 'ulimit -v 1500000; exec "$@"' limited)
fi
expect_soon 1 "a 1 GB entry file" -- "${limited[@]}" "$E" append --ledger "$L" "$T/big.bin"
contains "$T/err" "entry file $T/big.bin is 1073741824 bytes, more than 65535 bytes" "entry limit"
expect_soon 3 "a FIFO as an entry file" -- "$E" append --ledger "$L" "$T/fifo"
contains "$T/err" "is a FIFO (named pipe), not a regular file" "FIFO message"
expect_soon 3 "/dev/zero behind a symbolic link as a body" -- "${limited[@]}" "$E" sign --key "$L/keys/admin.key" "$T/zero"
contains "$T/err" "is a character device (through a symbolic link)" "device message"
expect_soon 1 "/dev/zero on standard input" -- "${limited[@]}" bash -c "\"$E\" sign --key \"$L/keys/admin.key\" - < /dev/zero"
contains "$T/err" "body file from standard input holds more than 65535 bytes" "stdin limit"
expect_soon 3 "a FIFO as --from-checkpoint" -- "$E" verify --ledger "$L" --from-checkpoint "$T/fifo"
expect_soon 1 "a 1 GB --from-checkpoint" -- "${limited[@]}" "$E" verify --ledger "$L" --from-checkpoint "$T/big.bin"
contains "$T/err" "the limit for checkpoint files" "checkpoint limit"
expect_soon 1 "a 1 GB --vkey file" -- "${limited[@]}" "$E" verify --ledger "$L" --vkey "$T/big.bin"
contains "$T/err" "the limit for verifier key files" "vkey limit"
expect_soon 1 "a 1 GB proof" -- "${limited[@]}" "$E" proof verify --vkey "$V" --proof "$T/big.bin" --entry "$T/big.bin"
contains "$T/err" "the limit for proof files" "proof limit"
expect 0 "an inclusion proof" -- "$E" proof inclusion --ledger "$L" --index 0 --out "$T/p.proof"
expect_soon 3 "a FIFO as a proof's --entry" -- "$E" proof verify --vkey "$V" --proof "$T/p.proof" --entry "$T/fifo"
expect_soon 1 "a 1 GB rerun manifest" -- "${limited[@]}" "$E" rerun --ledger "$L" --key "$L/keys/admin.key" --target "sha256:$(printf '%064d' 0)" "$T/big.bin"
contains "$T/err" "the limit for manifest files" "manifest limit"

# A catalog for import is streamed (of any length), but only from a regular file, '-' or <(...).
expect_soon 3 "a FIFO as a catalog" -- "$E" import --ledger "$L" --key "$L/keys/admin.key" "$T/fifo"
contains "$T/err" "catalog $T/fifo is a FIFO (named pipe), not a regular file" "catalog FIFO message"
expect_soon 3 "/dev/zero behind a symbolic link as a catalog" -- "${limited[@]}" "$E" import --ledger "$L" --key "$L/keys/admin.key" "$T/zero"
contains "$T/err" "is a character device (through a symbolic link)" "catalog device message"
expect_soon 3 "a directory as a catalog" -- "$E" import --ledger "$L" --key "$L/keys/admin.key" "$T/dir"
contains "$T/err" "catalog $T/dir is a directory" "catalog directory message"
truncate -s 64M "$T/zeros.jsonl"
expect_soon 1 "a 64 MB sparse catalog: one document past the limit" -- "$E" import --ledger "$L" --key "$L/keys/admin.key" "$T/zeros.jsonl"
contains "$T/err" "zeros.jsonl line 1: YAML document larger than 1048576 bytes" "sparse catalog message"

# Tiles and checkpoints under verify --tiles: a 2 TB sparse tile, a FIFO, /dev/zero.
bundle=$(cd "$T/tiles" && find tile/entries -type f | head -1)
tile=$(cd "$T/tiles" && find tile -path tile/entries -prune -o -type f -print | head -1)
for how in sparse fifo zero; do
  rm -rf "$T/t-$how"; cp -r "$T/tiles" "$T/t-$how"
done
rm "$T/t-sparse/$tile"; truncate -s 2T "$T/t-sparse/$tile" 2>/dev/null || truncate -s 8G "$T/t-sparse/$tile"
rm "$T/t-fifo/$bundle"; mkfifo "$T/t-fifo/$bundle"
rm "$T/t-zero/checkpoint"; ln -s /dev/zero "$T/t-zero/checkpoint"
expect_soon 1 "a 2 TB sparse hash tile" -- "${limited[@]}" "$E" verify --tiles "$T/t-sparse" --vkey "$V"
contains "$T/err" "more than 8192 bytes, the limit for hash tiles" "tile limit"
expect_soon 3 "a FIFO as an entry bundle" -- "$E" verify --tiles "$T/t-fifo" --vkey "$V"
contains "$T/err" "is a FIFO" "bundle FIFO message"
expect_soon 3 "/dev/zero as the layout's checkpoint" -- "${limited[@]}" "$E" verify --tiles "$T/t-zero" --vkey "$V"
contains "$T/err" "is a character device (through a symbolic link)" "checkpoint device message"
expect 0 "the untouched layout verifies" -- "$E" verify --tiles "$T/tiles" --vkey "$V" --from-checkpoint "$T/saved.checkpoint"

# ---- numeric and single-valued options -------------------------------------------------------

expect 2 "--threads 2^32 does not wrap to 0" -- "$E" verify --ledger "$L" --threads 4294967296
contains "$T/err" "--threads 4294967296 is out of range: give 0 to 1024" "threads range"
expect 2 "--threads beyond what a pool starts" -- "$E" verify --ledger "$L" --threads 100000
expect 2 "--batch 0" -- "$E" import --ledger "$L" --key "$L/keys/admin.key" --batch 0 -
expect_soon 2 "bench --entries 2^64-1" -- "$E" bench export --entries 18446744073709551615 --dir "$T"
expect 2 "a repeated --ledger" -- "$E" log --ledger "$T/none" --ledger "$L"
contains "$T/err" "--ledger is given twice" "repeated option message"
expect 2 "a repeated --vkey" -- "$E" verify --ledger "$L" --vkey "$V" --vkey "$V"

# ---- messages and exit codes of wrong paths ---------------------------------------------------

expect 3 "appending a directory" -- "$E" append --ledger "$L" "$T/dir"
contains "$T/err" "entry file $T/dir is a directory" "directory entry message"
expect 3 "appending a missing file" -- "$E" append --ledger "$L" "$T/none.bin"
contains "$T/err" "cannot read entry file $T/none.bin: No such file or directory" "missing file reason"
expect 3 "a mistyped --vkey path" -- "$E" verify --tiles "$T/tiles" --vkey "$L/keys/lg.vkey"
contains "$T/err" "cannot read verifier key file $L/keys/lg.vkey: No such file or directory" "vkey path message"
expect 3 "--tiles on a missing directory" -- "$E" verify --tiles "$T/none" --vkey "$V"
contains "$T/err" "no such directory" "missing tiles message"
if grep -qF "tiles $T/none: tiles $T/none" "$T/err"; then bad "the source is named twice"; else ok; fi
expect 3 "--tiles on a file" -- "$E" verify --tiles "$T/saved.checkpoint" --vkey "$V"
contains "$T/err" "is not a directory" "tiles on a file message"
expect 2 "--url ftp://" -- "$E" verify --url ftp://mirror.example/log/ --vkey "$V"
contains "$T/err" "not an http:// URL" "ftp url message"
expect 2 "--tiles ftp://" -- "$E" verify --tiles ftp://mirror.example/log/ --vkey "$V"
contains "$T/err" "is a URL; give it to --url" "ftp tiles message"
expect 2 "--url on a directory" -- "$E" verify --url "$T/tiles" --vkey "$V"
sed 's/$/\r/' "$V" > "$T/crlf.vkey"
expect 0 "a verifier key file with CR LF" -- "$E" verify --tiles "$T/tiles" --vkey "$T/crlf.vkey"
sed 's/$/\r/' "$L/keys/admin.key" > "$T/crlf.key"; chmod 600 "$T/crlf.key"
expect 0 "a secret key file with CR LF signs" -- "$E" key new crlf@test --out "$T/other.key"
expect 0 "a grant signed with a CR LF admin key" -- "$E" key grant --ledger "$L" --key "$T/other.key.vkey" --role attestor --signer "$T/crlf.key"

# A writer refuses a directory that is not a ledger and creates nothing in it.
mkdir -p "$T/empty/db" "$T/junk/db"
echo junk > "$T/junk/db/data.mdb"
expect 3 "a writer on an empty db directory" -- "$E" append --ledger "$T/empty" "$T/p.proof"
contains "$T/err" "holds no data.mdb" "empty db message"
[ -z "$(ls -A "$T/empty/db")" ] && ok || bad "a writer created $(ls -A "$T/empty/db") in an empty db directory"
expect 3 "a writer on a db that is not LMDB" -- "$E" key grant --ledger "$T/junk" --key "$T/other.key.vkey" --role attestor --signer "$L/keys/admin.key"
[ "$(ls -A "$T/junk/db")" = data.mdb ] && ok || bad "a writer created files beside a foreign data.mdb: $(ls -A "$T/junk/db")"

# ---- a read-only auditor ----------------------------------------------------------------------

# A copy that the user nobody may read but not write (as an auditor often holds), audited as
# nobody. Skipped where this test cannot change users (not root, or no setpriv).
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && as_nobody true 2>/dev/null; then
  RO="$T/ro"
  mkdir -p "$RO"
  cp "$E" "$RO/evledger"
  cp -r "$L" "$RO/ledger"
  chmod 711 "$T"
  chmod -R a+rX,go-w "$RO"
  cp "$L/keys/admin.key" "$RO/admin.key"
  chown nobody "$RO/admin.key"
  chmod 600 "$RO/admin.key"
  expect 0 "verify of a read-only copy as another user" -- as_nobody "$RO/evledger" verify --ledger "$RO/ledger"
  contains "$T/err" "without LMDB's lock file" "read-only note"
  contains "$T/err" "safe only while no writer appends" "read-only note says when it is safe"
  expect 0 "log of a read-only copy as another user" -- as_nobody "$RO/evledger" log --ledger "$RO/ledger"
  contains "$T/out" "genesis" "log of a read-only copy"
  expect 3 "a write to a read-only copy" -- as_nobody "$RO/evledger" key grant --ledger "$RO/ledger" --key "$T/other.key.vkey" --role attestor --signer "$RO/admin.key"
  # A system that lets this user start only a few threads: the audit says so, never aborts.
  as_nobody bash -c "ulimit -u 6; exec \"$RO/evledger\" verify --ledger \"$RO/ledger\" --threads 64" >"$T/out" 2>"$T/err"
  rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] && ok || bad "verify under ulimit -u 6 exited $rc (0 or 3 expected, never an abort)"
  [ "$rc" -eq 3 ] && { contains "$T/err" "cannot start" "thread limit message"; }
  if grep -qE "evledger bug|terminate called" "$T/err"; then bad "verify under a thread limit crashed"; else ok; fi
  chmod 700 "$T"
else
  echo "skipped: the read-only auditor (needs root and setpriv to run as nobody)"
fi

finish
