#!/bin/sh
# Live network change benchmark (issue 38): builds oishell-live-policy-bench and runs it.
#   bench/relay/live_policy.sh [build-dir] [-- --rules 1000 --tunnels 20 --rounds 101]
# Figures are recorded in docs/network.md.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
cmake -S "$src" -B "$build" >/dev/null
cmake --build "$build" --target oishell-live-policy-bench -j2 >/dev/null
echo "kernel $(uname -r), $(nproc) cpus, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
exec "$build/bench/relay/oishell-live-policy-bench" "$@"
