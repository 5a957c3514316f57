"""oishell from Python: the kernel sandbox on its own (Sandbox, AsyncSandbox) and the errors of this package and of
`interpreter`, Open Interpreter's Python API on oishell (`from interpreter import interpreter`).

Everything runs in oishell's sandbox: new namespaces, Landlock, seccomp, no capabilities, bounded resources, and a
network whose only exit is an allowlisting relay. Standard library only. docs/python.md.
"""
from .errors import ChildDied, OishellError, UnsupportedSetting

__all__ = ["Sandbox", "AsyncSandbox", "Block", "Result", "Output", "ActiveLine", "Image", "OishellError",
           "ChildDied", "UnsupportedSetting"]

_LAZY = {"Sandbox": "sandbox", "Block": "sandbox", "Result": "sandbox", "Output": "sandbox",
         "ActiveLine": "sandbox", "Image": "sandbox", "AsyncSandbox": "async_sandbox"}


def __getattr__(name):
    # Imported when first named, so that `import interpreter` does not pay for asyncio (90 ms of a cold start).
    if name in _LAZY:
        import importlib
        value = getattr(importlib.import_module("." + _LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError("module 'oishell' has no attribute %r" % name)
