#!/usr/bin/env bash
# Disk faults under the writers (`append`, `import`, `serve`'s POST /add-event):
#   - a read-only ledger directory (a read-only bind mount: root ignores mode bits): every
#     writer is refused at open with the message that says so and what to do, nothing of the
#     directory changes, and the commands that only read (verify, log, serve --read-only)
#     keep working on it;
#   - EIO on a write and on an fdatasync (the power-loss shim, tests/powerloss/shim.c, fails
#     the N-th one): the command ends with exit 3 naming the failing disk, or serve answers
#     503 with that detail and keeps answering its readers (but after EIO on LMDB's meta page,
#     which makes LMDB refuse the process's every transaction: reads answer 500 saying so until
#     the server is started again); what was committed before verifies,
#     every acknowledged entry is at its index, and the same command run again resumes;
#   - LMDB's map under an address-space limit (ulimit -v): a clear refusal at open;
#   - a full disk under serve (a small tmpfs): 503 naming the full disk; once there is room,
#     the server started again stores everything (writes_test.sh fills the disk under init,
#     import, append and a single event).
# The full-disk and read-only parts mount file systems (root or CAP_SYS_ADMIN); where that is
# refused they say so and are skipped.
# Usage: disk_faults_test.sh EVLEDGER_BINARY SHIM_LIBRARY SOURCE_DIR
set -uo pipefail
E="$1"
SHIM="$2"
SRC="$3"
LOAD="$SRC/tests/tools/append_load.py"
source "$(dirname "$0")/testlib.sh"
mounts=()
cleanup() {
  stop_servers
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
shimmed=1
if ldd "$E" | grep -q 'lib[at]san'; then
  echo "skipped the EIO parts: the shim is not preloaded into a sanitizer build"
  shimmed=0
fi

# A catalog and its entries (testlib's kill_catalog): $A holds them all, $L only its genesis and
# the importer's grant; $T/entries.bin holds A's entries, uint16-framed.
kill_catalog faults.evledger.invalid/log 300 || { finish; exit 1; }
"$E" gen --runs 300 > "$T/cat.jsonl" 2>/dev/null
"$E" log --ledger "$A" --from 2 --json | grep -o '"id":"sha256:[0-9a-f]*"' > "$T/ref.ids"
cp -a "$L" "$T/empty"
# The first entry alone (the genesis: answered present, or refused with the cause of the day).
python3 -c "import sys; d=open(sys.argv[1],'rb').read(); n=d[0]<<8|d[1]; open(sys.argv[2],'wb').write(d[2:2+n])" \
  "$T/entries.bin" "$T/first.bin"
ids_from_2() { "$E" log --ledger "$1" --from 2 --json | grep -o '"id":"sha256:[0-9a-f]*"'; }
# fresh DIR: DIR becomes a copy of the ledger that holds only the genesis and the grant.
fresh() { rm -rf "$1"; cp -a "$T/empty" "$1"; }
# serve_with_fault NAME FAULT=N: a fresh ledger $T/srv, no acknowledgements or journal yet,
# served under the shim with that fault (start_process's URL_NAME and PID_NAME).
serve_with_fault() {
  fresh "$T/srv"
  : > "$T/acks"
  rm -f "$T/journal"
  start_process "$1" serving env LD_PRELOAD="$SHIM" EVLEDGER_PL_DIR="$T/srv" \
    EVLEDGER_PL_JOURNAL="$T/journal" "$2" "$E" serve --ledger "$T/srv" --listen 127.0.0.1:0
}
# a snapshot of DIR: the contents of its files but LMDB's lock file (not data), and its names.
snapshot() { (cd "$1" && find . -type f ! -name lock.mdb -print0 | sort -z | xargs -0 sha256sum; find . | sort); }

# --- a read-only ledger directory ---
fresh "$T/rw"
mkdir -p "$T/ro"
if mount --bind "$T/rw" "$T/ro" 2>"$T/mount.err" && mounts+=("$T/ro") &&
  mount -o remount,ro,bind "$T/ro" 2>>"$T/mount.err"; then
  snapshot "$T/rw" > "$T/before"
  rofs="is read-only, and a writer needs the ledger's db/ writable: remount it read-write, or read it with a command that only reads (verify, log, serve --read-only)"
  expect 3 "append to a read-only ledger" -- "$E" append --ledger "$T/ro" - < "$T/entries.bin"
  contains "$T/err" "cannot open $T/ro/db/writer.lock: the file system $rofs" "append names the read-only file system and the fix"
  expect 3 "import into a read-only ledger" -- "$E" import --ledger "$T/ro" --key "$T/imp.key" "$T/cat.jsonl"
  contains "$T/err" "the file system $rofs" "import names the read-only file system"
  expect 3 "serve (a writer) on a read-only ledger" -- "$E" serve --ledger "$T/ro" --listen 127.0.0.1:0
  contains "$T/err" "the file system $rofs" "serve names the read-only file system"
  expect 0 "verify a read-only ledger" -- "$E" verify --ledger "$T/ro" --vkey "$VKEY"
  expect 0 "log of a read-only ledger" -- "$E" log --ledger "$T/ro"
  if start_server ro --ledger "$T/ro" --read-only; then
    curl -sf "${URL_ro}checkpoint" > "$T/cp" && contains "$T/cp" "faults.evledger.invalid/log" \
      "serve --read-only serves the checkpoint of a read-only ledger" || bad "GET /checkpoint of a read-only ledger"
    curl -sf "${URL_ro}api/v1/events/1" > "$T/ev" && ok || bad "GET an entry of a read-only ledger"
    kill -TERM "$PID_ro"; wait "$PID_ro" 2>/dev/null
  fi
  snapshot "$T/rw" | cmp -s - "$T/before" && ok || bad "the read-only ledger changed"
else
  echo "skipped the read-only part: cannot make a read-only bind mount ($(tr '\n' ' ' < "$T/mount.err"))"
fi

# --- EIO on a write and on a sync ---
failing="the disk failed writing"
failing_fix="nothing of this commit was stored: check the system log (dmesg) and the disk, then 'evledger verify' the ledger before appending"
# shimmed DIR COMMAND...: COMMAND under the shim, journalling the files of DIR; EVLEDGER_PL_*
# set by the caller pass through.
shimmed() {
  local dir=$1
  shift
  env LD_PRELOAD="$SHIM" EVLEDGER_PL_DIR="$dir" EVLEDGER_PL_JOURNAL="$T/journal" "$@"
}
# fault_at KIND: from the journal of a run without faults, the number of the call halfway
# through the run that EVLEDGER_PL_EIO_<VAR> counts: for KIND data the write calls (the one
# picked a write of data pages), meta the writes on O_DSYNC descriptors (LMDB's meta page,
# one per commit), sync the fsync and fdatasync calls.
fault_at() {
  python3 - "$T/journal" "$1" <<'EOF'
import struct, sys
data, kind, at = open(sys.argv[1], "rb").read(), sys.argv[2], 0
writes, hits = 0, []
while at + 24 <= len(data):
    total, k, _, path_len, offset, _ = struct.unpack_from("<IBBHQQ", data, at)
    name = data[at + 24:at + 24 + path_len].decode()
    at += total
    k = chr(k)
    writes += k in "WD"
    if kind == "data" and k == "W" and name == "db/data.mdb":
        hits.append(writes)
    elif (kind == "meta" and k == "D") or (kind == "sync" and k == "S"):
        hits.append(len(hits) + 1)
print(hits[len(hits) // 2] if hits else 0)
EOF
}
# all_acked DIR: every acknowledgement in $T/acks ("index id ...") is at its index in DIR.
all_acked() {
  python3 - "$T/acks" <("$E" log --ledger "$1" --json) <<'EOF'
import json, sys
log = {json.loads(l)["index"]: json.loads(l)["id"] for l in open(sys.argv[2])}
lost = [l for l in open(sys.argv[1]) if l.strip() and log.get(int(l.split()[0])) != l.split()[1]]
sys.exit(1 if lost else 0)
EOF
}
# in_order DIR: DIR's entries from index 2 are a prefix of the reference's.
in_order() { cmp -s <(ids_from_2 "$1") <(head -n "$(ids_from_2 "$1" | wc -l)" "$T/ref.ids"); }
if [ "$shimmed" = 1 ]; then
  # A dry run of the import under the shim, for the journal the fault points come from.
  fresh "$T/dry"
  rm -f "$T/journal"
  shimmed "$T/dry" "$E" import --ledger "$T/dry" --key "$T/imp.key" --batch 40 "$T/cat.jsonl" >/dev/null 2>&1 ||
    bad "the import under the shim, without faults"
  cp "$T/journal" "$T/import.journal"
  for kind in data meta sync; do
    case $kind in
      data) var=EVLEDGER_PL_EIO_WRITE ;;
      meta) var=EVLEDGER_PL_EIO_DSYNC_WRITE ;;
      sync) var=EVLEDGER_PL_EIO_SYNC ;;
    esac
    cp "$T/import.journal" "$T/journal"
    n=$(fault_at "$kind")
    fresh "$T/imp"
    expect 3 "import, EIO on $kind (call $n)" -- shimmed "$T/imp" "$var=$n" \
      "$E" import --ledger "$T/imp" --key "$T/imp.key" --batch 40 "$T/cat.jsonl"
    contains "$T/err" "import stopped at document" "the import says where EIO ($kind) stopped it"
    contains "$T/err" "$failing $T/imp/db (Input/output error;" "the import names the failing disk ($kind)"
    contains "$T/err" "$failing_fix" "the import says what to do about EIO ($kind)"
    stored=$(ids_from_2 "$T/imp" | wc -l)
    [ "$stored" -gt 0 ] && [ "$stored" -lt "$(wc -l < "$T/ref.ids")" ] && ok ||
      bad "EIO ($kind) should stop the import in its middle (it stored $stored)"
    in_order "$T/imp" && ok || bad "what an import kept after EIO ($kind) is not its prefix"
    expect 0 "the ledger EIO ($kind) stopped verifies" -- "$E" verify --ledger "$T/imp" --vkey "$VKEY"
    expect 0 "the same import again resumes it ($kind)" -- "$E" import --ledger "$T/imp" --key "$T/imp.key" "$T/cat.jsonl"
    cmp -s <(ids_from_2 "$T/imp") "$T/ref.ids" && ok || bad "the import resumed after EIO ($kind) differs from one in one go"

    # The stream is one or two commits (as the checks keep up): the first one's call fails.
    fresh "$T/app"
    expect 3 "an append stream, EIO on $kind (the first call)" -- shimmed "$T/app" "$var=1" \
      "$E" append --ledger "$T/app" - < "$T/entries.bin"
    contains "$T/err" "$failing $T/app/db (Input/output error;" "the stream names the failing disk ($kind)"
    in_order "$T/app" && ok || bad "what an append stream kept after EIO ($kind) is not its prefix"
    expect 0 "the ledger EIO ($kind) stopped verifies" -- "$E" verify --ledger "$T/app" --vkey "$VKEY"
    expect 0 "the stream again (what is stored answered present, the rest appended) ($kind)" -- \
      "$E" append --ledger "$T/app" - < "$T/entries.bin"
    cmp -s <(ids_from_2 "$T/app") "$T/ref.ids" && ok || bad "the stream resumed after EIO ($kind) differs from its input"
  done

  # serve: 4 publishers until the first failed request, the 8th write failing.
  if serve_with_fault eio EVLEDGER_PL_EIO_WRITE=8; then
    python3 "$LOAD" "$URL_eio" "$T/entries.bin" "$T/acks" --clients 4 --until-error >"$T/load.out" 2>&1 ||
      bad "publishers under EIO"
    code=$(curl -s -o "$T/post" -D "$T/post.h" -w '%{http_code}' -H 'Content-Type: application/octet-stream' \
      --data-binary @"$T/first.bin" "${URL_eio}add-event")
    [ "$code" = 503 ] && ok || bad "a POST after EIO: HTTP $code, expected 503"
    contains "$T/post" "not stored because an earlier commit failed: cannot commit the entries from index" \
      "the 503 says an earlier commit failed"
    contains "$T/post" "$failing $T/srv/db (Input/output error;" "the 503 names the failing disk"
    contains "$T/post.h" "Retry-After:" "the 503 has Retry-After"
    code=$(curl -s -o "$T/cp" -w '%{http_code}' "${URL_eio}checkpoint")
    [ "$code" = 200 ] && ok || bad "GET /checkpoint after EIO: HTTP $code"
    code=$(curl -s -o /dev/null -w '%{http_code}' "${URL_eio}api/v1/events/1")
    [ "$code" = 200 ] && ok || bad "GET an entry after EIO: HTTP $code"
    kill -TERM "$PID_eio"; wait "$PID_eio" 2>/dev/null
    expect 0 "the ledger EIO stopped under serve verifies" -- "$E" verify --ledger "$T/srv" --vkey "$VKEY"
    acked=$(wc -l < "$T/acks")
    [ "$acked" -gt 0 ] && [ "$acked" -lt "$(wc -l < "$T/ref.ids")" ] && ok ||
      bad "serve should acknowledge some entries before EIO (it acknowledged $acked)"
    if start_server srv2 --ledger "$T/srv"; then
      python3 "$LOAD" "$URL_srv2" "$T/entries.bin" "$T/acks" --clients 4 >"$T/load.out" 2>&1 && ok ||
        { bad "the server started again stores every entry"; cat "$T/load.out" >&2; }
      kill -TERM "$PID_srv2"; wait "$PID_srv2" 2>/dev/null
    fi
    all_acked "$T/srv" && ok || bad "an entry serve acknowledged before EIO is not at its index"

    # EIO on serve's 3rd meta-page write: LMDB then refuses every transaction of the process,
    # reads too, and the server says so; started again, it serves and appends.
    if serve_with_fault meta EVLEDGER_PL_EIO_DSYNC_WRITE=3; then
      python3 "$LOAD" "$URL_meta" "$T/entries.bin" "$T/acks" --clients 4 --until-error >"$T/load.out" 2>&1 ||
        bad "publishers under EIO on the meta page"
      code=$(curl -s -o "$T/get" -w '%{http_code}' "${URL_meta}api/v1/events/1")
      [ "$code" = 500 ] && ok || bad "a read after EIO on the meta page: HTTP $code, expected 500"
      contains "$T/get" "an earlier commit of this process failed writing LMDB's meta page, and LMDB refuses this environment since (MDB_PANIC); the file is as the last commit left it: check the disk, then start the process again" \
        "a read after EIO on the meta page says what happened and what to do"
      kill -TERM "$PID_meta"; wait "$PID_meta" 2>/dev/null
    fi
    expect 0 "the ledger EIO on the meta page stopped under serve verifies" -- "$E" verify --ledger "$T/srv" --vkey "$VKEY"
    if start_server meta2 --ledger "$T/srv"; then
      python3 "$LOAD" "$URL_meta2" "$T/entries.bin" "$T/acks" --clients 4 >"$T/load.out" 2>&1 && ok ||
        { bad "the server started again after EIO on the meta page stores every entry"; cat "$T/load.out" >&2; }
      kill -TERM "$PID_meta2"; wait "$PID_meta2" 2>/dev/null
    fi
    all_acked "$T/srv" && ok || bad "an entry serve acknowledged before EIO on the meta page is not at its index"
  fi
