#!/usr/bin/env python3
"""What learning costs: a python test suite of N test files (unittest, each file importing a helper module and
reading a fixture) is run with `oishell learn` and then with `oishell run --policy LEARNED`, rounds alternating,
and the median wall times and their ratio are printed (issue 15's target: learn at most 2x run). Three suites: the
fixtures in the workspace; in a directory under /var/tmp (outside the workspace, shown read-only during learning:
one run); in a directory under /tmp (the sandbox's own scratch hides the host's /tmp: the first learning run fails
on the fixtures and learn runs it again with them visible, two runs).

    bench/learn/run.py [-o OISHELL_BINARY] [-n ROUNDS] [-f FILES]
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
parser = argparse.ArgumentParser()
parser.add_argument("-o", default=os.path.join(top, "build", "tools", "oishell"))
parser.add_argument("-n", type=int, default=5)
parser.add_argument("-f", type=int, default=300)
args = parser.parse_args()
oishell = os.path.realpath(args.o)
if not os.access(oishell, os.X_OK):
    sys.exit(f"bench/learn/run.py: {oishell} not found (build first, or pass -o)")
python = "/usr/bin/python3"  # Debian's: visible inside the sandbox


def make_suite(root, outside_data):
    ws = os.path.join(root, "ws")
    os.makedirs(os.path.join(ws, "tests"))
    data = os.path.join(root, "data")
    os.makedirs(data)
    with open(os.path.join(ws, "tests", "helper.py"), "w") as f:
        f.write("def double(x):\n    return 2 * x\n")
    for i in range(args.f):
        fixture = os.path.join(data if outside_data else ws, f"fixture_{i}.txt")
        with open(fixture, "w") as f:
            f.write(f"{i}\n")
        with open(os.path.join(ws, "tests", f"test_{i:04d}.py"), "w") as f:
            f.write(f"import unittest\nfrom helper import double\n\n"
                    f"class T(unittest.TestCase):\n"
                    f"    def test_{i}(self):\n"
                    f"        with open({fixture!r}) as f:\n"
                    f"            self.assertEqual(double(int(f.read())), {2 * i})\n")
    return ws


def timed(argv, cwd):
    start = time.perf_counter()
    run = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    return (time.perf_counter() - start) * 1000, run


print(f"{args.n} rounds, {args.f} test files; kernel {os.uname().release}, {os.cpu_count()} cpus, "
      f"load {os.getloadavg()[0]:.2f}")
for label, outside, where in (("workspace only", False, None), ("data in /var/tmp", True, "/var/tmp"),
                              ("data in /tmp", True, "/tmp")):
    root = tempfile.mkdtemp(dir=where)
    try:
        ws = make_suite(root, outside)
        suite = [python, "-m", "unittest", "discover", "-s", "tests", "-q"]
        learned = os.path.join(root, "learned.yaml")
        learn_ms, run_ms = [], []
        for r in range(args.n):
            for kind in (("learn", "run") if r % 2 == 0 else ("run", "learn")):
                if kind == "learn":
                    if os.path.exists(learned):
                        os.unlink(learned)
                    ms, done = timed([oishell, "learn", "--workspace", ws, "-o", learned, "--", *suite], ws)
                    if done.returncode != 0 or not os.path.exists(learned):
                        sys.exit(f"bench/learn: learn failed: {done.stderr[-2000:]}")
                    learn_ms.append(ms)
                else:
                    if not os.path.exists(learned):  # the first round's run needs a policy: learn once first
                        subprocess.run([oishell, "learn", "--workspace", ws, "-o", learned, "--", *suite], cwd=ws,
                                       capture_output=True)
                    ms, done = timed([oishell, "run", "--policy", learned, "--workspace", ws, "--", *suite], ws)
                    if done.returncode != 0:
                        sys.exit(f"bench/learn: run under the learned policy failed: {done.stderr[-2000:]}")
                    run_ms.append(ms)
        l, r_ = statistics.median(learn_ms), statistics.median(run_ms)
        print(f"{label:16s} learn {l:8.1f} ms  run --policy learned {r_:8.1f} ms  learn/run {l / r_:5.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
