#!/usr/bin/env bash
# The first five minutes, as a newcomer meets them (issue 36): a fresh Debian 12 (a minbase root file system with
# ca-certificates, git and sudo only, as `debootstrap --variant=minbase` gives it), an ordinary user with sudo, the
# repository cloned, and the README's `tools/dev run` timed to the agent's first screen, at a pseudo-terminal, with
# this machine's network (apt from its own sources; nothing else is reachable).
#
#   bench/first-run/run.sh [--keep DIR] [--test]
#
# --test: the README's other command instead, `tools/dev test` run to its end as root (as CI runs it), which proves
# the test command passes with the distribution's own packages (Debian 12's nodejs 18, not a newer Node from
# elsewhere); prints its wall clock, its phases and its exit status. The fresh root is entered with pivot_root in a
# mount namespace of its own, not chroot: the kernel refuses a user namespace to a chrooted process (the tests make
# sandboxes).
#
# Prints the wall clock of each phase (package installs; configure; build; the agent's first screen), the CPU time
# of everything `tools/dev run` ran (a cpuacct cgroup of its own), the load average before and after (a shared
# machine's wall clock says little without it) and the CPU count. The root file system is made once by mmdebstrap
# and cached as a tarball in ~/.cache/oishell-first-run (keyed by the package list); each run unpacks a fresh copy
# and deletes it at the end (--keep DIR keeps it there). Runs as root (chroot); needs mmdebstrap and util-linux.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
keep="" mode=run
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep="$2"; shift 2 ;;
    --test) mode=test; shift ;;
    *) echo "bench/first-run: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "bench/first-run: run as root (it builds a chroot)" >&2; exit 1; }
command -v mmdebstrap >/dev/null || { echo "bench/first-run: mmdebstrap is missing (apt-get install mmdebstrap)" >&2; exit 1; }
cache="${OISHELL_FIRST_RUN_CACHE:-$HOME/.cache/oishell-first-run}"
mkdir -p "$cache"
include=ca-certificates,git,sudo
tarball="$cache/bookworm-minbase-$(echo "$include" | sha256sum | cut -c1-12).tar"
sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
  [ -s "$f" ] && sources+=("$f")
done
if [ ! -f "$tarball" ]; then
  # (the name ends in .tar: mmdebstrap chooses its output format by it)
  mmdebstrap --quiet --variant=minbase --include="$include" bookworm "${tarball%.tar}.partial.tar" "${sources[@]}"
  mv "${tarball%.tar}.partial.tar" "$tarball"
fi

