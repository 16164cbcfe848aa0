"""`codex` (alias `codex-cli`): OpenAI Codex CLI, `codex exec --json`.

Started as AgentV 4.42.4's Codex CLI provider starts it: `codex --ask-for-approval never exec --json
--color never --skip-git-repo-check [args] -`, the prompt (after `system_prompt`) on stdin. We add
`--model M`, `-c model_reasoning_effort=E` and `--sandbox S` for those settings.

Events read (`exec --json`): `item.started` / `item.completed` for `command_execution`, `file_change`,
`mcp_tool_call` and `web_search` items (a tool call starts and ends; AgentV names them `Bash`,
`Edit`, `Skill` and `web_search`), `agent_message` items (assistant text), `turn.completed` (usage,
summed over turns), `turn.failed` (the run failed) and `error`. An `error` event is transient when
a completed turn follows it: Codex prints "Reconnecting... 1/5" when the model stream is cut, then
reconnects and answers; only an `error` no completed turn follows fails the run. Codex reports no
cost: it is priced from usage when `model` has a price.

`base_url` (ours; AgentV's Codex has none): Codex 0.136 ignores `OPENAI_BASE_URL`, so the endpoint
is given as a model provider of its own, `-c model_provider=agentv_ci -c model_providers.agentv_ci=
{base_url=..., env_key=..., wire_api="responses"}` (the key read from `OPENAI_API_KEY`, else
`CODEX_API_KEY`). `OPENAI_BASE_URL` in the environment counts as `base_url` when that is unset.
`CODEX_HOME` is handed through, so Codex reads the config you pointed it at.

With no `sandbox:`, Codex uses its own default, read-only: its file writes are rejected and leave
no `file_change` event (validate warns W112 when a test's graders expect edits then).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agentv_ci.errors import ConfigError
from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.plugins import TargetRequest
from agentv_ci.targets.agents.agent_target import AgentCliTarget, AgentConfig
from agentv_ci.targets.agents.stream_runner import StreamOutcome
from agentv_ci.targets.agents.transcript import Transcript

REASONING_EFFORTS = ("minimal", "low", "medium", "high", "xhigh")
SANDBOXES = ("read-only", "workspace-write", "danger-full-access")


class CodexConfig(AgentConfig, omit_defaults=True):
    model_reasoning_effort: str | None = None
    sandbox: str | None = None  # codex's own default when unset (read-only)
    base_url: str | None = None  # a Responses API endpoint (ours: Codex ignores OPENAI_BASE_URL)


def _number(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _tool(item: dict[str, Any]) -> tuple[str, Any, Any, bool] | None:
    """(name, arguments, output, succeeded) of a tool item, None for other items."""
    kind = item.get("type")
    failed = item.get("status") == "failed"
    if kind == "command_execution":
        exit_code = item.get("exit_code")
        ok = not failed and (exit_code in (0, None))
        return "command_execution", {"command": item.get("command")}, item.get("aggregated_output"), ok
    if kind == "file_change":
        return "file_change", item.get("changes"), None, not failed
    if kind == "mcp_tool_call":
        name = f"mcp:{item.get('server')}/{item.get('tool')}"
        output = item.get("result") if item.get("error") is None else item.get("error")
        return name, item.get("arguments"), output, not failed and item.get("error") is None
    if kind == "web_search":
        return "web_search", {"query": item.get("query")}, None, not failed
    return None


class CodexStreamReader:
    """`codex exec --json` events into a transcript."""

    finished = False

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.error: str | None = None  # the turn failed
        self.pending_error: str | None = None  # an `error` event no completed turn has followed yet
        self.transient_errors: list[str] = []  # `error` events a completed turn followed (reconnects)
        self._started: set[str] = set()

    def opening(self) -> list[bytes]:
        return []

    def feed(self, event: dict[str, Any], at_ms: float) -> list[bytes]:
        kind = event.get("type")
        item = event.get("item")
        if kind == "item.started" and isinstance(item, dict):
            tool = _tool(item)
            if tool is not None:
                item_id = str(item.get("id", ""))
                self._started.add(item_id)
                self.transcript.start_tool(item_id, tool[0], tool[1], at_ms)
        elif kind == "item.completed" and isinstance(item, dict):
            self._completed(item, at_ms)
        elif kind == "turn.completed":
            self._usage(event.get("usage"))
            if self.pending_error is not None:
                self.transient_errors.append(self.pending_error)
                self.pending_error = None
        elif kind == "turn.failed":
            error = event.get("error")
            self.error = str(error.get("message") if isinstance(error, dict) else error or "turn failed")
        elif kind == "error":
            self.pending_error = str(event.get("message") or "error")
        return []

    @property
    def failure(self) -> str | None:
        """Why the run failed: a failed turn, else an error no completed turn followed."""
        return self.error or self.pending_error

    def _completed(self, item: dict[str, Any], at_ms: float) -> None:
        if item.get("type") == "agent_message" and str(item.get("text", "")).strip():
            self.transcript.say(str(item["text"]))
            self.transcript.llm_calls += 1
            return
        tool = _tool(item)
        if tool is None:
            return
        name, arguments, output, ok = tool
        item_id = str(item.get("id", ""))
        if item_id in self._started:
            self.transcript.finish_tool(item_id, output, ok=ok, at_ms=at_ms, arguments=arguments)
        else:  # reported only once finished (a patch applied at once)
            self.transcript.record_tool(item_id, name, arguments, output, ok=ok, at_ms=at_ms)

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        previous = self.transcript.usage or TokenUsage()
        cached = usage.get("cached_input_tokens")
        self.transcript.usage = TokenUsage(
            input=previous.input + _number(usage.get("input_tokens")),
            output=previous.output + _number(usage.get("output_tokens")),
            cached=(previous.cached or 0) + _number(cached) if cached is not None else previous.cached,
        )


class CodexTarget(AgentCliTarget):
    """Codex CLI (`codex exec --json`). Settings: `executable`, `model`, `model_reasoning_effort`,
    `sandbox`, `system_prompt`, `args`, `cwd`, `timeout_seconds`, `env`, `pricing`."""

    Config: ClassVar[type[msgspec.Struct]] = CodexConfig
    FAMILY: ClassVar[str] = "codex"
    CREDENTIAL_ENV: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL")
    CONFIG_ENV: ClassVar[tuple[str, ...]] = ("CODEX_HOME",)
    AGENT: ClassVar[str] = "Codex"
    DEFAULT_EXECUTABLE: ClassVar[str] = "codex"
    config: CodexConfig

    def __init__(self, name: str, config: CodexConfig, *, base_dir: Path) -> None:
        effort = config.model_reasoning_effort
        if effort is not None and effort.strip().lower() not in REASONING_EFFORTS:
            raise ConfigError(
                f"target {name!r} (codex): model_reasoning_effort must be one of "
                f"{', '.join(REASONING_EFFORTS)}, got {effort!r}"
            )
        if config.sandbox is not None and config.sandbox not in SANDBOXES:
            raise ConfigError(
                f"target {name!r} (codex): sandbox must be one of {', '.join(SANDBOXES)}, "
                f"got {config.sandbox!r}"
            )
        super().__init__(name, config, base_dir=base_dir)

    def arguments(self, request: TargetRequest, workdir: Path) -> list[str]:
        # The approval policy is a global option: before `exec`.
        args = ["--ask-for-approval", "never", "exec", "--json", "--color", "never", "--skip-git-repo-check"]
        if self.config.model:
            args += ["--model", self.config.model]
        if self.config.model_reasoning_effort:
            args += ["-c", f"model_reasoning_effort={self.config.model_reasoning_effort.strip().lower()}"]
        if self.config.sandbox:
            args += ["--sandbox", self.config.sandbox]
        return [*args, *self._provider_overrides(), *self.config.args, "-"]

    def _provider_overrides(self) -> list[str]:
        """`-c` overrides that send Codex to `base_url` (else `OPENAI_BASE_URL`); none without one."""
        explicit = self.config.env.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
        base_url = (self.config.base_url or explicit or "").strip()
        if not base_url:
            return []
        has = {**os.environ, **self.config.env}
        key = (
            "OPENAI_API_KEY" if has.get("OPENAI_API_KEY") or not has.get("CODEX_API_KEY") else "CODEX_API_KEY"
        )
        fields = {"name": "agentv-ci", "base_url": base_url, "env_key": key, "wire_api": "responses"}
        table = ", ".join(f"{name} = {json.dumps(value)}" for name, value in fields.items())
        return [
            "-c",
            'model_provider="agentv_ci"',
            "-c",
            f"model_providers.agentv_ci={{{table}}}",
        ]  # `-`: the prompt comes on stdin

    def stdin_text(self, request: TargetRequest) -> str | None:
        return self.prompt_with_system(request)

    def reader(self, transcript: Transcript, request: TargetRequest, workdir: Path) -> CodexStreamReader:
        return CodexStreamReader(transcript)

    def finish(self, reader: Any, transcript: Transcript, outcome: StreamOutcome) -> TargetResponse:
        assert isinstance(reader, CodexStreamReader)
        if outcome.exit_code != 0 or reader.failure is not None:
            raise self.failed(outcome, reader.failure)
        return transcript.response(duration_ms=outcome.duration_ms, pricing=self.config.pricing)
