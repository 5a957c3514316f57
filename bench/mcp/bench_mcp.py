#!/usr/bin/env python3
"""`oishell mcp` against `oishell supervise` (docs/performance.md, "oishell mcp").

  bench/mcp/bench_mcp.py OISHELL_BIN [--rounds N] [--sessions N]

- initialize: from starting `oishell mcp` to reading the answer to `initialize` (the client's first message, sent
  at once), over --sessions processes; and to the answer of a first `run_code` of `pass` (sandbox built, python
  started, one block).
- warm round trip: an empty python block (`pass`) in a warm session, from writing the request to reading its answer:
  `tools/call run_code` through `oishell mcp` against `exec` ... `done` through `oishell supervise`, the two sessions
  side by side and the rounds alternated, so that both see the same load. Client side included in both.
Standard library only."""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time


class Lines:
    def __init__(self, argv, cwd):
        self.started = time.perf_counter()
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=cwd, bufsize=0)

    def send(self, obj):
        self.p.stdin.write((json.dumps(obj) + "\n").encode())

    def until(self, pred):
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("the server ended")
            msg = json.loads(line)
            if pred(msg):
                return msg

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("oishell")
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--sessions", type=int, default=20)
    args = ap.parse_args()
    args.oishell = os.path.abspath(args.oishell)
    work = tempfile.mkdtemp(prefix="oishell-bench-mcp-")
    os.chmod(work, 0o755)
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}}
    call = lambda i, code: {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                            "params": {"name": "run_code", "arguments": {"language": "python", "code": code}}}

    init_ms, first_ms = [], []
    for _ in range(args.sessions):
        s = Lines([args.oishell, "mcp", "--workspace", work], work)
        s.send(init)
        s.until(lambda m: m.get("id") == 0)
        init_ms.append((time.perf_counter() - s.started) * 1e3)
        s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        s.send(call(1, "pass"))
        s.until(lambda m: m.get("id") == 1)
        first_ms.append((time.perf_counter() - s.started) * 1e3)
        s.close()

    mcp = Lines([args.oishell, "mcp", "--workspace", work, "--prestart", "python"], work)
    mcp.send(init)
    mcp.until(lambda m: m.get("id") == 0)
    mcp.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    sup = Lines([args.oishell, "supervise", "--workspace", work, "--prestart", "python"], work)
    sup.until(lambda m: m.get("event") == "ready")
    for i in range(20):  # warm both
        mcp.send(call(100 + i, "pass"))
        mcp.until(lambda m, i=i: m.get("id") == 100 + i)
        sup.send({"op": "exec", "id": f"w{i}", "language": "python", "code": "pass"})
        sup.until(lambda m, i=i: m.get("event") == "done" and m.get("id") == f"w{i}")
    via_mcp, via_sup = [], []
    for i in range(args.rounds):
        t = time.perf_counter()
        mcp.send(call(1000 + i, "pass"))
        mcp.until(lambda m, i=i: m.get("id") == 1000 + i)
        via_mcp.append((time.perf_counter() - t) * 1e3)
        t = time.perf_counter()
        sup.send({"op": "exec", "id": f"b{i}", "language": "python", "code": "pass"})
        sup.until(lambda m, i=i: m.get("event") == "done" and m.get("id") == f"b{i}")
        via_sup.append((time.perf_counter() - t) * 1e3)
    mcp.close()
    sup.close()
    os.rmdir(work)
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(f"initialize answered: median {statistics.median(init_ms):.2f} ms, p90 {pct(init_ms, 0.9):.2f} ms "
          f"({args.sessions} sessions)")
    print(f"first run_code (pass) answered: median {statistics.median(first_ms):.1f} ms, p90 {pct(first_ms, 0.9):.1f} ms")
    m, s = statistics.median(via_mcp), statistics.median(via_sup)
    print(f"warm run_code via oishell mcp: median {m:.3f} ms, p90 {pct(via_mcp, 0.9):.3f} ms")
    print(f"warm exec via oishell supervise: median {s:.3f} ms, p90 {pct(via_sup, 0.9):.3f} ms")
    print(f"added by mcp: {m - s:+.3f} ms (median of {args.rounds} alternated rounds)")


if __name__ == "__main__":
    main()
