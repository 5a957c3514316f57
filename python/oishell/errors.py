"""The exceptions of the oishell package (and of `interpreter`, which uses them)."""


class OishellError(Exception):
    """Something oishell could not do: the sandbox could not be built, a request was refused."""


class ChildDied(OishellError):
    """The `interpreter` or `oishell` process this object drives has exited. `status` is its exit status (negative:
    the signal that killed it; None: unknown), `stderr` the end of what it printed on stderr."""

    def __init__(self, message, status, stderr):
        super().__init__(message)
        self.status = status
        self.stderr = stderr


class UnsupportedSetting(OishellError, AttributeError):
    """A setting Open Interpreter has that this implementation does not: setting it would change nothing, so it is
    refused with its name rather than ignored."""
