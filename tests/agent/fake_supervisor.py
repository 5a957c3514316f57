#!/usr/bin/env python3
"""A scripted stand-in for `oishell supervise` (docs/protocol.md), for agent tests that need events the real
supervisor only sends in rare situations: a network `ask` or a denial naming any host, reports that come between
blocks or at shutdown. It runs no code.

usage: fake_supervisor.py supervise [ignored arguments...]
The script is the JSON file named by $FAKE_SUPERVISOR_SCRIPT:
  {"blocks": [[EVENT, ...], ...],   the events sent for the n-th `exec`, in order ("$ID" in a string value becomes
                                    that block's id); {"sleep_ms": N} pauses. A list should contain the block's
                                    `done`. Blocks past the list get {"event": "done", "status": "ok", ...}.
   "shutdown": [EVENT, ...]}        sent after the `shutdown` request, before exiting 0.
Every request is appended to $FAKE_SUPERVISOR_LOG (JSON lines) when it is set.
"""
import json
import os
import sys
import time


def send(event, block_id):
    def fill(v):
        if isinstance(v, str):
            return v.replace("$ID", block_id)
        if isinstance(v, list):
            return [fill(x) for x in v]
        if isinstance(v, dict):
            return {k: fill(x) for k, x in v.items()}
        return v
    sys.stdout.write(json.dumps(fill(event)) + "\n")
    sys.stdout.flush()


def play(events, block_id):
    for event in events:
        if "sleep_ms" in event:
            time.sleep(event["sleep_ms"] / 1000.0)
        else:
            send(event, block_id)


def main():
    script = json.load(open(os.environ["FAKE_SUPERVISOR_SCRIPT"]))
    log = os.environ.get("FAKE_SUPERVISOR_LOG")
    send({"event": "ready", "protocol": 1, "languages": ["python", "shell"], "sandbox": "openshell",
          "policy_summary": "- a fake supervisor: nothing runs"}, "")
    blocks = list(script.get("blocks", []))
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        if log:
            with open(log, "a") as f:
                f.write(json.dumps(request) + "\n")
        op = request.get("op")
        if op == "exec":
            events = blocks.pop(0) if blocks else [
                {"event": "done", "id": "$ID", "status": "ok", "exit_code": 0, "duration_ms": 1}]
            play(events, str(request.get("id", "")))
        elif op == "shutdown":
            play(script.get("shutdown", []), "")
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
