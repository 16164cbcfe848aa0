"""The one place that imports httpx: a JSON POST client with timeouts and retries.

`timeout_s` is a wall-clock deadline for each attempt, covering connect, sending, the headers and
the whole body: a server that drips one byte a second is cut off at the deadline, not kept alive by
each byte resetting a read timeout (httpx's own timeouts are per phase, and stay as a second bound).
The whole call, retries and rate-limit waits included, ends at its own deadline (the test's timeout,
else the default of deadlines.py), counted from its first send.

What is retried, how long it waits and when it gives up is the one policy of retrying/, set for model
APIs by targets/retry_policy.py, and its loop is retrying's too. A 429 or 529 is
a rate limit, handled by the target's shared limiter (targets/rate_limits.py). Every failure surfaces
as `TargetError` with the status and a short excerpt of the body.

Tests hand the client an httpx transport (`httpx.MockTransport`) and a `clock` (agentv_ci/clock.py)
in place of the network and the real time; the deadlines are the event loop's (`asyncio.timeout`),
so a virtual clock is the time of the loop it runs on (tests/fakes/virtual_clock.py).
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import ssl
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpcore
import httpx
import msgspec

if importlib.util.find_spec("sniffio") is None:
    # httpcore tries `import sniffio` on every lock it takes; when it is not installed each failed
    # import scans sys.path (~0.6 ms per request). A None entry makes the failure instant, with the
    # same outcome (httpcore then assumes asyncio, which is what we run on).
    sys.modules.setdefault("sniffio", None)  # type: ignore[arg-type]

import hashlib

from agentv_ci.clock import SYSTEM_CLOCK, Clock
from agentv_ci.deadlines import default_test_timeout_s, timed_out
from agentv_ci.errors import TargetError, TargetTimeout
from agentv_ci.retrying import GiveUp, Retry, RetryPolicy, call_with_retries_async
from agentv_ci.targets.limiter_registry import limiter_for
from agentv_ci.targets.rate_headers import rate_signal, retry_after_seconds
from agentv_ci.targets.rate_limits import RATE_LIMIT_STATUSES, LimitSettings, TargetLimiter
from agentv_ci.targets.retry_policy import model_api_policy

POOL_SLICE = 4  # connections per underlying httpx client
# A larger response body is an execution error, read no further (an answer is cut at the answer cap
# anyway, targets.answer_cap; a JSON body cannot be parsed in part). As a cli target's output file.
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
_encoder = msgspec.json.Encoder()


@functools.cache
def _shared_ssl_context(verify: bool = True) -> ssl.SSLContext:
    return httpx.create_ssl_context(verify=verify)


@dataclass(frozen=True)
class _Failure:
    """Why an attempt that may be tried again failed."""

    error: str
    rate_limited: bool = False  # its waits are the limiter's (other requests wait them too)
    timed_out: bool = False


class HttpSettings(Protocol):
    """The timeout/retry/pool fields an HTTP target's Config carries (OpenAI, Azure, Anthropic)."""

    timeout_seconds: float
    max_retries: int
    retry_initial_delay_ms: float
    retry_max_delay_ms: float
    max_connections: int
    headers: dict[str, str]
    max_rpm: float | None
    max_tpm: float | None
    max_concurrency: int | None


def client_for(
    settings: HttpSettings,
    *,
    base_url: str,
    auth_headers: Mapping[str, str],
    name: str = "",
    model: str = "",
) -> JsonHttpClient:
    """A `JsonHttpClient` configured from a target's settings; its own `headers` win over `auth_headers`.
    Targets with the same `base_url`, `model` and credentials share one rate limiter in a run."""

    credentials = hashlib.sha256(repr(sorted(auth_headers.items())).encode()).hexdigest()
    return JsonHttpClient(
        base_url=base_url,
        headers={**auth_headers, **settings.headers},
        timeout_s=settings.timeout_seconds,
        max_retries=settings.max_retries,
        backoff_base_s=settings.retry_initial_delay_ms / 1000,
        backoff_cap_s=settings.retry_max_delay_ms / 1000,
        max_connections=settings.max_connections,
        limits=LimitSettings(settings.max_rpm, settings.max_tpm, settings.max_concurrency),
        limit_key=(base_url.rstrip("/"), model, credentials),
        name=name or base_url,
    )


