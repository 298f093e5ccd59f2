#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the main job on embedded
# defaults: a demo ledger with a log and admin key and publisher keys with their grants, a
# synthetic SOL-ExecBench-style catalog imported (evledger gen | evledger import), an
# attestation built with the standard `capnp` tool and signed with `evledger sign`; then the
# audit, a signed checkpoint, an offline inclusion proof, a C2SP tile export audited with the
# pinned log key, and the log. The ledger is left in ./demo-ledger (replaced on every run).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/tools/scripts/install-deps.sh"
"$root/tools/scripts/build.sh"

E="${EVLEDGER_BIN:-$root/build/tools/evledger}"
L="${EVLEDGER_DEMO_DIR:-$root/demo-ledger}"
rm -rf "$L" "$L-tiles"
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
  --scope host:demo-1 --scope owner:lab-a --signer "$K/admin.key"
"$E" key grant --ledger "$L" --key "$K/attestor.key.vkey" --role attestor --signer "$K/admin.key"

step "import a synthetic SOL-ExecBench-style catalog (evledger gen | evledger import)"
"$E" gen --runs 300 --seed 7 --out "$work/catalog.jsonl" 2>/dev/null
"$E" import --ledger "$L" --key "$K/importer.key" "$work/catalog.jsonl"
echo "importing the same catalog again changes nothing:"
"$E" import --ledger "$L" --key "$K/importer.key" "$work/catalog.jsonl"
seeds="$root/../shared/fixtures/seeds"
if ls "$seeds"/*.manifests.json >/dev/null 2>&1; then
  echo "the two KernelIndex seed runs (from ../shared):"
  "$E" import --ledger "$L" --key "$K/importer.key" "$seeds"/*.manifests.json
fi

step "controlled reruns, attestations and corrections (evledger gen --activity)"
"$E" key new runner2@kernelindex --out "$K/runner2.key" >/dev/null
"$E" key new curator@kernelindex --out "$K/curator.key" >/dev/null
"$E" key grant --ledger "$L" --key "$K/runner2.key.vkey" --role runner \
  --scope host:demo-2 --scope owner:lab-b --signer "$K/admin.key" >/dev/null
"$E" key grant --ledger "$L" --key "$K/curator.key.vkey" --role curator --signer "$K/admin.key" >/dev/null
"$E" gen --activity 400 --seed 7 --ledger "$L" --runner-key "$K/runner.key" \
  --runner-key "$K/runner2.key" --attestor-key "$K/attestor.key" --curator-key "$K/curator.key"

step "rankings: the leaders of a few comparison groups, and the runs of the largest group"
"$E" groups --ledger "$L" --json > "$work/groups.jsonl"
"$E" groups --ledger "$L" > "$work/groups.txt"
head -5 "$work/groups.txt"
big=$(sed 's/.*"group":"\(sha256:[0-9a-f]*\)".*"size":\([0-9]*\).*/\2 \1/' "$work/groups.jsonl" \
  | sort -n | tail -1 | cut -d' ' -f2)
"$E" runs --ledger "$L" --group "$big" > "$work/runs.txt"
head -8 "$work/runs.txt"
echo "leadership changes:"
"$E" leaders --ledger "$L" > "$work/leaders.txt"
tail -5 "$work/leaders.txt"

step "an attestation, encoded by the standard capnp tool and signed by evledger"
"$E" log --ledger "$L" --json > "$work/log.jsonl"
run_digest=$(grep -m1 '"kind":"observation"' "$work/log.jsonl" \
  | sed 's/.*"observation":{"digest":"\(sha256:[0-9a-f]*\)".*/\1/')
echo "attesting run $run_digest"
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

step "the newest signed checkpoint, and an offline inclusion proof of the attestation"
"$E" checkpoint --ledger "$L" | tee "$work/saved.checkpoint"
last=$(( $("$E" checkpoint --ledger "$L" --json | sed 's/.*"size":\([0-9]*\).*/\1/') - 1 ))
"$E" proof inclusion --ledger "$L" --index "$last" --out "$work/attestation.proof"
"$E" get --ledger "$L" "$last" --raw > "$work/stored.entry"
"$E" proof verify --vkey "$K/log.vkey" --proof "$work/attestation.proof" --entry "$work/stored.entry"

step "export the C2SP tlog tiles and audit them with the pinned log key"
"$E" export-tiles --ledger "$L" --out "$L-tiles"
"$E" verify --tiles "$L-tiles" --vkey "$K/log.vkey" --from-checkpoint "$work/saved.checkpoint"

step "the last entries of the log"
"$E" log --ledger "$L" --from $(( last - 4 ))

step "the attestation, decoded"
"$E" get --ledger "$L" "$last"

step "one run as a reader sees it (evledger show), with a citation anyone can verify"
"$E" runs --ledger "$L" --group "$big" --json > "$work/runs.jsonl"
leader=$(head -1 "$work/runs.jsonl" | sed 's/.*"run":"\(sha256:[0-9a-f]*\)".*/\1/')
"$E" show --ledger "$L" "$leader"

step "the projections rebuilt from the log give the same digest as the signed statement"
"$E" rebuild --ledger "$L"

step "the log key's statement about the projections, and an auditor's check of every one"
"$E" statement --ledger "$L"
"$E" rebuild --ledger "$L" --check

step "the attestation decoded by the standard capnp tool, with no evledger code"
"$E" get --ledger "$L" "$last" --raw | capnp convert canonical:text "$root/events/event.capnp" SignedEvent | cut -c1-160
printf '\nThe demo ledger is in %s and its tiles in %s-tiles; try: %s log --ledger %s --json\n' "$L" "$L" "$E" "$L"

step "serve the ledger: C2SP tiles, POST /add-event with receipts, /metrics (Ctrl-C stops it)"
port=${EVLEDGER_DEMO_PORT:-8080}
printf 'In another terminal:\n  %s verify --url http://127.0.0.1:%s/ --vkey %s\n  curl -s http://127.0.0.1:%s/checkpoint\n\n' \
  "$E" "$port" "$K/log.vkey" "$port"
exec "$E" serve --ledger "$L" --listen "127.0.0.1:$port"