fi

# --- a full disk under serve ---
mkdir -p "$T/full"
if mount -t tmpfs -o size=1m tmpfs "$T/full" 2>"$T/mount.err"; then
  mounts+=("$T/full")
  cp -a "$T/empty" "$T/full/L"
  : > "$T/acks"
  if start_server full --ledger "$T/full/L"; then
    python3 "$LOAD" "$URL_full" "$T/entries.bin" "$T/acks" --clients 4 --batch 10 --until-error \
      >"$T/load.out" 2>&1 || bad "publishers on a full disk"
    code=$(curl -s -o "$T/post" -D "$T/post.h" -w '%{http_code}' -H 'Content-Type: application/octet-stream' \
      --data-binary @"$T/first.bin" "${URL_full}add-event")
    [ "$code" = 503 ] && ok || bad "a POST on a full disk: HTTP $code, expected 503"
    contains "$T/post" "the disk is full: $T/full/L/db (" "the 503 names the full disk"
    contains "$T/post" "free space on that file system or move the ledger to a larger one" "the 503 says what to do"
    contains "$T/post.h" "Retry-After:" "the 503 on a full disk has Retry-After"
    code=$(curl -s -o /dev/null -w '%{http_code}' "${URL_full}checkpoint")
    [ "$code" = 200 ] && ok || bad "GET /checkpoint on a full disk: HTTP $code"
    kill -TERM "$PID_full"; wait "$PID_full" 2>/dev/null
  fi
  acked=$(wc -l < "$T/acks")
  [ "$acked" -gt 0 ] && [ "$acked" -lt "$(wc -l < "$T/ref.ids")" ] && ok ||
    bad "serve should store some entries before the disk is full (it acknowledged $acked)"
  expect 0 "the ledger a full disk stopped under serve verifies" -- "$E" verify --ledger "$T/full/L" --vkey "$VKEY"
  mount -o remount,size=64m "$T/full"
  if start_server full2 --ledger "$T/full/L"; then
    python3 "$LOAD" "$URL_full2" "$T/entries.bin" "$T/acks" --clients 4 --batch 10 >"$T/load.out" 2>&1 && ok ||
      { bad "once there is room, the server started again stores every entry"; cat "$T/load.out" >&2; }
    kill -TERM "$PID_full2"; wait "$PID_full2" 2>/dev/null
  fi
  all_acked "$T/full/L" && ok || bad "an entry serve acknowledged before the disk was full is not at its index"
  cmp -s <("$E" log --ledger "$T/full/L" --json | grep -o '"id":"sha256:[0-9a-f]*"' | sort) \
    <(sort "$T/ref.ids" <("$E" log --ledger "$A" --limit 2 --json | grep -o '"id":"sha256:[0-9a-f]*"')) && ok ||
    bad "the ledger filled under serve does not end with every entry once"
else
  echo "skipped the full-disk part: cannot mount a tmpfs ($(tr '\n' ' ' < "$T/mount.err"))"
fi

# --- LMDB's map under an address-space limit (ledger_test fills a map that cannot grow) ---
if [[ "${EVLEDGER_SANITIZER:-}" != "" ]] || [ "$shimmed" = 0 ]; then
  echo "skipped the address-space part: a sanitizer's shadow memory does not fit under ulimit -v"
else
  fresh "$T/as"
  snapshot "$T/as" > "$T/before"
  expect 3 "import under ulimit -v 4000000 (the 64 GiB map does not fit)" -- \
    bash -c 'ulimit -v 4000000; exec "$@"' limited "$E" import --ledger "$T/as" --key "$T/imp.key" "$T/cat.jsonl"
  contains "$T/err" "cannot open the ledger database in $T/as/db: LMDB maps 68719476736 bytes of address space for it (not memory), and this process may not map that much (mmap: Cannot allocate memory; ulimit -v is 4000000 KiB): raise the limit (ulimit -v)" \
    "the import names the address-space limit and the fix"
  snapshot "$T/as" | cmp -s - "$T/before" && ok || bad "the refused import changed the ledger"
fi

finish
