#!/usr/bin/env python3
"""A scripted stand-in of the Kubernetes API server for `interpreter --kubernetes` (tests/agent/kubernetes_e2e_test.cc):
real HTTP on 127.0.0.1 and a real attach websocket (subprotocol v4.channel.k8s.io), with the pod's container played
by a local process: the pod's own command, `oishell` replaced by the oishell under test and its workspace by WORKDIR.

usage: kube_apiserver.py LOG.jsonl MODE OISHELL_BIN WORKDIR [CERT.pem KEY.pem]
MODE: ok | forbidden | quota | imagepull | evict (the container is killed 1.5 s after its first output, as an eviction
does, and the pod then reads as Failed/Evicted).
With CERT and KEY it serves HTTPS with that certificate (tests/agent/test_ca.h makes it), as a real API server does.
Prints the port, then serves until stdin closes. Every request is appended to LOG.jsonl as {method, path, headers,
body} before it is answered.
"""
import base64
import hashlib
import json
import os
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

log_path, mode, oishell_bin, workdir = sys.argv[1:5]
tls_files = sys.argv[5:7]
lock = threading.Lock()
pods = {}  # name -> {"manifest", "gets", "phase", "reason", "process"}
GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, body):
        with lock:
            with open(log_path, "a") as f:
                f.write(json.dumps({"method": self.command, "path": self.path, "headers": dict(self.headers),
                                    "body": body}) + "\n")

    def reply(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def pod_name(self):
        parts = self.path.split("?")[0].strip("/").split("/")
        # api v1 namespaces NS pods NAME [attach]
        return parts[5] if len(parts) > 5 else None

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode()
        self.record(body)
        manifest = json.loads(body)
        name = manifest["metadata"]["name"]
        ns = self.path.split("/")[4]
        if mode == "forbidden":
            return self.reply(403, status(403, "Forbidden", 'pods is forbidden: User "agent" cannot create resource '
                                          '"pods" in API group "" in the namespace "%s"' % ns))
        if mode == "quota":
            return self.reply(403, status(403, "Forbidden", 'pods "%s" is forbidden: exceeded quota: compute, '
                                          'requested: limits.memory=4Gi, used: limits.memory=8Gi, limited: '
                                          'limits.memory=8Gi' % name))
        with lock:
            pods[name] = {"manifest": manifest, "gets": 0, "phase": "Pending", "reason": "", "process": None}
        manifest["status"] = {"phase": "Pending"}
        self.reply(201, manifest)

    def do_DELETE(self):
        self.record(None)
        name = self.pod_name()
        with lock:
            pod = pods.get(name)
        if pod is None:
            return self.reply(404, status(404, "NotFound", 'pods "%s" not found' % name))
        if pod["process"] and pod["process"].poll() is None:
            pod["process"].kill()
        with lock:
            del pods[name]
        self.reply(200, {"kind": "Status", "status": "Success"})

    def do_GET(self):
        self.record(None)
        name = self.pod_name()
        with lock:
            pod = pods.get(name)
        if pod is None:
            return self.reply(404, status(404, "NotFound", 'pods "%s" not found' % name))
        if self.path.split("?")[0].endswith("/attach"):
            return self.attach(pod)
        with lock:
            pod["gets"] += 1
            if pod["phase"] == "Pending" and pod["gets"] > 1 and mode != "imagepull":
                pod["phase"] = "Running"
            obj = dict(pod["manifest"])
            obj["status"] = {"phase": pod["phase"], "reason": pod["reason"]}
            if mode == "imagepull":
                obj["status"]["containerStatuses"] = [{"name": "supervisor", "state": {"waiting": {
                    "reason": "ErrImagePull", "message": 'failed to pull image "oishell:latest": not found'}}}]
        self.reply(200, obj)

    # --- attach --------------------------------------------------------------------------------------------------
    def attach(self, pod):
        key = self.headers.get("Sec-WebSocket-Key", "")
        if self.headers.get("Upgrade", "").lower() != "websocket" or not key:
            return self.reply(400, status(400, "BadRequest", "attach needs a websocket"))
        accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.send_header("Sec-WebSocket-Protocol", "v4.channel.k8s.io")
        self.end_headers()
        self.wfile.flush()
        container = pod["manifest"]["spec"]["containers"][0]
        command = list(container["command"])
        command[0] = oishell_bin
        if "--workspace" in command:
            command[command.index("--workspace") + 1] = workdir
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=workdir)
        pod["process"] = proc
        send_lock = threading.Lock()
        sock = self.connection

        def send_frame(opcode, payload):
            header = bytes([0x80 | opcode])
            n = len(payload)
            if n < 126:
                header += bytes([n])
            elif n < 65536:
                header += bytes([126]) + struct.pack(">H", n)
            else:
                header += bytes([127]) + struct.pack(">Q", n)
            with send_lock:
                try:
                    sock.sendall(header + payload)
                except OSError:
                    pass

        first_output = threading.Event()

        def pump(stream, channel):
            while True:
                data = os.read(stream.fileno(), 65536)
                if not data:
                    return
                first_output.set()
                send_frame(2, bytes([channel]) + data)

        out_thread = threading.Thread(target=pump, args=(proc.stdout, 1), daemon=True)
        err_thread = threading.Thread(target=pump, args=(proc.stderr, 2), daemon=True)
        out_thread.start()
        err_thread.start()

        if mode == "evict":
            def evict():
                first_output.wait(30)
                time.sleep(1.5)
                with lock:
                    pod["phase"], pod["reason"] = "Failed", "Evicted"
                proc.kill()
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            threading.Thread(target=evict, daemon=True).start()

        def read_frames():
            rfile = self.rfile
            while True:
                head = rfile.read(2)
                if len(head) < 2:
                    break
                opcode, n = head[0] & 0x0F, head[1] & 0x7F
                masked = head[1] & 0x80
                if n == 126:
                    n = struct.unpack(">H", rfile.read(2))[0]
                elif n == 127:
                    n = struct.unpack(">Q", rfile.read(8))[0]
                mask = rfile.read(4) if masked else b"\0\0\0\0"
                data = bytearray(rfile.read(n))
                for i in range(len(data)):
                    data[i] ^= mask[i % 4]
                if opcode == 8:
                    break
                if opcode == 2 and data and data[0] == 0:
                    try:
                        proc.stdin.write(bytes(data[1:]))
                        proc.stdin.flush()
                    except OSError:
                        pass
            try:
                proc.stdin.close()
            except OSError:
                pass

        threading.Thread(target=read_frames, daemon=True).start()
        code = proc.wait()
        out_thread.join(5)
        err_thread.join(5)
        if mode == "evict" and pod["phase"] == "Failed":
            self.close_connection = True
            return
        if code == 0:
            send_frame(2, b"\x03" + json.dumps({"metadata": {}, "status": "Success"}).encode())
        else:
            send_frame(2, b"\x03" + json.dumps({"metadata": {}, "status": "Failure", "message": "command terminated "
                                                "with non-zero exit code", "reason": "NonZeroExitCode", "details": {
                                                    "causes": [{"reason": "ExitCode", "message": str(code)}]}}).encode())
        send_frame(8, struct.pack(">H", 1000))
        with lock:
            pod["phase"] = "Succeeded" if code == 0 else "Failed"
        self.close_connection = True


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], ssl.SSLError):
            return  # a client that refused our certificate (the tests expect some to)
        super().handle_error(request, client_address)


server = Server(("127.0.0.1", 0), Handler)
server.daemon_threads = True
if tls_files:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tls_files[0], tls_files[1])
    # The handshake happens in the handler's thread (its first read), so a client that refuses the certificate
    # holds up no other.
    server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
for pod in list(pods.values()):
    if pod["process"] and pod["process"].poll() is None:
        pod["process"].kill()
