#!/usr/bin/env bash
# End-to-end tests of what writes a ledger when something goes wrong: init is all or nothing.
# Usage: writes_test.sh EVLEDGER_BINARY SOURCE_DIR
set -uo pipefail
E="$1"
SRC="$2"
source "$(dirname "$0")/testlib.sh"

# Nothing in directory $1 but what $2 names (a glob-free list of names, or "").
holds_only() { [ "$(ls -A "$1" | tr '\n' ' ' | sed 's/ $//')" = "$2" ]; }

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

finish
