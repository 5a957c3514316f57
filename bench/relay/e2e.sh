#!/usr/bin/env bash
# End-to-end relay benchmark, as users meet it: a large file served by `python3 -m http.server` on 127.0.0.1,
# downloaded by curl
#   - direct (curl on the host),
#   - through the oishell relay (`oishell run --policy P -- curl ...`, curl takes HTTP_PROXY from the environment:
#     absolute-form; and with `-p`: a CONNECT tunnel),
#   - brokered: curl inside ignoring the proxy (`--noproxy '*'`), its connect(2) performed by the supervisor
#     (runtime/broker): to a name whose rule says `inspect: false` (the supervisor's socket installed in curl:
#     kernel to kernel), and to a name with the default `inspect: true` (joined to the relay's inspecting path),
#   - through socat as a plain TCP forwarder on another loopback port (default buffer, and `-b 1048576`), if installed.
# The paths alternate, one download of each per round in rotating order; the median MB/s (curl's speed_download) of
# each and its ratio to direct's median are printed. Every download must deliver exactly the file's size (a
# truncation fails the script). Then small GETs on new connections (http.server speaks HTTP/1.0), direct vs relay,
# p50 of curl's time_total. Complements bench/relay/run.sh (in-process server and client: the relay's worst case).
#
#   bench/relay/e2e.sh [-o OISHELL_BINARY] [-n ROUNDS] [-s SIZE_MIB] [-r REQUESTS]
#
# Defaults: build/tools/oishell, 5 rounds, 1024 MiB, 100 requests per path per round (0: no latency part).
# Traffic goes only to 127.0.0.1.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
oishell="$top/build/tools/oishell"
rounds=5
size_mib=1024
requests=100
while [ $# -gt 0 ]; do
  case "$1" in
    -o) oishell="$2"; shift 2 ;;
    -n) rounds="$2"; shift 2 ;;
    -s) size_mib="$2"; shift 2 ;;
    -r) requests="$2"; shift 2 ;;
    *) echo "usage: $0 [-o OISHELL_BINARY] [-n ROUNDS] [-s SIZE_MIB] [-r REQUESTS]" >&2; exit 2 ;;
  esac
done
[ -x "$oishell" ] || { echo "bench/relay/e2e: $oishell not found (build first, or pass -o)" >&2; exit 1; }
oishell="$(realpath "$oishell")"
python=/usr/bin/python3  # Debian's; visible inside the sandbox too
curl=/usr/bin/curl
[ -x "$curl" ] || { echo "bench/relay/e2e: curl is required (apt-get install curl)" >&2; exit 1; }
socat="$(command -v socat || true)"
[ -n "$socat" ] || echo "note: socat not installed (apt-get install socat); its rows are skipped"

