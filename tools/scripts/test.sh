#!/usr/bin/env bash
# The test command of the README and of CI: install what is missing, build, run every test.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/tools/scripts/install-deps.sh"
"$root/tools/scripts/build.sh"
cd "$root/build"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 600
