# tests/tools/testlib.sh — what the end-to-end shell tests share. Source it after setting
# E (the evledger binary); it makes the scratch directory $T (removed at exit unless the
# script sets its own trap afterwards) and counts checks.
#   expect CODE DESCRIPTION -- COMMAND...   run COMMAND (stdout $T/out, stderr $T/err), check its exit
#   contains FILE TEXT DESCRIPTION         check that FILE holds TEXT
#   finish                                 print 'N passed, M failed' and exit non-zero on failure
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
failures=0
passed=0

ok() { passed=$((passed + 1)); }
bad() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }

expect() {
  local want=$1 what=$2
  shift 3
  "$@" >"$T/out" 2>"$T/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then ok; else
    bad "$what: exit $got, expected $want"; sed 's/^/  | /' "$T/err" >&2
  fi
}

contains() {
  if grep -qF -- "$2" "$1"; then ok; else
    bad "$3: '$2' not in output"; head -c 800 "$1" | sed 's/^/  | /' >&2
  fi
}

# The 32-byte public key of a verifier key file, as hex.
pubkey_hex() { cut -d+ -f3- "$1" | base64 -d | tail -c 32 | od -An -tx1 | tr -d ' \n'; }

finish() {
  echo "$passed passed, $failures failed"
  [ "$failures" -eq 0 ]
}
