# The file tools of the harness profiles (agent/config/harness.h), run by the python executor inside the sandbox:
# Claude Code's Read, Write, Edit, MultiEdit, Glob, Grep, LS, TodoWrite; SWE-agent's str_replace_editor and submit;
# Codex's apply_patch and update_plan. The agent calls `__oishell_tool__("claude_code.edit", {...})` (the python
# driver loads this module on first use); the arguments arrive as data. Each tool prints what the model is told
# (the harness's own wording where it has one) and raises ToolError, printed as an error, when the call cannot be
# carried out. Shell tools (Bash, bash, shell) run in the shell executor, not here.
import fnmatch
import os
import re
import subprocess


class ToolError(Exception):
    pass


def _read_text(path):
    try:
        with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
            return f.read()
    except FileNotFoundError:
        raise ToolError("File does not exist: %s" % path)
    except IsADirectoryError:
        raise ToolError("%s is a directory, not a file" % path)


def _write_text(path, text):
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write(text)


def _numbered(lines, first):
    return "\n".join("%6d\t%s" % (first + i, line[:2000]) for i, line in enumerate(lines))


def _replace(text, old, new, replace_all, path):
    if old == new:
        raise ToolError("old_string and new_string are the same: nothing to change")
    count = text.count(old) if old else 0
    if count == 0:
        raise ToolError("String to replace not found in %s." % path)
    if count > 1 and not replace_all:
        raise ToolError("Found %d matches of the string to replace in %s, but replace_all is false. Give more "
                        "context to make it unique, or set replace_all." % (count, path))
    return text.replace(old, new) if replace_all else text.replace(old, new, 1)


class claude_code:
    todos = []

    @staticmethod
    def read(a):
        path = a["file_path"]
        lines = _read_text(path).splitlines()
        first = max(1, int(a.get("offset") or 1))
        limit = int(a.get("limit") or 2000)
        if not lines:
            print("(the file is empty)")
            return
        print(_numbered(lines[first - 1:first - 1 + limit], first))

    @staticmethod
    def write(a):
        existed = os.path.exists(a["file_path"])
        _write_text(a["file_path"], a["content"])
        print("The file %s has been %s." % (a["file_path"], "updated" if existed else "created"))

    @staticmethod
    def edit(a):
        path = a["file_path"]
        text = _replace(_read_text(path), a["old_string"], a["new_string"], a.get("replace_all", False), path)
        _write_text(path, text)
        print("The file %s has been updated." % path)

    @staticmethod
    def multi_edit(a):
        path = a["file_path"]
        text = _read_text(path) if os.path.exists(path) else ""
        for i, e in enumerate(a["edits"]):
            try:
                text = _replace(text, e["old_string"], e["new_string"], e.get("replace_all", False), path)
            except ToolError as err:
                raise ToolError("edit %d of %d: %s (no edit was applied)" % (i + 1, len(a["edits"]), err))
        _write_text(path, text)
        print("Applied %d edits to %s." % (len(a["edits"]), path))

    @staticmethod
    def glob(a):
        import glob as g
        root = a.get("path") or "."
        found = [p for p in g.glob(os.path.join(root, a["pattern"]), recursive=True) if os.path.isfile(p)]
        found.sort(key=lambda p: -os.path.getmtime(p))
        print("\n".join(found) if found else "No files found")

    @staticmethod
    def _files(root, pattern):
        if os.path.isfile(root):
            yield root
            return
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if x not in (".git", "node_modules", "__pycache__")]
            for name in sorted(files):
                if pattern and not fnmatch.fnmatch(name, pattern):
                    continue
                yield os.path.join(d, name)

    @staticmethod
    def grep(a):
        flags = re.IGNORECASE if a.get("-i") else 0
        try:
            rx = re.compile(a["pattern"], flags)
        except re.error as e:
            raise ToolError("invalid regular expression: %s" % e)
        mode = a.get("output_mode", "files_with_matches")
        limit = int(a.get("head_limit") or 0)
        out = []
        for path in claude_code._files(a.get("path") or ".", a.get("glob")):
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = f.read().splitlines()
            except OSError:
                continue
            hits = [(i + 1, line) for i, line in enumerate(lines) if rx.search(line)]
            if not hits:
                continue
            if mode == "content":
                out += ["%s:%s%s" % (path, "%d:" % n if a.get("-n") else "", line) for n, line in hits]
            elif mode == "count":
                out.append("%s:%d" % (path, len(hits)))
            else:
                out.append(path)
        if limit:
            out = out[:limit]
        print("\n".join(out) if out else "No matches found")

    @staticmethod
    def ls(a):
        path = a["path"]
        ignore = a.get("ignore") or []
        names = sorted(n for n in os.listdir(path) if not any(fnmatch.fnmatch(n, p) for p in ignore))
        print("- %s/\n" % os.path.abspath(path) +
              "\n".join("  - %s%s" % (n, "/" if os.path.isdir(os.path.join(path, n)) else "") for n in names))

    @staticmethod
    def todo_write(a):
        claude_code.todos = a["todos"]
        marks = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
        print("Todos have been updated:\n" +
              "\n".join("%s %s" % (marks.get(t.get("status"), "[ ]"), t.get("content", "")) for t in a["todos"]))