root="${keep:-$(mktemp -d /var/tmp/oishell-first-run.XXXXXX)}"
mkdir -p "$root"
cgroup=/sys/fs/cgroup/cpuacct/oishell-first-run-$$
cleanup() {
  [ -d "$cgroup" ] && rmdir "$cgroup" 2>/dev/null
  [ -n "$keep" ] || rm -rf "$root"
}
trap cleanup EXIT
tar -C "$root" -xf "$tarball"
# The machine's apt sources and resolver, as the newcomer's machine has its own; an ordinary user with sudo.
cp /etc/resolv.conf "$root/etc/resolv.conf"
for f in "${sources[@]}"; do cp "$f" "$root$f"; done
# The machine's own certificate authorities too (its network may pass through an inspecting egress): in the system
# store, and for Node (npm, in --test) through NODE_EXTRA_CA_CERTS as this machine's environment sets it.
for f in /usr/local/share/ca-certificates/*.crt; do [ -f "$f" ] && cp "$f" "$root/usr/local/share/ca-certificates/"; done
chroot "$root" update-ca-certificates >/dev/null 2>&1 || true
chroot "$root" useradd --create-home --shell /bin/bash newcomer
echo 'newcomer ALL=(ALL) NOPASSWD: ALL' >"$root/etc/sudoers.d/newcomer"
# The repository as a clone of this checkout's HEAD (what `git clone` of the project gives).
mkdir -p "$root/srv/oishell.git"
git clone -q --bare "$top" "$root/srv/oishell.git"
[ "$mode" = test ] || chroot "$root" chown -R newcomer:newcomer /srv/oishell.git  # --test clones it as root

if [ "$mode" = test ]; then
  load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
  mkdir "$cgroup"
  log="$root/root/first-test.log"
  started=$(date +%s.%N)
  # A mount namespace of its own, the fresh root made its root (pivot_root) with /proc, /sys (cgroups included),
  # /dev and /run; the clone in /root, `tools/dev test` as root.
  rc=0
  unshare -m --propagation private sh -c '
    echo $$ >"'"$cgroup"'/cgroup.procs"
    root="$1"
    mount --bind "$root" "$root"
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"
    mount --rbind /dev "$root/dev"
    mount -t tmpfs tmpfs "$root/run"
    cd "$root" && mkdir -p .old-root && pivot_root . .old-root && umount -l /.old-root && rmdir /.old-root
    cd /root && exec env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      LANG=C.UTF-8 TERM=dumb NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt sh -c "git clone -q /srv/oishell.git oishell && cd oishell && exec tools/dev test"
  ' sh "$root" >"$log" 2>&1 || rc=$?
  ended=$(date +%s.%N)
  cpu_ns="$(cat "$cgroup/cpuacct.usage")"
  load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
  stamp() { [ -e "$root/root/oishell/$1" ] && stat -c %Y "$root/root/oishell/$1" || echo ""; }
  since() { [ -n "$1" ] && awk -v a="$1" -v b="$started" 'BEGIN { printf "%.0f s", a - b }' || echo "-"; }
  echo "bench/first-run --test: $(nproc) CPUs; load before $load_before, after $load_after"
  echo "  node in the fresh root                 $(chroot "$root" node --version 2>/dev/null || echo missing)"
  echo "  configure started (packages installed)  $(since "$(stamp build/CMakeCache.txt)")"
  echo "  ASan build configured (tests passed)    $(since "$(stamp build-asan/CMakeCache.txt)")"
  echo "  tools/dev test ended (status $rc)       $(since "$ended")"
  awk -v ns="$cpu_ns" 'BEGIN { printf "  CPU time of everything it ran           %.0f s\n", ns / 1e9 }'
  grep -E "tests passed|tests failed|Failed|FAILED" "$log" | tail -12 || true
  [ "$rc" -eq 0 ] || { echo "bench/first-run --test: failed; the end of its log:" >&2; tail -40 "$log" >&2; }
  exit "$rc"
fi

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
mkdir "$cgroup"
log="$root/home/newcomer/first-run.log"
started=$(date +%s.%N)
# In a mount namespace of its own: /proc, /sys and /dev for the chroot, gone with it.
unshare -m --propagation private sh -c '
  echo $$ >"'"$cgroup"'/cgroup.procs"
  root="$1"
  mount -t proc proc "$root/proc"
  mount -t sysfs sysfs "$root/sys"
  mount --rbind /dev "$root/dev"
  exec chroot "$root" su - newcomer -c "
    git clone -q /srv/oishell.git oishell && cd oishell &&
    exec script -q -f -e -c \"tools/dev run\" /home/newcomer/first-run.log </dev/null >/dev/null 2>&1"
' sh "$root" &
runner=$!
# The first screen: the agent's banner (or the no-model screen before it) on the terminal (script -f writes it as
# it comes; the interpreter's binary appearing is the build's end).
first_screen=""
while kill -0 "$runner" 2>/dev/null; do
  if [ -f "$log" ] && grep -q -e 'openshell sandbox' -e 'OPENAI_API_KEY not found' "$log"; then
    first_screen=$(date +%s.%N)
    break
  fi
  sleep 0.5
done
cpu_ns="$(cat "$cgroup/cpuacct.usage")"
# The agent waits at its prompt: end what this benchmark started (every process in its group), then reap.
for _ in 1 2 3; do
  pids="$(cat "$cgroup/cgroup.procs")"
  [ -n "$pids" ] || break
  kill $pids 2>/dev/null || true
  sleep 1
done
wait "$runner" || true
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
stamp() { [ -e "$root/home/newcomer/oishell/$1" ] && stat -c %Y "$root/home/newcomer/oishell/$1" || echo ""; }
configured="$(stamp build/CMakeCache.txt)"
built="$(stamp build/tools/interpreter/interpreter)"
since() { [ -n "$1" ] && awk -v a="$1" -v b="$started" 'BEGIN { printf "%.0f s", a - b }' || echo "-"; }
echo "bench/first-run: $(nproc) CPUs; load before $load_before, after $load_after"
echo "  configure started (packages installed)  $(since "$configured")"
echo "  interpreter built                      $(since "$built")"
echo "  first screen                           $(since "$first_screen")"
awk -v ns="$cpu_ns" 'BEGIN { printf "  CPU time of everything it ran           %.0f s\n", ns / 1e9 }'
[ -n "$first_screen" ] || { echo "bench/first-run: no first screen; the end of the terminal's log:" >&2; tail -20 "$log" >&2; exit 1; }
