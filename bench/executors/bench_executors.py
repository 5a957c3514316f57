#!/usr/bin/env python3
"""Executor benchmark: warm-block round trip and time to the first block of a new session.

usage: bench_executors.py OISHELL_BIN [--sandbox openshell|none] [--warm N] [--sessions N]

- warm round trip: an empty block (`pass`, `true`) in a warm session, from writing the exec request to reading
  its `done` event (the client side of the protocol included).
- new session: from starting `oishell supervise` to the `done` of the first `pass` block (sandbox + python
  ready + one block), against bare `python3 -c pass` (the same interpreter the executor runs).
Prints one line per figure (median and p90), suitable for docs/performance.md.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


class Session:
    def __init__(self, binary, sandbox, workspace):
        self.proc = subprocess.Popen([binary, "supervise", "--sandbox", sandbox, "--workspace", workspace],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.buf = b""
        self.n = 0

    def event(self):
        while b"\n" not in self.buf:
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise RuntimeError("supervisor ended")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def run(self, language, code):
        self.n += 1
        block = str(self.n)
        self.proc.stdin.write(json.dumps({"op": "exec", "id": block, "language": language, "code": code}).encode()
                              + b"\n")
        while True:
            e = self.event()
            if e.get("event") == "done" and e.get("id") == block:
                if e["status"] != "ok":
                    raise RuntimeError("block failed: %r" % e)
                return e

    def close(self):
        self.proc.stdin.write(b'{"op":"shutdown"}\n')
        self.proc.stdin.close()
        self.proc.wait()


def main():
    binary = sys.argv[1]
    sandbox = "openshell"
    warm, sessions = 2000, 20
    args = sys.argv[2:]
    while args:
        flag, value = args[0], args[1]
        args = args[2:]
        if flag == "--sandbox":
            sandbox = value
        elif flag == "--warm":
            warm = int(value)
        elif flag == "--sessions":
            sessions = int(value)
    python = "/usr/bin/python3"
    with tempfile.TemporaryDirectory() as workspace:
        s = Session(binary, sandbox, workspace)
        for language, code in (("python", "pass"), ("shell", "true")):
            s.run(language, code)  # start the executor
            times = []
            for _ in range(warm):
                t0 = time.perf_counter()
                s.run(language, code)
                times.append((time.perf_counter() - t0) * 1e3)
            print("warm %-6s block round trip (%s): median %.3f ms, p90 %.3f ms (n=%d)"
                  % (language, sandbox, statistics.median(times), percentile(times, 0.9), warm))
        s.close()

        bare = []
        for _ in range(sessions):
            t0 = time.perf_counter()
            subprocess.run([python, "-c", "pass"], check=True)
            bare.append((time.perf_counter() - t0) * 1e3)
        first = []
        for _ in range(sessions):
            t0 = time.perf_counter()
            s = Session(binary, sandbox, workspace)
            s.run("python", "pass")
            first.append((time.perf_counter() - t0) * 1e3)
            s.close()
        mb, mf = statistics.median(bare), statistics.median(first)
        print("bare %s -c pass: median %.1f ms, p90 %.1f ms (n=%d)" % (python, mb, percentile(bare, 0.9), sessions))
        print("new session to first python block done (%s): median %.1f ms, p90 %.1f ms (n=%d) = %.2fx bare"
              % (sandbox, mf, percentile(first, 0.9), sessions, mf / mb))


if __name__ == "__main__":
    main()