class swe_agent:
    history = {}  # path -> earlier contents, for undo_edit

    @staticmethod
    def str_replace_editor(a):
        command, path = a["command"], a["path"]
        if command == "view":
            if os.path.isdir(path):
                out = subprocess.run(["find", path, "-maxdepth", "2", "-not", "-path", "*/.*"],
                                     capture_output=True, text=True).stdout
                print("Here's the files and directories up to 2 levels deep in %s, excluding hidden items:\n%s"
                      % (path, out))
                return
            lines = _read_text(path).split("\n")
            start, end = 1, len(lines)
            if a.get("view_range"):
                start, end = a["view_range"][0], a["view_range"][1]
                end = len(lines) if end == -1 else end
            print("Here's the result of running `cat -n` on %s:\n%s" % (path, _numbered(lines[start - 1:end], start)))
        elif command == "create":
            if os.path.exists(path):
                raise ToolError("File already exists at: %s. Cannot overwrite files using command `create`." % path)
            _write_text(path, a.get("file_text", ""))
            print("File created successfully at: %s" % path)
        elif command == "str_replace":
            text = _read_text(path)
            old, new = a.get("old_str", ""), a.get("new_str", "")
            count = text.count(old) if old else 0
            if count != 1:
                raise ToolError("No replacement was performed, old_str `%s` %s in %s." %
                                (old, "did not appear verbatim" if count == 0 else "appears %d times" % count, path))
            swe_agent.history.setdefault(path, []).append(text)
            _write_text(path, text.replace(old, new, 1))
            print("The file %s has been edited. Review the changes and make sure they are as expected." % path)
        elif command == "insert":
            text = _read_text(path)
            lines = text.split("\n")
            at = int(a.get("insert_line", 0))
            if at < 0 or at > len(lines):
                raise ToolError("Invalid `insert_line` %d: it should be within [0, %d]" % (at, len(lines)))
            swe_agent.history.setdefault(path, []).append(text)
            _write_text(path, "\n".join(lines[:at] + a.get("new_str", "").split("\n") + lines[at:]))
            print("The file %s has been edited." % path)
        elif command == "undo_edit":
            if not swe_agent.history.get(path):
                raise ToolError("No edit history found for %s." % path)
            _write_text(path, swe_agent.history[path].pop())
            print("Last edit to %s undone successfully." % path)

    @staticmethod
    def submit(a):
        diff = subprocess.run(["git", "diff"], capture_output=True, text=True)
        print("Submitted.\n" + (diff.stdout if diff.returncode == 0 else "(not a git repository: no diff)"))


