#!/bin/sh
# Relay benchmark on loopback: builds oishell-relay-bench and runs it.
#   bench/relay/run.sh [build-dir] [-- bench args: --size-mib 1024 --rounds 5 --requests 1000]
#   bench/relay/run.sh [build-dir] -- --https [--size-mib 256 --rounds 5 --requests 2000 --handshakes 300]
# Figures are recorded in docs/network.md. socat (if installed) is the plain TCP forwarder baseline. --https runs
# the terminated-HTTPS benchmark of issue 16 instead (bench/relay/https_bench.h).
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target oishell-relay-bench -j2 >/dev/null
command -v socat >/dev/null || echo "note: socat not installed; its row is skipped"
echo "kernel $(uname -r), $(nproc) cpus, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
exec "$build/bench/relay/oishell-relay-bench" "$@"
