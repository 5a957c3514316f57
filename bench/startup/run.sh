#!/usr/bin/env bash
# Start-up cost of the sandbox: `/bin/true` and `python3 -c pass` under `oishell run` (default profile), under
# bubblewrap with all namespaces, and bare. The three are run alternately (one of each per round, in alternating
# order, so that machine load affects them alike); medians of wall time and (with perf installed) of CPU time (`perf stat -e task-clock`,
# every task started) and the ratios oishell/bwrap and oishell/bare are printed. Each workload runs twice: with
# /dev/null as stdio, and on a terminal (a pseudo-terminal the benchmark holds as stdin, stdout and stderr), where
# oishell gives the command a terminal of the sandbox's own and relays it, and bwrap passes the terminal through.
#
#   bench/startup/run.sh [-n ROUNDS] [-o OISHELL_BINARY] [--idle MS]
#
# With `--idle MS`, each timed run starts after MS milliseconds of sleep: as a user's command starts on an idle
# machine, not hot on the heels of the previous run (which keeps CPUs awake and kernel state warm; docs/performance.md
# says what that hides: the RCU grace period of a cgroup move).
#
# With `--hyperfine`, hyperfine (if installed) runs the same commands too, for its own statistics (not alternated).
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rounds=100
oishell="$top/build/tools/oishell"
use_hyperfine=0
idle_ms=0
while [ $# -gt 0 ]; do
  case "$1" in
    -n) rounds="$2"; shift 2 ;;
    -o) oishell="$2"; shift 2 ;;
    --hyperfine) use_hyperfine=1; shift ;;
    --idle) idle_ms="$2"; shift 2 ;;
    *) echo "usage: $0 [-n ROUNDS] [-o OISHELL_BINARY] [--idle MS] [--hyperfine]" >&2; exit 2 ;;
  esac
done
[ -x "$oishell" ] || { echo "bench/startup: $oishell not found (build first, or pass -o)" >&2; exit 1; }
oishell="$(realpath "$oishell")"  # the benchmark runs in a temporary directory
# Debian's python3 (a pyenv python under /root would not be visible inside any sandbox).
python=/usr/bin/python3
workspace="$(mktemp -d)"
trap 'rm -rf "$workspace"' EXIT
cd "$workspace"

bwrap_prefix=()
if command -v bwrap >/dev/null; then
  bwrap_prefix=(bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp)
fi

echo "oishell: $oishell ($("$oishell" --version)); bwrap: $(command -v bwrap || echo absent); rounds: $rounds; idle before each run: $idle_ms ms"
echo "kernel $(uname -r), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$python" - "$rounds" "$oishell" "$python" "$idle_ms" "${bwrap_prefix[@]}" <<'PY'
import os, pty, shutil, statistics, sys, threading, time
rounds, oishell, python, idle = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4]) / 1000
bwrap = sys.argv[5:]
workloads = {"/bin/true": ["/bin/true"], "python3 -c pass": [python, "-c", "pass"]}
null = os.open(os.devnull, os.O_RDWR)
# The terminal: its slave is the commands' stdio in the "tty" runs; what reaches it is read and dropped.
tty_master, tty_slave = pty.openpty()
def drain():
    while True:
        try:
            if not os.read(tty_master, 65536):
                return
        except OSError:
            return
threading.Thread(target=drain, daemon=True).start()
stdio = null

perf = shutil.which("perf")
perf_out = os.path.join(os.getcwd(), "perf-stat.csv")

def spawn(argv):
    pid = os.posix_spawn(argv[0] if argv[0].startswith("/") else "/usr/bin/" + argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, stdio, 0), (os.POSIX_SPAWN_DUP2, stdio, 1),
                                       (os.POSIX_SPAWN_DUP2, stdio if stdio != null else 2, 2)])
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench/startup: {' '.join(argv)} failed with status {os.waitstatus_to_exitcode(status)}")

def run(argv):
    if idle:
        time.sleep(idle)
    start = time.perf_counter_ns()
    spawn(argv)
    return (time.perf_counter_ns() - start) / 1e6

# CPU time of every task the command starts (threads, sandbox init, the sandboxed process, and also processes
# nobody waits for, which getrusage would miss: bwrap's pid 1): `perf stat -e task-clock`. A loaded machine
# inflates it far less than wall time.
def cpu(argv):
    spawn([perf, "stat", "-x,", "-e", "task-clock", "-o", perf_out, "--"] + argv)
    with open(perf_out) as f:
        for line in f:
            fields = line.split(",")
            if len(fields) > 2 and fields[2].startswith("task-clock"):
                return float(fields[0])
    sys.exit("bench/startup: no task-clock in perf stat output")

for (name, command), stdio in [(w, s) for s in (null, tty_slave) for w in workloads.items()]:
    name = name + (" (tty)" if stdio == tty_slave else "")
    runners = {"oishell": [oishell, "run", "--"] + command, "bare": command}
    if bwrap:
        runners["bwrap"] = bwrap + command
    for argv in runners.values():  # warm the page cache
        for _ in range(3):
            run(argv)
    times = {k: [] for k in runners}
    cpus = {k: [] for k in runners}
    for i in range(rounds):
        # Alternate the order too, so that no runner always follows the same one (page cache, CPU state).
        keys = list(runners) if i % 2 == 0 else list(reversed(list(runners)))
        for key in keys:
            argv = runners[key]
            times[key].append(run(argv))
            if perf:
                cpus[key].append(cpu(argv))
    for label, samples in (("wall", times), ("cpu", cpus)):
        if not samples["bare"]:
            continue
        med = {k: statistics.median(v) for k, v in samples.items()}
        line = f"{name:22s} {label:4s} median ms: " + ", ".join(f"{k} {med[k]:.2f}" for k in runners)
        line += f"; oishell/bare {med['oishell'] / med['bare']:.2f}"
        if bwrap:
            line += f"; oishell/bwrap {med['oishell'] / med['bwrap']:.2f}"
        print(line)
PY

if [ "$use_hyperfine" = 1 ] && command -v hyperfine >/dev/null; then
  hyperfine -N --warmup 3 -r "$rounds" "$oishell run -- /bin/true" "${bwrap_prefix[*]} /bin/true" "/bin/true"
fi
