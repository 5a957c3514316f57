"""oishell.Sandbox and AsyncSandbox (python/oishell) against the real `oishell supervise`: output streamed, state
kept, files, interrupt, the policy's summary, denials next to their allowed neighbours, and errors that are
exceptions, never hangs."""
import asyncio
import errno
import os
import signal
import time
import unittest

from support import Workspace, alive, children_of

from oishell import ActiveLine, AsyncSandbox, ChildDied, OishellError, Output, Sandbox


class SandboxCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.workspace = Workspace()
        cls.path = cls.workspace.__enter__()
        with open(os.path.join(cls.path, "from-host.txt"), "w") as f:
            f.write("written on the host\n")
        cls.asked = []

        def on_ask(host, port):
            cls.asked.append((host, port))
            return "deny"

        cls.sb = Sandbox(profile="default", workspace=cls.path, on_ask=on_ask)

    @classmethod
    def tearDownClass(cls):
        cls.sb.close()
        cls.workspace.__exit__()

    def test_run_keeps_state_and_separates_streams(self):
        r = self.sb.run("python", "x = 6 * 7\nprint(x)")
        self.assertEqual((r.status, r.exit_code, r.stdout), ("ok", 0, "42\n"))
        r = self.sb.run("python", "import sys\nprint(x + 1)\nprint('oops', file=sys.stderr)")
        self.assertEqual((r.stdout, r.stderr), ("43\n", "oops\n"))
        r = self.sb.run("python", "raise ValueError('bad')")
        self.assertEqual((r.status, r.exit_code), ("error", 1))
        self.assertIn("ValueError: bad", r.stderr)
        r = self.sb.run("shell", "read line; echo got $line", stdin="hello\n")
        self.assertEqual(r.stdout, "got hello\n")
        self.sb.reset("py")  # the state is gone, and the next block runs in the new executor
        r = self.sb.run("python", "print('x' in globals())")
        self.assertEqual((r.status, r.stdout), ("ok", "False\n"))

    def test_stream_comes_as_it_is_written(self):
        code = "import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.3)\n"
        arrivals, events = [], []
        start = time.monotonic()
        for event in self.sb.stream("python", code):
            events.append(event)
            if isinstance(event, Output):
                arrivals.append(time.monotonic() - start)
        self.assertEqual("".join(e.data for e in events if isinstance(e, Output)), "0\n1\n2\n")
        self.assertTrue(any(isinstance(e, ActiveLine) for e in events))
        self.assertGreater(arrivals[-1] - arrivals[0], 0.4)  # not all at the end

    def test_files_in_the_sandbox(self):
        self.assertEqual(self.sb.read_file("from-host.txt"), b"written on the host\n")
        self.sb.write_file("from-python.bin", bytes(range(256)))
        with open(os.path.join(self.path, "from-python.bin"), "rb") as f:
            self.assertEqual(f.read(), bytes(range(256)))
        self.assertIn("from-python.bin", self.sb.list_files("."))
        # The policy applies to the file calls as to code: the workspace is writable, /usr is not, and a path the
        # default policy leaves out does not exist inside (without the sandbox: the host's file, or EACCES).
        with self.assertRaises(OSError) as denied:
            self.sb.write_file("/usr/oishell-pyapi-test", b"x")
        self.assertIn(denied.exception.errno, (errno.EROFS, errno.EACCES, errno.EPERM))
        with self.assertRaises(FileNotFoundError):
            self.sb.read_file("/root/.bash_history")
        self.assertEqual(self.sb.read_file("/usr/bin/env")[:4], b"\x7fELF")

    def test_interrupt_a_long_block(self):
        block = self.sb.start("python", "import time\nprint('started', flush=True)\ntime.sleep(120)")
        for event in block:
            if isinstance(event, Output):
                break
        start = time.monotonic()
        block.interrupt()
        result = block.wait()
        self.assertEqual(result.status, "interrupted")
        self.assertLess(time.monotonic() - start, 5)
        self.assertEqual(self.sb.run("python", "print('after')").stdout, "after\n")  # the executor goes on

    def test_policy_summary_and_network_denial(self):
        self.assertIn("python", self.sb.languages)
        policy = self.sb.policy
        self.assertEqual(policy.get("workspace"), self.path)
        self.assertIn("network", policy)
        # The default policy asks about destinations it does not list; nobody here allows one, so a request through
        # the relay is answered 403 and the sandbox reports the denial (without the sandbox: a connection to
        # example.com). Its neighbour, a connection to a server on the sandbox's own loopback, works.
        r = self.sb.run("python", "import urllib.request\ntry:\n"
                                  "    urllib.request.urlopen('http://example.com/', timeout=10)\n"
                                  "except Exception as e:\n    print(type(e).__name__, getattr(e, 'code', e))\n")
        self.assertEqual(r.stdout, "HTTPError 403\n")
        self.assertEqual(self.asked[-1], ("example.com", 80))  # on_ask was asked
        deadline = time.monotonic() + 5
        while not any(e.get("event") == "net.denied" and e.get("host") == "example.com" for e in self.sb.events):
            self.assertLess(time.monotonic(), deadline, self.sb.events)
            time.sleep(0.05)
        # Listening is not granted by the default policy either (Landlock's TCP bind: EACCES; without the sandbox
        # it would listen); a socketpair, which reaches nothing outside, works.
        r = self.sb.run("python", "import socket\ntry:\n    socket.create_server(('127.0.0.1', 0))\n"
                                  "except OSError as e:\n    print('bind', e.errno)\n"
                                  "a, b = socket.socketpair()\na.sendall(b'ping')\nprint(b.recv(4).decode())\n")
        self.assertEqual(r.stdout, "bind %d\nping\n" % errno.EACCES)
        self.assertEqual(self.sb.run("python", "print(open('from-host.txt').read(), end='')").stdout,
                         "written on the host\n")


