"""OpenInterpreter: Open Interpreter 0.4.3's Python API, on oishell.

The model is called and the code is run by oishell's `interpreter` agent, started as a child process
(`interpreter --embed`, one per OpenInterpreter object, on its first use) in the current directory, which is the
sandbox's workspace. Every block of code the model writes, and every `computer.run`, runs inside oishell's
sandbox: new namespaces, Landlock, seccomp, no capabilities, bounded resources, the network only through an
allowlisting relay (the `default` policy unless `policy` says otherwise). Nothing runs on this host unconfined,
which is why `auto_run` is on by default here (Open Interpreter's default is off).
"""
import atexit
import threading
import weakref

from oishell.agent import AgentProcess
from oishell.errors import ChildDied, OishellError, UnsupportedSetting

from . import _display
from ._settings import (Settings, check_bool, check_number, check_positive_int, check_str, check_str_list)


class InterpreterError(OishellError):
    """The agent could not answer: the model's API failed, no model is configured, a bad setting or message."""


class Language:
    """A language the sandbox runs, as Open Interpreter's `computer.languages` lists them (`name`, `aliases`)."""

    def __init__(self, name, aliases, protocol):
        self.name, self.aliases, self.protocol = name, aliases, protocol

    def __repr__(self):
        return "<Language %s>" % self.name

    def __eq__(self, other):
        return isinstance(other, Language) and other.protocol == self.protocol

    def __hash__(self):
        return hash(self.protocol)


LANGUAGES = {l.protocol: l for l in (
    Language("Python", ["py", "python3"], "python"),
    Language("Shell", ["bash", "sh", "zsh"], "shell"),
    Language("JavaScript", ["js", "node", "nodejs"], "javascript"),
    Language("Ruby", ["rb"], "ruby"),
    Language("R", ["rscript"], "r"),
    Language("Java", ["jshell"], "java"),
    Language("HTML", ["htm"], "html"),
)}


def _language_name(language, name):
    if isinstance(language, Language):
        return language.protocol
    if isinstance(language, type) and hasattr(language, "name"):  # Open Interpreter's language classes
        language = language.name
    if isinstance(language, str):
        key = language.lower()
        for l in LANGUAGES.values():
            if key in (l.protocol, l.name.lower()) or key in l.aliases:
                return l.protocol
        raise ValueError("%s: the sandbox has no language `%s` (it has %s)"
                         % (name, language, ", ".join(LANGUAGES)))
    raise TypeError("%s must hold languages (computer.languages' items or names), not %r" % (name, language))


class Llm(Settings):
    """interpreter.llm: which model, at which API. The key stays in the agent's process: never in the sandbox."""
    _prefix = "interpreter.llm"
    _checks = {
        "model": lambda v, n: check_str(v, n),
        "temperature": lambda v, n: check_number(v, n),
        "api_base": lambda v, n: check_str(v, n, optional=True),
        "api_key": lambda v, n: check_str(v, n, optional=True),
        "api_version": lambda v, n: check_str(v, n, optional=True),
        "context_window": lambda v, n: check_positive_int(v, n, optional=True),
        "max_tokens": lambda v, n: check_positive_int(v, n, optional=True),
        "supports_vision": lambda v, n: check_bool(v, n, optional=True),
        "supports_functions": lambda v, n: check_bool(v, n, optional=True),
        "max_budget": lambda v, n: check_number(v, n, optional=True, positive=True),
    }
    _unsupported = {
        "execution_instructions": (False, "the agent tells the model how to run code itself"),
        "shrink_images": (False, "images are sent as the sandbox made them"),
        "completions": (None, "the model is called by the agent's own clients, which cannot be replaced from Python"),
        "vision_renderer": (None, "images are described or sent by the agent"),
        "max_output": (None, "use interpreter.max_output"),
    }

    def __init__(self, on_change=None):
        self._on_change = on_change
        self.model = "gpt-4o"
        self.temperature = 0
        self.api_base = None
        self.api_key = None
        self.api_version = None
        self.context_window = None
        self.max_tokens = None
        self.supports_vision = None
        self.supports_functions = None
        self.max_budget = None

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if not name.startswith("_") and self.__dict__.get("_on_change"):
            callback = self._on_change()
            if callback:
                callback()

    def _settings(self):
        return {"model": self.model, "temperature": self.temperature, "api_base": self.api_base,
                "api_key": self.api_key, "api_version": self.api_version, "context_window": self.context_window,
                "max_tokens": self.max_tokens, "supports_vision": self.supports_vision,
                "supports_functions": self.supports_functions, "max_budget": self.max_budget}


