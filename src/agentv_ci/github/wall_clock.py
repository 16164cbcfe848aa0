"""A wall-clock deadline for synchronous httpx requests: connect, TLS, sending, headers and body.

httpx's timeouts are per phase and per socket operation: a server that sends one byte a second
resets the read timeout with every byte and keeps a request alive for as long as it likes. Here every
socket operation httpcore makes is bounded by what is left until the deadline of the request in
progress (`with deadline(seconds):`), and one made after it raises httpcore's timeout, which httpx
reports as `httpx.TimeoutException`. The deadline lives in a context variable, so a pooled
connection reused by a later request obeys that request's deadline.

`install(client)` wraps the network backend of every connection pool the client has (its own and any
proxy mounts from the environment), so the client keeps all of httpx's usual behaviour.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("agentv_ci_deadline", default=None)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every socket operation inside ends by `seconds` from now (monotonic clock)."""
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def passed() -> bool:
    """Whether the deadline in force (if any) has passed."""
    end = _deadline.get()
    return end is not None and time.monotonic() >= end


def _bounded(timeout: float | None, error: type[Exception]) -> float | None:
    end = _deadline.get()
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise error("the wall-clock deadline passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, bounded))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_tcp(host, port, bounded, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_unix_socket(path, bounded, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def install(client: httpx.Client) -> None:
    """Bound every connection `client` opens by the deadline in force (see the module docstring)."""
    transports = [client._transport, *client._mounts.values()]
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is None:
            raise RuntimeError(f"httpx/httpcore changed: no network backend on {type(transport).__name__}")
        if not isinstance(backend, _Backend):
            pool._network_backend = _Backend(backend)  # type: ignore[union-attr]
