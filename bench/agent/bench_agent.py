#!/usr/bin/env python3
"""interpreter benchmarks: `--version` start-up time and peak RSS, and a full one-turn task (the model writes a file
in the workspace through the sandbox and reads it back; two model requests) against the scripted server on
127.0.0.1. Prints a markdown table; run from the repository root after building:

  bench/agent/bench_agent.py [BUILD_DIR]       (default build/)

Set OISHELL_BIN to use an `oishell` other than the one in BUILD_DIR/tools.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
build = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(root, "build")
interp = os.path.join(build, "tools", "interpreter", "interpreter")
server_py = os.path.join(root, "tests", "agent", "scripted_server.py")


def timed(cmd, n, **kw):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, **kw)
        ts.append((time.perf_counter() - t) * 1000)
    ts.sort()
    return statistics.median(ts), ts[int(len(ts) * 0.9) - 1]


def peak_rss_kib(cmd):
    # GNU time's %M: the command's own peak (a Python child's maxrss would include the interpreter it forked from).
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True).stderr.strip().splitlines()
    return int(out[-1])


def one_turn(n):
    script = []
    for _ in range(n):
        script.append({"text": "Writing.", "tool_calls": [{"name": "execute", "arguments": json.dumps(
            {"language": "python", "code": "open('b.txt','w').write('42')\nprint(open('b.txt').read())"})}]})
        script.append({"text": "It says 42."})
    with tempfile.TemporaryDirectory() as d:
        sp = os.path.join(d, "script.json")
        json.dump(script, open(sp, "w"))
        srv = subprocess.Popen(["/usr/bin/python3", server_py, sp, os.path.join(d, "log")],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        port = srv.stdout.readline().strip()
        ws = os.path.join(d, "ws")
        os.mkdir(ws)
        env = dict(os.environ, OPENAI_API_KEY="sk-bench", HOME=d, XDG_DATA_HOME=d)
        cmd = [interp, "-m", "bench", "--api_base", "http://127.0.0.1:%s/v1" % port, "--plain", "write and read"]
        check = subprocess.run(cmd, cwd=ws, env=env, capture_output=True, text=True)
        if check.returncode != 0 or "It says 42." not in check.stdout:
            sys.exit("one-turn task failed: %s %s" % (check.stdout, check.stderr))
        res = timed(cmd, n - 1, cwd=ws, env=env)
        srv.stdin.close()
        srv.wait()
        return res


def main():
    n = 30
    true_med, _ = timed(["/bin/true"], n)
    v_med, v_p90 = timed([interp, "--version"], n)
    rss = peak_rss_kib([interp, "--version"])
    t_med, t_p90 = one_turn(10)
    print("| measure | median | p90 |")
    print("|---|---|---|")
    print("| `/bin/true` (process start-up on this machine) | %.1f ms | |" % true_med)
    print("| `interpreter --version` | %.1f ms | %.1f ms |" % (v_med, v_p90))
    print("| `interpreter --version` peak RSS | %.1f MiB | |" % (rss / 1024))
    print("| one-turn task, openshell sandbox (start, 2 model requests, 1 block, exit) | %.0f ms | %.0f ms |"
          % (t_med, t_p90))
    print("\nload average: %s" % open("/proc/loadavg").read().split()[0])


if __name__ == "__main__":
    main()
