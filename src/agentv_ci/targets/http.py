"""The one place that imports httpx: a JSON POST client with timeouts and retries.

Retries use capped exponential backoff with full jitter on 408/409/429/5xx and on connection
errors and timeouts, honouring `retry-after` (seconds or an HTTP date) when the server sends it.
Every failure surfaces as `TargetError` with the status and a short excerpt of the body.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import msgspec

from agentv_ci.errors import TargetError

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 520, 521, 522, 524, 529})
_encoder = msgspec.json.Encoder()


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """`retry-after-ms` / `retry-after` as seconds (numbers or an HTTP date), None when absent."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        from datetime import UTC, datetime

        when = parsedate_to_datetime(raw)
        return max(0.0, (when - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


def backoff_delay(attempt: int, *, base_s: float, cap_s: float, retry_after: float | None) -> float:
    """Seconds to wait before retry number `attempt` (0-based)."""
    if retry_after is not None:
        return min(retry_after, cap_s)
    return random.uniform(0, min(cap_s, base_s * (2**attempt)))


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
    ) -> None:
        self.max_retries = max_retries
        self.backoff_base_s = backoff_base_s
        self.backoff_cap_s = backoff_cap_s
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/") + "/",
            headers={"content-type": "application/json", **headers},
            timeout=httpx.Timeout(timeout_s),
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        )

    async def post_json(self, path: str, payload: Any, *, params: Mapping[str, str] | None = None) -> Any:
        body = _encoder.encode(payload)
        last_error = "no attempt made"
        for attempt in range(self.max_retries + 1):
            retry_after: float | None = None
            try:
                response = await self._client.post(path.lstrip("/"), content=body, params=params)
            except httpx.TimeoutException:
                last_error = f"request timed out after {self._client.timeout.read}s"
            except httpx.TransportError as exc:
                last_error = f"connection error: {type(exc).__name__}: {exc}"
            else:
                if response.status_code < 300:
                    return self._decode(response)
                last_error = f"HTTP {response.status_code}: {_excerpt(response.content)}"
                if response.status_code not in RETRY_STATUSES:
                    raise TargetError(last_error)
                retry_after = retry_after_seconds(response.headers)
            if attempt < self.max_retries:
                await asyncio.sleep(
                    backoff_delay(
                        attempt, base_s=self.backoff_base_s, cap_s=self.backoff_cap_s, retry_after=retry_after
                    )
                )
        raise TargetError(f"{last_error} (gave up after {self.max_retries + 1} attempts)")

    @staticmethod
    def _decode(response: httpx.Response) -> Any:
        try:
            return msgspec.json.decode(response.content)
        except msgspec.DecodeError:
            raise TargetError(f"malformed response body (not JSON): {_excerpt(response.content)}") from None

    async def aclose(self) -> None:
        await self._client.aclose()


def _excerpt(content: bytes, limit: int = 300) -> str:
    text = content.decode("utf-8", errors="replace").strip()
    return text if len(text) <= limit else text[:limit] + "..."
