"""A fake Kubernetes API server over real HTTP, for `gpuplane verify` run as a process against it.

Why a server and not a fake client: the request timeouts, the redirect policy and the threads a stalled
read leaves behind live in the client and the process, below `VerifyCluster`. The server answers the calls
`verify` makes (version, nodes, the probe namespace and its objects, pods, events) from memory, and can be
told to misbehave per call: trickle an answer forever (a stalled list or delete), trickle for a while and
then answer (a create answered late), refuse a create with 409, or redirect.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# (method, path regex) -> how to answer: "stall" (headers, then a byte every half second until the server
# stops), ("late", seconds) (the same, then the real answer), 409, ("redirect", url).
Misbehaviour = Any


@dataclass
class FakeApi:
    """State and behaviour of one fake API server."""

    version: str = "1.33"
    nodes: list[dict[str, Any]] = field(default_factory=list)
    rules: dict[tuple[str, str], Misbehaviour] = field(default_factory=dict)
    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    first: float = 0.0
    """When the first request came (monotonic): the run's own time starts there, after the process's start-up."""
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def seen(self, method: str, pattern: str = "") -> list[str]:
        """Paths of the requests made with `method` whose path matches `pattern`."""
        with self.lock:
            return [p for m, p in self.requests if m == method and re.search(pattern, p)]


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "reason": reason,
        "message": message,
        "code": code,
    }


def _handler(api: FakeApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

        def _body(self) -> dict[str, Any]:
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length) or b"{}") if length else {}

        def _send(self, code: int, document: Any, *, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(document).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _trickle(self, seconds: float | None) -> bool:
            """Send headers, then a space every half second for `seconds` (None: until stopped)."""
            self.send_response(200 if self.command != "POST" else 201)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            end = None if seconds is None else time.monotonic() + seconds
            try:
                while not api.stopping.is_set() and (end is None or time.monotonic() < end):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.5)
            except OSError:
                return False
            return end is not None

        def _answer(self) -> None:
            path = self.path.split("?", 1)[0].rstrip("/") or "/"
            with api.lock:
                api.requests.append((self.command, path))
                api.first = api.first or time.monotonic()
            body = self._body() if self.command in ("POST", "PUT") else {}
            for (method, pattern), rule in api.rules.items():
                if method == self.command and re.search(pattern, path):
                    if rule == "stall":
                        self._trickle(None)
                        return
                    if rule == 409:
                        self._send(409, _status(409, "AlreadyExists", f"{path} already exists"))
                        return
                    if rule[0] == "redirect":
                        self._send(302, {}, headers={"Location": rule[1]})
                        return
                    if rule[0] == "late":
                        if not self._trickle(rule[1]):
                            return
                        self._store(path, body)
                        self.wfile.write(json.dumps(body).encode())
                        return
            self._route(path, body)

        def _store(self, path: str, body: dict[str, Any]) -> None:
            with api.lock:
                api.objects[f"{path}/{body['metadata']['name']}"] = body

        def _route(self, path: str, body: dict[str, Any]) -> None:
            if self.command == "GET" and path == "/version":
                major, minor = api.version.split(".")
                self._send(
                    200,
                    {
                        "major": major,
                        "minor": minor,
                        "gitVersion": f"v{api.version}.0",
                        "gitCommit": "0",
                        "gitTreeState": "clean",
                        "buildDate": "2026-01-01T00:00:00Z",
                        "goVersion": "go1.24",
                        "compiler": "gc",
                        "platform": "linux/amd64",
                    },
                )
            elif self.command == "GET" and path == "/api/v1/nodes":
                self._send(200, {"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": api.nodes})
            elif self.command == "POST":
                self._store(path, body)
                self._send(201, body)
            elif self.command == "DELETE":
                with api.lock:
                    found = api.objects.pop(path, None)
                if found is None:
                    self._send(404, _status(404, "NotFound", f"{path} not found"))
                else:
                    self._send(200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})
            elif self.command == "GET" and path.endswith("/events"):
                self._send(200, {"kind": "EventList", "apiVersion": "v1", "metadata": {}, "items": []})
            elif self.command == "GET" and path in api.objects:
                with api.lock:
                    found = dict(api.objects[path])
                found.setdefault("status", {"phase": "Pending"})
                self._send(200, found)
            else:
                self._send(404, _status(404, "NotFound", f"{path} not found"))

        do_GET = do_POST = do_DELETE = do_PUT = _answer

    return Handler


class Server:
    """A running fake API server on 127.0.0.1 (a context manager)."""

    def __init__(self, api: FakeApi) -> None:
        self.api = api
        self.http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        self.thread = threading.Thread(target=self.http.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.api.stopping.set()
        self.http.shutdown()
        self.http.server_close()

    def kubeconfig(self, path: Path) -> Path:
        """A kubeconfig (a token user) for this server."""
        path.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
                    "users": [{"name": "fake", "user": {"token": "t"}}],
                    "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
                    "current-context": "fake",
                }
            )
        )
        return path


def served(api: FakeApi) -> Iterator[Server]:
    """A pytest fixture body: the server for `api`, stopped afterwards."""
    with Server(api) as server:
        yield server