class codex:
    plan = []

    @staticmethod
    def update_plan(a):
        codex.plan = a["plan"]
        print("Plan updated")

    @staticmethod
    def apply_patch(a):
        lines = a["input"].replace("\r\n", "\n").split("\n")
        while lines and lines[-1] == "":
            lines.pop()
        if not lines or lines[0].strip() != "*** Begin Patch" or lines[-1].strip() != "*** End Patch":
            raise ToolError("The patch must start with '*** Begin Patch' and end with '*** End Patch'")
        changes, i, body = [], 1, lines[1:-1]
        i = 0
        while i < len(body):
            line = body[i]
            if line.startswith("*** Add File: "):
                path, i = line[len("*** Add File: "):].strip(), i + 1
                content = []
                while i < len(body) and body[i].startswith("+"):
                    content.append(body[i][1:])
                    i += 1
                changes.append(("add", path, "\n".join(content) + "\n"))
            elif line.startswith("*** Delete File: "):
                changes.append(("delete", line[len("*** Delete File: "):].strip(), None))
                i += 1
            elif line.startswith("*** Update File: "):
                path, i = line[len("*** Update File: "):].strip(), i + 1
                move = None
                if i < len(body) and body[i].startswith("*** Move to: "):
                    move, i = body[i][len("*** Move to: "):].strip(), i + 1
                hunks = []
                while i < len(body) and not body[i].startswith("*** "):
                    hunk = {"anchor": None, "old": [], "new": []}
                    if body[i].startswith("@@"):
                        hunk["anchor"] = body[i][2:].strip() or None
                        i += 1
                    while i < len(body) and not body[i].startswith("@@") and not body[i].startswith("*** "):
                        l = body[i]
                        if l.startswith("-"):
                            hunk["old"].append(l[1:])
                        elif l.startswith("+"):
                            hunk["new"].append(l[1:])
                        else:
                            ctx = l[1:] if l.startswith(" ") else l
                            hunk["old"].append(ctx)
                            hunk["new"].append(ctx)
                        i += 1
                    hunks.append(hunk)
                changes.append(("update", path, (hunks, move)))
            elif line.strip() == "*** End of File":
                i += 1
            else:
                raise ToolError("Unexpected line in the patch: %r" % line)
        # All checked before anything is written: a patch applies whole or not at all.
        results = []
        for kind, path, data in changes:
            if kind == "add":
                if os.path.exists(path):
                    raise ToolError("Add File: %s already exists" % path)
                results.append((kind, path, data, None))
            elif kind == "delete":
                if not os.path.isfile(path):
                    raise ToolError("Delete File: %s does not exist" % path)
                results.append((kind, path, None, None))
            else:
                hunks, move = data
                text = _read_text(path)
                file_lines = text.split("\n")
                pos = 0
                for n, h in enumerate(hunks):
                    if h["anchor"]:
                        for k in range(pos, len(file_lines)):
                            if file_lines[k].strip() == h["anchor"].strip():
                                pos = k + 1
                                break
                    at = codex._find(file_lines, h["old"], pos)
                    if at < 0:
                        raise ToolError("Update File: %s: hunk %d does not match the file:\n%s"
                                        % (path, n + 1, "\n".join(h["old"])))
                    file_lines[at:at + len(h["old"])] = h["new"]
                    pos = at + len(h["new"])
                results.append((kind, path, "\n".join(file_lines), move))
        for kind, path, text, move in results:
            if kind == "delete":
                os.remove(path)
            else:
                _write_text(move or path, text)
                if move and move != path:
                    os.remove(path)
        print("Success. Updated the following files:\n" +
              "\n".join("%s %s" % ({"add": "A", "delete": "D", "update": "M"}[k], m or p)
                        for k, p, _, m in results))

    @staticmethod
    def _find(lines, old, start):
        if not old:
            return start
        for k in list(range(start, len(lines))) + list(range(0, start)):
            if lines[k:k + len(old)] == old:
                return k
        for k in range(len(lines)):  # whitespace at the ends of lines is forgiven, as Codex forgives it
            if [l.rstrip() for l in lines[k:k + len(old)]] == [l.rstrip() for l in old]:
                return k
        return -1


def call(function, arguments):
    owner, name = function.split(".", 1)
    tool = getattr({"claude_code": claude_code, "swe_agent": swe_agent, "codex": codex}[owner], name)
    try:
        tool(arguments)
    except ToolError as e:
        print("Error: %s" % e)
        raise SystemExit(1)
    except (OSError, UnicodeError) as e:
        print("Error: %s" % e)
        raise SystemExit(1)
