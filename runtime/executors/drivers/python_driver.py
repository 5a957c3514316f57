# oishell python executor driver: one persistent namespace, blocks read from the control channel.
#
# Started by the supervisor as `python3 -u python_driver.py` with the control socket at fd 3 (docs/protocol.md,
# "Executor control channel"). The driver moves the socket to a high close-on-exec fd, so user code and the
# programs it starts never see it; stdout and stderr are the block's own, so nothing user code prints can end a
# block. Imports are kept to built-in modules: start-up time is part of every new session.
import _ast
import _thread
import builtins
import fcntl
import os
import signal
import sys
import time

CTL = fcntl.fcntl(3, fcntl.F_DUPFD_CLOEXEC, 100)
os.close(3)

_sources = {}      # filename -> source, for tracebacks (linecache is imported lazily: it costs 12 ms)
_state = {"seq": "", "line": 0, "sent": 0.0, "in_user": False}
LINE_INTERVAL = 0.005  # seconds between two active_line reports while lines change quickly
MAX_IMAGE_BYTES = 12 << 20  # the largest image the supervisor takes (kMaxImageBytes, runtime/executors/protocol.h)


def _new_send_lock():
    """Threads a block starts report lines too: their lines must not interleave with an image line."""
    global _send_lock
    _send_lock = _thread.allocate_lock()


_new_send_lock()
os.register_at_fork(after_in_child=_new_send_lock)  # a fork by another thread must not leave it held


def send(line):
    data = line.encode("utf-8", "replace")
    with _send_lock:
        while data:
            try:
                n = os.write(CTL, data)
            except InterruptedError:
                continue
            data = data[n:]


def on_line(n):
    if n != _state["line"]:
        _state["line"] = n
        now = time.monotonic()
        if now - _state["sent"] >= LINE_INTERVAL:
            _state["sent"] = now
            send("L %s %d\n" % (_state["seq"], n))


def display(value):
    sys.displayhook(value)


def send_image(png):
    """Shows a PNG (bytes) to the user and the model, as a figure is shown (the computer's screenshots)."""
    if len(png) > MAX_IMAGE_BYTES:
        sys.stderr.write("oishell: image not shown: its PNG is %.1f MiB, more than %d MiB\n"
                         % (len(png) / 2**20, MAX_IMAGE_BYTES >> 20))
        return
    import base64
    send("I %s png %s\n" % (_state["seq"], base64.b64encode(png).decode("ascii")))


def _load_driver_module(name):
    """A module shipped beside this driver (oishell_computer, oishell_harness), loaded once, on first use."""
    if name not in sys.modules:
        import importlib.util
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def run_tool(function, arguments):
    """A harness profile's file tool (agent/config/harness.h): `__oishell_tool__("claude_code.edit", {...})`."""
    _load_driver_module("oishell_harness").call(function, arguments)


builtins.__oishell_line__ = on_line
builtins.__oishell_display__ = display
builtins.__oishell_image__ = send_image
builtins.__oishell_tool__ = run_tool


def _load_computer(namespace):
    """Under `interpreter --os` (a virtual display in the sandbox): Open Interpreter's `computer`, already imported."""
    if not os.environ.get("OISHELL_COMPUTER") or not os.environ.get("DISPLAY"):
        return
    namespace["computer"] = _load_driver_module("oishell_computer").computer


def _hook_stmt(lineno, col):
    call = _ast.Call(func=_ast.Name(id="__oishell_line__", ctx=_ast.Load()),
                     args=[_ast.Constant(value=lineno)], keywords=[])
    stmt = _ast.Expr(value=call)
    for node in (stmt, call, call.func, call.args[0]):
        node.lineno = node.end_lineno = lineno
        node.col_offset = node.end_col_offset = col
    return stmt


def _is_docstring(stmt):
    return (isinstance(stmt, _ast.Expr) and isinstance(stmt.value, _ast.Constant)
            and isinstance(stmt.value.value, str))


