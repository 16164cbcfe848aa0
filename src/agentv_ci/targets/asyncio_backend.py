"""A lean httpcore network backend on plain asyncio streams, for `http://` model servers.

httpcore's default backend goes through anyio (a cancel scope and attribute lookups per read/write),
and h11 hands it a request as two writes (head, body), i.e. two `send()` syscalls. This backend
buffers writes until the response is read, so a request leaves in one `send()`, and reads with a
plain `asyncio.timeout`. Errors map to httpcore's exceptions, so httpx reports them as usual.
TLS is not handled here: `https://` keeps httpcore's default backend.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterable
from typing import Any

import httpcore
from httpcore._backends.base import SOCKET_OPTION
from httpcore._utils import is_socket_readable


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One TCP connection; writes are held until the next read (or close)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._pending: list[bytes] = []

    def _flush(self) -> None:
        if self._pending:
            data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
            self._pending.clear()
            try:
                self._writer.write(data)  # the transport sends now, or buffers and sends when writable
            except OSError as exc:
                raise httpcore.WriteError(str(exc)) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            self._pending.append(buffer)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._flush()
        try:
            async with asyncio.timeout(timeout):
                return await self._reader.read(max_bytes)
        except TimeoutError as exc:
            raise httpcore.ReadTimeout(f"read timed out after {timeout}s") from exc
        except OSError as exc:
            raise httpcore.ReadError(str(exc)) from exc

    async def aclose(self) -> None:
        self._pending.clear()
        self._writer.close()

    async def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.UnsupportedProtocol("TLS is not handled by the asyncio backend")

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            sock = self._writer.get_extra_info("socket")
            return is_socket_readable(sock) or self._reader.at_eof()
        if info == "socket":
            return self._writer.get_extra_info("socket")
        if info == "client_addr":
            return self._writer.get_extra_info("sockname")
        if info == "server_addr":
            return self._writer.get_extra_info("peername")
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """Opens `AsyncioStream`s (asyncio sets TCP_NODELAY on TCP sockets itself)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        local = (local_address, 0) if local_address else None
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(host, port, local_addr=local)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"connect timed out after {timeout}s") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        sock: socket.socket | None = writer.get_extra_info("socket")
        if sock is not None:
            for option in socket_options or ():
                sock.setsockopt(*option)  # type: ignore[arg-type]
        return AsyncioStream(reader, writer)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