class JsonHttpClient:
    """POSTs JSON and decodes JSON, with retries; shared by the OpenAI/Azure/Anthropic targets."""

    def __init__(
        self,
        *,
        base_url: str,
        headers: Mapping[str, str],
        timeout_s: float,
        max_retries: int,
        backoff_base_s: float = 0.5,
        backoff_cap_s: float = 30.0,
        max_connections: int = 100,
        limits: LimitSettings | None = None,
        limit_key: Any = None,
        name: str = "",
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock = SYSTEM_CLOCK,
        retry: RetryPolicy | None = None,
    ) -> None:
        # `retry` (a whole policy) wins over the retry and backoff settings
        self.retry = retry or model_api_policy(
            max_retries, backoff_s=backoff_base_s, backoff_cap_s=backoff_cap_s
        )
        self._clock = clock
        self.name = name or base_url
        self._limits = limits or LimitSettings()
        self._limit_key = limit_key if limit_key is not None else ("client", id(self))
        self._limiter: TargetLimiter | None = None
        self.timeout_s = timeout_s
        self.deadline_s = default_test_timeout_s()  # a call's deadline when its test sets none
        self._base = httpx.URL(base_url.rstrip("/") + "/")
        self._headers = {"content-type": "application/json", "accept": "application/json", **headers}
        self._timeout = httpx.Timeout(timeout_s).as_dict()
        # Transports, not Clients: the client layer (auth, cookies, redirects, URL merging) costs
        # about a third of the CPU per request and none of it is needed here. httpcore's pool scans
        # every connection per request, so many small pools (each used by the least busy caller)
        # scale to 50+ requests in flight. One SSL context: loading the CA bundle costs ~20 ms (and
        # even the unverified one a plain-http transport is given, never used, ~0.2 ms per pool).
        self._busy = [0]
        self._urls: dict[tuple[str, tuple[tuple[str, str], ...]], httpx.URL] = {}
        if transport is not None:  # given (a test's MockTransport): it is the only pool
            self._pools: list[httpx.AsyncBaseTransport] = [transport]
            return
        verify = _shared_ssl_context(self._base.scheme == "https")
        per_pool = min(POOL_SLICE, max(1, max_connections))
        count = max(1, -(-max_connections // per_pool))
        pools = [
            httpx.AsyncHTTPTransport(
                verify=verify,
                limits=httpx.Limits(max_connections=per_pool, max_keepalive_connections=per_pool),
            )
            for _ in range(count)
        ]
        if self._base.scheme == "http":
            # Plain-HTTP servers (local vLLM/Ollama/LiteLLM, test fakes): the lean asyncio backend
            # (one send() per request, no anyio layer). httpx still maps the errors.
            from agentv_ci.targets.asyncio_backend import AsyncioBackend

            for pool in pools:
                pool._pool = httpcore.AsyncConnectionPool(
                    max_connections=per_pool,
                    max_keepalive_connections=per_pool,
                    network_backend=AsyncioBackend(),
                )
        self._pools = list(pools)
        self._busy = [0] * count

    async def _post_once(
        self, path: str, body: bytes, params: Mapping[str, str] | None
    ) -> tuple[int, Any, bytes]:
        key = (path, tuple(sorted(params.items())) if params else ())
        url = self._urls.get(key)
        if url is None:
            url = self._base.join(path.lstrip("/"))
            if params:
                url = url.copy_merge_params(dict(params))
            self._urls[key] = url
        request = httpx.Request(
            "POST", url, content=body, headers=self._headers, extensions={"timeout": self._timeout}
        )
        index = self._busy.index(min(self._busy))
        self._busy[index] += 1
        try:
            async with asyncio.timeout(self.timeout_s):  # the whole exchange, body included
                response = await self._pools[index].handle_async_request(request)
                try:
                    content = await _read_capped(response)
                finally:
                    await response.aclose()
            return response.status_code, response.headers, content
        finally:
            self._busy[index] -= 1

    async def post_json(
        self,
        path: str,
        payload: Any,
        *,
        params: Mapping[str, str] | None = None,
        deadline_s: float | None = None,
    ) -> Any:
        """The decoded answer to POSTing `payload`, retried as targets/retry_policy.py says, within
        `deadline_s` (else the default per-test timeout) from the first send."""
        body = _encoder.encode(payload)
        limiter = self._limiter
        if limiter is None:
            limiter = self._limiter = limiter_for(self._limit_key, self.name, self._limits, clock=self._clock)
        tokens = _estimated_tokens(body) if limiter.settings.max_tpm else 0.0
        deadline = deadline_s or self.deadline_s
        sends = 0

        async def attempt() -> Any:
            nonlocal sends
            if sends:
                await limiter.acquire(tokens)
            sends += 1
            return await self._attempt(path, body, params, limiter, tokens)

        async def wait(retry: Retry[_Failure], delay: float) -> None:
            if retry.failure.rate_limited:
                await limiter.wait_limited(delay)
            else:
                await self._clock.sleep(delay)

        # The first admission waits the target's pace (other tests' requests), not this test's time.
        await limiter.acquire(tokens)
        try:
            async with asyncio.timeout(deadline):
                return await call_with_retries_async(
                    attempt, policy=self.retry, wait=wait, give_up=self._give_up, now=self._clock.now
                )
        except TimeoutError:
            raise TargetTimeout(f"request {timed_out(deadline)}, {sends} request(s) sent") from None

    async def _attempt(
        self,
        path: str,
        body: bytes,
        params: Mapping[str, str] | None,
        limiter: TargetLimiter,
        tokens: float,
    ) -> Any:
        """One request, admitted by `limiter` and given back to it: the decoded answer, a `Retry`, or
        `TargetError` for an answer not worth asking again."""
        sent = self._clock.now()
        try:
            status, response_headers, content = await self._post_once(path, body, params)
        except (httpx.TimeoutException, TimeoutError):
            limiter.release_failed()
            return Retry(_Failure(f"request {timed_out(self.timeout_s)}", timed_out=True))
        except httpx.TransportError as exc:
            limiter.release_failed()
            return Retry(_Failure(f"connection error: {type(exc).__name__}: {exc}"))
        except BaseException:  # cancelled (the test's deadline): the slot is given back
            limiter.release_failed()
            raise
        if status < 300:
            limiter.release_ok(self._clock.now() - sent)
            _note_limits(limiter, response_headers)
            decoded = self._decode(content)
            if tokens:
                limiter.charge(_output_tokens(decoded))
            return decoded
        error = f"HTTP {status}: {_excerpt(content)}"
        if status in RATE_LIMIT_STATUSES:
            signal = rate_signal(response_headers)
            if signal.exhausted_for is not None:
                limiter.hold(signal.exhausted_for)
            told = signal.exhausted_for if signal.retry_after is None else signal.retry_after
            wait = limiter.release_limited(told)
            return Retry(_Failure(error, rate_limited=True), wait, spends=self.retry.says_now(told))
        limiter.release_failed()
        if not self.retry.retried(status):
            raise TargetError(error)
        return Retry(_Failure(error), retry_after_seconds(response_headers))

    def _give_up(self, retry: Retry[_Failure], why: GiveUp) -> Any:
        error = retry.failure.error
        if why.reason == "rate_limited":
            raise TargetError(
                f"{error} (still rate limited {self.retry.rate_limited_give_up_s:g}s after "
                f"the first request; lower the target's max_rpm or max_concurrency)"
            )
        raise (TargetTimeout if retry.failure.timed_out else TargetError)(
            f"{error} (gave up after {why.attempts} attempts)"
        )

    @staticmethod
    def _decode(content: bytes) -> Any:
        try:
            return msgspec.json.decode(content)
        except msgspec.DecodeError:
            raise TargetError(f"malformed response body (not JSON): {_excerpt(content)}") from None

    async def aclose(self) -> None:
        for pool in self._pools:
            await pool.aclose()


async def _read_capped(response: httpx.Response) -> bytes:
    """The body of `response`, refused (TargetError, not retried) past MAX_RESPONSE_BYTES."""
    too_large = TargetError(f"the response body is larger than {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB")
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and len(declared) < 20 and int(declared) > MAX_RESPONSE_BYTES:
        raise too_large
    chunks: list[bytes] = []
    total = 0
    async for chunk in response.aiter_bytes():
        total += len(chunk)
        if total > MAX_RESPONSE_BYTES:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _excerpt(content: bytes, limit: int = 300) -> str:
    text = content.decode("utf-8", errors="replace").strip()
    return text if len(text) <= limit else text[:limit] + "..."


def _note_limits(limiter: TargetLimiter, headers: Mapping[str, str]) -> None:
    """A success whose headers say a limit is now used up holds the target until its reset."""
    if "x-ratelimit-remaining-requests" in headers or "anthropic-ratelimit-requests-remaining" in headers:
        signal = rate_signal(headers)
        if signal.exhausted_for is not None:
            limiter.hold(signal.exhausted_for)


def _estimated_tokens(body: bytes) -> float:
    """A request's input tokens before it is sent: about 4 bytes a token of its JSON body."""
    return len(body) / 4


def _output_tokens(decoded: Any) -> float:
    """The output tokens an answer reports (OpenAI, Anthropic or Gemini usage), 0 when it says none."""
    if not isinstance(decoded, dict):
        return 0.0
    usage = decoded.get("usage") or decoded.get("usageMetadata")
    if not isinstance(usage, dict):
        return 0.0
    for key in ("completion_tokens", "output_tokens", "candidatesTokenCount"):
        value = usage.get(key)
        if isinstance(value, int | float):
            return float(value)
    return 0.0
