# tests/tools/testlib.sh — what the end-to-end shell tests share. Source it after setting
# E (the evledger binary); it makes the scratch directory $T (removed at exit, with every
# process start_process started killed, unless the script sets its own trap afterwards) and
# counts checks.
#   expect CODE DESCRIPTION -- COMMAND...   run COMMAND (stdout $T/out, stderr $T/err), check its exit
#   contains FILE TEXT DESCRIPTION         check that FILE holds TEXT
#   start_process NAME PREFIX COMMAND...   start a server, wait for its "PREFIX http://..." line
#   finish                                 print 'N passed, M failed' and exit non-zero on failure
#   start_server NAME ARGS...              start `$E serve ARGS --listen 127.0.0.1:0`, wait for its
#                                          URL, set URL_<NAME> and PID_<NAME> (killed at exit)
#   serve_with_witness LEDGER KEY DIR      a server ($U), a read-only server ($R), a witness ($W)
#   activity_ledger ORIGIN [KEY...]        init $L (admin key $A) with the keys gen --activity needs
#   free_port, nginx_conf DIR PORT HTTP SERVER   a free port; an nginx.conf for loopback tests
T=$(mktemp -d)
PIDS=()
stop_servers() { for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }
trap 'stop_servers; rm -rf "$T"' EXIT
failures=0
passed=0

ok() { passed=$((passed + 1)); }
bad() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }

expect() {
  local want=$1 what=$2
  shift 3
  "$@" >"$T/out" 2>"$T/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then ok; else
    bad "$what: exit $got, expected $want"; sed 's/^/  | /' "$T/err" >&2
  fi
}

contains() {
  if grep -qF -- "$2" "$1"; then ok; else
    bad "$3: '$2' not in output"; head -c 800 "$1" | sed 's/^/  | /' >&2
  fi
}

# matches FILE REGEX WHAT: like contains, for an extended regular expression.
matches() {
  if grep -qE -- "$2" "$1"; then ok; else
    bad "$3: /$2/ not in output"; head -c 800 "$1" | sed 's/^/  | /' >&2
  fi
}

# free_port: a TCP port of 127.0.0.1 that nothing uses now, below the kernel's ephemeral range
# (net.ipv4.ip_local_port_range), so that no client's connection takes it as its local port
# before the server that is given it binds it (a witness or server started again at its URL).
free_port() {
  python3 -c '
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(1000):
    port = random.randrange(10000, low)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    print(port)
    break
else:
    raise SystemExit("no free port below " + str(low))
'
}

# nginx_conf DIR PORT HTTP SERVER: writes DIR/nginx.conf for nginx in the foreground on
# 127.0.0.1:PORT with its pid, error log and temporary files in DIR (DIR/tmp, writable by the
# workers, which may run as another user); HTTP holds more directives of its http block, SERVER
# those of its one server block.
nginx_conf() {
  local dir=$1 port=$2 http=$3 server=$4
  mkdir -p "$dir/tmp"
  chmod 755 "$T"
  chmod 777 "$dir/tmp"
  cat > "$dir/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $dir/tmp;
  proxy_temp_path $dir/tmp;
  fastcgi_temp_path $dir/tmp;
  uwsgi_temp_path $dir/tmp;
  scgi_temp_path $dir/tmp;
  $http
  server {
    listen 127.0.0.1:$port;
    $server
  }
}
EOF
}

# The 32-byte public key of a verifier key file, as hex.
pubkey_hex() { cut -d+ -f3- "$1" | base64 -d | tail -c 32 | od -An -tx1 | tr -d ' \n'; }

