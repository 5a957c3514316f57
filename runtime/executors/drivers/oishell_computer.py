# oishell's `computer` for the python executor under `interpreter --os`: the parts of Open Interpreter's computer
# API that make sense confined, on the sandbox's own virtual display (docs/interpreter.md, "Computer use").
#
# The python driver imports this module only when the supervisor started a display (OISHELL_COMPUTER=WxH, DISPLAY)
# and puts `computer` in the block namespace. X11 is spoken through libX11 and the XTEST extension by ctypes, so
# nothing needs installing in the sandbox; screenshots are encoded as PNG here (zlib).
#
# The display is the sandbox's: DISPLAY names the X server the supervisor started inside, on the sandbox's tmpfs
# and network namespace. There is no other screen to reach.
import builtins
import ctypes
import os
import struct
import subprocess
import time
import zlib

_c = ctypes
_XID = _c.c_ulong
_ALL_PLANES = _c.c_ulong(~0 & ((1 << (8 * _c.sizeof(_c.c_ulong))) - 1))
_ZPIXMAP = 2
_SETTLE = float(os.environ.get("OISHELL_COMPUTER_SETTLE", "0.4"))  # seconds before the screenshot after an action


class _XImage(_c.Structure):
    _fields_ = [("width", _c.c_int), ("height", _c.c_int), ("xoffset", _c.c_int), ("format", _c.c_int),
                ("data", _c.c_void_p), ("byte_order", _c.c_int), ("bitmap_unit", _c.c_int),
                ("bitmap_bit_order", _c.c_int), ("bitmap_pad", _c.c_int), ("depth", _c.c_int),
                ("bytes_per_line", _c.c_int), ("bits_per_pixel", _c.c_int), ("red_mask", _c.c_ulong),
                ("green_mask", _c.c_ulong), ("blue_mask", _c.c_ulong)]


