"""`copilot-cli` (alias `copilot`): GitHub Copilot CLI over the Agent Client Protocol (ACP).

Started as AgentV 4.42.4 starts it: `copilot --acp --stdio --allow-all-tools --yolo [--model M]
[args]`. ACP is JSON-RPC 2.0, one message per line, both ways: we send `initialize`, `session/new`
(the working directory) and `session/prompt` (`system_prompt`, then the prompt, as text blocks); the
agent streams `session/update` notifications and may ask `session/request_permission`, which is
granted (the first "allow" option), as AgentV grants it. The prompt's response ends the run; the
agent process is then stopped.

Updates read: `agent_message_chunk` (assistant text; text streamed before a `agent_thought_chunk`
is a preview and is dropped, as AgentV's log does), `tool_call` (a call starts; named by its
`title`, else its `kind`, as AgentV names it), `tool_call_update` with status `completed`/`failed`
(it ends), `usage_update` (tokens and USD cost, when Copilot sends them). A tool call that Copilot's
permission system rejected makes the run an error, with AgentV's hint.

A custom model endpoint is configured as AgentV configures it: `base_url` (with `subprovider`, the
provider type, e.g. `openai`; `api_key` or `bearer_token`; `api_version`; `api_format`, the wire API)
becomes Copilot's `COPILOT_PROVIDER_BASE_URL`, `COPILOT_PROVIDER_TYPE`, `COPILOT_PROVIDER_API_KEY` (or
`_BEARER_TOKEN`), `COPILOT_PROVIDER_AZURE_API_VERSION` and `COPILOT_PROVIDER_WIRE_API`; without
`base_url` the other four are not used, as in AgentV.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agentv_ci.errors import TargetError
from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.plugins import TargetRequest
from agentv_ci.targets.agents.agent_target import AgentCliTarget, AgentConfig
from agentv_ci.targets.agents.stream_runner import StreamOutcome
from agentv_ci.targets.agents.transcript import Transcript

ACP_PROTOCOL_VERSION = 1
_METHOD_NOT_FOUND = -32601
_REJECTED = ("rejected", "denied")


_AUTH_FAILURE = ("authentication required", "not authenticated", "no authentication", "please log in")
_AUTH_HINT = (
    "hint: give Copilot credentials: a GitHub token in COPILOT_GITHUB_TOKEN (set in the runner's "
    "environment; it is handed through), or a custom endpoint in the target: base_url, subprovider "
    "(e.g. openai) and api_key"
)


class CopilotConfig(AgentConfig, omit_defaults=True):
    """AgentV's Copilot settings, with its custom-provider (BYOK) fields."""

    subprovider: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    bearer_token: str | None = None
    api_version: str | None = None
    api_format: str | None = None


def provider_environment(config: CopilotConfig) -> dict[str, str]:
    """The `COPILOT_PROVIDER_*` variables for a custom endpoint (AgentV's mapping); {} without one."""
    if not (config.base_url or "").strip():
        return {}
    env = {"COPILOT_PROVIDER_BASE_URL": config.base_url or ""}
    if config.subprovider:
        env["COPILOT_PROVIDER_TYPE"] = config.subprovider
    if config.bearer_token:
        env["COPILOT_PROVIDER_BEARER_TOKEN"] = config.bearer_token
    elif config.api_key:
        env["COPILOT_PROVIDER_API_KEY"] = config.api_key
    if config.api_format:
        env["COPILOT_PROVIDER_WIRE_API"] = config.api_format
    if config.api_version:
        env["COPILOT_PROVIDER_AZURE_API_VERSION"] = config.api_version
    return env


def _with_auth_hint(message: str) -> str:
    lowered = message.lower()
    return f"{message}; {_AUTH_HINT}" if any(s in lowered for s in _AUTH_FAILURE) else message


