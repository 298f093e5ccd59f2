#!/usr/bin/env bash
# Load and soak (issue #22): appends and reads against one `evledger serve` at once for SECONDS
# (default 60 in CI; run it for an hour by hand: soak_test.sh EVLEDGER SOURCE_DIR 3600). The
# server's memory, descriptors and LMDB reader slots must stay flat and no request may fail
# (tests/tools/soak.py); afterwards the log verifies and holds every entry it acknowledged.
# Prints the figures per tenth of the run.
# Usage: soak_test.sh EVLEDGER_BINARY SOURCE_DIR [SECONDS]
set -uo pipefail
E="$1"
SRC="$2"
SECONDS_TOTAL="${3:-60}"
source "$(dirname "$0")/testlib.sh"

# New entries for L: a catalog imported into A, L being A's copy from before the import. At
# 300 appends/s the run needs about 300 × SECONDS entries, some two per generated run.
A="$T/a"
L="$T/l"
"$E" init --ledger "$A" --origin soak.evledger.invalid/log >/dev/null 2>&1 || bad "init"
"$E" key new imp@soak --out "$T/imp.key" >/dev/null
"$E" key grant --ledger "$A" --key "$T/imp.key.vkey" --role importer --scope sol-execbench \
  --signer "$A/keys/admin.key" >/dev/null || bad "grant"
cp -a "$A" "$L"
"$E" gen --runs 500 2>/dev/null | "$E" import --ledger "$L" --key "$T/imp.key" - >/dev/null 2>&1 ||
  bad "a first catalog for the readers"
runs=$(python3 -c "print(int(150 * $SECONDS_TOTAL) + 1000)")
"$E" gen --runs "$runs" --seed 7 2>/dev/null | "$E" import --ledger "$A" --key "$T/imp.key" - \
  >/dev/null 2>&1 || bad "import into A"
"$E" export-tiles --ledger "$A" --out "$T/xa" >/dev/null || bad "export A"
: > "$T/entries.bin"
for f in $(cd "$T/xa" && find tile/entries -type f | sort); do cat "$T/xa/$f" >> "$T/entries.bin"; done

start_server s --ledger "$L" || { finish; exit 1; }
python3 "$SRC/tests/tools/soak.py" "$URL_s" "$PID_s" "$L" "$T/entries.bin" "$SECONDS_TOTAL" \
  > "$T/soak.out" 2> "$T/soak.err" && ok || { bad "the soak"; cat "$T/soak.err" >&2; }
grep -v '^{' "$T/soak.out"
kill "$PID_s" && wait "$PID_s" 2>/dev/null
expect 0 "the log verifies after the soak" -- "$E" verify --ledger "$L"
finish
