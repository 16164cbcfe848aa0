"""`claude` / `claude-cli` (aliases `claude-code`, `cc-mirror`): Claude Code, headless.

Started as AgentV 4.42.4 starts it: `claude -p --output-format stream-json --include-partial-messages
--verbose [--dangerously-skip-permissions] [--model M] [--max-turns N]`, the prompt on stdin, with the
`CLAUDECODE` markers removed from the environment (so it runs inside another Claude Code session too).
We add `--append-system-prompt` for `system_prompt`.

Events read: `system/init` (the model), `assistant` (text and `tool_use` blocks: a tool call starts),
`user` (`tool_result` blocks: it ends), `result` (the final text, `total_cost_usd`, `usage`; input
tokens count cache reads and writes as AgentV counts them). Partial-message events are skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.plugins import TargetRequest
from agentv_ci.targets.agents.agent_target import AgentCliTarget, AgentConfig
from agentv_ci.targets.agents.stream_runner import StreamOutcome
from agentv_ci.targets.agents.transcript import Transcript

_SESSION_MARKERS = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")


class ClaudeConfig(AgentConfig, omit_defaults=True):
    max_turns: int | None = None
    bypass_permissions: bool = (
        True  # --dangerously-skip-permissions, as AgentV (nobody answers prompts in CI)
    )


def _number(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _text_of(content: Any) -> Any:
    """A tool result's content: text blocks joined, anything else as sent."""
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "\n".join(str(b.get("text", "")) for b in content)
    return content


class ClaudeStreamReader:
    """Claude Code's `stream-json` events into a transcript."""

    finished = False

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.result_text = ""
        self.result_error = False
        self._message_ids: set[str] = set()

    def opening(self) -> list[bytes]:
        return []

    def feed(self, event: dict[str, Any], at_ms: float) -> list[bytes]:
        kind = event.get("type")
        if kind == "system" and isinstance(event.get("model"), str):
            self.transcript.model = event["model"]
        elif kind == "assistant":
            self._assistant(event.get("message"), at_ms)
        elif kind == "user":
            self._tool_results(event.get("message"), at_ms)
        elif kind == "result":
            self._result(event)
        return []

    def _assistant(self, message: Any, at_ms: float) -> None:
        if not isinstance(message, dict):
            return
        if isinstance(message.get("id"), str):
            self._message_ids.add(message["id"])
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and str(block.get("text", "")).strip():
                self.transcript.say(str(block["text"]))
            elif block.get("type") == "tool_use" and isinstance(block.get("name"), str):
                call_id = block.get("id") if isinstance(block.get("id"), str) else None
                self.transcript.start_tool(call_id, block["name"], block.get("input"), at_ms)

    def _tool_results(self, message: Any, at_ms: float) -> None:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                call_id = block.get("tool_use_id")
                ok = not block.get("is_error", False)
                self.transcript.finish_tool(
                    call_id if isinstance(call_id, str) else None,
                    _text_of(block.get("content")),
                    ok=ok,
                    at_ms=at_ms,
                )

    def _result(self, event: dict[str, Any]) -> None:
        if isinstance(event.get("result"), str):
            self.result_text = event["result"]
        self.result_error = bool(event.get("is_error"))
        cost = event.get("total_cost_usd")
        if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0:
            self.transcript.cost_usd = float(cost)
        usage = event.get("usage")
        if isinstance(usage, dict):
            cache_read = _number(usage.get("cache_read_input_tokens"))
            cache_write = _number(usage.get("cache_creation_input_tokens"))
            self.transcript.usage = TokenUsage(
                input=_number(usage.get("input_tokens")) + cache_read + cache_write,
                output=_number(usage.get("output_tokens")),
                cached=cache_read if "cache_read_input_tokens" in usage else None,
            )
        self.transcript.llm_calls = len(self._message_ids)


class ClaudeTarget(AgentCliTarget):
    """Claude Code (`claude -p`, stream-json). Settings: `executable`, `model`, `max_turns`,
    `bypass_permissions`, `system_prompt`, `args`, `cwd`, `timeout_seconds`, `env`, `pricing`."""

    Config: ClassVar[type[msgspec.Struct]] = ClaudeConfig
    FAMILY: ClassVar[str] = "claude"
    CREDENTIAL_ENV: ClassVar[tuple[str, ...]] = (
        "ANTHROPIC_API_KEY",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
    )
    CONFIG_ENV: ClassVar[tuple[str, ...]] = ("CLAUDE_CONFIG_DIR",)
    AGENT: ClassVar[str] = "Claude Code"
    DEFAULT_EXECUTABLE: ClassVar[str] = "claude"
    config: ClaudeConfig

    def arguments(self, request: TargetRequest, workdir: Path) -> list[str]:
        # --verbose is required with -p and --output-format stream-json.
        args = ["-p", "--output-format", "stream-json", "--include-partial-messages", "--verbose"]
        if self.config.bypass_permissions:
            args.append("--dangerously-skip-permissions")
        if self.config.model:
            args += ["--model", self.config.model]
        if self.config.max_turns is not None:
            args += ["--max-turns", str(self.config.max_turns)]
        if self.config.system_prompt and self.config.system_prompt.strip():
            args += ["--append-system-prompt", self.config.system_prompt.strip()]
        return [*args, *self.config.args]

    def stdin_text(self, request: TargetRequest) -> str | None:
        return request.prompt

    def environment(self, base: dict[str, str], scratch: Path) -> dict[str, str]:
        return {key: value for key, value in base.items() if key not in _SESSION_MARKERS}

    def reader(self, transcript: Transcript, request: TargetRequest, workdir: Path) -> ClaudeStreamReader:
        return ClaudeStreamReader(transcript)

    def finish(self, reader: Any, transcript: Transcript, outcome: StreamOutcome) -> TargetResponse:
        assert isinstance(reader, ClaudeStreamReader)
        if outcome.exit_code != 0:
            raise self.failed(outcome, reader.result_text if reader.result_error else None)
        return transcript.response(
            fallback_answer=reader.result_text, duration_ms=outcome.duration_ms, pricing=self.config.pricing
        )
