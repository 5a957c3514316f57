#!/usr/bin/env bash
# UDP round-trip latency, direct vs through the datagram relay (runtime/relay/datagram_relay.h): a python UDP echo
# server on the host's 127.0.0.1, and a python client that connects a UDP socket to it and times N echoes of a
# small datagram (after 200 unmeasured ones), on the host and inside `oishell run` (the name pinned to 127.0.0.1
# with `hosts:`, a `protocol: udp` rule for the port, `allow_private: [127.0.0.0/8]`). Rounds alternate; each prints
# p50/p90/p99 in microseconds. Traffic goes only to 127.0.0.1.
#
#   bench/relay/udp_latency.sh [-o OISHELL_BINARY] [-n ROUNDS] [-c COUNT] [-s SIZE]
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
oishell="$top/build/tools/oishell"
rounds=3
count=5000
size=64
while [ $# -gt 0 ]; do
  case "$1" in
    -o) oishell="$2"; shift 2 ;;
    -n) rounds="$2"; shift 2 ;;
    -c) count="$2"; shift 2 ;;
    -s) size="$2"; shift 2 ;;
    *) echo "usage: $0 [-o OISHELL_BINARY] [-n ROUNDS] [-c COUNT] [-s SIZE]" >&2; exit 2 ;;
  esac
done
[ -x "$oishell" ] || { echo "bench/relay/udp_latency: $oishell not found (build first, or pass -o)" >&2; exit 1; }
python=/usr/bin/python3
work="$(mktemp -d)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/server.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('127.0.0.1', 0))
print(s.getsockname()[1], flush=True)
while True:
    d, a = s.recvfrom(65536)
    s.sendto(d, a)
PY
cat >"$work/client.py" <<'PY'
import socket, sys, time
host, port, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
s.connect((socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_DGRAM)[0][4][0], port))
d = b'x' * size
for _ in range(200):
    s.send(d); s.recv(65536)
t = []
for _ in range(count):
    a = time.perf_counter_ns(); s.send(d); r = s.recv(65536); t.append(time.perf_counter_ns() - a)
    assert r == d
t.sort()
q = lambda p: t[min(len(t) - 1, int(len(t) * p))] / 1000
print(f"p50 {q(0.5):.1f} p90 {q(0.9):.1f} p99 {q(0.99):.1f}")
PY
"$python" "$work/server.py" >"$work/port" &
server_pid=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
port="$(cat "$work/port")"
cat >"$work/policy.yaml" <<YAML
version: 1
extends: default
network:
  mode: proxy
  allow: [{host: echo.example, ports: [$port], protocol: udp}]
  hosts: {echo.example: 127.0.0.1}
  allow_private: [127.0.0.0/8]
YAML
chmod -R a+rX "$work"
echo "udp echo, $size-byte datagrams, $count per round (us); load: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  echo "round $round direct:  $("$python" "$work/client.py" 127.0.0.1 "$port" "$count" "$size")"
  # The work directory is the sandbox's workspace (the host's /tmp is not visible inside).
  echo "round $round relayed: $(cd "$work" && "$oishell" run --policy policy.yaml -- "$python" client.py \
    echo.example "$port" "$count" "$size")"
done
