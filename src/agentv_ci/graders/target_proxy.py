"""The target proxy of a code-grader with `target:` (AgentV v4.42.4 `runtime/target-proxy.ts`).

While the script runs, a small HTTP server on 127.0.0.1 (a free port) answers, with the per-run
bearer token of `AGENTV_TARGET_PROXY_TOKEN` at `AGENTV_TARGET_PROXY_URL`:

- `GET /info` -> `{targetName, maxCalls, callCount, availableTargets}`;
- `POST /invoke` `{question, systemPrompt?, evalCaseId?, attempt?, target?}` ->
  `{output: [messages], rawText, tokenUsage: {input, output}}`; 429 past `max_calls`, 400 for a
  missing `question` or an unknown `target`, 500 when the model call fails;
- `POST /invokeBatch` `{requests: [...]}` -> `{responses: [...]}` (errors per item as
  `rawText: "Error: ..."`); refused whole (429) when it would pass `max_calls`.

The model is asked through the run's grader-target caller, so the grader target's credentials stay
in this process (the script never sees an API key), the run budget counts the calls, and under
`--dry-run` the mock grader answers. Anything but that token gets 401. Every reply is redacted
(`security.redaction`) before it is sent: a provider that echoes the request's `Authorization` header,
or an error message quoting the key, hands the script `***`, never a secret the run knows.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from typing import Any

import msgspec

from agentv_ci.errors import AgentvCiError
from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.model.suite import Message
from agentv_ci.plugins import GraderTargetCaller, GraderTargetRequest
from agentv_ci.security.redaction import SECRETS

DEFAULT_MAX_CALLS = 50  # as AgentV
MAX_BODY = 8 * 1024 * 1024
_REASONS = {200: "OK", 204: "No Content", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
            413: "Payload Too Large", 429: "Too Many Requests", 500: "Internal Server Error"}  # fmt: skip


class _HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class TargetProxy:
    """One proxy for one script run: `async with TargetProxy(...) as proxy:` then `proxy.env`."""

    def __init__(
        self,
        caller: GraderTargetCaller | None,
        *,
        max_calls: int = DEFAULT_MAX_CALLS,
        test_id: str = "proxy",
        attempt: int = 0,
    ) -> None:
        self.caller = caller
        self.max_calls = max_calls
        self.test_id = test_id
        self.attempt = attempt
        self.token = secrets.token_hex(32)
        self.call_count = 0
        self.usage = TokenUsage()
        self.cost_usd: float | None = None
        self._server: asyncio.Server | None = None
        self.url = ""

    # ------------------------------------------------------------------ lifecycle
    async def __aenter__(self) -> TargetProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)

    @property
    def env(self) -> dict[str, str]:
        """The variables the script gets (AgentV's names, which the public client reads)."""
        from agentv_ci.target_client import TOKEN_VARIABLE, URL_VARIABLE  # urllib: imported when used

        return {URL_VARIABLE: self.url, TOKEN_VARIABLE: self.token}

    def usage_details(self) -> dict[str, Any]:
        """What the grader result records about the proxy (AgentV's `target_proxy`, plus cost)."""
        details: dict[str, Any] = {"call_count": self.call_count, "max_calls": self.max_calls}
        if self.cost_usd is not None:
            details["cost_usd"] = self.cost_usd
        return details

    def token_usage(self) -> TokenUsage | None:
        return self.usage if self.usage.input or self.usage.output else None

    # ------------------------------------------------------------------ HTTP
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            status, body = await self._handle(reader)
        except _HttpError as exc:
            status, body = exc.status, {"error": str(exc)}
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            status, body = 400, {"error": "malformed request"}
        # Redacted as a tree, so a mask never lands inside a JSON escape.
        payload = b"" if status == 204 else json.dumps(SECRETS.redact_tree(body)).encode()
        head = (
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\n"
            "Access-Control-Allow-Origin: *\r\n"
            "Connection: close\r\n\r\n"
        )
        with contextlib.suppress(ConnectionError):
            writer.write(head.encode() + payload)
            await writer.drain()
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader) -> tuple[int, Any]:
        request_line = (await reader.readline()).decode("latin-1").strip()
        parts = request_line.split(" ")
        if len(parts) < 2:
            raise _HttpError(400, "malformed request line")
        method, path = parts[0].upper(), parts[1]
        headers: dict[str, str] = {}
        while True:
            line = (await reader.readline()).decode("latin-1")
            if line in ("\r\n", "\n", ""):
                break
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length") or 0)
        if length > MAX_BODY:
            raise _HttpError(413, "request body too large")
        body = await reader.readexactly(length) if length else b""
        if method == "OPTIONS":
            return 204, None
        if not secrets.compare_digest(headers.get("authorization", ""), f"Bearer {self.token}"):
            return 401, {"error": "Unauthorized"}
        if method == "GET" and path == "/info":
            return 200, await self._info()
        if method == "POST" and path in ("/invoke", "/invokeBatch"):
            try:
                data = json.loads(body or b"{}")
            except ValueError:
                raise _HttpError(400, "the body is not JSON") from None
            if not isinstance(data, dict):
                raise _HttpError(400, "the body must be a JSON object")
            return (200, await self._invoke(data)) if path == "/invoke" else (200, await self._batch(data))
        return 404, {"error": "Not found"}

    # ------------------------------------------------------------------ endpoints
    async def _info(self) -> dict[str, Any]:
        # lazy: the grader target client (asyncio, msgspec) loaded only when `_info` runs
        from agentv_ci.targets.grader_caller import GraderCaller

        name, available = "", []
        if isinstance(self.caller, GraderCaller):
            with contextlib.suppress(AgentvCiError):
                name = self.caller.choose(GraderTargetRequest(messages=[]))
            available = self.caller.targets.names()
        return {
            "targetName": name,
            "maxCalls": self.max_calls,
            "callCount": self.call_count,
            "availableTargets": available or ([name] if name else []),
        }

    async def _invoke(self, data: dict[str, Any]) -> dict[str, Any]:
        if self.call_count >= self.max_calls:
            raise _HttpError(429, f"Max calls exceeded (limit: {self.max_calls})")
        question = data.get("question")
        if not isinstance(question, str) or not question:
            raise _HttpError(400, "Missing required field: question")
        return await self._call(data, question)

    async def _batch(self, data: dict[str, Any]) -> dict[str, Any]:
        requests = data.get("requests")
        if not isinstance(requests, list):
            raise _HttpError(400, "Missing required field: requests (array)")
        if self.call_count + len(requests) > self.max_calls:
            raise _HttpError(
                429,
                f"Batch would exceed max calls (current: {self.call_count}, batch: {len(requests)}, "
                f"limit: {self.max_calls})",
            )
        responses: list[dict[str, Any]] = []
        for item in requests:
            question = item.get("question") if isinstance(item, dict) else None
            if not isinstance(question, str) or not question:
                responses.append({"output": [], "rawText": "Error: Missing required field: question"})
                continue
            try:
                responses.append(await self._call(item, question))
            except _HttpError as exc:
                responses.append({"output": [], "rawText": f"Error: {exc}"})
        return {"responses": responses}

    async def _call(self, data: dict[str, Any], question: str) -> dict[str, Any]:
        if self.caller is None:
            raise _HttpError(500, "no grader target is configured for this eval target")
        target = data.get("target")
        system = data.get("systemPrompt")
        request = GraderTargetRequest(
            messages=[Message(role="user", content=question)],
            system=system if isinstance(system, str) and system else None,
            target=target if isinstance(target, str) and target else None,
        )
        if request.target is not None:
            self._check_target(request.target)
        self.call_count += 1
        try:
            response = await self.caller(request)
        except AgentvCiError as exc:
            raise _HttpError(500, exc.message) from None
        except Exception as exc:  # a provider failing must reach the script as an error, not kill us
            raise _HttpError(500, str(exc) or type(exc).__name__) from None
        return self._answer(response)

    def _check_target(self, name: str) -> None:
        # lazy: the grader target client (asyncio, msgspec) loaded only when `_check_target` runs
        from agentv_ci.targets.grader_caller import GraderCaller

        if isinstance(self.caller, GraderCaller) and name not in self.caller.targets.targets:
            known = ", ".join(self.caller.targets.names())
            raise _HttpError(400, f"Unknown target '{name}'. Available: {known}")

    def _answer(self, response: TargetResponse) -> dict[str, Any]:

        if response.token_usage is not None:
            self.usage.input += response.token_usage.input
            self.usage.output += response.token_usage.output
        if response.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + response.cost_usd
        messages = response.messages or [Message(role="assistant", content=response.text)]
        answer: dict[str, Any] = {"output": msgspec.to_builtins(messages), "rawText": response.text}
        if response.token_usage is not None:
            answer["tokenUsage"] = {
                "input": response.token_usage.input,
                "output": response.token_usage.output,
            }
        return answer
