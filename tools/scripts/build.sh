#!/usr/bin/env bash
# Configures and builds evledger (Release, with tests) in ./build.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release ${EVLEDGER_CMAKE_ARGS:-} >/dev/null
cmake --build build -j "$jobs"
