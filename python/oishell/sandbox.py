"""oishell's sandbox on its own, for programs that bring their own model or none: `oishell supervise` driven over
its JSON-lines protocol (docs/protocol.md).

    from oishell import Sandbox

    with Sandbox(profile="default", workspace=".") as sb:
        print(sb.run("python", "x = 6 * 7\\nprint(x)").stdout)      # 42
        for event in sb.stream("shell", "for i in 1 2 3; do echo $i; sleep 1; done"):
            print(event)                                              # Output(stream='stdout', data='1\\n') ...
        sb.write_file("data.txt", b"hello")
        print(sb.read_file("data.txt"), sb.list_files("."))
        print(sb.policy)                                              # what the sandbox allows

Every block runs inside the sandbox the policy compiles to (new namespaces, Landlock, seccomp, no capabilities,
the network only through the allowlisting relay); nothing here runs code on the host. Executors are persistent:
a variable set by one python block is there for the next.
"""
import base64
import itertools
import json
import os
import threading

from . import _process
from ._programs import find
from .errors import ChildDied, OishellError

_READY_TIMEOUT = 120.0  # seconds for the sandbox to come up


class Output:
    """Output a block wrote: `stream` is "stdout" or "stderr"."""
    __slots__ = ("stream", "data")

    def __init__(self, stream, data):
        self.stream, self.data = stream, data

    def __repr__(self):
        return "Output(stream=%r, data=%r)" % (self.stream, self.data)


class ActiveLine:
    """The 1-based line of the block being run."""
    __slots__ = ("line",)

    def __init__(self, line):
        self.line = line

    def __repr__(self):
        return "ActiveLine(%d)" % self.line


class Image:
    """A figure the block showed (python's matplotlib): `format` "png" or "jpeg", `data` base64."""
    __slots__ = ("format", "data")

    def __init__(self, format, data):
        self.format, self.data = format, data

    def __repr__(self):
        return "Image(format=%r, %d base64 characters)" % (self.format, len(self.data))


class Result:
    """How a block ended. `status`: ok, error (an exception, a non-zero shell status), interrupted, killed,
    timeout. `output` is stdout and stderr interleaved as written."""

    def __init__(self):
        self.status = None
        self.exit_code = None
        self.duration_ms = None
        self.reason = None
        self.stdout = ""
        self.stderr = ""
        self.output = ""
        self.images = []

    @property
    def ok(self):
        return self.status == "ok"

    def __repr__(self):
        return "Result(status=%r, exit_code=%r, stdout=%r, stderr=%r)" % (
            self.status, self.exit_code, self.stdout[-200:], self.stderr[-200:])


class Block:
    """A block running in the sandbox. Iterate it for its Output, ActiveLine and Image events as they come; then
    `result` says how it ended. `wait()` collects the rest; `interrupt()` stops it (SIGINT to its process group,
    then a restart of its executor if it does not stop within 2 s)."""

    def __init__(self, sandbox, block_id, language, on_output=None):
        self._sandbox = sandbox
        self.id = block_id
        self.language = language
        self.result = Result()
        self._on_output = on_output
        self._queue = sandbox._child.open_queue(block_id)
        self._done = False

    def __iter__(self):
        while not self._done:
            event = self._next()
            if event is not None:
                yield event

    def _next(self):
        try:
            e = _process.get(self._queue, self._sandbox._child)
        except ChildDied:
            self._done = True
            self._sandbox._child.close_queue(self.id)
            raise
        kind = e.get("event")
        r = self.result
        if kind == "output":
            stream, data = e.get("stream", "stdout"), e.get("data", "")
            if stream == "stderr":
                r.stderr += data
            else:
                r.stdout += data
            r.output += data
            if self._on_output:
                self._on_output(stream, data)
            return Output(stream, data)
        if kind == "active_line":
            return ActiveLine(e.get("line", 0))
        if kind == "image":
            image = Image(e.get("format"), e.get("data", ""))
            r.images.append(image)
            return image
        if kind == "done":
            r.status, r.exit_code = e.get("status"), e.get("exit_code")
            r.duration_ms, r.reason = e.get("duration_ms"), e.get("reason")
        elif kind == "error":  # the request was refused (unknown language, ...)
            r.status, r.reason = "error", e.get("message")
        else:
            return None
        self._done = True
        self._sandbox._child.close_queue(self.id)
        if kind == "error":
            raise OishellError("block %s: %s" % (self.id, r.reason))
        return None

    def wait(self):
        for _ in self:
            pass
        return self.result

    def interrupt(self):
        if not self._done:
            self._sandbox._child.send({"op": "interrupt", "id": self.id})