def _message(payload: dict[str, Any]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", **payload}) + "\n").encode("utf-8")


def _allow_option(options: Any) -> str:
    """The option that grants the permission (AgentV always says allow)."""
    listed = [o for o in options if isinstance(o, dict)] if isinstance(options, list) else []
    for kind in ("allow_always", "allow_once"):
        for option in listed:
            if option.get("kind") == kind and isinstance(option.get("optionId"), str):
                return str(option["optionId"])
    return str(listed[0].get("optionId", "allow")) if listed else "allow"


class AcpSession:
    """One ACP conversation: what to send next, and the updates into a transcript."""

    def __init__(self, transcript: Transcript, *, workdir: Path, prompt: list[str]) -> None:
        self.transcript = transcript
        self.workdir = workdir
        self.prompt = prompt
        self.finished = False
        self.error: str | None = None
        self.stop_reason: str | None = None
        self.session_id: str | None = None
        self._text = ""  # assistant text since the last tool call
        self._step = 0  # 1 initialize, 2 session/new, 3 session/prompt: the id of the request awaited

    def opening(self) -> list[bytes]:
        self._step = 1
        params = {
            "protocolVersion": ACP_PROTOCOL_VERSION,
            "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False},
        }
        return [_message({"id": 1, "method": "initialize", "params": params})]

    def feed(self, event: dict[str, Any], at_ms: float) -> list[bytes]:
        if "method" in event and "id" in event:
            return [self._answer_request(event)]
        if event.get("method") == "session/update":
            params = event.get("params")
            update = params.get("update") if isinstance(params, dict) else None
            if isinstance(update, dict):
                self._update(update, at_ms)
            return []
        if "id" in event and ("result" in event or "error" in event):
            return self._response(event)
        return []

    def _answer_request(self, request: dict[str, Any]) -> bytes:
        if request.get("method") == "session/request_permission":
            raw = request.get("params")
            params: dict[str, Any] = raw if isinstance(raw, dict) else {}
            outcome = {"outcome": "selected", "optionId": _allow_option(params.get("options"))}
            return _message({"id": request["id"], "result": {"outcome": outcome}})
        error = {"code": _METHOD_NOT_FOUND, "message": f"method not supported: {request.get('method')}"}
        return _message({"id": request["id"], "error": error})

    def _response(self, response: dict[str, Any]) -> list[bytes]:
        if response.get("id") != self._step:
            return []
        if "error" in response:
            error = response["error"]
            self.error = str(error.get("message") if isinstance(error, dict) else error)
            self.finished = True
            return []
        raw = response.get("result")
        result: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if self._step == 1:
            self._step = 2
            params: dict[str, Any] = {"cwd": str(self.workdir), "mcpServers": []}
            return [_message({"id": 2, "method": "session/new", "params": params})]
        if self._step == 2:
            self.session_id = str(result.get("sessionId", ""))
            self._step = 3
            blocks = [{"type": "text", "text": text} for text in self.prompt]
            params = {"sessionId": self.session_id, "prompt": blocks}
            return [_message({"id": 3, "method": "session/prompt", "params": params})]
        self.stop_reason = str(result.get("stopReason", ""))
        self._final_usage(result.get("usage"))
        self._flush_text()
        self.finished = True
        return []

    def _update(self, update: dict[str, Any], at_ms: float) -> None:
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            content = update.get("content")
            if isinstance(content, dict) and content.get("type") == "text":
                self._text += str(content.get("text", ""))
        elif kind == "agent_thought_chunk":
            self._text = ""  # the text streamed so far was a preview; the answer follows the thinking
        elif kind == "tool_call":
            self._flush_text()
            call_id = str(update.get("toolCallId", "")) or None
            name = str(update.get("title") or update.get("kind") or "unknown")
            status = update.get("status")
            if status in ("completed", "failed"):
                ok = status == "completed"
                self.transcript.record_tool(
                    call_id, name, update.get("rawInput"), update.get("rawOutput"), ok=ok, at_ms=at_ms
                )
            else:
                self.transcript.start_tool(call_id, name, update.get("rawInput"), at_ms)
        elif kind == "tool_call_update" and update.get("status") in ("completed", "failed"):
            call_id = str(update.get("toolCallId", "")) or None
            ok = update.get("status") == "completed"
            arguments = update.get("rawInput")
            self.transcript.finish_tool(
                call_id, update.get("rawOutput"), ok=ok, at_ms=at_ms, arguments=arguments
            )
        elif kind == "usage_update":
            used = update.get("used")
            if isinstance(used, int):
                self.transcript.usage = TokenUsage(input=used, output=0)
            cost = update.get("cost")
            if (
                isinstance(cost, dict)
                and cost.get("currency") == "USD"
                and isinstance(cost.get("amount"), int | float)
            ):
                self.transcript.cost_usd = (self.transcript.cost_usd or 0.0) + float(cost["amount"])

    def _final_usage(self, usage: Any) -> None:
        if not isinstance(usage, dict) or not usage.get("totalTokens"):
            return
        cached = usage.get("cachedReadTokens")
        thoughts = usage.get("thoughtTokens")
        self.transcript.usage = TokenUsage(
            input=int(usage.get("inputTokens") or 0),
            output=int(usage.get("outputTokens") or 0),
            cached=int(cached) if isinstance(cached, int) else None,
            reasoning=int(thoughts) if isinstance(thoughts, int) else None,
        )

    def _flush_text(self) -> None:
        if self._text.strip():
            self.transcript.say(self._text)
        self._text = ""


class CopilotTarget(AgentCliTarget):
    """Copilot CLI over ACP. Settings: `executable`, `model`, `system_prompt`, `args`, `cwd`,
    `timeout_seconds`, `env`, `pricing`; a custom endpoint: `base_url`, `subprovider`, `api_key`,
    `bearer_token`, `api_version`, `api_format`."""

    Config: ClassVar[type[msgspec.Struct]] = CopilotConfig
    FAMILY: ClassVar[str] = "copilot"
    CREDENTIAL_ENV: ClassVar[tuple[str, ...]] = (
        "COPILOT_GITHUB_TOKEN",
        "COPILOT_PROVIDER_BASE_URL",
        "COPILOT_PROVIDER_TYPE",
        "COPILOT_PROVIDER_API_KEY",
        "COPILOT_PROVIDER_BEARER_TOKEN",
        "COPILOT_PROVIDER_WIRE_API",
        "COPILOT_PROVIDER_AZURE_API_VERSION",
    )
    CONFIG_ENV: ClassVar[tuple[str, ...]] = ("COPILOT_HOME", "COPILOT_CACHE_HOME", "COPILOT_PKG_CACHE_HOME")
    AGENT: ClassVar[str] = "Copilot CLI"
    DEFAULT_EXECUTABLE: ClassVar[str] = "copilot"
    config: CopilotConfig

    def environment(self, base: dict[str, str], scratch: Path) -> dict[str, str]:
        return {**base, **provider_environment(self.config)}

    def arguments(self, request: TargetRequest, workdir: Path) -> list[str]:
        # --yolo: copilot's permission system would otherwise reject tool calls in a headless run.
        args = ["--acp", "--stdio", "--allow-all-tools", "--yolo"]
        if self.config.model:
            args += ["--model", self.config.model]
        return [*args, *self.config.args]

    def reader(self, transcript: Transcript, request: TargetRequest, workdir: Path) -> AcpSession:
        system = (self.config.system_prompt or "").strip()
        return AcpSession(
            transcript, workdir=workdir, prompt=[system, request.prompt] if system else [request.prompt]
        )

    def finish(self, reader: Any, transcript: Transcript, outcome: StreamOutcome) -> TargetResponse:
        assert isinstance(reader, AcpSession)
        if reader.error is not None:
            raise TargetError(_with_auth_hint(f"{self.AGENT}: {reader.error}"))
        if not reader.finished:
            failure = self.failed(outcome, outcome.detail() or "the agent ended before answering the prompt")
            raise TargetError(_with_auth_hint(failure.message))
        rejected = [
            call.tool
            for call in transcript.tool_calls()
            if isinstance(call.output, dict) and call.output.get("code") in _REJECTED
        ]
        if rejected:
            raise TargetError(
                f"Copilot rejected {len(rejected)} tool call(s): {', '.join(rejected)}; "
                'add args: ["--yolo"] to the target (or run copilot with --yolo) to bypass permission checks'
            )
        return transcript.response(duration_ms=outcome.duration_ms, pricing=self.config.pricing)
