#!/usr/bin/env python3
"""A client for `interpreter --server` in the agent's tests: a websocket client and HTTP requests written with the
standard library only, so that the server is checked against an implementation that is not its own.

usage: server_client.py PORT TOKEN ACTION [ARG...]; prints one JSON object with what it saw.
  ws TEXT [AUTH]         AUTH: header (X-API-KEY in the handshake), message ({"auth": TOKEN} first; the default),
                         wrong (a wrong token as the first message), bearer (Authorization: Bearer). Sends TEXT as a
                         user message in start/content/end chunks; collects chunks until the complete status (twice
                         when a confirmation came first: `go` is sent after the first) or the close.
  ws-raw HEX             after the handshake and auth, sends HEX (frames) and reports what comes back.
  ws-ping                sends a ping, then a fragmented user-less chunk, reports the pong and the error.
  ws-json JSON_ARRAY N   after the handshake (X-API-KEY), sends each element as a text message; collects messages
                         until the N-th complete status (or the close), then closes.
  http METHOD PATH [TOKEN|-] [BODY]   one request; TOKEN "-" sends none.
  openai TEXT stream|whole [TOKEN]    POST /openai/chat/completions.
  raw HEX                sends HEX on a fresh connection, reports the response head and body.
  hangup openai|ws TEXT  sends TEXT (a streamed chat completion, or a websocket message) and, once the console
                         output has begun, closes the connection without a word.
"""
import base64
import hashlib
import json
import os
import socket
import struct
import sys
import urllib.error
import urllib.request

PORT = int(sys.argv[1])
TOKEN = sys.argv[2]
TIMEOUT = 60


def connect():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=TIMEOUT)
    return s


def read_until(s, marker):
    data = b""
    while marker not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def read_all(s):
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        data += chunk
    return data