class Computer(Settings):
    """interpreter.computer: the sandbox. `run(language, code)` runs a block in it, in the same persistent
    executors the model's code uses (a variable set here is there for the model's next python block)."""
    _prefix = "interpreter.computer"
    _checks = {}
    _other = ("languages",)
    _unsupported = {name: (None, "oishell's computer runs code in a sandbox; it has no `%s` API" % name) for name in (
        "browser", "mouse", "keyboard", "display", "clipboard", "mail", "sms", "calendar", "contacts", "os",
        "vision", "skills", "docs", "ai", "files", "terminal")}  # (also refused when read: Computer._apis)
    _unsupported.update({
        "import_computer_api": (False, "the sandbox's python has no `computer` module"),
        "import_skills": (False, "skills are not loaded into the sandbox"),
        "emit_images": (True, "images the code shows are always sent"),
        "offline": (False, "use interpreter.offline"),
        "verbose": (False, "use interpreter.verbose"),
        "max_output": (None, "use interpreter.max_output"),
    })

    _apis = ("browser", "mouse", "keyboard", "display", "clipboard", "mail", "sms", "calendar", "contacts", "os",
             "vision", "skills", "docs", "ai", "files", "terminal")

    def __init__(self, interpreter):
        self._interpreter = weakref.proxy(interpreter)
        self._languages = None

    def __getattr__(self, name):
        if name in self._apis:  # Open Interpreter's computer tools: there is nothing to call
            raise UnsupportedSetting("interpreter.computer.%s is not supported by oishell's interpreter: %s"
                                     % (name, self._unsupported[name][1]))
        return super().__getattr__(name)

    @property
    def languages(self):
        """The languages offered to the model: those the sandbox has, or those you set (a list of these items or of
        names). Reading it the first time starts the agent and its sandbox."""
        if self._languages is not None:
            return list(self._languages)
        request_id, q = self._interpreter._agent().request("languages")
        names = []
        for event in self._interpreter._agent().events(request_id, q):
            if event.get("event") == "languages":
                names = event.get("languages", [])
            elif event.get("event") == "end" and event.get("status") == "error":
                raise InterpreterError(event.get("error", "the sandbox could not start"))
        return [LANGUAGES[n] for n in names if n in LANGUAGES]

    @languages.setter
    def languages(self, value):
        if value is None:
            self._languages = None
            return
        if not isinstance(value, (list, tuple)):
            raise TypeError("interpreter.computer.languages must be a list, not %r" % (value,))
        chosen = [LANGUAGES[_language_name(l, "interpreter.computer.languages")] for l in value]
        if not chosen:
            raise ValueError("interpreter.computer.languages must name at least one language")
        self._languages = chosen

    def run(self, language, code, stream=False, display=False):
        """Runs `code` in the sandbox's executor for `language`, as Open Interpreter's computer.run does: a list of
        output messages ({"type": "console", "format": "output", "content": ...}, images as
        {"type": "image", "format": "base64.png", ...}), or with stream=True a generator of the chunks as they come.
        The code runs inside oishell's sandbox, never on this host."""
        chunks = self._stream(language, code, display)
        if stream:
            return chunks
        output = []
        for chunk in chunks:
            if output and output[-1]["type"] == chunk["type"] and output[-1]["format"] == chunk["format"] \
                    and chunk["type"] == "console":
                output[-1]["content"] += chunk["content"]
            else:
                output.append(dict(chunk))
        return output

    def _stream(self, language, code, display):
        if not isinstance(language, str) or not isinstance(code, str):
            raise TypeError("computer.run(language, code): both must be strings")
        agent = self._interpreter._agent()
        request_id, q = agent.request("run", language=language, code=code)
        ended = False
        try:
            for event in agent.events(request_id, q):
                if event.get("event") == "chunk":
                    chunk = event["chunk"]
                    if display:
                        _display.show(chunk)
                    if "content" not in chunk or chunk.get("role") in ("server", "system"):
                        continue
                    if chunk.get("format") == "active_line":
                        continue
                    yield {"role": "computer", "type": chunk["type"], "format": chunk.get("format", "output"),
                           "content": chunk["content"]}
                elif event.get("event") == "end":
                    ended = True
                    if event.get("status") == "error" and event.get("error"):
                        raise InterpreterError(event["error"])
        finally:
            if not ended and agent.alive:
                _stop(agent, request_id, q)

    def terminate(self):
        """Ends the executors that ran code (their state is lost); the next block starts them again."""
        agent = self._interpreter._agent_if_started()
        if agent is None:
            return
        request_id, q = agent.request("reset")
        for event in agent.events(request_id, q):
            if event.get("event") == "end" and event.get("status") == "error":
                raise InterpreterError(event.get("error", "reset failed"))

    def stop(self):
        """Stops what runs now (a block, the model's answer)."""
        agent = self._interpreter._agent_if_started()
        if agent is not None:
            agent.send(op="stop")


