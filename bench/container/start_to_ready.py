#!/usr/bin/env python3
"""oishell's part of a session pod's start (issue 19): from the container's first process to `ready`.

    bench/container/start_to_ready.py [--runs N] [--image oishell:latest] [-- PODMAN_RUN_OPTIONS...]

Runs the session image as pod.yaml runs it (podman: the shipped seccomp profile, no capabilities,
no-new-privileges, a read-only root, /proc unmasked, uid 1000), N times. In each run the container's first process
prints the clock, then execs `oishell supervise`; the time its `ready` line arrives here, minus that clock, is
oishell's part (the sandbox built, the executors found). Side by side in the same run: the whole `podman run` to
`ready`, and `podman run` of /bin/true (the runtime's own part), as medians, with oishell's share of the total.
Both clocks are CLOCK_REALTIME of this machine (a container shares the host's clock).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def podman_base(image, extra):
    profile = os.path.join(ROOT, "deploy/kubernetes/seccomp/oishell.json")
    # runc: crun refuses hybrid cgroup hierarchies; explicit ulimits: podman's defaults need CAP_SYS_RESOURCE.
    return ["podman", "--runtime", "runc", "run", "--rm", "-i", "--pull=never",
            "--ulimit", "nofile=1024:20000", "--ulimit", "nproc=4096:4096",
            "--security-opt", "seccomp=" + profile, "--cap-drop=ALL", "--security-opt", "no-new-privileges",
            "--read-only", "--security-opt", "unmask=ALL", "--user", "1000:1000", *extra, image]


def one_session(image, extra):
    started = time.time()
    cmd = podman_base(image, extra) + [
        "sh", "-c", "date +%s.%N >&2; exec oishell supervise --profile default --workspace /workspace"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while True:  # `start` (the sandbox's layers) comes first, then `ready`
        line = proc.stdout.readline()
        arrived = time.time()
        if not line or json.loads(line).get("event") == "ready":
            break
    proc.stdin.close()  # the end of the session: supervise exits
    proc.stdout.read()
    err = proc.stderr.read()
    proc.wait(timeout=60)
    try:
        message = json.loads(line)
    except ValueError:
        sys.exit("no ready line: %r\n%s" % (line, err.decode(errors="replace")))
    if message.get("event") != "ready":
        sys.exit("first line is not ready: %r" % line)
    first = float(err.decode().split("\n", 1)[0])
    return (arrived - first) * 1000, (arrived - started) * 1000


def runtime_only(image, extra):
    started = time.time()
    subprocess.run(podman_base(image, extra) + ["true"], check=True, stdin=subprocess.DEVNULL)
    return (time.time() - started) * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--image", default="localhost/oishell:latest")
    parser.add_argument("extra", nargs="*", help="more podman run options (after --)")
    args = parser.parse_args()
    one_session(args.image, args.extra)  # warm: image layers, page cache
    oishell, total, bare = [], [], []
    for _ in range(args.runs):
        o, t = one_session(args.image, args.extra)
        oishell.append(o)
        total.append(t)
        bare.append(runtime_only(args.image, args.extra))
    med = statistics.median
    print("runs: %d (podman %s, runc)" % (args.runs, subprocess.run(
        ["podman", "--version"], capture_output=True, text=True).stdout.split()[-1]))
    print("container start -> ready (oishell's part): median %.1f ms, min %.1f, max %.1f" %
          (med(oishell), min(oishell), max(oishell)))
    print("podman run -> ready: median %.0f ms; podman run true: median %.0f ms" % (med(total), med(bare)))
    print("oishell's share of a session's start: %.2f" % (med(oishell) / med(total)))


if __name__ == "__main__":
    main()
