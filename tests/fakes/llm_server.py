"""A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions (OpenRouter's too), Anthropic
messages and Gemini generateContent APIs.

Tests script it with a responder: `responder(call) -> Reply | str | dict`. A `str` becomes the
assistant text; a `dict` is sent as the JSON body verbatim; a `Reply` controls status, headers,
raw body and delay. Faults can be queued (`server.fail_next(429, retry_after=0)`), and every
request is recorded in `server.calls`.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Call:
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def api(self) -> str:
        if ":generateContent" in self.path:
            return "gemini"
        return "anthropic" if self.path.endswith("/messages") else "openai"

    def last_user_text(self) -> str:
        if self.api == "gemini":
            for turn in reversed(self.body.get("contents", [])):
                if turn.get("role") == "user":
                    return "".join(p.get("text", "") for p in turn.get("parts", []))
            return ""
        for message in reversed(self.body.get("messages", [])):
            if message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, str):
                    return content
                return "".join(b.get("text", "") for b in content if isinstance(b, dict))
        return ""


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict -> JSON; str/bytes -> raw body
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    text: str | None = None  # assistant text (builds a normal API response)
    tool_calls: list[dict[str, Any]] | None = None  # [{"name":..., "arguments": {...}}]
    usage: tuple[int, int] = (10, 5)
    cost: float | None = None  # OpenRouter's `usage.cost` (chat completions only)


Responder = Callable[[Call], "Reply | str | dict[str, Any]"]


def openai_body(
    text: str, usage: tuple[int, int], tool_calls: list[dict[str, Any]] | None, model: str
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": tc["name"], "arguments": json.dumps(tc.get("arguments", {}))},
            }
            for i, tc in enumerate(tool_calls)
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}
        ],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    }


def gemini_body(
    text: str, usage: tuple[int, int], tool_calls: list[dict[str, Any]] | None, model: str
) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    for tc in tool_calls or []:
        parts.append({"functionCall": {"name": tc["name"], "args": tc.get("arguments", {})}})
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": usage[0],
            "candidatesTokenCount": usage[1],
            "totalTokenCount": sum(usage),
        },
        "modelVersion": model,
    }


def anthropic_body(
    text: str, usage: tuple[int, int], tool_calls: list[dict[str, Any]] | None, model: str
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for i, tc in enumerate(tool_calls or []):
        content.append(
            {"type": "tool_use", "id": f"toolu_{i}", "name": tc["name"], "input": tc.get("arguments", {})}
        )
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if tool_calls else "end_turn",
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


class FakeLlmServer:
    """Start with `with FakeLlmServer() as server:`; `server.base_url` is `http://127.0.0.1:PORT/v1`."""

    def __init__(self, responder: Responder | None = None, *, latency_s: float = 0.0) -> None:
        self.responder: Responder = responder or (lambda call: f"echo: {call.last_user_text()}")
        self.latency_s = latency_s
        self.calls: list[Call] = []
        self._faults: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def gemini_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1beta"

    def fail_next(
        self, status: int, *, times: int = 1, retry_after: float | None = None, body: Any = None
    ) -> None:
        headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
        for _ in range(times):
            self._faults.append(
                Reply(status=status, headers=headers, body=body or {"error": {"message": "injected"}})
            )

    def __enter__(self) -> FakeLlmServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # silence
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = None
                call = Call(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with server._lock:
                    server.calls.append(call)
                    fault = server._faults.popleft() if server._faults else None
                reply = fault or server._resolve(call)
                delay = reply.delay_s or server.latency_s
                if delay:
                    time.sleep(delay)
                self._send(reply, call)

            def _send(self, reply: Reply, call: Call) -> None:
                if reply.body is None and reply.status == 200 and (call.body or {}).get("stream"):
                    self._send_stream(reply, call)
                    return
                if reply.body is None:
                    model = (call.body or {}).get("model", "fake-model")
                    if (
                        call.api == "gemini"
                    ):  # the model is in the path: /v1beta/models/<model>:generateContent
                        model = call.path.rsplit("/", 1)[-1].split(":", 1)[0]
                    build = {"anthropic": anthropic_body, "gemini": gemini_body}.get(call.api, openai_body)
                    payload: Any = build(reply.text or "", reply.usage, reply.tool_calls, model)
                    if reply.cost is not None and call.api == "openai":
                        payload["usage"]["cost"] = reply.cost
                else:
                    payload = reply.body
                data = (
                    payload
                    if isinstance(payload, bytes)
                    else (payload.encode() if isinstance(payload, str) else json.dumps(payload).encode())
                )
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _send_stream(self, reply: Reply, call: Call) -> None:
                # Server-sent events as OpenAI streams them (AgentV's own clients stream).
                model = (call.body or {}).get("model", "fake-model")
                full = openai_body(reply.text or "", reply.usage, reply.tool_calls, model)
                message = full["choices"][0]["message"]
                chunks: list[dict[str, Any]] = [
                    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": message["content"]}}]}
                ]
                if message.get("tool_calls"):
                    calls = [dict(tc, index=i) for i, tc in enumerate(message["tool_calls"])]
                    chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": calls}}]})
                finish = full["choices"][0]["finish_reason"]
                chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
                chunks.append({"choices": [], "usage": full["usage"]})
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                for chunk in chunks:
                    chunk.update({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model})
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.close_connection = True

        return Handler

    def _resolve(self, call: Call) -> Reply:
        result = self.responder(call)
        if isinstance(result, Reply):
            return result
        if isinstance(result, str):
            return Reply(text=result)
        return Reply(body=result)
