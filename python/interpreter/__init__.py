"""Open Interpreter's Python API on oishell: `from interpreter import interpreter`, then `interpreter.chat(...)`, as
with Open Interpreter 0.4.3. The model's code runs in oishell's sandbox (see OpenInterpreter). docs/python.md."""
from oishell.errors import ChildDied, OishellError, UnsupportedSetting

from .core import LANGUAGES, InterpreterError, Language, OpenInterpreter

interpreter = OpenInterpreter()

__all__ = ["interpreter", "OpenInterpreter", "InterpreterError", "UnsupportedSetting", "ChildDied", "OishellError",
           "Language", "LANGUAGES"]
