"""A rate-limited OpenAI-compatible server on 127.0.0.1 (asyncio, HTTP/1.1 keep-alive), for the
rate-limit tests and `bench/rate_limits.py`.

A token bucket admits `rate` requests/s with a burst of `burst`; a request over the limit is answered
at once with 429 and `Retry-After` (`retry_after`: seconds, or "date" for an HTTP date). An admitted
request answers after `latency_s` with `echo: <last user text>`, as JSON or, when the body asks
`stream: true`, as server-sent events (AgentV's OpenAI client streams). It counts the answers, the
429s and the most requests it ever had in flight, and records when each admitted request arrived.

`faults` injects transient faults into admitted requests, after the latency: HTTP 500, HTTP 503
with `Retry-After: 1`, or the connection reset (RST) before any answer. Which request gets which is
drawn from `seed`, the question and how many times that question was asked before, so each test
meets the same faults in every run whatever the order requests arrive in.

Run it alone: `python -m tests.fakes.rate_limited_server RATE [--latency S] [--faults 0.1,0.05,0.05]`
prints its base URL, then serves until stdin closes.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import struct
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from email.utils import formatdate
from typing import Any, Literal

Fault = Literal["500", "503", "reset"]


@dataclass(frozen=True)
class Faults:
    """Shares of admitted requests answered 500, 503 + `Retry-After: 1`, or reset (issue 26)."""

    http_500: float = 0.0
    http_503: float = 0.0
    reset: float = 0.0
    seed: int = 0

    def pick(self, question: str, asked_before: int) -> Fault | None:
        draw = random.Random(f"{self.seed}:{asked_before}:{question}").random()
        if draw < self.http_500:
            return "500"
        if draw < self.http_500 + self.http_503:
            return "503"
        if draw < self.http_500 + self.http_503 + self.reset:
            return "reset"
        return None


class RateLimitedServer:
    """`with RateLimitedServer(rate=50) as server:`; `server.base_url` is `http://127.0.0.1:PORT/v1`."""

    def __init__(
        self,
        *,
        rate: float,
        burst: float = 10,
        latency_s: float = 0.05,
        retry_after: str = "1",
        extra_headers: dict[str, str] | None = None,
        faults: Faults | None = None,
    ) -> None:
        self.rate = rate
        self.faults = faults
        self.asked: Counter[str] = Counter()  # requests per question (the faults' draw)
        self.faulted: Counter[str] = Counter()  # faults sent, by kind
        self.burst = burst
        self.latency_s = latency_s
        self.retry_after = retry_after
        self.extra_headers = extra_headers or {}  # sent with every 429
        self.answered = 0
        self.limited = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.admitted_at: list[float] = []
        self.rejected_until: list[float] = []  # when each 429 told its request to come back (monotonic)
        self._tokens = burst
        self._stamp = time.monotonic()
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> RateLimitedServer:
        self._thread.start()
        started = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        started.result(timeout=10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=2048)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _admit(self) -> bool:
        now = time.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        return False

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                raw = await reader.readexactly(length) if length else b"{}"
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = {}
                if not self._admit():
                    self.limited += 1
                    await self._reply_429(writer)
                    continue
                self.admitted_at.append(time.monotonic())
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
                try:
                    await asyncio.sleep(self.latency_s)
                finally:
                    self.in_flight -= 1
                fault = self._fault(body)
                if fault == "reset":
                    _reset(writer)
                    return
                if fault is not None:
                    await self._reply_fault(writer, fault)
                    continue
                self.answered += 1
                if body.get("stream"):
                    await self._reply_stream(writer, body)
                    return  # one streamed answer per connection
                await self._reply_json(writer, body)
        except (ConnectionError, asyncio.CancelledError):
            return
        finally:
            self._writers.discard(writer)
            writer.close()

    def _fault(self, body: Any) -> Fault | None:
        if self.faults is None:
            return None
        question = self._text(body)
        fault = self.faults.pick(question, self.asked[question])
        self.asked[question] += 1
        if fault is not None:
            self.faulted[fault] += 1
        return fault

    @staticmethod
    async def _reply_fault(writer: asyncio.StreamWriter, fault: Fault) -> None:
        if fault == "503":
            head = b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\n"
            data = b'{"error":{"message":"overloaded","type":"server_error"}}'
        else:
            head = b"HTTP/1.1 500 Internal Server Error\r\n"
            data = b'{"error":{"message":"internal error","type":"server_error"}}'
        writer.write(
            head
            + b"content-type: application/json\r\n"
            + f"content-length: {len(data)}\r\n\r\n".encode()
            + data
        )
        await writer.drain()

    async def _reply_429(self, writer: asyncio.StreamWriter) -> None:
        now = time.time()
        if self.retry_after == "date":  # whole seconds: the next one after now + 1 s, at most 2 s away
            epoch = int(now) + 2
            wait = formatdate(epoch, usegmt=True)
        else:
            epoch, wait = now + float(self.retry_after), self.retry_after
        self.rejected_until.append(time.monotonic() + epoch - now)
        data = b'{"error":{"message":"Rate limit exceeded","type":"rate_limit_error"}}'
        extra = "".join(f"{k}: {v}\r\n" for k, v in self.extra_headers.items())
        writer.write(
            b"HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\n"
            + f"retry-after: {wait}\r\n{extra}content-length: {len(data)}\r\n\r\n".encode()
            + data
        )
        await writer.drain()

    @staticmethod
    def _text(body: Any) -> str:
        for message in reversed(body.get("messages") or []):
            if isinstance(message, dict) and message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, list):
                    return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
                return str(content)
        return str(body.get("prompt", ""))

    async def _reply_json(self, writer: asyncio.StreamWriter, body: Any) -> None:
        answer = {
            "id": "chatcmpl-rl",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake-model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": f"echo: {self._text(body)}"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        data = json.dumps(answer).encode()
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            + f"content-length: {len(data)}\r\n\r\n".encode()
            + data
        )
        await writer.drain()

    async def _reply_stream(self, writer: asyncio.StreamWriter, body: Any) -> None:
        model = body.get("model", "fake-model")
        base = {"id": "chatcmpl-rl", "object": "chat.completion.chunk", "created": int(time.time())}
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
            {"choices": [{"index": 0, "delta": {"content": f"echo: {self._text(body)}"}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}},
        ]
        events = "".join(f"data: {json.dumps({**base, 'model': model, **c})}\n\n" for c in chunks)
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
            b"connection: close\r\n\r\n" + events.encode() + b"data: [DONE]\n\n"
        )
        await writer.drain()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Drop the connection with a TCP RST (SO_LINGER 0), as a crashed proxy does: no answer at all."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="a rate-limited OpenAI-compatible server")
    parser.add_argument("rate", type=float)
    parser.add_argument("--burst", type=float, default=10)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--faults", default="", help="shares of 500, 503 and resets: 0.1,0.05,0.05")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    faults = None
    if args.faults:
        http_500, http_503, reset = (float(x) for x in args.faults.split(","))
        faults = Faults(http_500, http_503, reset, args.seed)
    with RateLimitedServer(rate=args.rate, burst=args.burst, latency_s=args.latency, faults=faults) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()
        stats = {"answered": server.answered, "limited": server.limited, **server.faulted}
        print(json.dumps(stats), flush=True)


if __name__ == "__main__":
    main()
