"""The code-grader side of AgentV's target proxy, for Python graders (AgentV's SDK has
`createTargetClient`, `invoke`, `invokeBatch` and `getInfo` for TypeScript ones).

A code-grader with `target: true` (or `{max_calls: N}`) runs with `AGENTV_TARGET_PROXY_URL` and
`AGENTV_TARGET_PROXY_TOKEN` set; `TargetProxyClient.from_environment()` reads them:

    from agentv_ci.api import TargetProxyClient

    client = TargetProxyClient.from_environment()
    if client is not None:
        answer = client.invoke("Is this correct? ...", system_prompt="Answer yes or no.")
        print(answer.raw_text)

Every call ends within `timeout_s` (default 300 s) by the wall clock, from connect to the last byte
of the answer. Standard library only: importing it costs a grader script nothing.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import socket
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

URL_VARIABLE = "AGENTV_TARGET_PROXY_URL"
TOKEN_VARIABLE = "AGENTV_TARGET_PROXY_TOKEN"


class TargetProxyError(Exception):
    """The proxy refused or failed a call (`status_code`: 429 past `max_calls`, 400, 401, 500...)."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


@dataclass(frozen=True)
class TargetInvocation:
    """One answer of the grader target: its output messages, the last assistant text, its tokens."""

    output: list[dict[str, Any]] = field(default_factory=list)
    raw_text: str | None = None
    token_usage: dict[str, int] | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TargetInvocation:
        output = data.get("output")
        usage = data.get("tokenUsage")
        return cls(
            output=list(output) if isinstance(output, list) else [],
            raw_text=data.get("rawText") if isinstance(data.get("rawText"), str) else None,
            token_usage=dict(usage) if isinstance(usage, dict) else None,
        )


class TargetProxyClient:
    """Calls the grader target through the proxy agentv-ci (or AgentV) runs for a code-grader."""

    def __init__(self, url: str, token: str, *, timeout_s: float = 300.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> TargetProxyClient | None:
        """The client for this grader run, or None when the grader has no `target:` (no proxy URL)."""
        source = os.environ if env is None else env
        url = source.get(URL_VARIABLE)
        if not url:
            return None
        token = source.get(TOKEN_VARIABLE)
        if not token:
            raise TargetProxyError(f"{URL_VARIABLE} is set but {TOKEN_VARIABLE} is missing")
        return cls(url, token)

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        parts = urllib.parse.urlsplit(self.url + path)
        if parts.scheme != "http" or not parts.hostname:
            raise TargetProxyError(f"the target proxy URL must be http://HOST:PORT, got {self.url[:100]!r}")
        connection = _DeadlineConnection(
            parts.hostname, parts.port or 80, deadline=time.monotonic() + self.timeout_s
        )
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self.token}"}
        try:
            connection.request(method, parts.path or "/", body=data, headers=headers)
            response = connection.getresponse()
            status, text = response.status, response.read()
        except TimeoutError:
            raise TargetProxyError(
                f"the target proxy call timed out after {self.timeout_s:g}s (wall clock)"
            ) from None
        except (OSError, http.client.HTTPException) as exc:
            raise TargetProxyError(f"the target proxy cannot be reached: {exc}") from None
        finally:
            connection.close()
        if status >= 400:
            shown = text.decode("utf-8", errors="replace")
            try:
                message = json.loads(shown).get("error") or f"HTTP {status}"
            except (ValueError, AttributeError):
                message = shown or f"HTTP {status}"
            raise TargetProxyError(str(message), status)
        try:
            return json.loads(text or b"null")
        except ValueError:
            raise TargetProxyError("the target proxy answered something that is not JSON", status) from None

    @staticmethod
    def _body(
        question: str,
        system_prompt: str | None,
        target: str | None,
        eval_case_id: str | None,
        attempt: int | None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"question": question}
        for key, value in (
            ("systemPrompt", system_prompt),
            ("target", target),
            ("evalCaseId", eval_case_id),
            ("attempt", attempt),
        ):
            if value is not None:
                body[key] = value
        return body

    def invoke(
        self,
        question: str,
        *,
        system_prompt: str | None = None,
        target: str | None = None,
        eval_case_id: str | None = None,
        attempt: int | None = None,
    ) -> TargetInvocation:
        """Ask the grader target (or the named `target`) one question; counts against `max_calls`."""
        body = self._body(question, system_prompt, target, eval_case_id, attempt)
        return TargetInvocation.from_json(self._request("POST", "/invoke", body))

    def invoke_batch(self, requests: list[Mapping[str, Any]]) -> list[TargetInvocation]:
        """Several questions in one call: each `{"question", "system_prompt"?, "target"?}`. Refused
        whole when it would pass `max_calls`; a failed item answers `raw_text` "Error: ..."."""
        bodies = [
            self._body(
                str(r.get("question", "")),
                r.get("system_prompt", r.get("systemPrompt")),
                r.get("target"),
                r.get("eval_case_id", r.get("evalCaseId")),
                r.get("attempt"),
            )
            for r in requests
        ]
        data = self._request("POST", "/invokeBatch", {"requests": bodies})
        return [TargetInvocation.from_json(item) for item in (data or {}).get("responses", [])]

    def get_info(self) -> dict[str, Any]:
        """`{targetName, maxCalls, callCount, availableTargets}`."""
        info = self._request("GET", "/info")
        return dict(info) if isinstance(info, dict) else {}


class _DeadlineReader(io.RawIOBase):
    """Reads a socket so that no read waits past `deadline` (a timeout per read would let a server
    that drips bytes go on for ever)."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._raw = sock.makefile("rb", buffering=0)  # holds the socket open until closed, as usual
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the wall-clock deadline passed")
        self._sock.settimeout(left)
        return self._raw.readinto(buffer)

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineSocket:
    """What http.client needs of a socket (`sendall`, `makefile`, `close`), bounded by `deadline`."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def sendall(self, data: bytes) -> None:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the wall-clock deadline passed")
        self._sock.settimeout(left)
        self._sock.sendall(data)

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))

    def close(self) -> None:
        self._sock.close()


class _DeadlineConnection(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, *, deadline: float) -> None:
        super().__init__(host, port, timeout=max(0.001, deadline - time.monotonic()))
        self._deadline = deadline

    def connect(self) -> None:
        self.timeout = self._deadline - time.monotonic()
        if self.timeout <= 0:
            raise TimeoutError("the wall-clock deadline passed")
        super().connect()
        self.sock = _DeadlineSocket(self.sock, self._deadline)
