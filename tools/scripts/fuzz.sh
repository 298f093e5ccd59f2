#!/usr/bin/env bash
# Builds every libFuzzer target of tests/fuzz in build-asan/ (clang-14, ASan + UBSan, libFuzzer;
# tools/scripts/build.sh asan) and runs each for SECONDS, starting from its seed corpus
# tests/fuzz/corpus/<target>/.
#
#   fuzz.sh SECONDS [TARGET...]     all targets by default
#
# Prints one line per target (executions, coverage, crashes), then "fuzz: N passed, M failed",
# and exits 1 when any target crashed. New inputs that found coverage go to build-asan/fuzz/corpus/<target>/ (not the
# repo); a crashing input is saved in build-asan/fuzz/crashes/<target>/: copy it into
# tests/fuzz/regressions/<target>/ with the fix, and fuzz_replay_test replays it from then on.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-}
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: fuzz.sh SECONDS [TARGET...]  (SECONDS: how long each target runs, e.g. 10)" >&2
  exit 2
fi
shift
all=(entry note tile proof policy manifest jcs router evidence)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
for t in "${targets[@]}"; do
  if [ ! -d "$root/tests/fuzz/corpus/$t" ]; then
    echo "fuzz.sh: no fuzz target '$t' (targets: ${all[*]})" >&2
    exit 2
  fi
done

"$root/tools/scripts/install-deps.sh"
# The ASan tree of test.sh --sanitize address,undefined, whose libraries carry libFuzzer's
# coverage: one sanitizer build of the libraries serves both (build.sh).
dir="$root/build-asan"
build_targets=""
for t in "${targets[@]}"; do build_targets+="fuzz_$t "; done
EVLEDGER_BUILD_TARGETS=$build_targets "$root/tools/scripts/build.sh" asan
out="$dir/fuzz"

export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
failed=0
passed=0
for t in "${targets[@]}"; do
  work="$out/corpus/$t"
  crashes="$out/crashes/$t"
  log="$out/logs/$t.log"
  mkdir -p "$work" "$out/logs"
  rm -rf "$crashes"
  mkdir -p "$crashes"
  rc=0
  "$dir/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -print_final_stats=1 -timeout=25 \
    -rss_limit_mb=2560 -max_len=65536 -artifact_prefix="$crashes/" \
    "$work" "$root/tests/fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  execs=$(awk '/stat::number_of_executed_units:/ {print $2}' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  found=$(find "$crashes" -type f | wc -l)
  if [ "$rc" -ne 0 ] && [ "$found" -eq 0 ]; then found=1; fi
  printf '%-9s %12s executions  %6s coverage edges  %s crashes\n' \
    "$t" "${execs:-?}" "${cov:-?}" "$found"
  if [ "$found" -eq 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "fuzz.sh: $t crashed (exit $rc); inputs in $crashes/, log $log:" >&2
    grep -E 'ERROR|SUMMARY|fuzz property|runtime error|terminate|#[0-9]+ 0x' "$log" | head -30 >&2 || true
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
