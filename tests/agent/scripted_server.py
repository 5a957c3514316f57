#!/usr/bin/env python3
"""A scripted LLM API for the agent's end-to-end tests: real HTTP on 127.0.0.1, real SSE.

usage: scripted_server.py SCRIPT.json LOG.jsonl
Prints the port it listens on (chosen by the kernel: port 0), then serves until killed or until stdin closes.

SCRIPT.json is a list of responses, used in order, one per POST (to .../chat/completions or .../messages):
  {"format": "openai" | "anthropic",        default openai
   "status": 200,                           non-200: "body" is sent as is (JSON error), with "headers"
   "headers": {"Retry-After": "0"},
   "body": "...",
   "text": "assistant text",
   "tool_calls": [{"name": "execute", "arguments": "{...}"}],   arguments: a JSON string, sent in pieces
   "chunk": 7,                              characters per SSE delta
   "cut_after": 3,                          close the connection after this many deltas (no end marker)
   "hold_ms": 0,                            pause before each delta
   "usage": {"input": 1000, "output": 50}}  token usage reported: OpenAI's final usage chunk (only when the request
                                            asked for it with stream_options.include_usage), Anthropic's
                                            message_start / message_delta usage
Every request is appended to LOG.jsonl as {"path", "headers", "body"} before it is answered. A request past the
end of the script gets a plain "(script ended)" answer.
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

script = json.load(open(sys.argv[1]))
log_path = sys.argv[2]
lock = threading.Lock()
state = {"next": 0}


def pieces(s, n):
    return [s[i:i + n] for i in range(0, len(s), n)] or [""]


def openai_events(r, request):
    n = r.get("chunk", 7)
    yield {"choices": [{"index": 0, "delta": {"role": "assistant"}}]}
    if r.get("text"):
        for p in pieces(r["text"], n):
            yield {"choices": [{"index": 0, "delta": {"content": p}}]}
    for i, call in enumerate(r.get("tool_calls", [])):
        yield {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": i, "id": "call_%d_%d" % (state["next"], i), "type": "function",
             "function": {"name": call["name"], "arguments": ""}}]}}]}
        for p in pieces(call["arguments"], n):
            yield {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "function": {"arguments": p}}]}}]}
    reason = "tool_calls" if r.get("tool_calls") else "stop"
    yield {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}
    asked = isinstance(request, dict) and (request.get("stream_options") or {}).get("include_usage")
    if r.get("usage") and asked:
        u = r["usage"]
        yield {"choices": [], "usage": {"prompt_tokens": u["input"], "completion_tokens": u["output"],
                                        "total_tokens": u["input"] + u["output"]}}
    yield "[DONE]"


def anthropic_events(r):
    n = r.get("chunk", 7)
    u = r.get("usage")
    start = {"id": "msg_1", "role": "assistant", "content": []}
    if u:
        start["usage"] = {"input_tokens": u["input"], "output_tokens": 1}
    yield ("message_start", {"type": "message_start", "message": start})
    idx = 0
    if r.get("text"):
        yield ("content_block_start", {"type": "content_block_start", "index": idx,
                                       "content_block": {"type": "text", "text": ""}})
        for p in pieces(r["text"], n):
            yield ("content_block_delta", {"type": "content_block_delta", "index": idx,
                                           "delta": {"type": "text_delta", "text": p}})
        yield ("content_block_stop", {"type": "content_block_stop", "index": idx})
        idx += 1
    for call in r.get("tool_calls", []):
        yield ("content_block_start", {"type": "content_block_start", "index": idx,
                                       "content_block": {"type": "tool_use", "id": "toolu_%d" % idx,
                                                         "name": call["name"], "input": {}}})
        for p in pieces(call["arguments"], n):
            yield ("content_block_delta", {"type": "content_block_delta", "index": idx,
                                           "delta": {"type": "input_json_delta", "partial_json": p}})
        yield ("content_block_stop", {"type": "content_block_stop", "index": idx})
        idx += 1
    yield ("ping", {"type": "ping"})
    stop = "tool_use" if r.get("tool_calls") else "end_turn"
    delta = {"type": "message_delta", "delta": {"stop_reason": stop}}
    if u:
        delta["usage"] = {"output_tokens": u["output"]}
    yield ("message_delta", delta)
    yield ("message_stop", {"type": "message_stop"})


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        body = b'{"data": [{"id": "scripted"}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        with lock:
            with open(log_path, "a") as f:
                f.write(json.dumps({"path": self.path, "headers": dict(self.headers), "body": body}) + "\n")
            i = state["next"]
            state["next"] += 1
        r = script[i] if i < len(script) else {"text": "(script ended)"}
        status = r.get("status", 200)
        if status != 200:
            payload = r.get("body", '{"error": {"message": "scripted error"}}').encode()
            self.send_response(status)
            for k, v in r.get("headers", {}).items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        anthropic = r.get("format") == "anthropic"
        events = anthropic_events(r) if anthropic else openai_events(r, body)
        sent = 0
        for ev in events:
            if "cut_after" in r and sent >= r["cut_after"]:
                self.wfile.flush()
                return  # the connection closes with the answer half sent
            if r.get("hold_ms"):
                time.sleep(r["hold_ms"] / 1000.0)
            if anthropic:
                name, data = ev
                chunk = "event: %s\ndata: %s\n\n" % (name, json.dumps(data))
            else:
                chunk = "data: %s\n\n" % (ev if isinstance(ev, str) else json.dumps(ev))
            self.wfile.write(chunk.encode())
            self.wfile.flush()
            sent += 1


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    sys.stdin.read()  # the test closes our stdin (or kills us) when it is done
    server.shutdown()


if __name__ == "__main__":
    main()
