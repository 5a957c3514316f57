"""chat(display=True): the exchange printed as plain text on the terminal (code fenced, output as it comes, notices
on stderr), Open Interpreter's question before a block when auto_run is off, and its interactive chat."""
import sys


class _Printer:
    def __init__(self):
        self.at_line_start = True

    def write(self, text, stream=None):
        if not text:
            return
        stream = stream or sys.stdout
        stream.write(text)
        stream.flush()
        self.at_line_start = text.endswith("\n")

    def newline(self):
        if not self.at_line_start:
            self.write("\n")


_printer = _Printer()


def show(chunk):
    """Prints one LMC chunk."""
    p = _printer
    role, kind, fmt = chunk.get("role"), chunk.get("type"), chunk.get("format")
    if kind == "message" and role == "assistant":
        if chunk.get("start"):
            p.newline()
        p.write(chunk.get("content", ""))
        if chunk.get("end"):
            p.newline()
    elif kind == "code":
        if chunk.get("start"):
            p.newline()
            p.write("```%s\n" % (fmt or ""))
        p.write(chunk.get("content", ""))
        if chunk.get("end"):
            p.newline()
            p.write("```\n")
    elif kind == "console":
        if fmt == "output":
            p.write(chunk.get("content", ""))
        if chunk.get("end"):
            p.newline()
    elif kind == "image" and "content" in chunk:
        p.newline()
        p.write("[an image: %s, %d bytes of base64]\n" % (fmt, len(chunk["content"])))
    elif role in ("system", "server") and "content" in chunk:
        p.newline()
        sys.stderr.write("%s\n" % chunk["content"])
        sys.stderr.flush()


def shown(chunks, interpreter):
    """Prints each chunk and passes it on; before a block that needs confirmation, asks (y/n): "n" stops."""
    for chunk in chunks:
        show(chunk)
        if chunk.get("type") == "confirmation" and not interpreter.auto_run:
            try:
                answer = input("  Would you like to run this code? (y/n) ").strip().lower()
            except EOFError:
                answer = "n"
            if answer not in ("y", "yes"):
                chunks.close()
                return
        yield chunk


def interactive(interpreter):
    """chat() with display and no message: reads messages from the terminal until EOF (Ctrl-D)."""
    while True:
        try:
            message = input("> ")
        except EOFError:
            _printer.newline()
            return
        except KeyboardInterrupt:
            _printer.newline()
            return
        if not message.strip():
            continue
        try:
            yield from interpreter._streaming_chat(message, True)
        except KeyboardInterrupt:
            _printer.newline()
            continue