class SandboxErrors(unittest.TestCase):
    def test_invalid_policy_is_an_exception(self):
        with Workspace() as path:
            start = time.monotonic()
            with self.assertRaises(ChildDied) as raised:
                Sandbox(profile="no-such-profile", workspace=path)
            self.assertEqual(raised.exception.status, 125)
            self.assertIn("no-such-profile", str(raised.exception))
            self.assertLess(time.monotonic() - start, 30)

    def test_unknown_language_is_an_exception(self):
        with Workspace() as path, Sandbox(workspace=path) as sb:
            with self.assertRaisesRegex(OishellError, "cobol"):
                sb.run("cobol", "DISPLAY 'x'.")
            self.assertEqual(sb.run("python", "print(1)").stdout, "1\n")

    def test_dead_supervisor_is_an_exception(self):
        with Workspace() as path:
            sb = Sandbox(workspace=path)
            try:
                block = sb.start("python", "import time\ntime.sleep(60)")
                inside = children_of(sb._child.pid)
                os.kill(sb._child.pid, signal.SIGKILL)
                start = time.monotonic()
                with self.assertRaisesRegex(ChildDied, "killed by signal 9"):
                    block.wait()
                self.assertLess(time.monotonic() - start, 10)
                with self.assertRaises(ChildDied):
                    sb.run("python", "print(1)")
                deadline = time.monotonic() + 10
                while any(map(alive, inside)) and time.monotonic() < deadline:
                    time.sleep(0.1)
                self.assertEqual([p for p in inside if alive(p)], [])  # the sandbox died with its supervisor
            finally:
                sb.close()


class AsyncSandboxTest(unittest.TestCase):
    def test_async_run_and_stream(self):
        async def main(path):
            async with AsyncSandbox(workspace=path) as sb:
                r = await sb.run("python", "y = 5\nprint(y * 2)")
                self.assertEqual(r.stdout, "10\n")
                seen = [e.data async for e in sb.stream("shell", "echo one; echo two") if isinstance(e, Output)]
                self.assertEqual("".join(seen), "one\ntwo\n")
                # Two blocks of two languages at once.
                a, b = await asyncio.gather(sb.run("python", "import time\ntime.sleep(0.5)\nprint(y)"),
                                            sb.run("shell", "sleep 0.5; echo sh"))
                self.assertEqual((a.stdout, b.stdout), ("5\n", "sh\n"))
                await sb.write_file("async.txt", "text")
                self.assertEqual(await sb.read_file("async.txt"), b"text")

        with Workspace() as path:
            asyncio.run(main(path))


if __name__ == "__main__":
    unittest.main()
