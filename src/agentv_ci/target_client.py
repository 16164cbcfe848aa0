"""The code-grader side of AgentV's target proxy, for Python graders (AgentV's SDK has
`createTargetClient`, `invoke`, `invokeBatch` and `getInfo` for TypeScript ones).

A code-grader with `target: true` (or `{max_calls: N}`) runs with `AGENTV_TARGET_PROXY_URL` and
`AGENTV_TARGET_PROXY_TOKEN` set; `TargetProxyClient.from_environment()` reads them:

    from agentv_ci.api import TargetProxyClient

    client = TargetProxyClient.from_environment()
    if client is not None:
        answer = client.invoke("Is this correct? ...", system_prompt="Answer yes or no.")
        print(answer.raw_text)

Standard library only: importing it costs a grader script nothing.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
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
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.token}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            text = exc.read().decode("utf-8", errors="replace")
            try:
                message = json.loads(text).get("error") or f"HTTP {exc.code}"
            except (ValueError, AttributeError):
                message = text or f"HTTP {exc.code}"
            raise TargetProxyError(str(message), exc.code) from None
        except urllib.error.URLError as exc:
            raise TargetProxyError(f"the target proxy cannot be reached: {exc.reason}") from None

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
