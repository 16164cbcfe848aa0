"""`JsonHttpClient` over plain HTTP (the asyncio backend) against real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest

from agentv_ci.errors import TargetError
from agentv_ci.targets.http import JsonHttpClient
from tests.fakes.llm_server import FakeLlmServer


def _client(base_url: str, **overrides: object) -> JsonHttpClient:
    values: dict[str, object] = {"base_url": base_url, "headers": {}, "timeout_s": 5.0, "max_retries": 0}
    values.update(overrides)
    return JsonHttpClient(**values)  # type: ignore[arg-type]


def test_keep_alive_reuses_connections_and_bodies_arrive_whole(llm_server: FakeLlmServer) -> None:
    """Many requests over a few pooled connections; each JSON body reaches the server intact."""

    async def go() -> list[object]:
        client = _client(llm_server.base_url, max_connections=4)
        try:
            payloads = [{"model": "m", "messages": [{"role": "user", "content": "q0 " + "x" * 5000}]}]
            payloads += [
                {"model": "m", "messages": [{"role": "user", "content": f"q{i}"}]} for i in range(1, 40)
            ]
            return await asyncio.gather(*(client.post_json("chat/completions", p) for p in payloads))
        finally:
            await client.aclose()

    bodies = asyncio.run(go())
    assert len(bodies) == 40
    assert sorted(call.last_user_text().split()[0] for call in llm_server.calls) == sorted(
        f"q{i}" for i in range(40)
    )


def test_connection_refused_is_a_target_error() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    async def go() -> object:
        client = _client(f"http://127.0.0.1:{port}/v1")
        try:
            return await client.post_json("chat/completions", {})
        finally:
            await client.aclose()

    with pytest.raises(TargetError, match="connection error"):
        asyncio.run(go())


def test_a_server_closing_an_idle_keep_alive_connection_is_not_an_error() -> None:
    """The server answers with keep-alive, then closes the socket while it sits idle in the pool: the
    next request must open a new connection, not fail (no retries allowed here)."""
    body = json.dumps({"ok": True}).encode()
    reply = (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: keep-alive\r\n"
        + f"content-length: {len(body)}\r\n\r\n".encode()
        + body
    )

    async def go() -> list[object]:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            await reader.readexactly(length)
            writer.write(reply)
            await writer.drain()
            writer.close()  # one answer per connection, despite "keep-alive"

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        client = _client(f"http://127.0.0.1:{port}/v1", max_connections=1)
        try:
            answers = []
            for _ in range(3):
                answers.append(await client.post_json("chat/completions", {"q": 1}))
                await asyncio.sleep(0.05)  # the close reaches us while the connection is idle
            return answers
        finally:
            await client.aclose()
            server.close()
            await server.wait_closed()

    assert asyncio.run(go()) == [{"ok": True}] * 3