class _X:
    """One connection to the display, opened on first use."""

    def __init__(self):
        self.x11 = _c.CDLL("libX11.so.6")
        try:
            self.xtst = _c.CDLL("libXtst.so.6")
        except OSError:
            raise RuntimeError("computer: the mouse and keyboard need libXtst (Debian: libxtst6) in the sandbox")
        x, t = self.x11, self.xtst
        x.XOpenDisplay.restype = _c.c_void_p
        x.XOpenDisplay.argtypes = [_c.c_char_p]
        x.XDefaultRootWindow.restype = _XID
        x.XDefaultRootWindow.argtypes = [_c.c_void_p]
        x.XDefaultScreen.argtypes = [_c.c_void_p]
        x.XDisplayWidth.argtypes = x.XDisplayHeight.argtypes = [_c.c_void_p, _c.c_int]
        x.XGetImage.restype = _c.POINTER(_XImage)
        x.XGetImage.argtypes = [_c.c_void_p, _XID, _c.c_int, _c.c_int, _c.c_uint, _c.c_uint, _c.c_ulong, _c.c_int]
        x.XDestroyImage.argtypes = [_c.POINTER(_XImage)]
        x.XSync.argtypes = [_c.c_void_p, _c.c_int]
        x.XFlush.argtypes = [_c.c_void_p]
        x.XStringToKeysym.restype = _c.c_ulong
        x.XStringToKeysym.argtypes = [_c.c_char_p]
        x.XKeysymToKeycode.restype = _c.c_ubyte
        x.XKeysymToKeycode.argtypes = [_c.c_void_p, _c.c_ulong]
        x.XkbKeycodeToKeysym.restype = _c.c_ulong
        x.XkbKeycodeToKeysym.argtypes = [_c.c_void_p, _c.c_ubyte, _c.c_int, _c.c_int]
        x.XDisplayKeycodes.argtypes = [_c.c_void_p, _c.POINTER(_c.c_int), _c.POINTER(_c.c_int)]
        x.XGetKeyboardMapping.restype = _c.POINTER(_c.c_ulong)
        x.XGetKeyboardMapping.argtypes = [_c.c_void_p, _c.c_ubyte, _c.c_int, _c.POINTER(_c.c_int)]
        x.XChangeKeyboardMapping.argtypes = [_c.c_void_p, _c.c_int, _c.c_int, _c.POINTER(_c.c_ulong), _c.c_int]
        x.XFree.argtypes = [_c.c_void_p]
        x.XQueryPointer.argtypes = [_c.c_void_p, _XID, _c.POINTER(_XID), _c.POINTER(_XID)] + \
            [_c.POINTER(_c.c_int)] * 4 + [_c.POINTER(_c.c_uint)]
        t.XTestFakeMotionEvent.argtypes = [_c.c_void_p, _c.c_int, _c.c_int, _c.c_int, _c.c_ulong]
        t.XTestFakeButtonEvent.argtypes = [_c.c_void_p, _c.c_uint, _c.c_int, _c.c_ulong]
        t.XTestFakeKeyEvent.argtypes = [_c.c_void_p, _c.c_uint, _c.c_int, _c.c_ulong]
        name = os.environ.get("DISPLAY", "")
        self.dpy = x.XOpenDisplay(name.encode())
        if not self.dpy:
            raise RuntimeError("computer: cannot open the virtual display %r" % name)
        self.root = x.XDefaultRootWindow(self.dpy)
        screen = x.XDefaultScreen(self.dpy)
        self.width = x.XDisplayWidth(self.dpy, screen)
        self.height = x.XDisplayHeight(self.dpy, screen)
        self.spare = None  # a keycode with no symbol, borrowed to type characters the keymap lacks

    def sync(self):
        self.x11.XSync(self.dpy, 0)

    # --- screen -------------------------------------------------------------------------------------------------
    def capture_rgb(self):
        img = self.x11.XGetImage(self.dpy, self.root, 0, 0, self.width, self.height, _ALL_PLANES, _ZPIXMAP)
        if not img:
            raise RuntimeError("computer: the screen could not be read (XGetImage)")
        try:
            im = img.contents
            if im.bits_per_pixel != 32 or im.red_mask != 0xFF0000 or im.blue_mask != 0xFF or im.byte_order != 0:
                raise RuntimeError("computer: unexpected pixel format (%d bpp)" % im.bits_per_pixel)
            w, h, stride = im.width, im.height, im.bytes_per_line
            raw = _c.string_at(im.data, stride * h)
        finally:
            self.x11.XDestroyImage(img)
        if stride != w * 4:
            raw = b"".join(raw[y * stride:y * stride + w * 4] for y in range(h))
        return w, h, raw  # BGRX, 4 bytes a pixel

    # --- pointer ------------------------------------------------------------------------------------------------
    def move(self, x, y):
        self.xtst.XTestFakeMotionEvent(self.dpy, -1, int(x), int(y), 0)
        self.sync()

    def button(self, number, press):
        self.xtst.XTestFakeButtonEvent(self.dpy, number, 1 if press else 0, 0)
        self.sync()

    def pointer(self):
        r, c = _XID(), _XID()
        rx, ry, wx, wy = _c.c_int(), _c.c_int(), _c.c_int(), _c.c_int()
        mask = _c.c_uint()
        self.x11.XQueryPointer(self.dpy, self.root, _c.byref(r), _c.byref(c), _c.byref(rx), _c.byref(ry),
                               _c.byref(wx), _c.byref(wy), _c.byref(mask))
        return rx.value, ry.value

    # --- keyboard -----------------------------------------------------------------------------------------------
    def key_event(self, keycode, press):
        self.xtst.XTestFakeKeyEvent(self.dpy, keycode, 1 if press else 0, 0)
        self.sync()

    def keycode_of(self, keysym):
        """(keycode, needs_shift), mapping a spare keycode when the keymap has no key for the symbol."""
        code = self.x11.XKeysymToKeycode(self.dpy, keysym)
        if code:
            for level, shift in ((0, False), (1, True)):
                if self.x11.XkbKeycodeToKeysym(self.dpy, code, 0, level) == keysym:
                    return code, shift
        spare = self._spare_keycode()
        syms = (_c.c_ulong * 2)(keysym, keysym)
        self.x11.XChangeKeyboardMapping(self.dpy, spare, 2, syms, 1)
        self.sync()
        time.sleep(0.02)  # clients reread the keymap on MappingNotify
        return spare, False

    def _spare_keycode(self):
        if self.spare is None:
            low, high = _c.c_int(), _c.c_int()
            self.x11.XDisplayKeycodes(self.dpy, _c.byref(low), _c.byref(high))
            per = _c.c_int()
            count = high.value - low.value + 1
            syms = self.x11.XGetKeyboardMapping(self.dpy, low.value, count, _c.byref(per))
            try:
                for i in range(count - 1, -1, -1):
                    if all(syms[i * per.value + j] == 0 for j in range(per.value)):
                        self.spare = low.value + i
                        break
            finally:
                self.x11.XFree(syms)
            if self.spare is None:
                raise RuntimeError("computer: no free keycode to type this character")
        return self.spare


