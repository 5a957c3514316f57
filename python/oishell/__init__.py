"""oishell from Python: the kernel sandbox on its own (Sandbox, AsyncSandbox) and the errors of this package and of
`interpreter`, Open Interpreter's Python API on oishell (`from interpreter import interpreter`).

Everything runs in oishell's sandbox: new namespaces, Landlock, seccomp, no capabilities, bounded resources, and a
network whose only exit is an allowlisting relay. Standard library only. docs/python.md.
"""
from .errors import ChildDied, OishellError, UnsupportedSetting
from .sandbox import ActiveLine, Block, Image, Output, Result, Sandbox
from .async_sandbox import AsyncSandbox

__all__ = ["Sandbox", "AsyncSandbox", "Block", "Result", "Output", "ActiveLine", "Image", "OishellError",
           "ChildDied", "UnsupportedSetting"]
