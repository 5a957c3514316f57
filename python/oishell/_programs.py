"""Where the `interpreter` and `oishell` programs are: $OISHELL_INTERPRETER / $OISHELL_BIN, else on PATH."""
import os
import shutil

from .errors import OishellError


def find(program, variable):
    path = os.environ.get(variable)
    if path:
        if not os.access(path, os.X_OK):
            raise OishellError("$%s is %s, which is not an executable program" % (variable, path))
        return path
    found = shutil.which(program)
    if not found:
        raise OishellError("`%s` is not on PATH (install the %s package, or set $%s to the program)"
                           % (program, program, variable))
    return found
