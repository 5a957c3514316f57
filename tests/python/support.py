"""What the Python API's tests share: the package under test on sys.path, the scripted model server
(tests/agent/scripted_server.py) and a fresh workspace.

The tests run with the system's python (`/usr/bin/python3 -I`, no site packages); CTest passes the paths:
OISHELL_PYTHON_DIR (python/), OISHELL_INTERPRETER and OISHELL_BIN (the built programs), SCRIPTED_SERVER.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.environ["OISHELL_PYTHON_DIR"])


def tool_call(language, code):
    return {"tool_calls": [{"name": "execute", "arguments": json.dumps({"language": language, "code": code})}]}


class ScriptedModel:
    """The scripted OpenAI-compatible server on 127.0.0.1: `script` is its list of answers, `requests()` what the
    agent sent it."""

    def __init__(self, script):
        self.dir = tempfile.mkdtemp(prefix="oishell-pyapi-model-")
        os.chmod(self.dir, 0o755)
        self.script_path = os.path.join(self.dir, "script.json")
        self.log_path = os.path.join(self.dir, "log.jsonl")
        with open(self.script_path, "w") as f:
            json.dump(script, f)
        # Its stderr (a client that hung up mid-answer is a BrokenPipeError there) goes to a file beside the log.
        with open(os.path.join(self.dir, "server.stderr"), "w") as err:
            self.proc = subprocess.Popen([sys.executable, "-I", os.environ["SCRIPTED_SERVER"], self.script_path,
                                          self.log_path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        self.port = int(self.proc.stdout.readline())
        self.api_base = "http://127.0.0.1:%d/v1" % self.port

    def requests(self):
        if not os.path.exists(self.log_path):
            return []
        with open(self.log_path) as f:
            return [json.loads(line)["body"] for line in f]

    def configure(self, interpreter):
        interpreter.llm.model = "scripted"
        interpreter.llm.api_base = self.api_base
        interpreter.llm.api_key = "sk-x"

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
        self.proc.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class Workspace:
    """A fresh directory to be the sandbox's workspace, made the current directory while the test runs."""

    def __enter__(self):
        self.old = os.getcwd()
        self.path = tempfile.mkdtemp(prefix="oishell-pyapi-ws-")
        os.chmod(self.path, 0o755)
        os.chdir(self.path)
        return self.path

    def __exit__(self, *exc):
        os.chdir(self.old)
        shutil.rmtree(self.path, ignore_errors=True)


def children_of(pid):
    """The pids whose parent is `pid` (from /proc), to check nothing is left running."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(entry))
    return out


def alive(pid):
    """Whether the process exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
