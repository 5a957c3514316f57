#!/usr/bin/env python3
"""A scripted stand-in for `oishell supervise` (docs/protocol.md), for agent tests that need events the real
supervisor only sends in rare situations: a network `ask` or a denial naming any host, reports that come between
blocks or at shutdown. It runs no code.

usage: fake_supervisor.py supervise [ignored arguments...]
The script is the JSON file named by $FAKE_SUPERVISOR_SCRIPT:
  {"blocks": [[EVENT, ...], ...],   the events sent for the n-th `exec`, in order ("$ID" in a string value becomes
                                    that block's id); {"sleep_ms": N} pauses; {"die": N} ends this supervisor
                                    with status N (the blocks left are the next one's, which the agent starts:
                                    they are counted in $FAKE_SUPERVISOR_LOG). A list should contain the block's
                                    `done`. Blocks past the list get {"event": "done", "status": "ok", ...}.
   "policy": "changed" | "rejected" | "rejected_after_restart"
                                    how `policy` requests are answered (default changed; the last: changed by the
                                    first supervisor, rejected by a later one).
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
        elif "die" in event:
            os._exit(event["die"])  # at once: no interpreter teardown between the block and the death
        else:
            send(event, block_id)


def earlier_execs(log):
    """How many blocks the supervisors before this one were asked to run (from the shared request log)."""
    if not log or not os.path.exists(log):
        return 0
    with open(log) as f:
        return sum(1 for line in f if json.loads(line).get("op") == "exec")


def main():
    script = json.load(open(os.environ["FAKE_SUPERVISOR_SCRIPT"]))
    log = os.environ.get("FAKE_SUPERVISOR_LOG")
    send({"event": "ready", "protocol": 1, "languages": ["python", "shell"], "sandbox": "openshell",
          "policy_summary": "- a fake supervisor: nothing runs"}, "")
    first = not (log and os.path.exists(log) and os.path.getsize(log) > 0)
    blocks = list(script.get("blocks", []))[earlier_execs(log):]
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
        elif op == "policy":
            answer = script.get("policy", "changed")
            rejected = answer == "rejected" or (answer == "rejected_after_restart" and not first)
            if rejected:
                send({"event": "policy.rejected", "ref": request.get("ref"), "source": "request",
                      "errors": ["network.allow[0]: refused by the fake"], "kept": "the policy in force is unchanged"}, "")
            else:
                send({"event": "policy.changed", "ref": request.get("ref"), "source": "request",
                      "widened": [], "narrowed": ["network: " + json.dumps(request)], "closed_connections": 0,
                      "ended_associations": 0}, "")
        elif op == "shutdown":
            play(script.get("shutdown", []), "")
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
