"""Real loopback HTTP servers for the remote backend's tests (127.0.0.1 only, stopped by their context manager).

- ``replaying(exchanges)``: answers with exchanges recorded from the real llama.cpp server (test/data/remote/,
  written by scripts/record_remote.py), in order, and keeps what the client sent;
- ``LoopbackServer(answer)``: answers with ``answer(method, path, body)``, for the failures a recording cannot
  hold: ``HANG`` (accept, never answer), ``CLOSE`` (hang up without an answer), a delay, a status;
- ``closed_port()``: a port nobody listens on (connection refused).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

RECORDINGS = Path(__file__).resolve().parent / "data" / "remote"
HANG, CLOSE = "hang", "close"


class LoopbackServer:
    """``answer(method, path, body bytes)`` -> (status, body bytes or dict) | (status, body, delay_s) | HANG | CLOSE."""

    def __init__(self, answer) -> None:
        self.answer = answer
        self.requests: list = []  # (method, path, body bytes)
        self.headers: list = []  # the request headers, one dict per request
        self.released = threading.Event()  # set on exit: hanging handlers return

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> LoopbackServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                owner.requests.append((self.command, self.path, body))
                owner.headers.append(dict(self.headers))
                reply = owner.answer(self.command, self.path, body)
                if reply == HANG:
                    owner.released.wait(60.0)
                    return
                if reply == CLOSE:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                status, payload, *delay = reply
                if delay:
                    time.sleep(delay[0])
                data = json.dumps(payload).encode() if isinstance(payload, (dict, list)) else payload
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up first (its timeout)
                    self.close_connection = True

            do_GET = do_POST = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5.0)


def load_recording(name: str) -> dict:
    return json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))


def replaying(recording: dict, delay_s: float = 0.0) -> LoopbackServer:
    """A server that answers the recording's exchanges in order, each ``delay_s`` late (a slow server); a request
    past the last: HTTP 500."""
    exchanges = list(recording["exchanges"])

    def answer(method, path, body):
        if not exchanges:
            return 500, {"error": "the recording has no more exchanges"}
        response = exchanges.pop(0)["response"]
        return response["status"], response["body"].encode("utf-8"), delay_s

    return LoopbackServer(answer)


def sent_requests(server: LoopbackServer) -> list:
    """What the client sent: {"method", "path", "body": decoded JSON or None}."""
    return [{"method": method, "path": path, "body": json.loads(body) if body else None}
            for method, path, body in server.requests]


def closed_port() -> int:
    """A loopback port with nothing listening (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
