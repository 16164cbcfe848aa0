"""A real HTTP server on 127.0.0.1 that answers one byte at a time: a server that never goes silent
long enough for a read timeout to fire, yet would take minutes to finish its answer.

`where="headers"` drips everything from the status line on; `where="body"` sends the status line
and headers at once (with the true `Content-Length`) and drips the body. The answer is an
OpenAI-compatible chat completion. `sent` counts the bytes each connection received before the
client hung up, so a test can tell when the client gave up.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OPENAI_REPLY = json.dumps(
    {
        "id": "chatcmpl-drip",
        "object": "chat.completion",
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Paris, the capital of France."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
).encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class DripServer:
    """`with DripServer(interval_s=0.5) as server:`; `server.base_url` is `http://127.0.0.1:PORT/v1`."""

    def __init__(
        self, *, interval_s: float = 0.5, where: str = "headers", body: bytes = OPENAI_REPLY
    ) -> None:
        assert where in ("headers", "body")
        self.interval_s = interval_s
        self.where = where
        self.body = body
        self.sent: list[int] = []  # per connection: bytes written before the client went away
        self.connections = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def __enter__(self) -> DripServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def answer(self) -> bytes:
        head = (
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(self.body)}\r\n"
            "Connection: close\r\n\r\n"
        ).encode()
        return head + self.body

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                self._drip()

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self._drip()

            def _drip(self) -> None:
                with fake._lock:
                    fake.connections += 1
                    index = len(fake.sent)
                    fake.sent.append(0)
                data = fake.answer()
                start = 0
                if fake.where == "body":
                    start = len(data) - len(fake.body)
                    self.wfile.write(data[:start])
                    self.wfile.flush()
                for position in range(start, len(data)):
                    if fake._stop.wait(fake.interval_s):
                        return
                    try:
                        self.wfile.write(data[position : position + 1])
                        self.wfile.flush()
                    except OSError:  # the client hung up: what we wanted to see
                        return
                    with fake._lock:
                        fake.sent[index] = position + 1 - start
                self.close_connection = True

        return Handler
