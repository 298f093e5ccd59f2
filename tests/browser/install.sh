#!/usr/bin/env bash
# Installs the browser tests' node modules (playwright-core, pinned by package-lock.json) from
# the npm registry into DIR/node_modules, once: `npm ci` again only when the lock file changed.
# Chromium itself is Debian's (tools/scripts/install-deps.sh), never a download of Playwright's.
# Usage: install.sh DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
mkdir -p "$dir"
if [ -f "$dir/node_modules/.package-lock.json" ] && cmp -s "$here/package-lock.json" "$dir/package-lock.json"; then
  exit 0
fi
cp "$here/package.json" "$here/package-lock.json" "$dir/"
cd "$dir"
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >&2
