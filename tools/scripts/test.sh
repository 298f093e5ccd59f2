#!/usr/bin/env bash
# The test command of the README and of CI: install what is missing, build, run every test.
#
#   test.sh                               Release tree in build/, the whole suite
#   test.sh --sanitize address,undefined  build-asan/ (ASan + UBSan), the whole suite
#   test.sh --sanitize thread             build-tsan/ (TSan), the concurrent parts
# (tools/scripts/build.sh says how each tree is built).
#
# Under a sanitizer every report fails the run, even one printed by a child process whose
# failure a test expected: the reports go to files in <tree>/sanitizer-reports/, and any file
# there after ctest is printed and ends the run with exit 1.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
sanitize=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) sanitize=${2:?"--sanitize needs address,undefined or thread"}; shift 2 ;;
    --sanitize=*) sanitize=${1#--sanitize=}; shift ;;
    *) echo "test.sh: unknown option '$1' (use --sanitize address,undefined or thread)" >&2
       exit 2 ;;
  esac
done
"$root/tools/scripts/install-deps.sh"
jobs=$(nproc 2>/dev/null || echo 2)

# The crash tests' figures, summed: each kill test prints a line kills=K acknowledged=A lost=L
# (serve, mirror, append, import, rebuild, witness; powerloss counts its power cuts as kills).
kill_totals() {
  local log=Testing/Temporary/LastTest.log
  [ -f "$log" ] || return 0
  grep -ho '^kills=[0-9]* acknowledged=[0-9]* lost=[0-9]*$' "$log" |
    awk -F'[= ]' '{ k += $2; a += $4; l += $6; n++ }
      END { if (n) printf "crash tests: %d of them, kills=%d acknowledged=%d lost=%d\n", n, k, a, l }'
}

if [ -z "$sanitize" ]; then
  "$root/tools/scripts/build.sh"
  cd "$root/build"
  status=0
  ctest --output-on-failure -j "$jobs" --timeout 600 || status=$?
  kill_totals
  exit "$status"
fi

# The concurrent parts, for ThreadSanitizer: the writer and its append queue and the thread
# pool (ledger_test), the server, the witnessing component and the remote log (server_test),
# the witness's state (witness_test), and the shell tests that serve, publish and witness.
tsan_binaries="ledger_test server_test witness_test"
tsan_tests='^(ledger_test|server_test|witness_test):|^(serve|publish|witness|witnessing): '
targets=""
case "$sanitize" in
  address,undefined|undefined,address) dir=build-asan ;;
  thread) dir=build-tsan; targets="evledger $tsan_binaries" ;;
  *) echo "test.sh: --sanitize takes address,undefined or thread, not '$sanitize'" >&2
     exit 2 ;;
esac
EVLEDGER_BUILD_TARGETS=$targets "$root/tools/scripts/build.sh" "${dir#build-}"

reports="$root/$dir/sanitizer-reports"
rm -rf "$reports"
mkdir -p "$reports"
supp="$root/tests/sanitizers"
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_init_order=1:check_initialization_order=1:log_path=$reports/asan"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:log_path=$reports/lsan"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$reports/ubsan"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp:log_path=$reports/tsan"
# The sanitizer run marks itself for the few tests that must adapt (an address-space ulimit
# cannot hold ASan's shadow memory; a timing bound stretches).
export EVLEDGER_SANITIZER="$sanitize"

cd "$root/$dir"
status=0
if [ "$sanitize" = thread ]; then
  ctest --output-on-failure -j "$jobs" --timeout 900 -R "$tsan_tests" || status=$?
else
  ctest --output-on-failure -j "$jobs" --timeout 900 || status=$?
fi
kill_totals
found=$(find "$reports" -type f | sort)
if [ -n "$found" ]; then
  echo "test.sh: sanitizer reports ($sanitize):" >&2
  for f in $found; do
    echo "== $f" >&2
    cat "$f" >&2
  done
  exit 1
fi
exit "$status"
