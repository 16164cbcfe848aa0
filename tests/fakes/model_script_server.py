"""A scripted model on 127.0.0.1 that drives the real coding-agent CLIs offline.

It speaks the two streaming wire formats the CLIs use: the OpenAI Responses API (`POST
.../responses`, Codex; pi's `openai` provider) and chat completions (`POST .../chat/completions`,
Copilot's custom provider, pi's `openai-completions` models). Each model request takes the next
`Turn` of the script:

- `Turn(text="...")`: the final answer;
- `Turn(call=("shell", {"command": ["ls"]}))`: one function call (name, arguments) - the agent runs
  the tool and asks again with its result;
- `Turn(cut=True)`: the stream starts, then the connection is dropped before the response ends (the
  agent should reconnect and ask again).

When the script runs out, every further request gets `fallback` as its answer. Every request body is
kept in `requests` (what the agent sent: its tools, the tool results).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Turn:
    text: str | None = None
    call: tuple[str, dict[str, Any]] | None = None
    cut: bool = False
    custom: bool = False  # Responses API: a `custom_tool_call` (free-form input, e.g. Codex's apply_patch)


@dataclass
class Request:
    path: str
    body: dict[str, Any]

    def tool_names(self) -> list[str]:
        names = []
        for tool in self.body.get("tools") or []:
            function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
            names.append(str(function.get("name", tool.get("type", ""))))
        return names

    def text(self) -> str:
        return json.dumps(self.body)


def _sse(event: dict[str, Any], *, named: bool) -> bytes:
    head = f"event: {event['type']}\n" if named else ""
    return f"{head}data: {json.dumps(event)}\n\n".encode()


def _responses_items(turn: Turn, number: int) -> list[dict[str, Any]]:
    if turn.call is not None:
        name, arguments = turn.call
        if turn.custom:
            raw = str(arguments.get("input", ""))
            return [
                {
                    "type": "custom_tool_call",
                    "id": f"ctc_{number}",
                    "call_id": f"call_{number}",
                    "name": name,
                    "input": raw,
                    "status": "completed",
                }
            ]
        return [
            {
                "type": "function_call",
                "id": f"fc_{number}",
                "call_id": f"call_{number}",
                "name": name,
                "arguments": json.dumps(arguments),
                "status": "completed",
            }
        ]
    text = turn.text or ""
    return [
        {
            "type": "message",
            "id": f"msg_{number}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
    ]


class ModelScriptServer:
    """`with ModelScriptServer([Turn(...), ...]) as server:`; `server.base_url` ends in `/v1`."""

    def __init__(self, script: list[Turn], *, fallback: str = "done", model: str = "fake-model") -> None:
        self.script: deque[Turn] = deque(script)
        self.fallback = fallback
        self.model = model
        self.requests: list[Request] = []
        self.cuts = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> ModelScriptServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next(self, request: Request) -> Turn:
        with self._lock:
            self.requests.append(request)
            return self.script.popleft() if self.script else Turn(text=self.fallback)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:  # model listings
                data = json.dumps({"object": "list", "data": [{"id": server.model, "object": "model"}]})
                self._plain(200, data.encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                request = Request(self.path, body if isinstance(body, dict) else {})
                if not (self.path.endswith("/responses") or self.path.endswith("/chat/completions")):
                    self._plain(404, b'{"error": {"message": "not found"}}')
                    return
                turn = server._next(request)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True
                if self.path.endswith("/responses"):
                    self._responses(turn, len(server.requests))
                else:
                    self._chat(turn, len(server.requests))

            def _plain(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _responses(self, turn: Turn, number: int) -> None:
                response = {
                    "id": f"resp_{number}",
                    "object": "response",
                    "model": server.model,
                    "status": "in_progress",
                    "output": [],
                }
                self.wfile.write(_sse({"type": "response.created", "response": response}, named=True))
                if turn.cut:
                    server.cuts += 1
                    self.wfile.flush()
                    return  # connection closed: no response.completed
                items = _responses_items(turn, number)
                for index, item in enumerate(items):
                    added = {"type": "response.output_item.added", "output_index": index, "item": item}
                    self.wfile.write(_sse(added, named=True))
                    if item["type"] == "message":
                        delta = {
                            "type": "response.output_text.delta",
                            "item_id": item["id"],
                            "output_index": index,
                            "content_index": 0,
                            "delta": turn.text or "",
                        }
                        self.wfile.write(_sse(delta, named=True))
                    done = {"type": "response.output_item.done", "output_index": index, "item": item}
                    self.wfile.write(_sse(done, named=True))
                usage = {
                    "input_tokens": 100,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 20,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": 120,
                }
                completed = {**response, "status": "completed", "output": items, "usage": usage}
                self.wfile.write(_sse({"type": "response.completed", "response": completed}, named=True))

            def _chat(self, turn: Turn, number: int) -> None:
                base = {
                    "id": f"chatcmpl-{number}",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": server.model,
                }
                delta: dict[str, Any] = {"role": "assistant", "content": ""}
                self.wfile.write(_sse({**base, "choices": [{"index": 0, "delta": delta}]}, named=False))
                if turn.cut:
                    server.cuts += 1
                    self.wfile.flush()
                    return
                if turn.call is not None:
                    name, arguments = turn.call
                    call = {
                        "index": 0,
                        "id": f"call_{number}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(arguments)},
                    }
                    chunk = {"index": 0, "delta": {"tool_calls": [call]}}
                    finish = "tool_calls"
                else:
                    chunk = {"index": 0, "delta": {"content": turn.text or ""}}
                    finish = "stop"
                self.wfile.write(_sse({**base, "choices": [chunk]}, named=False))
                end = {"index": 0, "delta": {}, "finish_reason": finish}
                self.wfile.write(_sse({**base, "choices": [end]}, named=False))
                usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
                self.wfile.write(_sse({**base, "choices": [], "usage": usage}, named=False))
                self.wfile.write(b"data: [DONE]\n\n")

        return Handler
