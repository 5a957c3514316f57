#!/usr/bin/env python3
"""What the connect broker adds to connect(2): a loop of plain socket()+connect()+close() to an accepting server on
the host's 127.0.0.1, run directly on the host and inside `oishell run` (brokered: the supervisor's socket
installed, `inspect: false`; joined: the caller's socket joined to the relay's inspecting path; loopback: a server
inside the sandbox, the caller's own socket connected by the supervisor). A unix socket server of the client's own
(a pathname in /tmp) gives the same pair for a connect that stays on the host or inside: what the broker costs
when it only connects the caller's own socket. Rounds alternate the paths so that the
machine's load falls on each alike; prints the median and p90 per path and the added p50 (the issue's target:
brokered at most +0.1 ms).

    bench/relay/connect.py [-o OISHELL_BINARY] [-n ROUNDS] [-c CONNECTS_PER_ROUND]
"""
import argparse, os, socket, statistics, subprocess, sys, tempfile, threading

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
parser = argparse.ArgumentParser()
parser.add_argument("-o", default=os.path.join(top, "build", "tools", "oishell"))
parser.add_argument("-n", type=int, default=5)
parser.add_argument("-c", type=int, default=1000)
args = parser.parse_args()
oishell = os.path.realpath(args.o)
if not os.access(oishell, os.X_OK):
    sys.exit(f"bench/relay/connect.py: {oishell} not found (build first, or pass -o)")
python = "/usr/bin/python3"  # Debian's: visible inside the sandbox

# The client: connects COUNT times to HOST:PORT, or to a unix socket server of its own (HOST `unix`), and prints
# each connect's time in microseconds.
CLIENT = r"""
import os, socket, sys, tempfile, threading, time
host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
family = socket.AF_UNIX if host == "unix" else socket.AF_INET
if family == socket.AF_UNIX:
    address = os.path.join(tempfile.mkdtemp(), "server.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(address)
    server.listen(1024)
    def accept():
        while True:
            conn, _ = server.accept()
            conn.close()
    threading.Thread(target=accept, daemon=True).start()
else:
    address = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)[0][4]
times = []
for _ in range(count):
    s = socket.socket(family)
    start = time.perf_counter_ns()
    s.connect(address)
    times.append((time.perf_counter_ns() - start) / 1000)
    s.close()
print(" ".join(f"{t:.1f}" for t in times))
"""

server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(1024)
port = server.getsockname()[1]


def accept():
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        conn.close()


threading.Thread(target=accept, daemon=True).start()

with tempfile.TemporaryDirectory() as tmp:
    client = os.path.join(tmp, "client.py")
    with open(client, "w") as f:
        f.write(CLIENT)
    policy = os.path.join(tmp, "policy.yaml")
    with open(policy, "w") as f:
        f.write(f"""version: 1
extends: default
network:
  mode: proxy
  allow: [{{host: direct.example, inspect: false}}, joined.example]
  hosts: {{direct.example: 127.0.0.1, joined.example: 127.0.0.1}}
  allow_private: [127.0.0.0/8]
  on_unlisted: deny
""")
    sandboxed = [oishell, "run", "--policy", policy, "--workspace", tmp, "--"]
    paths = {
        "direct": [python, client, "127.0.0.1", str(port), str(args.c)],
        "brokered": sandboxed + [python, client, "direct.example", str(port), str(args.c)],
        "joined": sandboxed + [python, client, "joined.example", str(port), str(args.c)],
        "unix direct": [python, client, "unix", "0", str(args.c)],
        "unix inside": sandboxed + [python, client, "unix", "0", str(args.c)],
    }
    times = {name: [] for name in paths}
    for r in range(args.n):
        order = list(paths) if r % 2 == 0 else list(reversed(paths))
        for name in order:
            run = subprocess.run(paths[name], cwd=tmp, capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"bench/relay/connect.py: {name}: exit {run.returncode}: {run.stderr.strip()}")
            times[name] += [float(t) for t in run.stdout.split()]
server.close()

print(f"{args.n} rounds x {args.c} connects per path; kernel {os.uname().release}, {os.cpu_count()} cpus, "
      f"load {os.getloadavg()[0]:.2f}")
direct = statistics.median(times["direct"])
for name, values in times.items():
    values.sort()
    p50 = statistics.median(values)
    p90 = values[int(len(values) * 0.9)]
    base = statistics.median(times["unix direct"]) if name == "unix inside" else direct
    added = "" if name.endswith("direct") else f"  added p50 {p50 - base:+7.1f} us"
    print(f"{name:16s} p50 {p50:7.1f} us  p90 {p90:7.1f} us{added}")