def _instrument(body, top):
    """Inserts an active-line call before every statement of `body` (and of nested bodies)."""
    out = []
    for i, stmt in enumerate(body):
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], _ast.stmt):
                setattr(stmt, field, _instrument(inner, False))
        for handler in getattr(stmt, "handlers", ()) or ():
            handler.body = _instrument(handler.body, False)
        for case in getattr(stmt, "cases", ()) or ():
            case.body = _instrument(case.body, False)
        # A docstring must stay first; `from __future__` imports must stay before any other statement.
        keep_first = (i == 0 and _is_docstring(stmt)) or (
            top and isinstance(stmt, _ast.ImportFrom) and stmt.module == "__future__")
        if not keep_first:
            out.append(_hook_stmt(stmt.lineno, stmt.col_offset))
        out.append(stmt)
    return out


def _compile_block(source, filename):
    flags = _ast.PyCF_ONLY_AST | getattr(_ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
    tree = compile(source, filename, "exec", flags, dont_inherit=True)
    if tree.body and isinstance(tree.body[-1], _ast.Expr):
        last = tree.body[-1]
        call = _ast.Call(func=_ast.Name(id="__oishell_display__", ctx=_ast.Load()), args=[last.value], keywords=[])
        call.lineno, call.col_offset = last.lineno, last.col_offset
        call.end_lineno, call.end_col_offset = last.end_lineno, last.end_col_offset
        call.func.lineno, call.func.col_offset = last.lineno, last.col_offset
        call.func.end_lineno, call.func.end_col_offset = last.lineno, last.col_offset
        last.value = call
    tree.body = _instrument(tree.body, True)
    return compile(tree, filename, "exec", getattr(_ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0), dont_inherit=True)


def _register_sources():
    import linecache
    for name, text in _sources.items():
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)


def _without_driver_frames(te, seen):
    """Leaves only the user's frames in a TracebackException and the ones chained to it: the driver's own (the
    block's eval, the SIGINT handler that raised KeyboardInterrupt, display()) name a host path and mean nothing
    to the user, as Open Interpreter shows only the cell's lines."""
    import traceback
    if te is None or id(te) in seen:
        return
    seen.add(id(te))
    te.stack = traceback.StackSummary.from_list([f for f in te.stack if f.filename != __file__])
    _without_driver_frames(te.__cause__, seen)
    _without_driver_frames(te.__context__, seen)
    for group_member in getattr(te, "exceptions", None) or []:
        _without_driver_frames(group_member, seen)


def _print_exception(exc):
    import traceback
    _register_sources()
    te = traceback.TracebackException(type(exc), exc, exc.__traceback__)
    _without_driver_frames(te, set())
    sys.stderr.write("".join(te.format()))
    sys.stderr.flush()


def _emit_figures():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    try:
        import base64
        import io
        for num in plt.get_fignums():
            buf = io.BytesIO()
            plt.figure(num).savefig(buf, format="png", bbox_inches="tight")
            if buf.tell() > MAX_IMAGE_BYTES:  # the supervisor would drop the line (docs/protocol.md): say so here
                sys.stderr.write("oishell: figure %d not shown: its PNG is %.1f MiB, more than %d MiB\n"
                                 % (num, buf.tell() / 2**20, MAX_IMAGE_BYTES >> 20))
                continue
            send("I %s png %s\n" % (_state["seq"], base64.b64encode(buf.getvalue()).decode("ascii")))
        plt.close("all")
    except Exception as exc:  # a figure that cannot be drawn is the user's error, shown like one
        _print_exception(exc)


def _patch_pyplot():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None and getattr(plt.show, "__name__", "") != "_oishell_show":
        def _oishell_show(*args, **kwargs):
            _emit_figures()
        plt.show = _oishell_show


def _kill_block_processes():
    """After an interrupt: the block's background processes share our process group; end them, keep ourselves."""
    me = os.getpid()
    pgid = os.getpgid(0)
    try:
        names = os.listdir("/proc")
    except OSError:
        return
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            if int(fields[2]) == pgid:
                os.kill(int(name), signal.SIGKILL)
        except (OSError, IndexError, ValueError):
            pass


def _on_sigint(signum, frame):
    if _state["in_user"]:
        raise KeyboardInterrupt
    # between blocks: nothing to interrupt


