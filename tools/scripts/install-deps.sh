#!/usr/bin/env bash
# Installs what evledger needs from Debian 12's packages, skipping what is already there.
# Runs apt-get as root, or through sudo for a normal user.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config ccache
  liblmdb-dev lmdb-utils
  capnproto libcapnp-dev
  libsodium-dev libssl-dev openssl
  nlohmann-json3-dev libdouble-conversion-dev libyaml-cpp-dev
  libboost-dev catch2 libjemalloc-dev
  nginx wrk curl python3 python3-cryptography python3-jsonschema
  clang-14 libclang-rt-14-dev libfuzzer-14-dev
  chromium fonts-dejavu-core
)
# The browser tests (tests/browser/) drive chromium with playwright-core from npm: Debian's
# nodejs and npm unless a node is already on the PATH.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