class Ws:
    def __init__(self, headers=None):
        self.s = connect()
        key = base64.b64encode(os.urandom(16)).decode()
        lines = ["GET / HTTP/1.1", "Host: 127.0.0.1:%d" % PORT, "Upgrade: websocket", "Connection: Upgrade",
                 "Sec-WebSocket-Key: " + key, "Sec-WebSocket-Version: 13"]
        lines += ["%s: %s" % kv for kv in (headers or {}).items()]
        self.s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        data = read_until(self.s, b"\r\n\r\n")
        head, _, self.buf = data.partition(b"\r\n\r\n")
        self.status = int(head.split(b" ")[1]) if head else 0
        self.head = head.decode(errors="replace")
        want = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
        self.accept_ok = ("Sec-WebSocket-Accept: " + want.decode()) in self.head
        self.close_code = None
        self.pongs = []

    def send_frame(self, opcode, payload, fin=True):
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([(0x80 if fin else 0) | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.s.sendall(head + mask + masked)

    def send_json(self, obj):
        self.send_frame(1, json.dumps(obj).encode())

    def _need(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk

    def frame(self):
        self._need(2)
        b0, b1 = self.buf[0], self.buf[1]
        n = b1 & 0x7f
        off = 2
        if n == 126:
            self._need(4)
            n = struct.unpack(">H", self.buf[2:4])[0]
            off = 4
        elif n == 127:
            self._need(10)
            n = struct.unpack(">Q", self.buf[2:10])[0]
            off = 10
        assert not (b1 & 0x80), "server frames are not masked"
        self._need(off + n)
        payload = self.buf[off:off + n]
        self.buf = self.buf[off + n:]
        return b0 & 0x80, b0 & 0x0f, payload

    def message(self):
        """The next text message (JSON), or None after a close (self.close_code set)."""
        parts = b""
        while True:
            try:
                fin, op, payload = self.frame()
            except (EOFError, ConnectionError, socket.timeout):
                return None
            if op == 8:
                self.close_code = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else 1005
                self.close_reason = payload[2:].decode(errors="replace")
                return None
            if op == 9:
                self.send_frame(10, payload)
                continue
            if op == 10:
                self.pongs.append(payload.decode(errors="replace"))
                continue
            parts += payload
            if fin:
                return json.loads(parts.decode())

    def send_user(self, text, type_="message"):
        self.send_json({"role": "user", "type": type_, "start": True})
        self.send_json({"role": "user", "type": type_, "content": text})
        self.send_json({"role": "user", "type": type_, "end": True})


def out(obj):
    print(json.dumps(obj))


def ws_action(text, auth):
    headers = {}
    if auth == "header":
        headers["X-API-KEY"] = TOKEN
    if auth == "bearer":
        headers["Authorization"] = "Bearer " + TOKEN
    ws = Ws(headers)
    res = {"status": ws.status, "accept_ok": ws.accept_ok, "chunks": [], "auth": None}
    if ws.status != 101:
        res["head"] = ws.head
        return out(res)
    if auth in ("message", "wrong"):
        ws.send_json({"auth": TOKEN if auth == "message" else TOKEN + "x"})
        reply = ws.message()
        res["auth"] = reply
        if not reply or not reply.get("auth"):
            ws.message()  # the close that follows
            res["close_code"] = ws.close_code
            # Try to talk anyway: the agent must never see it.
            try:
                ws.send_user(text)
                while True:
                    m = ws.message()
                    if m is None:
                        break
                    res["chunks"].append(m)
            except (BrokenPipeError, ConnectionError):
                pass
            return out(res)
    ws.send_user(text)
    completes = 0
    confirmed = False
    while True:
        m = ws.message()
        if m is None:
            break
        res["chunks"].append(m)
        if m.get("type") == "confirmation":
            confirmed = True
        if m == {"role": "server", "type": "status", "content": "complete"}:
            completes += 1
            if confirmed and completes == 1:
                ws.send_user("go", "command")
                continue
            break
    res["close_code"] = ws.close_code
    # A clean close.
    ws.send_frame(8, struct.pack(">H", 1000))
    ws.message()
    res["close_reply"] = ws.close_code
    out(res)


def ws_raw(hexdata):
    ws = Ws({"X-API-KEY": TOKEN})
    ws.s.sendall(bytes.fromhex(hexdata))
    msgs = []
    while True:
        m = ws.message()
        if m is None:
            break
        msgs.append(m)
    out({"status": ws.status, "messages": msgs, "close_code": ws.close_code,
         "close_reason": getattr(ws, "close_reason", None)})


def ws_ping():
    ws = Ws({"X-API-KEY": TOKEN})
    ws.send_frame(9, b"are-you-there")
    # A text message in two fragments, with a ping between them: one bad chunk (content before start).
    body = json.dumps({"role": "user", "type": "message", "end": True}).encode()
    ws.send_frame(1, body[:5], fin=False)
    ws.send_frame(9, b"between")
    ws.send_frame(0, body[5:], fin=True)
    ws.send_frame(1, b"not json")
    msgs = []
    while len(msgs) < 4:
        m = ws.message()
        if m is None:
            break
        msgs.append(m)
    out({"pongs": ws.pongs, "messages": msgs})


def ws_json(messages, completes):
    ws = Ws({"X-API-KEY": TOKEN})
    for m in json.loads(messages):
        ws.send_json(m)
    msgs, seen = [], 0
    while seen < completes:
        m = ws.message()
        if m is None:
            break
        msgs.append(m)
        if m == {"role": "server", "type": "status", "content": "complete"}:
            seen += 1
    ws.send_frame(8, struct.pack(">H", 1000))
    ws.message()
    out({"status": ws.status, "messages": msgs, "close_code": ws.close_code})


def http_action(method, path, token, body):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (PORT, path), method=method,
                                 data=body.encode() if body is not None else None)
    if token != "-":
        req.add_header("X-API-KEY", token)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            out({"status": r.status, "body": r.read().decode()})
    except urllib.error.HTTPError as e:
        out({"status": e.code, "body": e.read().decode(), "www_authenticate": e.headers.get("WWW-Authenticate")})


def openai_action(text, mode, token):
    body = json.dumps({"model": "oi", "stream": mode == "stream",
                       "messages": [{"role": "system", "content": "ignored"},
                                    {"role": "user", "content": text}]}).encode()
    req = urllib.request.Request("http://127.0.0.1:%d/openai/chat/completions" % PORT, data=body, method="POST")
    req.add_header("Content-Type", "application/json")
    req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            raw = r.read().decode()
            res = {"status": r.status, "content_type": r.headers.get("Content-Type")}
    except urllib.error.HTTPError as e:
        return out({"status": e.code, "body": e.read().decode()})
    if mode == "stream":
        events, content, done = [], "", False
        for block in raw.split("\n\n"):
            if not block.strip():
                continue
            assert block.startswith("data: "), block
            data = block[6:]
            if data == "[DONE]":
                done = True
                continue
            ev = json.loads(data)
            events.append(ev)
            content += ev["choices"][0]["delta"].get("content") or ""
        res.update({"events": len(events), "done": done, "content": content,
                    "first": events[0] if events else None, "last": events[-1] if events else None})
    else:
        res["body"] = json.loads(raw)
        res["content"] = res["body"]["choices"][0]["message"]["content"]
    out(res)


def raw_action(hexdata):
    s = connect()
    s.settimeout(15)
    s.sendall(bytes.fromhex(hexdata))
    try:
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    data = read_all(s)
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1]) if head.startswith(b"HTTP/1.1 ") else 0
    out({"status": status, "head": head.decode(errors="replace"), "body": body.decode(errors="replace")})


def hangup_action(kind, text):
    if kind == "ws":
        ws = Ws({"X-API-KEY": TOKEN})
        ws.send_user(text)
        while True:
            m = ws.message()
            if m is None or m == {"role": "server", "type": "status", "content": "complete"}:
                return out({"saw_output": False, "last": m})
            if m.get("type") == "console" and m.get("format") == "output":
                break
        ws.s.close()
        return out({"saw_output": True})
    s = connect()
    body = json.dumps({"stream": True, "messages": [{"role": "user", "content": text}]}).encode()
    s.sendall(b"POST /openai/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"X-API-KEY: " + TOKEN.encode() + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    data = b""
    while b"started" not in data:
        chunk = s.recv(65536)
        if not chunk:
            return out({"saw_output": False, "data": data.decode(errors="replace")})
        data += chunk
    s.close()
    out({"saw_output": True})


action = sys.argv[3]
args = sys.argv[4:]
if action == "ws":
    ws_action(args[0], args[1] if len(args) > 1 else "message")
elif action == "ws-raw":
    ws_raw(args[0])
elif action == "ws-ping":
    ws_ping()
elif action == "ws-json":
    ws_json(args[0], int(args[1]))
elif action == "http":
    http_action(args[0], args[1], args[2] if len(args) > 2 else TOKEN, args[3] if len(args) > 3 else None)
elif action == "openai":
    openai_action(args[0], args[1], args[2] if len(args) > 2 else TOKEN)
elif action == "hangup":
    hangup_action(args[0], args[1])
elif action == "raw":
    raw_action(args[0])
else:
    sys.exit("unknown action " + action)