tmp="$(mktemp -d)"
pids=()     # background servers
current=""  # the download running now
cleanup() {
  trap - EXIT INT TERM
  set +e
  [ -n "$current" ] && kill "$current" 2>/dev/null && wait "$current" 2>/dev/null
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

# Runs a command in the background (so that Ctrl-C or TERM can end it at once) and waits for it.
run() { "$@" & current=$!; local rc=0; wait "$current" || rc=$?; current=""; return "$rc"; }

free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_listening() {  # port
  for _ in $(seq 100); do
    "$curl" -s -o /dev/null --max-time 1 "http://127.0.0.1:$1/small" && return 0
    sleep 0.05
  done
  echo "bench/relay/e2e: nothing answers on 127.0.0.1:$1" >&2; return 1
}

mkdir "$tmp/www"
head -c "$((size_mib * 1024 * 1024))" /dev/urandom >"$tmp/www/file"
head -c 1000 /dev/urandom >"$tmp/www/small"
size=$((size_mib * 1024 * 1024))

port=$(free_port)
"$python" -m http.server "$port" --bind 127.0.0.1 --directory "$tmp/www" >"$tmp/server.log" 2>&1 &
pids+=($!)
wait_listening "$port"

cat >"$tmp/policy.yaml" <<EOF
version: 1
extends: default
network:
  mode: proxy
  allow: ["bench.example", {host: direct.example, inspect: false}]
  hosts: {bench.example: 127.0.0.1, direct.example: 127.0.0.1}
  allow_private: [127.0.0.0/8]
  on_unlisted: deny
EOF
sandboxed=("$oishell" run --policy "$tmp/policy.yaml" --workspace "$tmp" --)

# Per path: its base URL, extra curl options, and whether curl runs in the sandbox.
paths=(direct relay relay-connect brokered brokered-inspected)
declare -A url prefix opts
url[direct]="http://127.0.0.1:$port"
url[relay]="http://bench.example:$port"
url[relay-connect]="http://bench.example:$port"
url[brokered]="http://direct.example:$port"
url[brokered-inspected]="http://bench.example:$port"
opts[relay-connect]="-p"
opts[brokered]="--noproxy *"
opts[brokered-inspected]="--noproxy *"
prefix[relay]=1
prefix[relay-connect]=1
prefix[brokered]=1
prefix[brokered-inspected]=1
if [ -n "$socat" ]; then
  for variant in socat socat-1m; do
    p2=$(free_port)
    buffer=(); [ "$variant" = socat-1m ] && buffer=(-b 1048576)
    "$socat" "${buffer[@]}" "TCP-LISTEN:$p2,bind=127.0.0.1,fork,reuseaddr" "TCP:127.0.0.1:$port" 2>>"$tmp/socat.log" &
    pids+=($!)
    wait_listening "$p2"
    paths+=("$variant")
    url[$variant]="http://127.0.0.1:$p2"
  done
fi

# curl for path $1 with extra arguments; sandboxed for the relay paths.
fetch() {
  local path="$1"; shift
  local extra=()
  [ -n "${opts[$path]:-}" ] && read -r -a extra <<<"${opts[$path]}"
  local cmd=("$curl" -sS -f "${extra[@]}" "$@")
  if [ -n "${prefix[$path]:-}" ]; then cmd=("${sandboxed[@]}" "${cmd[@]}"); fi
  run "${cmd[@]}"
}

echo "oishell: $oishell; socat: ${socat:-absent}; curl: $("$curl" --version | head -1 | cut -d' ' -f1-2)"
echo "kernel $(uname -r), $(nproc) cpus, $(date -u +%Y-%m-%dT%H:%MZ), ${size_mib} MiB x $rounds rounds," \
  "$requests requests per path per round, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
results="$tmp/results"
: >"$results"
n=${#paths[@]}
for ((r = 0; r < rounds; r++)); do
  for ((i = 0; i < n; i++)); do
    path=${paths[$(((r + i) % n))]}
    fetch "$path" -o /dev/null -w '%{size_download} %{speed_download}\n' "${url[$path]}/file" >"$tmp/out" ||
      { echo "bench/relay/e2e: $path: curl failed (round $r)" >&2; exit 1; }
    read -r got speed <"$tmp/out"
    [ "$got" = "$size" ] || { echo "bench/relay/e2e: $path: got $got bytes, expected $size (round $r)" >&2; exit 1; }
    echo "throughput $path $speed" >>"$results"
  done
done
if [ "$requests" -gt 0 ]; then
  lat_paths=(direct relay relay-connect brokered brokered-inspected)
  for ((r = 0; r < rounds; r++)); do
    for ((i = 0; i < ${#lat_paths[@]}; i++)); do
      path=${lat_paths[$(((r + i) % ${#lat_paths[@]}))]}
      args=()  # one curl, $requests GETs, each on a new connection (HTTP/1.0)
      for ((k = 0; k < requests; k++)); do args+=(-o /dev/null "${url[$path]}/small"); done
      fetch "$path" -w 'latency %{size_download} %{time_total}\n' "${args[@]}" >"$tmp/lat" ||
        { echo "bench/relay/e2e: $path: curl failed (latency, round $r)" >&2; exit 1; }
      [ "$(grep -c '^latency 1000 ' "$tmp/lat")" = "$requests" ] ||
        { echo "bench/relay/e2e: $path: a small download was short (latency, round $r)" >&2; exit 1; }
      awk -v p="$path" '{ print "latency", p, $3 }' "$tmp/lat" >>"$results"
    done
  done
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

"$python" - "$results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
def values(kind, path):
    return [float(v) for k, p, v in rows if k == kind and p == path]
order = []
for k, p, _ in rows:
    if (k, p) not in order:
        order.append((k, p))
direct = statistics.median(values("throughput", "direct"))
print(f"{'path':<16}{'median MB/s':>12}{'min-max MB/s':>18}{'ratio':>8}")
for k, p in order:
    if k != "throughput":
        continue
    v = values(k, p)
    m = statistics.median(v)
    print(f"{p:<16}{m / 1e6:>12.0f}{f'{min(v) / 1e6:.0f}-{max(v) / 1e6:.0f}':>18}{m / direct:>8.2f}")
lat = {p: values("latency", p) for k, p in order if k == "latency"}
if lat:
    base = statistics.median(lat["direct"])
    print(f"{'path':<16}{'requests':>9}{'p50 ms':>9}{'p99 ms':>9}{'added p50 ms':>14}")
    for p, v in lat.items():
        q = statistics.quantiles(v, n=100)
        m = statistics.median(v)
        print(f"{p:<16}{len(v):>9}{m * 1e3:>9.3f}{q[98] * 1e3:>9.3f}{(m - base) * 1e3:>+14.3f}")
PY
