#!/usr/bin/env python3
"""The first chunk of an answer: the CLI against Open Interpreter's Python API on oishell (docs/performance.md,
"Python API").

usage: first_chunk.py BUILD_DIR [RUNS]
Against the scripted model server (tests/agent/scripted_server.py, answers "Hello." in one delta), each run in a
fresh empty workspace, alternating:
  cli         `interpreter -y --json --model scripted ...  hi`: process start to its first assistant chunk on stdout
  python      `python3 -I -c 'from interpreter import interpreter; ... interpreter.chat(stream=True)'`: process
              start to the first chunk (python's start, the import, the agent's start and its sandbox included)
  python.chat the same, from the chat() call
  python.warm a second chat() in the same program (agent and sandbox up): the call to its first chunk
  python.configured  a new OpenInterpreter configured 300 ms before its first chat() (the agent starts when it is
              configured): the call to its first chunk
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
PY = "/usr/bin/python3"

PROGRAM = r"""
import sys, time
t0 = float(sys.argv[1])
sys.path.insert(0, sys.argv[2])
from interpreter import interpreter
interpreter.llm.model, interpreter.llm.api_base, interpreter.llm.api_key = "scripted", sys.argv[3], "sk-x"


def first_chunk(i, message):
    # The time to the first assistant chunk (the rest of the answer is stopped: the generator is closed).
    start = time.time()
    for chunk in i.chat(message, display=False, stream=True):
        if chunk.get("role") == "assistant" and "content" in chunk:
            return start, time.time()


t1, t2 = first_chunk(interpreter, "hi")
t3, t4 = first_chunk(interpreter, "and again")
interpreter.close()
from interpreter import OpenInterpreter
other = OpenInterpreter()
other.llm.model, other.llm.api_base, other.llm.api_key = "scripted", sys.argv[3], "sk-x"
time.sleep(0.3)  # the program does something else before its first message
t5, t6 = first_chunk(other, "hi")
other.close()
print(t2 - t0, t2 - t1, t4 - t3, t6 - t5)
"""


def server(runs):
    d = tempfile.mkdtemp(prefix="first-chunk-")
    with open(os.path.join(d, "s.json"), "w") as f:
        json.dump([{"text": "Hello."}] * runs, f)
    p = subprocess.Popen([PY, os.path.join(TOP, "tests/agent/scripted_server.py"), os.path.join(d, "s.json"),
                          os.path.join(d, "log")], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    return p, "http://127.0.0.1:%d/v1" % int(p.stdout.readline()), d


def cli(build, api_base, ws):
    t0 = time.time()
    p = subprocess.Popen([os.path.join(build, "tools/interpreter/interpreter"), "-y", "--json", "--model", "scripted",
                          "--api_base", api_base, "hi"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ws,
                         env=dict(os.environ, OPENAI_API_KEY="sk-x"))
    for line in p.stdout:
        chunk = json.loads(line)
        if chunk.get("role") == "assistant" and "content" in chunk:
            t = time.time() - t0
            break
    p.stdout.read()
    p.wait()
    return t


def python(build, api_base, ws):
    env = dict(os.environ, OISHELL_INTERPRETER=os.path.join(build, "tools/interpreter/interpreter"),
               OISHELL_BIN=os.path.join(build, "tools/oishell"))
    t0 = time.time()
    out = subprocess.run([PY, "-I", "-c", PROGRAM, repr(t0), os.path.join(TOP, "python"), api_base], cwd=ws, env=env,
                         capture_output=True, text=True, check=True).stdout
    return [float(x) for x in out.split()]


def main():
    build = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    proc, api_base, d = server(runs * 6 + 12)
    results = {"cli": [], "python": [], "python.chat": [], "python.warm": [], "python.configured": []}
    try:
        for i in range(runs + 1):
            ws = tempfile.mkdtemp(prefix="first-chunk-ws-")
            try:
                c = cli(build, api_base, ws)
                p, pc, pw, pf = python(build, api_base, ws)
            finally:
                shutil.rmtree(ws, ignore_errors=True)
            if i == 0:
                continue  # warm-up
            for k, v in (("cli", c), ("python", p), ("python.chat", pc), ("python.warm", pw),
                         ("python.configured", pf)):
                results[k].append(v * 1000)
    finally:
        proc.stdin.close()
        proc.wait()
        shutil.rmtree(d, ignore_errors=True)
    print("%-18s %8s %8s  (ms, %d runs)" % ("", "median", "p90", runs))
    for k, v in results.items():
        v.sort()
        print("%-18s %8.1f %8.1f" % (k, statistics.median(v), v[int(0.9 * (len(v) - 1))]))


if __name__ == "__main__":
    main()
