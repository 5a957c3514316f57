"""Settings objects that refuse what they cannot honour: a wrong type is a TypeError or ValueError naming the
setting, a setting Open Interpreter has and this implementation does not is UnsupportedSetting (unless it is set to
the value that changes nothing), and any other name is an AttributeError with the nearest known name."""
import difflib

from oishell.errors import UnsupportedSetting

_UNSET = object()


def _typed(value, name, ok, what, optional):
    if value is None and optional:
        return value
    if not ok(value):
        raise TypeError("%s must be %s%s, not %r" % (name, what, " or None" if optional else "", value))
    return value


def check_bool(value, name, optional=False):
    return _typed(value, name, lambda v: isinstance(v, bool), "True or False", optional)


def check_str(value, name, optional=False):
    return _typed(value, name, lambda v: isinstance(v, str), "a string", optional)


def check_positive_int(value, name, optional=False):
    if value is None and optional:
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be a positive integer%s, not %r" % (name, " or None" if optional else "", value))
    if value <= 0:
        raise ValueError("%s must be positive, not %d" % (name, value))
    return value


def check_number(value, name, optional=False, positive=False):
    if value is None and optional:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("%s must be a number%s, not %r" % (name, " or None" if optional else "", value))
    if value < 0 or (positive and value == 0) or value != value:
        raise ValueError("%s must be %s, not %r" % (name, "positive" if positive else "zero or more", value))
    return value


def check_str_list(value, name, optional=False):
    if value is None and optional:
        return value
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TypeError("%s must be a list of strings, not %r" % (name, value))
    return list(value)


class Settings:
    """Subclasses list `_checks` {name: checker(value, qualified_name)} for supported settings, and `_unsupported`
    {name: (the value that changes nothing, why)} for Open Interpreter's settings this implementation lacks."""
    _prefix = "interpreter"
    _checks = {}
    _unsupported = {}
    _other = ()  # names of methods and properties set through ordinary attributes

    def __setattr__(self, name, value):
        if name.startswith("_") or name in self._other:
            object.__setattr__(self, name, value)
            return
        qualified = "%s.%s" % (self._prefix, name)
        if name in self._checks:
            object.__setattr__(self, name, self._checks[name](value, qualified))
            return
        if name in self._unsupported:
            harmless, why = self._unsupported[name]
            if value == harmless and type(value) is type(harmless):
                return
            raise UnsupportedSetting("%s is not supported by oishell's interpreter: %s" % (qualified, why))
        close = difflib.get_close_matches(name, list(self._checks) + list(self._unsupported), n=1)
        raise AttributeError("%s: no such setting%s" % (qualified, "; did you mean `%s`?" % close[0] if close else ""))

    def __getattr__(self, name):  # only for names not set: Open Interpreter's unsupported ones read as their default
        if name in type(self)._unsupported:
            return type(self)._unsupported[name][0]
        raise AttributeError("%s.%s: no such setting" % (self._prefix, name))
