"""A child process spoken to in JSON lines (one object per line each way), with no hangs.

One thread reads the child's stdout and hands each event to the queue of the request it names (`route`); another
keeps the end of its stderr for error messages. When the child's stdout ends (it exited, crashed or was killed),
every waiting queue is woken with DIED, so no caller waits forever on a dead process: it gets ChildDied, which
carries the exit status and the end of stderr.
"""
import json
import os
import queue
import signal
import subprocess
import threading

from .errors import ChildDied, OishellError

DIED = object()  # put in every queue when the child's stdout ends
DROP = object()  # a route that returns it: the event was handled (or is not wanted)
_STDERR_KEEP = 8192


class JsonLinesChild:
    """`argv` started with pipes for stdin, stdout and stderr in a session of its own (the terminal's Ctrl-C is
    not sent to it: the owner decides what a KeyboardInterrupt stops). `route(event)` returns the key of the queue
    an event goes to (None: the general queue, `self.general`; DROP: none). It runs on the reading thread."""

    def __init__(self, argv, route, cwd=None, env=None, name=None):
        self.name = name or os.path.basename(argv[0])
        self._route = route
        self._queues = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._dead = False
        self._stderr = b""
        self.general = queue.Queue()
        try:
            self._proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env,
                start_new_session=True, close_fds=True)
        except OSError as e:
            raise ChildDied("cannot start %s: %s" % (argv[0], e.strerror or e), None, "") from e
        self._reader = threading.Thread(target=self._read_stdout, name=self.name + "-events", daemon=True)
        self._errors = threading.Thread(target=self._read_stderr, name=self.name + "-stderr", daemon=True)
        self._reader.start()
        self._errors.start()

    @property
    def pid(self):
        return self._proc.pid

    @property
    def alive(self):
        return not self._dead

    def open_queue(self, key):
        q = queue.Queue()
        with self._lock:
            if self._dead:
                q.put(DIED)
            self._queues[key] = q
        return q

    def close_queue(self, key):
        with self._lock:
            self._queues.pop(key, None)

    def send(self, obj):
        line = (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")
        with self._write_lock:
            try:
                self._proc.stdin.write(line)
                self._proc.stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                raise self.death()

    def death(self):
        """The ChildDied that says how the child ended (waits briefly for its status)."""
        self._errors.join(timeout=2)
        try:
            status = self._proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            status = None
        tail = self._stderr.decode("utf-8", "replace").strip()
        if status is None:
            what = "%s stopped answering (pid %d)" % (self.name, self._proc.pid)
        elif status < 0:
            what = "%s was killed by signal %d (%s)" % (self.name, -status, _signal_name(-status))
        else:
            what = "%s exited with status %d" % (self.name, status)
        return ChildDied(what + (": " + tail.splitlines()[-1] if tail else ""), status, tail)

    def _read_stdout(self):
        try:
            for raw in self._proc.stdout:
                try:
                    event = json.loads(raw)
                except ValueError:
                    continue  # the protocol is JSON lines; nothing else is written there
                if not isinstance(event, dict):
                    continue
                key = self._route(event)
                if key is DROP:
                    continue
                with self._lock:
                    q = self._queues.get(key) if key is not None else None
                (q or self.general).put(event)
        except (OSError, ValueError):
            pass
        with self._lock:
            self._dead = True
            queues = list(self._queues.values())
        for q in queues + [self.general]:
            q.put(DIED)

    def _read_stderr(self):
        try:
            for raw in self._proc.stderr:
                self._stderr = (self._stderr + raw)[-_STDERR_KEEP:]
        except (OSError, ValueError):
            pass

    def close(self, timeout=10.0):
        """Ends the child: its stdin closed (it finishes and shuts its sandbox down), then SIGTERM, then SIGKILL."""
        try:
            with self._write_lock:
                self._proc.stdin.close()
        except OSError:
            pass
        for sig, wait in ((None, timeout), (signal.SIGTERM, 3.0), (signal.SIGKILL, 5.0)):
            if sig is not None:
                try:
                    self._proc.send_signal(sig)
                except OSError:
                    pass
            try:
                self._proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        self._reader.join(timeout=2)
        self._errors.join(timeout=2)
        for stream in (self._proc.stdout, self._proc.stderr):
            try:
                stream.close()
            except OSError:
                pass

    def kill(self):
        """SIGKILL, at once (the child's own children end with it: the sandbox dies with its supervisor)."""
        try:
            self._proc.kill()
        except OSError:
            pass


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return "signal %d" % number


def get(q, child):
    """The next item of `q`; ChildDied when the child died instead."""
    item = q.get()
    if item is DIED:
        raise child.death()
    return item


def first(q, child, timeout, what):
    """The first item of `q` (a child's start-up message) within `timeout` seconds. If the child died first, its
    ChildDied; if nothing came, an OishellError after killing it."""
    try:
        item = q.get(timeout=timeout)
    except queue.Empty:
        child.kill()
        child.close()
        raise OishellError("%s did not start within %d s" % (what, timeout))
    if item is DIED:
        child.close()
        raise child.death()
    return item