def _set_stdin(data):
    """The block's stdin: EOF, or exactly `data` then EOF. Returns the saved fd 0 to restore."""
    saved = os.dup(0)
    if data is None:
        return saved
    r, w = os.pipe()
    if len(data) <= 60000:
        os.write(w, data)
        os.close(w)
    else:
        import threading

        def feed():
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(w, view):]
            except OSError:
                pass
            finally:
                os.close(w)
        threading.Thread(target=feed, daemon=True).start()
    os.dup2(r, 0)
    os.close(r)
    return saved


def run_block(seq, source, stdin_data, namespace):
    filename = "<block %s>" % seq
    _sources[filename] = source
    if "linecache" in sys.modules:
        _register_sources()
    _state.update(seq=seq, line=0, sent=0.0)
    status, code = "ok", 0
    saved_stdin = _set_stdin(stdin_data)
    try:
        try:
            compiled = _compile_block(source, filename)
        except (SyntaxError, ValueError, OverflowError) as exc:
            _print_exception(exc)
            return "error", 1
        if signal.getsignal(signal.SIGINT) is not _on_sigint:
            signal.signal(signal.SIGINT, _on_sigint)
        try:
            _state["in_user"] = True
            result = eval(compiled, namespace)
            if result is not None and compiled.co_flags & 0x80:  # CO_COROUTINE: a block with top-level await
                import asyncio
                asyncio.get_event_loop_policy().get_event_loop().run_until_complete(result)
            _state["in_user"] = False
        except KeyboardInterrupt as exc:
            _state["in_user"] = False
            _print_exception(exc)
            status, code = "interrupted", 130
            _kill_block_processes()
        except SystemExit as exc:
            _state["in_user"] = False
            value = exc.code
            if value is None or value == 0:
                status, code = "ok", 0
            else:
                # The supervisor takes a 32-bit code (docs/protocol.md); sys.exit(2**40) is reported as 1.
                in_range = isinstance(value, int) and -2**31 <= value < 2**31
                status, code = "error", int(value) if in_range else 1
                if not isinstance(value, int):
                    sys.stderr.write("%s\n" % (value,))
        except BaseException as exc:
            _state["in_user"] = False
            _print_exception(exc)
            status, code = "error", 1
        finally:
            _state["in_user"] = False
        _patch_pyplot()
        _emit_figures()
        return status, code
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os.dup2(saved_stdin, 0)
        os.close(saved_stdin)


def read_exact(buf, n):
    while len(buf) < n:
        try:
            chunk = os.read(CTL, max(65536, n - len(buf)))
        except InterruptedError:
            continue
        except KeyboardInterrupt:
            continue
        if not chunk:
            sys.exit(0)
        buf += chunk
    return buf


def main():
    import types
    module = types.ModuleType("__main__")
    module.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = module
    namespace = module.__dict__
    signal.signal(signal.SIGINT, _on_sigint)
    os.environ.setdefault("MPLBACKEND", "Agg")
    _load_computer(namespace)
    send("R\n")
    buf = b""
    while True:
        # Request: "X <seq> <code bytes> <stdin bytes or -1>\n", the code, NUL, and (when given) stdin data, NUL.
        while b"\n" not in buf:
            buf = read_exact(buf, len(buf) + 1)
        header, buf = buf.split(b"\n", 1)
        parts = header.decode("ascii", "replace").split()
        if len(parts) != 4 or parts[0] != "X":
            sys.stderr.write("oishell python driver: bad request %r\n" % header[:80])
            continue
        seq, code_len, stdin_len = parts[1], int(parts[2]), int(parts[3])
        total = code_len + 1 + (stdin_len + 1 if stdin_len >= 0 else 0)
        buf = read_exact(buf, total)
        source = buf[:code_len].decode("utf-8", "replace")
        stdin_data = buf[code_len + 1:total - 1] if stdin_len >= 0 else None
        buf = buf[total:]
        status, code = run_block(seq, source, stdin_data, namespace)
        send("D %s %s %d\n" % (seq, status, code))


main()