# start_process NAME PREFIX COMMAND...: runs COMMAND in the background (output in $T/NAME.out
# and .err), waits up to 5 s for its line "PREFIX http://...", and sets URL_<NAME> (the URL on
# that line) and PID_<NAME>. The server is killed at exit.
start_process() {
  local name=$1 prefix=$2
  shift 2
  "$@" >"$T/$name.out" 2>"$T/$name.err" &
  local pid=$!
  PIDS+=("$pid")
  for _ in $(seq 100); do
    grep -q "^$prefix http://" "$T/$name.out" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  local url
  url=$(sed -n "s/^$prefix \(http:[^ ]*\).*/\1/p" "$T/$name.out")
  [ -n "$url" ] || { bad "server $name did not start"; cat "$T/$name.err" >&2; return 1; }
  printf -v "URL_$name" '%s' "$url"
  printf -v "PID_$name" '%s' "$pid"
}

finish() {
  echo "$passed passed, $failures failed"
  [ "$failures" -eq 0 ]
}

start_server() {
  local name=$1
  shift
  start_process "$name" serving "$E" serve --listen 127.0.0.1:0 "$@"
}

# serve_with_witness LEDGER WITNESS_KEY WITNESS_DIR: `evledger serve` of LEDGER at $U, a
# read-only server of it at $R, and a witness of its log (state in WITNESS_DIR) at $W, each
# URL without its final slash. Returns non-zero when one does not start.
serve_with_witness() {
  start_server s --ledger "$1" || return 1
  start_server r --ledger "$1" --read-only || return 1
  start_process w witnessing "$E" witness serve --key "$2" --dir "$3" \
    --log "$1/keys/log.vkey" --listen 127.0.0.1:0 || return 1
  U=${URL_s%/}
  R=${URL_r%/}
  W=${URL_w%/}
}

# activity_ledger ORIGIN [KEY...]: makes the ledger $L (its admin key $A) and, in $T, the keys
# imp, runa, runb, att and cur (and each KEY, granted nothing), granted as `gen --activity`
# and imports need them: imp an importer for sol-execbench, runa and runb runners (owners and
# hosts a and b), att an attestor, cur a curator. Defines grant NAME ARGS... for more.
activity_ledger() {
  local origin=$1
  shift
  expect 0 "init" -- "$E" init --ledger "$L" --origin "$origin"
  for k in imp runa runb att cur "$@"; do
    "$E" key new "$k@test" --out "$T/$k.key" >/dev/null 2>&1 && ok || bad "key new $k"
  done
  grant imp --role importer --scope sol-execbench
  grant runa --role runner --scope owner:a --scope host:a
  grant runb --role runner --scope owner:b --scope host:b
  grant att --role attestor
  grant cur --role curator
}
grant() { expect 0 "grant $1" -- "$E" key grant --ledger "$L" --key "$T/$1.key.vkey" --signer "$A" "${@:2}"; }

# kill_catalog ORIGIN RUNS: the ledgers of a kill test. $A gets a catalog of RUNS runs imported
# by $T/imp.key; $L is A's copy from before the import, so that A's entries (but the first two)
# are new to L; $T/entries.bin holds A's entries in the uint16 framing of tile/entries bundles;
# $VKEY is the log's verifier key. Returns 1 when a step fails.
kill_catalog() {
  A="$T/a"
  L="$T/l"
  "$E" init --ledger "$A" --origin "$1" >/dev/null 2>&1 || { bad "init"; return 1; }
  VKEY=$(cat "$A/keys/log.vkey")
  "$E" key new imp@sol --out "$T/imp.key" >/dev/null
  "$E" key grant --ledger "$A" --key "$T/imp.key.vkey" --role importer --scope sol-execbench \
    --signer "$A/keys/admin.key" >/dev/null
  cp -a "$A" "$L"
  "$E" gen --runs "$2" 2>/dev/null | "$E" import --ledger "$A" --key "$T/imp.key" - >/dev/null 2>&1 ||
    { bad "import into A"; return 1; }
  "$E" export-tiles --ledger "$A" --out "$T/xa" >/dev/null || { bad "export A"; return 1; }
  : > "$T/entries.bin"
  local f
  for f in $(cd "$T/xa" && find tile/entries -type f | sort); do cat "$T/xa/$f" >> "$T/entries.bin"; done
}
