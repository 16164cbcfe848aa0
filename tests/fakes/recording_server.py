"""The scaffold the fake forges share (github_server.py, gitlab_server.py): an API server and a
storage server on another port, both real HTTP servers on 127.0.0.1, every request recorded.

A fake subclasses `RecordingServers` and answers in `_answer(handler, record)` (with
`handler.reply(status, payload, headers)`); the recording, the lifecycle and the filters are here.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qsl, urlsplit


@dataclass
class Recorded:
    server: str  # "api" or "storage"
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # names lower-cased
    body: Any  # decoded JSON, else raw bytes, None when empty


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class RecordingHandler(BaseHTTPRequestHandler):
    """Records each request on its fake, then lets the fake answer it."""

    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16  # headers and body leave in one write (no delayed-ACK stalls)
    fake: RecordingServers
    server_name: str

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        parts = urlsplit(self.path)
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        headers = {k.lower(): v for k, v in self.headers.items()}
        record = Recorded(self.server_name, method, parts.path, dict(parse_qsl(parts.query)), headers, body)
        with self.fake._lock:
            self.fake.requests.append(record)
        self.fake._answer(self, record)

    def reply(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        """`payload` as JSON (bytes as they are), with `headers`."""
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        if not isinstance(payload, bytes):
            self.send_header("content-type", "application/json; charset=utf-8")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


class RecordingServers:
    """Two servers ("api", "storage") started by `with`; `requests` holds every request in order."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._lock = threading.RLock()
        self._closing = threading.Event()  # set at shutdown: ends a slow answer in progress
        self._api = _Server(("127.0.0.1", 0), self._handler("api"))
        self._storage = _Server(("127.0.0.1", 0), self._handler("storage"))
        self._threads = [
            threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)  # quick shutdown
            for server in (self._api, self._storage)
        ]

    def _answer(self, handler: RecordingHandler, request: Recorded) -> None:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._api.server_address[1]}"

    @property
    def storage_url(self) -> str:
        return f"http://127.0.0.1:{self._storage.server_address[1]}"

    def __enter__(self) -> Self:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        for server in (self._api, self._storage):
            server.shutdown()
            server.server_close()

    def requests_to(self, server: str) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.server == server]

    def calls(self, method: str, path_contains: str = "") -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.method == method and path_contains in r.path]

    def _handler(self, server_name: str) -> type[RecordingHandler]:
        return type("Handler", (RecordingHandler,), {"fake": self, "server_name": server_name})