_x = None


def _display():
    global _x
    if _x is None:
        _x = _X()
    return _x


# --- PNG ------------------------------------------------------------------------------------------------------------
def _png(width, height, rgb):
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    row = width * 3
    scan = b"".join(b"\x00" + rgb[y * row:(y + 1) * row] for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(scan, 6)) + chunk(b"IEND", b""))


def _scaled(width, height, bgrx, out_w, out_h):
    """Nearest-neighbour scaling of BGRX pixels (the model's size is never larger than the screen)."""
    if (out_w, out_h) == (width, height):
        return bgrx
    import array
    pixels = memoryview(bgrx).cast("I")
    columns = [x * width // out_w for x in range(out_w)]
    out = array.array("I")
    for y in range(out_h):
        base = (y * height // out_h) * width
        out.extend(pixels[base + c] for c in columns)
    return out.tobytes()


def _to_rgb(bgrx):
    n = len(bgrx) // 4
    rgb = bytearray(n * 3)
    rgb[0::3] = bgrx[2::4]
    rgb[1::3] = bgrx[1::4]
    rgb[2::3] = bgrx[0::4]
    return bytes(rgb)


class Screenshot:
    """A PNG of the screen: .png (bytes), .width, .height; shown to the model and the user when displayed."""

    def __init__(self, png, width, height):
        self.png, self.width, self.height = png, width, height

    def save(self, path):
        with open(path, "wb") as f:
            f.write(self.png)
        return path

    def __repr__(self):
        return "<Screenshot %dx%d, %d bytes of PNG>" % (self.width, self.height, len(self.png))


def _show(shot):
    send = getattr(builtins, "__oishell_image__", None)
    if send is not None:
        send(shot.png)


# --- key names (xdotool's, which computer-use models write) ---------------------------------------------------------
_KEY_ALIASES = {
    "ctrl": "Control_L", "control": "Control_L", "alt": "Alt_L", "shift": "Shift_L", "super": "Super_L",
    "cmd": "Super_L", "command": "Super_L", "win": "Super_L", "meta": "Meta_L", "option": "Alt_L",
    "enter": "Return", "return": "Return", "esc": "Escape", "escape": "Escape", "tab": "Tab",
    "backspace": "BackSpace", "delete": "Delete", "del": "Delete", "space": "space", "up": "Up", "down": "Down",
    "left": "Left", "right": "Right", "pageup": "Prior", "page_up": "Prior", "pagedown": "Next",
    "page_down": "Next", "home": "Home", "end": "End", "insert": "Insert", "capslock": "Caps_Lock",
}


def _char_keysym(ch):
    if ch == "\n":
        return 0xFF0D  # Return
    if ch == "\t":
        return 0xFF09  # Tab
    code = ord(ch)
    if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF:
        return code
    return 0x01000000 | code


def _keysym(name):
    if len(name) == 1:
        return _char_keysym(name)
    sym = _display().x11.XStringToKeysym(_KEY_ALIASES.get(name.lower(), name).encode())
    if not sym:
        raise ValueError("computer: unknown key %r" % name)
    return sym


def _split_combo(combo):
    parts = combo.split("+")
    keys = []
    for i, part in enumerate(parts):
        if part == "" and (i == len(parts) - 1 or parts[i + 1] == ""):
            if not keys or keys[-1] != "+":
                keys.append("+")
        elif part:
            keys.append(part)
    return keys


class _Keyboard:
    def down(self, key):
        code, shift = _display().keycode_of(_keysym(key))
        if shift:
            _display().key_event(_display().keycode_of(_keysym("Shift_L"))[0], True)
        _display().key_event(code, True)

    def up(self, key):
        code, shift = _display().keycode_of(_keysym(key))
        _display().key_event(code, False)
        if shift:
            _display().key_event(_display().keycode_of(_keysym("Shift_L"))[0], False)

    def hotkey(self, *keys):
        """Presses keys together, released in reverse order: hotkey("ctrl", "s")."""
        for k in keys:
            self.down(k)
        for k in reversed(keys):
            self.up(k)

    def press(self, *keys, presses=1, interval=0.0):
        """Presses each key in turn; a key may be a combination written with '+' ("ctrl+shift+t")."""
        for _ in range(presses):
            for k in keys:
                self.hotkey(*_split_combo(k))
                if interval:
                    time.sleep(interval)

    def write(self, text, interval=None):
        """Types text, any Unicode character (those the keymap lacks are mapped to a spare key as they come)."""
        d = _display()
        shift_code = d.keycode_of(_keysym("Shift_L"))[0]
        for ch in text:
            code, shift = d.keycode_of(_char_keysym(ch))
            if shift:
                d.key_event(shift_code, True)
            d.key_event(code, True)
            d.key_event(code, False)
            if shift:
                d.key_event(shift_code, False)
            if interval:
                time.sleep(interval)


_BUTTONS = {"left": 1, "middle": 2, "right": 3}


class _Mouse:
    def position(self):
        return _display().pointer()

    def move(self, x=None, y=None):
        if x is None or y is None:
            raise ValueError("computer.mouse.move needs x and y (finding text or icons on the screen needs vision, "
                             "which this computer does not have: take a screenshot and give coordinates)")
        _display().move(x, y)

    def down(self, button="left"):
        _display().button(_BUTTONS[button], True)

    def up(self, button="left"):
        _display().button(_BUTTONS[button], False)

    def click(self, x=None, y=None, button="left", clicks=1, interval=0.08):
        if (x is None) != (y is None) or isinstance(x, str):
            raise ValueError("computer.mouse.click takes x and y (clicking text or icons needs vision, which this "
                             "computer does not have: take a screenshot and give coordinates)")
        if x is not None:
            self.move(x, y)
        for i in range(clicks):
            self.down(button)
            self.up(button)
            if i + 1 < clicks:
                time.sleep(interval)

    def double_click(self, x=None, y=None, button="left"):
        self.click(x, y, button, clicks=2)

    def triple_click(self, x=None, y=None, button="left"):
        self.click(x, y, button, clicks=3)

    def right_click(self, x=None, y=None):
        self.click(x, y, "right")

    def drag(self, x1, y1, x2, y2, steps=10):
        self.move(x1, y1)
        self.down()
        for i in range(1, steps + 1):
            _display().move(x1 + (x2 - x1) * i // steps, y1 + (y2 - y1) * i // steps)
            time.sleep(0.01)
        self.up()

    def scroll(self, clicks, direction=None):
        """Positive clicks scroll up (as pyautogui's); or give direction: up, down, left, right."""
        if direction is None:
            direction = "up" if clicks > 0 else "down"
        number = {"up": 4, "down": 5, "left": 6, "right": 7}[direction]
        for _ in range(abs(int(clicks))):
            _display().button(number, True)
            _display().button(number, False)


class _Display:
    def size(self):
        d = _display()
        return d.width, d.height

    def center(self):
        w, h = self.size()
        return w // 2, h // 2

    def screenshot(self, show=True, size=None):
        """A Screenshot of the whole screen, scaled to `size` (width, height) when given; shown unless show=False."""
        w, h, bgrx = _display().capture_rgb()
        out_w, out_h = size if size else (w, h)
        shot = Screenshot(_png(out_w, out_h, _to_rgb(_scaled(w, h, bgrx, out_w, out_h))), out_w, out_h)
        if show:
            _show(shot)
        return shot

    def view(self, show=True):
        return self.screenshot(show=show)


class _Clipboard:
    def _tool(self):
        for program in ("xclip", "xsel"):
            for directory in os.environ.get("PATH", "").split(":"):
                if directory and os.access(os.path.join(directory, program), os.X_OK):
                    return program
        raise RuntimeError("computer.clipboard needs xclip or xsel in the sandbox (the virtual display's own "
                           "clipboard; the host's is never reachable)")

    def view(self):
        tool = self._tool()
        args = ["xclip", "-selection", "clipboard", "-o"] if tool == "xclip" else ["xsel", "-b", "-o"]
        return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout

    def copy(self, text=None):
        if text is None:
            return _Keyboard().hotkey("ctrl", "c")
        tool = self._tool()
        args = ["xclip", "-selection", "clipboard"] if tool == "xclip" else ["xsel", "-b", "-i"]
        subprocess.run(args, input=text, text=True, timeout=10)

    def paste(self):
        _Keyboard().hotkey("ctrl", "v")


class _Terminal:
    def run(self, language, code):
        """Runs code in a new process (python or shell); returns Open Interpreter's list of console messages."""
        program = {"python": ["python3", "-c"], "shell": ["sh", "-c"], "bash": ["bash", "-c"]}.get(language)
        if program is None:
            raise ValueError("computer.terminal.run: python or shell")
        done = subprocess.run(program + [code], capture_output=True, text=True)
        return [{"type": "console", "format": "output", "content": done.stdout + done.stderr}]


class _Files:
    def edit(self, path, original_text, replacement_text):
        """Replaces the one occurrence of original_text in the file (an error when it is absent or repeated)."""
        with open(path) as f:
            text = f.read()
        count = text.count(original_text)
        if count != 1:
            raise ValueError("computer.files.edit: the text occurs %d times in %s (it must occur once)" % (count, path))
        with open(path, "w") as f:
            f.write(text.replace(original_text, replacement_text))


class _Vision:
    """Open Interpreter's computer.vision, through the agent's own model: the model's key never enters the sandbox,
    so the image is shown to the model (which sees it with this block's output) instead of being sent from here."""

    def query(self, query="Describe this image.", base64=None, path=None, lmc=None, pil_image=None):
        import base64 as b64
        if lmc is not None:
            base64 = lmc.get("content")
        if path is not None:
            with open(path, "rb") as f:
                png = f.read()
        elif base64 is not None:
            png = b64.b64decode(base64)
        elif pil_image is not None:
            import io
            buf = io.BytesIO()
            pil_image.save(buf, format="PNG")
            png = buf.getvalue()
        else:
            png = _Display().screenshot(show=False).png
        _show(Screenshot(png, 0, 0))
        print("computer.vision: the image is shown to you with this output; answer this about it yourself: %s"
              % query)

    def ocr(self, *args, **kwargs):
        return self.query("Read the text in this image.", *args, **kwargs)


class Computer:
    """Open Interpreter's `computer`, confined: display, mouse, keyboard, clipboard on the virtual display."""

    def __init__(self):
        self.display = _Display()
        self.mouse = _Mouse()
        self.keyboard = _Keyboard()
        self.clipboard = _Clipboard()
        self.terminal = _Terminal()
        self.files = _Files()
        self.vision = _Vision()

    def wait(self, seconds):
        time.sleep(seconds)

    # The agent's `computer` tool (Anthropic's computer-use actions) arrives here, one action per block, in the
    # coordinates of the screenshots the model sees (`screen`, width and height).
    def _tool(self, action, screen):
        w, h = self.display.size()
        sx, sy = w / screen[0], h / screen[1]

        def point(key="coordinate"):
            c = action.get(key)
            if c is None:
                return None, None
            return min(w - 1, int(c[0] * sx)), min(h - 1, int(c[1] * sy))

        def model_point(x, y):
            return int(x / sx), int(y / sy)

        name = action["action"]
        held = _split_combo(action["text"]) if action.get("text") and name in _CLICKS + ("scroll",) else []
        for k in held:
            self.keyboard.down(k)
        try:
            if name == "screenshot":
                self.display.screenshot(size=screen)
                return
            if name == "cursor_position":
                print("X=%d,Y=%d" % model_point(*self.mouse.position()))
                return
            if name == "mouse_move":
                self.mouse.move(*point())
            elif name in _CLICKS:
                x, y = point()
                button = {"right_click": "right", "middle_click": "middle"}.get(name, "left")
                clicks = {"double_click": 2, "triple_click": 3}.get(name, 1)
                self.mouse.click(x, y, button=button, clicks=clicks)
            elif name == "left_click_drag":
                x1, y1 = point("start_coordinate")
                if x1 is None:
                    x1, y1 = self.mouse.position()
                self.mouse.drag(x1, y1, *point())
            elif name == "left_mouse_down":
                self.mouse.down()
            elif name == "left_mouse_up":
                self.mouse.up()
            elif name == "type":
                self.keyboard.write(action["text"])
            elif name == "key":
                self.keyboard.press(*action["text"].split())
            elif name == "hold_key":
                keys = _split_combo(action["text"])
                for k in keys:
                    self.keyboard.down(k)
                time.sleep(float(action.get("duration", 1)))
                for k in reversed(keys):
                    self.keyboard.up(k)
            elif name == "scroll":
                x, y = point()
                if x is not None:
                    self.mouse.move(x, y)
                self.mouse.scroll(int(action.get("scroll_amount", 3)), action.get("scroll_direction", "down"))
            elif name == "wait":
                time.sleep(float(action.get("duration", 1)))
        finally:
            for k in reversed(held):
                self.keyboard.up(k)
        time.sleep(_SETTLE)
        self.display.screenshot(size=screen)


_CLICKS = ("left_click", "right_click", "middle_click", "double_click", "triple_click")

computer = Computer()
