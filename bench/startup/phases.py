#!/usr/bin/env python3
"""Where `oishell run`'s start-up time goes: runs it N times with OISHELL_TRACE_STARTUP=1 and prints the median
time (ms since `run: start`) of each marked step, in order. Marks from sandbox init say `init:`.

    bench/startup/phases.py [-n RUNS] [-o OISHELL_BINARY] [-- CMD ARGS...]   (default command: /bin/true)
"""
import argparse, collections, os, statistics, subprocess, sys, tempfile

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
parser = argparse.ArgumentParser()
parser.add_argument("-n", type=int, default=30)
parser.add_argument("-o", default=os.path.join(top, "build", "tools", "oishell"))
parser.add_argument("command", nargs="*", default=["/bin/true"])
args = parser.parse_args()
oishell = os.path.realpath(args.o)
if not os.access(oishell, os.X_OK):
    sys.exit(f"bench/startup/phases.py: {oishell} not found (build first, or pass -o)")

times = collections.defaultdict(list)
order = []
env = dict(os.environ, OISHELL_TRACE_STARTUP="1")
with tempfile.TemporaryDirectory() as workspace:
    for _ in range(args.n):
        # The marks go to a file: a pipe would wake this reader (and take a CPU) at every mark.
        with tempfile.TemporaryFile(mode="w+") as marks:
            run = subprocess.run([oishell, "run", "--", *args.command], env=env, cwd=workspace,
                                 stdout=subprocess.DEVNULL, stderr=marks)
            marks.seek(0)
            stderr = marks.read()
        if run.returncode != 0:
            sys.exit(f"bench/startup/phases.py: oishell run failed ({run.returncode}): {stderr}")
        for line in stderr.splitlines():
            parts = line.split(" ", 3)
            if len(parts) == 4 and parts[0] == "startup":
                step = parts[3]
                if step not in times:
                    order.append(step)
                times[step].append(float(parts[2]))

print(f"{args.n} runs of `oishell run -- {' '.join(args.command)}`, load {os.getloadavg()[0]:.2f}")
for step in sorted(order, key=lambda s: statistics.median(times[s])):
    print(f"{statistics.median(times[step]):8.2f} ms  (min {min(times[step]):6.2f})  {step}")
