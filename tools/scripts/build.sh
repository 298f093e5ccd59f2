#!/usr/bin/env bash
# Configures and builds evledger with its tests.
#
#   build.sh         Release, in ./build (g++)
#   build.sh asan    build-asan/: clang-14, RelWithDebInfo, ASan + UBSan, and libFuzzer's
#                    coverage in every library, so that the one tree serves both
#                    test.sh --sanitize address,undefined and fuzz.sh
#   build.sh tsan    build-tsan/: clang-14, RelWithDebInfo, ThreadSanitizer
#
# EVLEDGER_BUILD_TARGETS builds only those targets; EVLEDGER_CMAKE_ARGS adds configure options.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)
clang=(-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
       -DCMAKE_BUILD_TYPE=RelWithDebInfo)
case "${1:-}" in
  "") dir=build; config=(-DCMAKE_BUILD_TYPE=Release) ;;
  asan) dir=build-asan
        config=("${clang[@]}" -DEVLEDGER_SANITIZE=address,undefined -DEVLEDGER_FUZZ=ON) ;;
  tsan) dir=build-tsan; config=("${clang[@]}" -DEVLEDGER_SANITIZE=thread) ;;
  *) echo "build.sh: unknown tree '$1' (none for Release, asan or tsan)" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" -G Ninja "${config[@]}" ${EVLEDGER_CMAKE_ARGS:-} >/dev/null
cmake --build "$dir" -j "$jobs" ${EVLEDGER_BUILD_TARGETS:+--target $EVLEDGER_BUILD_TARGETS}
