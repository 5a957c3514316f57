"""The `interpreter` agent as a child process, spoken to over `interpreter --embed` (JSON lines on stdio;
docs/python.md, "The protocol"). Used by the `interpreter` package; one AgentProcess per OpenInterpreter object.

Requests run one at a time in the agent, in order; each has an id and its events come back to its own queue.
"""
import itertools

from . import _process
from ._programs import find
from .errors import ChildDied, OishellError

_READY_TIMEOUT = 60.0


class AgentProcess:
    def __init__(self, extra_args=(), cwd=None, env=None):
        argv = [find("interpreter", "OISHELL_INTERPRETER"), "--embed"] + list(extra_args)
        self._ids = itertools.count(1)
        self._child = _process.JsonLinesChild(argv, self._route, cwd=cwd, env=env, name="interpreter --embed")
        event = _process.first(self._child.general, self._child, _READY_TIMEOUT, "interpreter --embed")
        if event.get("event") != "ready" or event.get("protocol") != 1:
            self._child.kill()
            self._child.close()
            raise OishellError("interpreter --embed speaks another protocol: %r" % (event,))
        self.ready = event

    @staticmethod
    def _route(event):
        return event.get("id")  # None (ready, an error about no request): the general queue

    @property
    def alive(self):
        return self._child.alive

    @property
    def pid(self):
        return self._child.pid

    def request(self, op, **fields):
        """Sends a request; returns (id, queue) for its events (read them with events())."""
        request_id = "r%d" % next(self._ids)
        q = self._child.open_queue(request_id)
        try:
            self._child.send(dict(fields, op=op, id=request_id))
        except ChildDied:
            self._child.close_queue(request_id)
            raise
        return request_id, q

    def events(self, request_id, q):
        """The request's events up to and including its last (`end` or `languages`). ChildDied if the agent dies.
        The queue is let go after the last event only: a loop left early (a generator closed by its consumer) may
        still read the rest."""
        while True:
            try:
                event = _process.get(q, self._child)
            except ChildDied:
                self._child.close_queue(request_id)
                raise
            if event.get("event") in ("end", "languages", "error"):
                self._child.close_queue(request_id)
                yield event
                return
            yield event

    def send(self, **fields):
        self._child.send(fields)

    def close(self):
        self._child.close()

    def kill(self):
        self._child.kill()