class Sandbox:
    """One sandbox, its executors persistent for its life. Arguments are `oishell supervise`'s flags:
    `profile` (a built-in policy profile, default "default") or `policy` (a policy file), `workspace` (default: the
    current directory), `allow_domains` (destinations the relay allows), `timeout` (each block's wall time, e.g.
    "30s"), `memory` ("512MiB"), `prestart` (languages started at once), `sandbox` ("openshell", or "none": no
    confinement at all), `extra_args` (other flags of `oishell supervise`). `on_ask(host, port)` answers a network
    destination the policy leaves to the user: "allow_once", "allow_always" or "deny" (the default).

    The sandbox is up when the constructor returns (or raises ChildDied, with the supervisor's reason: an invalid
    policy, a kernel that cannot build it). Use it as a context manager, or call close()."""

    def __init__(self, profile=None, workspace=None, policy=None, allow_domains=(), timeout=None, memory=None,
                 prestart=("python",), sandbox="openshell", extra_args=(), on_ask=None):
        if profile and policy:
            raise ValueError("give a profile or a policy file, not both")
        argv = [find("oishell", "OISHELL_BIN"), "supervise", "--sandbox", sandbox]
        if profile:
            argv += ["--profile", profile]
        if policy:
            argv += ["--policy", os.fspath(policy)]
        argv += ["--workspace", os.path.abspath(os.fspath(workspace or "."))]
        for domain in allow_domains:
            argv += ["--allow-domain", domain]
        if timeout is not None:
            argv += ["--timeout", str(timeout)]
        if memory is not None:
            argv += ["--memory", str(memory)]
        for language in prestart or ():
            argv += ["--prestart", language]
        argv += list(extra_args)
        self._on_ask = on_ask
        self._ids = itertools.count(1)
        self._ready = threading.Event()
        self._ready_event = {}
        self.events = []  # the sandbox's own events (denied, limit, executor_restarted, ...), in order
        self._restarts = threading.Condition()
        self._restart_count = {}
        self._child = _process.JsonLinesChild(argv, self._route, name="oishell supervise")
        ready = self._child.open_queue("_ready")
        try:
            _process.first(ready, self._child, _READY_TIMEOUT, "the sandbox (oishell supervise)")
        finally:
            self._child.close_queue("_ready")
        self._closed = False

    def _route(self, event):
        kind = event.get("event")
        if kind == "ready":
            self._ready_event = event
            return "_ready"
        if "id" in event:
            return str(event["id"])
        if kind == "ask":
            threading.Thread(target=self._answer, args=(event,), daemon=True).start()
        elif kind is not None:
            self.events.append(event)
            del self.events[:-1000]
            if kind in ("executor_restarted", "executor_exited"):
                with self._restarts:
                    language = event.get("language")
                    self._restart_count[language] = self._restart_count.get(language, 0) + 1
                    self._restarts.notify_all()
        return _process.DROP

    def _answer(self, event):
        decision = "deny"
        if self._on_ask:
            try:
                decision = self._on_ask(event.get("host"), event.get("port"))
            except Exception:
                decision = "deny"
        if decision not in ("allow_once", "allow_always", "deny"):
            decision = "deny"
        try:
            self._child.send({"op": "answer", "ask_id": event.get("ask_id"), "decision": decision})
        except ChildDied:
            pass

    # What the sandbox is.
    @property
    def policy(self):
        """The policy's summary: workspace, cwd, network (the rules), limits (the `ready` event's `policy`)."""
        return self._ready_event.get("policy", {})

    @property
    def languages(self):
        return list(self._ready_event.get("languages", []))

    @property
    def degradations(self):
        """What this kernel or machine could not enforce (empty when everything is)."""
        return list(self._ready_event.get("degradations", []))

    @property
    def denials(self):
        return [e for e in self.events if e.get("event") == "denied"]

    # Running code.
    def start(self, language, code, stdin=None, on_output=None):
        """Starts a block and returns its Block at once (iterate it for the output as it comes)."""
        block_id = "b%d" % next(self._ids)
        block = Block(self, block_id, language, on_output)
        request = {"op": "exec", "id": block_id, "language": language, "code": code}
        if stdin is not None:
            request["stdin"] = stdin
        try:
            self._child.send(request)
        except ChildDied:
            self._child.close_queue(block_id)
            raise
        return block

    def stream(self, language, code, stdin=None):
        """The block's Output, ActiveLine and Image events as they come (a generator; closing it early interrupts
        the block)."""
        block = self.start(language, code, stdin)
        try:
            yield from block
        finally:
            if not block._done:
                block.interrupt()
                try:
                    block.wait()
                except ChildDied:
                    pass

    def run(self, language, code, stdin=None, on_output=None):
        """Runs a block to its end and returns its Result; `on_output(stream, data)` sees the output as it comes.
        A KeyboardInterrupt interrupts the block and is raised when it has stopped."""
        block = self.start(language, code, stdin, on_output)
        try:
            return block.wait()
        except KeyboardInterrupt:
            block.interrupt()
            block.wait()
            raise

    def interrupt(self, block):
        """Interrupts a running block (a Block or its id)."""
        self._child.send({"op": "interrupt", "id": block.id if isinstance(block, Block) else str(block)})

    def reset(self, language, timeout=30.0):
        """Restarts that language's executor (its state is lost) and waits until it is back: a block sent before
        the supervisor saw the old one exit would be killed with it."""
        name = self._canonical(language)
        with self._restarts:
            seen = self._restart_count.get(name, 0)
            self._child.send({"op": "reset", "language": language})
            if not self._restarts.wait_for(lambda: self._restart_count.get(name, 0) > seen or not self._child.alive,
                                           timeout):
                raise OishellError("the %s executor did not restart within %d s" % (name, timeout))
        if not self._child.alive:
            raise self._child.death()

    def _canonical(self, language):
        for executor in self._ready_event.get("executors", []):
            if language == executor.get("name") or language in executor.get("aliases", []):
                return executor.get("name")
        return language

    # Files, as the sandbox sees them (paths relative to its working directory, the workspace), read and written by
    # its python executor, so the policy applies exactly as to the code.
    def _file_op(self, source, stdin=None):
        wrapped = "exec(%r, {'__name__': '__oishell_files__'})\n" % source
        result = self.run("python", wrapped, stdin=stdin)
        lines = result.stdout.strip().splitlines()
        try:
            answer = json.loads(lines[-1]) if lines else None
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise OishellError("the sandbox's python executor did not answer (%s): %s"
                               % (result.status, result.stderr.strip()[-500:]))
        if "errno" in answer:
            raise OSError(answer["errno"], answer["strerror"], answer.get("path"))
        return answer

    def read_file(self, path):
        """The file's bytes, read inside the sandbox (an OSError with the errno the sandbox gave otherwise)."""
        source = ("import base64, json, sys\n"
                  "try:\n"
                  "    data = open(%r, 'rb').read()\n"
                  "    print(json.dumps({'data': base64.b64encode(data).decode()}))\n"
                  "except OSError as e:\n"
                  "    print(json.dumps({'errno': e.errno, 'strerror': e.strerror, 'path': %r}))\n") % (path, path)
        return base64.b64decode(self._file_op(source)["data"])

    def write_file(self, path, data):
        """Writes the file (str as UTF-8) inside the sandbox."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        source = ("import base64, json, sys\n"
                  "try:\n"
                  "    with open(%r, 'wb') as f:\n"
                  "        f.write(base64.b64decode(sys.stdin.read()))\n"
                  "    print(json.dumps({'written': True}))\n"
                  "except OSError as e:\n"
                  "    print(json.dumps({'errno': e.errno, 'strerror': e.strerror, 'path': %r}))\n") % (path, path)
        self._file_op(source, stdin=base64.b64encode(data).decode())

    def list_files(self, path="."):
        """The names in a directory inside the sandbox, sorted."""
        source = ("import json, os\n"
                  "try:\n"
                  "    print(json.dumps({'names': sorted(os.listdir(%r))}))\n"
                  "except OSError as e:\n"
                  "    print(json.dumps({'errno': e.errno, 'strerror': e.strerror, 'path': %r}))\n") % (path, path)
        return self._file_op(source)["names"]

    def close(self):
        """Shuts the sandbox down (running blocks are killed); nothing of it outlives this call."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        try:
            self._child.send({"op": "shutdown"})
        except ChildDied:
            pass
        self._child.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
