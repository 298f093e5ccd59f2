#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the main job on embedded
# defaults. For now the main job builds a demo ledger: a log and admin key, importer, runner
# and attestor keys with their grants, an observation and an attestation built with the
# standard `capnp` tool and signed with `evledger sign`, then verifies the ledger and prints it.
# The ledger is left in ./demo-ledger (replaced on every run) for you to explore.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/tools/scripts/install-deps.sh"
"$root/tools/scripts/build.sh"

E="$root/build/tools/evledger"
L="${EVLEDGER_DEMO_DIR:-$root/demo-ledger}"
rm -rf "$L"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step() { printf '\n== %s\n' "$*"; }
# The 32-byte public key of a verifier key file, as hex.
pubkey_hex() { cut -d+ -f3- "$1" | base64 -d | tail -c 32 | od -An -tx1 | tr -d ' \n'; }
now_ms() { echo $(( $(date +%s) * 1000 )); }

step "create the ledger (log key, first admin, genesis)"
"$E" init --ledger "$L" --origin demo.evledger.example/log
K="$L/keys"

step "make publisher keys and grant them roles (signed by the admin)"
"$E" key new importer@sol-execbench --out "$K/importer.key" >/dev/null
"$E" key new runner@kernelindex --out "$K/runner.key" >/dev/null
"$E" key new reader@example.org --out "$K/attestor.key" >/dev/null
"$E" key grant --ledger "$L" --key "$K/importer.key.vkey" --role importer \
  --scope sol-execbench --signer "$K/admin.key"
"$E" key grant --ledger "$L" --key "$K/runner.key.vkey" --role runner \
  --scope host-demo-1 --scope owner-demo --signer "$K/admin.key"
"$E" key grant --ledger "$L" --key "$K/attestor.key.vkey" --role attestor --signer "$K/admin.key"

step "an observation: a KernelIndex BenchmarkRun, encoded by capnp, signed by evledger"
run='{"apiVersion":"kernelindex.dev/v1alpha1","kind":"BenchmarkRun","spec":{"environmentDigest":"sha256:1111111111111111111111111111111111111111111111111111111111111111","implementationDigest":"sha256:2222222222222222222222222222222222222222222222222222222222222222","observedAt":"2026-07-01T12:00:00Z","protocolDigest":"sha256:3333333333333333333333333333333333333333333333333333333333333333","sourceNative":{"benchmark":"001_demo_rmsnorm","externalId":"demo-1","metrics":{"avg_speedup":3.5,"latency_ms":0.0421,"sol_score":0.81},"source":"sol-execbench"},"status":"passed","timing":{"latencyNs":{"mean":42100},"primaryStatistic":"mean"},"workloadDigest":"sha256:4444444444444444444444444444444444444444444444444444444444444444"}}'
run_digest="sha256:$(printf '%s' "$run" | sha256sum | cut -d' ' -f1)"
esc=${run//\"/\\\"}
printf '(schemaVersion = 1, author = 0x"%s", claimedTimeMs = %s, observation = (canonical = "%s"))' \
  "$(pubkey_hex "$K/importer.key.vkey")" "$(now_ms)" "$esc" \
  | capnp convert text:canonical "$root/events/event.capnp" EventBody > "$work/observation.body"
"$E" sign --key "$K/importer.key" --out "$work/observation.entry" "$work/observation.body"
"$E" append --ledger "$L" "$work/observation.entry"
echo "appending the same entry again changes nothing:"
"$E" append --ledger "$L" "$work/observation.entry"

step "an attestation of that run ($run_digest)"
printf '(schemaVersion = 1, author = 0x"%s", claimedTimeMs = %s, attestation = (target = 0x"%s", type = reproduced, text = "Reproduced within 2%% on our B200."))' \
  "$(pubkey_hex "$K/attestor.key.vkey")" "$(now_ms)" "${run_digest#sha256:}" \
  | capnp convert text:canonical "$root/events/event.capnp" EventBody > "$work/attestation.body"
"$E" sign --key "$K/attestor.key" --out "$work/attestation.entry" "$work/attestation.body"
"$E" append --ledger "$L" "$work/attestation.entry"

step "a key that was never granted is refused, and nothing changes"
"$E" key new stranger@example.org --out "$work/stranger.key" >/dev/null
printf '(schemaVersion = 1, author = 0x"%s", claimedTimeMs = %s, attestation = (target = 0x"%s", type = couldNotReproduce, text = "no"))' \
  "$(pubkey_hex "$work/stranger.key.vkey")" "$(now_ms)" "${run_digest#sha256:}" \
  | capnp convert text:canonical "$root/events/event.capnp" EventBody > "$work/stranger.body"
"$E" sign --key "$work/stranger.key" --out "$work/stranger.entry" "$work/stranger.body"
if "$E" append --ledger "$L" "$work/stranger.entry"; then
  echo "demo: the stranger's entry was accepted, which is a bug" >&2
  exit 1
fi

step "verify the whole ledger from its stored bytes"
"$E" verify --ledger "$L"

step "the log"
"$E" log --ledger "$L"

step "entry 5, decoded"
"$E" get --ledger "$L" 5

step "entry 5 decoded by the standard capnp tool, with no evledger code"
"$E" get --ledger "$L" 5 --raw | capnp convert canonical:text "$root/events/event.capnp" SignedEvent | cut -c1-160
printf '\nThe demo ledger is in %s; try: %s log --ledger %s --json\n' "$L" "$E" "$L"