def _stop(agent, request_id, q):
    """Stops a request whose events nobody reads any more, and waits for its end (the agent is then free)."""
    try:
        agent.send(op="stop")
        for _ in agent.events(request_id, q):
            pass
    except ChildDied:
        pass


_live = weakref.WeakSet()


@atexit.register
def _close_all():
    for interpreter in list(_live):
        interpreter.close()


class OpenInterpreter(Settings):
    """Open Interpreter's `interpreter` object. Code the model writes runs in oishell's sandbox, never on this
    host; so `auto_run` is on by default (Open Interpreter's default is off). The agent process starts in the
    current directory (or `workspace`), which is the sandbox's workspace, on a thread as soon as the object is
    configured, or at its first use.

    oishell's own settings, fixed once the agent has been used: `sandbox` ("openshell"; "none" runs code on this host
    unconfined), `policy` (a policy file or built-in profile name; default: the `default` profile), `workspace`,
    `max_turns` (model turns per message; 0: no bound)."""
    _checks = {
        "messages": lambda v, n: _check_messages(v, n),
        "auto_run": lambda v, n: check_bool(v, n),
        "offline": lambda v, n: check_bool(v, n),
        "verbose": lambda v, n: check_bool(v, n),
        "debug": lambda v, n: check_bool(v, n),
        "loop": lambda v, n: check_bool(v, n),
        "loop_message": lambda v, n: check_str(v, n, optional=True),
        "loop_breakers": lambda v, n: check_str_list(v, n, optional=True),
        "max_output": lambda v, n: check_positive_int(v, n),
        "max_turns": lambda v, n: check_positive_int(v, n, optional=True),
        "custom_instructions": lambda v, n: check_str(v, n),
        "last_messages_count": lambda v, n: check_positive_int(v, n) if v else 0,
        "disable_telemetry": lambda v, n: check_bool(v, n),
        "in_terminal_interface": lambda v, n: check_bool(v, n),
        "multi_line": lambda v, n: check_bool(v, n),
        "plain_text_display": lambda v, n: check_bool(v, n),
        "highlight_active_line": lambda v, n: check_bool(v, n),
        "sandbox": lambda v, n: _check_fixed(v, n, ("openshell", "none")),
        "policy": lambda v, n: _check_fixed(v, n),
        "workspace": lambda v, n: _check_fixed(v, n),
    }
    _other = ("system_message", "llm", "computer", "responding")
    _unsupported = {
        "os": (False, "computer use (a display, mouse and keyboard) is offered by `interpreter --os` only"),
        "speak_messages": (False, "macOS's `say` is not used"),
        "safe_mode": ("off", "the sandbox confines every block; set auto_run = False to confirm each one"),
        "shrink_images": (False, "images are sent as the sandbox made them"),
        "conversation_history": (False, "conversations are kept in interpreter.messages; save them yourself"),
        "conversation_filename": (None, "conversations are not saved by the Python API"),
        "conversation_history_path": (None, "conversations are not saved by the Python API"),
        "sync_computer": (False, "the sandbox's computer has no API to sync"),
        "import_computer_api": (False, "the sandbox's python has no `computer` module"),
        "import_skills": (False, "skills are not loaded into the sandbox"),
        "skills_path": (None, "skills are not loaded into the sandbox"),
        "force_task_completion": (False, "use interpreter.loop"),
        "user_message_template": ("{content}", "the message is sent as given"),
        "always_apply_user_message_template": (False, "the message is sent as given"),
        "code_output_template": (None, "the agent words the output it gives the model"),
        "empty_code_output_template": (None, "the agent words the output it gives the model"),
        "code_output_sender": ("user", "the agent words the output it gives the model"),
        "contribute_conversation": (False, "conversations are never sent anywhere"),
        "stream_out": (None, "use chat(stream=True)"),
    }

    def __init__(self, messages=None, auto_run=True, offline=False, verbose=False, debug=False, max_output=2800,
                 loop=False, loop_message=None, loop_breakers=None, system_message=None, custom_instructions="",
                 sandbox="openshell", policy=None, workspace=None, max_turns=None, **unsupported):
        self._process = None
        self._start_lock = threading.Lock()
        self._system_message = None
        self._initialised = False
        self._used = False
        self._warming = False
        self.llm = Llm(weakref.WeakMethod(self._warm))
        self.computer = Computer(self)
        self.messages = [] if messages is None else messages
        self.last_messages_count = 0
        self.responding = False
        self.auto_run = auto_run
        self.offline = offline
        self.verbose = verbose
        self.debug = debug
        self.max_output = max_output
        self.loop = loop
        self.loop_message = loop_message
        self.loop_breakers = loop_breakers
        self.custom_instructions = custom_instructions
        self.disable_telemetry = True
        self.in_terminal_interface = False
        self.multi_line = False
        self.plain_text_display = False
        self.highlight_active_line = True
        self.sandbox = sandbox
        self.policy = policy
        self.workspace = workspace
        self.max_turns = max_turns
        if system_message is not None:
            self.system_message = system_message
        for name, value in unsupported.items():
            setattr(self, name, value)
        _live.add(self)
        self._initialised = True

    def __setattr__(self, name, value):
        fixed = name in ("sandbox", "policy", "workspace") and self.__dict__.get(name) != value
        if fixed and self.__dict__.get("_process") is not None:
            if self.__dict__.get("_used"):
                raise OishellError("interpreter.%s is fixed once the agent has started; call interpreter.close() "
                                   "first" % name)
            self.close()  # started ahead of use (warm-up): started again with the new value
        super().__setattr__(name, value)
        if name in self._checks and name not in ("messages", "last_messages_count") or name == "system_message":
            self._warm()

    def _warm(self):
        """The user is configuring this object, so a chat will follow: the agent and its sandbox start now, on a
        thread, and the first answer does not wait for them. A failure to start is raised at the first use."""
        if not self.__dict__.get("_initialised") or self.__dict__.get("_warming"):
            return
        self._warming = True
        threading.Thread(target=self._warm_start, name="interpreter-warm-up", daemon=True).start()

    def _warm_start(self):
        try:
            self._agent(use=False)
        except Exception:
            self._warming = False

    # The agent process.
    def _agent(self, use=True):
        if use:
            self._used = True
        with self._start_lock:
            if self._process is None or not self._process.alive:
                if self._process is not None:
                    self._process.close()
                    self._process = None
                args = ["--sandbox", self.sandbox]
                if self.policy:
                    args += ["--policy", str(self.policy)]
                self._process = AgentProcess(args, cwd=str(self.workspace) if self.workspace else None)
            return self._process

    def _agent_if_started(self):
        return self._process if self._process is not None and self._process.alive else None

    def close(self):
        """Ends the agent process and its sandbox (the next use starts new ones, with fresh executors)."""
        with self._start_lock:
            if self._process is not None:
                self._process.close()
                self._process = None
            self._used = False
            self._warming = False

    @property
    def anonymous_telemetry(self):
        return False  # nothing is ever sent anywhere

    @property
    def system_message(self):
        """The instructions before the conversation (the host facts and the sandbox's policy are always added).
        Reading the default starts the agent, which holds it."""
        if self._system_message is not None:
            return self._system_message
        return self._agent(use=False).ready.get("system_message", "")

    @system_message.setter
    def system_message(self, value):
        self._system_message = check_str(value, "interpreter.system_message", optional=True)

    def _settings(self):
        s = self.llm._settings()
        s.update({"auto_run": self.auto_run, "offline": self.offline, "verbose": self.verbose or self.debug,
                  "loop": self.loop, "loop_message": self.loop_message, "loop_breakers": self.loop_breakers,
                  "max_output": self.max_output, "max_turns": self.max_turns,
                  "system_message": self._system_message, "custom_instructions": self.custom_instructions,
                  "languages": [l.protocol for l in self.computer._languages] if self.computer._languages else None})
        return s

    # Open Interpreter's calls.
    def chat(self, message=None, display=True, stream=False, blocking=True):
        """Sends `message` (a string, a message dict, or a whole list of messages) and answers it: the model's
        messages, its code run in oishell's sandbox, the output fed back, until the model is done.

        display=True prints the exchange (and, with message=None, reads messages from the terminal until EOF);
        stream=True returns a generator of Open Interpreter's LMC chunks as they come ({"role", "type", "format",
        "content"} and start/end flags; after a {"type": "confirmation"} chunk, asking for the next chunk runs the
        block and closing the generator stops). Otherwise returns the new messages. blocking=False runs it on a
        thread (see wait()). Errors of the model's API raise InterpreterError; a dead agent raises ChildDied."""
        if not blocking:
            threading.Thread(target=self.chat, args=(message, display, stream, True), daemon=True).start()
            return None
        if stream:
            return self._streaming_chat(message, display)
        self.responding = True
        try:
            for _ in self._streaming_chat(message, display):
                pass
        finally:
            self.responding = False
        return self.messages[self.last_messages_count:]

    def wait(self):
        """After chat(blocking=False): waits for the answer and returns the new messages."""
        import time
        while self.responding:
            time.sleep(0.05)
        return self.messages[self.last_messages_count:]

    def _streaming_chat(self, message, display):
        if display and message is None:
            yield from _display.interactive(self)
            return
        if message is None:
            if not self.messages:
                raise InterpreterError("chat() needs a message (or messages to answer)")
        elif message == "":
            self.messages.append({"role": "user", "type": "message",
                                  "content": "No entry from user - please suggest something to enter."})
        elif isinstance(message, dict):
            self.messages.append(dict(message, role=message.get("role", "user")))
        elif isinstance(message, str):
            self.messages.append({"role": "user", "type": "message", "content": message})
        elif isinstance(message, list):
            self.messages = message
        else:
            raise TypeError("chat(message): a string, a message dict or a list of messages, not %r" % (message,))
        self.last_messages_count = len(self.messages)
        chunks = self._respond()
        yield from (_display.shown(chunks, self) if display else chunks)

    def _respond(self):
        agent = self._agent()
        request_id, q = agent.request("chat", message=None, messages=self.messages, settings=self._settings())
        ended = False
        try:
            for event in agent.events(request_id, q):
                kind = event.get("event")
                if kind == "chunk":
                    chunk = event["chunk"]
                    if chunk.get("role") == "server":
                        continue  # an error: raised with the end
                    yield chunk
                    if chunk.get("type") == "confirmation":
                        agent.send(op="answer", id=request_id, run=True)  # the consumer asked for more: run it
                elif kind == "end":
                    ended = True
                    if isinstance(event.get("messages"), list):
                        self.messages = event["messages"]
                    status = event.get("status")
                    if status in ("error", "no_model"):
                        raise InterpreterError(event.get("error") or "the agent could not answer (%s)" % status)
                elif kind == "error":
                    ended = True
                    raise InterpreterError(event.get("message", "the agent refused the request"))
        finally:
            if not ended and agent.alive:
                _stop(agent, request_id, q)

    def reset(self):
        """Forgets the conversation and ends the executors that ran code (their state is lost)."""
        self.computer.terminate()
        self.messages = []
        self.last_messages_count = 0

    def display_message(self, markdown):
        print(markdown)


def _check_messages(value, name):
    if not isinstance(value, list):
        raise TypeError("%s must be a list of message dicts, not %r" % (name, type(value).__name__))
    for i, m in enumerate(value):
        if not isinstance(m, dict):
            raise TypeError("%s[%d] must be a dict ({'role', 'type', 'content'}), not %r" % (name, i, m))
        for key in ("role", "type", "format", "content"):
            if key in m and m[key] is not None and not isinstance(m[key], str):
                raise TypeError("%s[%d][%r] must be a string, not %r" % (name, i, key, m[key]))
    return value


def _check_fixed(value, name, choices=None):
    if value is not None and not isinstance(value, str) and not hasattr(value, "__fspath__"):
        raise TypeError("%s must be a string, not %r" % (name, value))
    if choices and value not in choices:
        raise ValueError("%s must be one of %s, not %r" % (name, ", ".join(choices), value))
    return value
