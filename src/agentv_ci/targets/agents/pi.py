"""`pi-cli` and `pi-coding-agent` (alias `pi`): the pi coding agent, `pi --mode json --print`.

Started as AgentV 4.42.4's pi CLI provider starts it: `pi [--provider P] [--model M] --mode json
--print --no-session [--tools T] [--thinking L] [args] [@file ...] PROMPT`. AgentV runs
`pi-coding-agent` through pi's TypeScript SDK; here both names run the CLI, which emits the same
events. The API key goes in the environment variable pi reads for the `subprovider` (never on the
command line, where other processes could see it).

`base_url`: pi 0.74 ignores `OPENAI_BASE_URL` and the like (AgentV sets them, to no effect); it reads
a provider's endpoint from `models.json` in its agent directory. So with `base_url` the agent runs
with `PI_CODING_AGENT_DIR` pointing at a private copy of your agent directory (`PI_CODING_AGENT_DIR`,
else `~/.pi/agent`: its `auth.json`, `settings.json` and `models.json`) whose `models.json` routes
the `subprovider` to `base_url`. Your own directory is never written.

Events read: `message_end` of assistant messages (text; `toolCall` blocks announce calls; `usage`
with `cost.total` is summed), `tool_execution_start` / `tool_execution_end` (a call runs and ends),
`agent_end` (the messages, when no assistant message ended before it).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agentv_ci.errors import TargetError
from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.plugins import TargetRequest
from agentv_ci.targets.agents.agent_target import AGENT_FIELD_ALIASES, AgentCliTarget, AgentConfig
from agentv_ci.targets.agents.stream_runner import StreamOutcome
from agentv_ci.targets.agents.transcript import Transcript

# subprovider -> (pi's --provider name, API key variable, base URL variable); AgentV's table.
SUBPROVIDERS: dict[str, tuple[str, str | None, str | None]] = {
    "google": ("google", "GEMINI_API_KEY", None),
    "gemini": ("gemini", "GEMINI_API_KEY", None),
    "anthropic": ("anthropic", "ANTHROPIC_API_KEY", None),
    "openai": ("openai", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "groq": ("groq", "GROQ_API_KEY", None),
    "xai": ("xai", "XAI_API_KEY", None),
    "openrouter": ("openrouter", "OPENROUTER_API_KEY", "OPENROUTER_BASE_URL"),
    "azure": ("azure-openai-responses", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_BASE_URL"),
}
_ROLE_MARKER = re.compile(r"@\[([^\]]+)\]:")


def routed_agent_dir(env: dict[str, str], target: Path, provider: str, base_url: str) -> Path:
    """A copy of pi's agent directory (`PI_CODING_AGENT_DIR` of `env`, else `~/.pi/agent`) at
    `target`, whose `models.json` sends `provider` to `base_url`."""
    home = env.get("HOME") or str(Path.home())
    source = Path(env.get("PI_CODING_AGENT_DIR") or Path(home) / ".pi" / "agent")
    target.mkdir(parents=True, exist_ok=True)
    for name in ("auth.json", "settings.json"):
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)
    models: dict[str, Any] = {}
    if (source / "models.json").is_file():
        try:
            loaded = json.loads((source / "models.json").read_text(encoding="utf-8"))
            models = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            models = {}  # pi would refuse it too; ours routes the endpoint regardless
    raw_providers = models.get("providers")
    providers: dict[str, Any] = raw_providers if isinstance(raw_providers, dict) else {}
    raw_entry = providers.get(provider)
    entry: dict[str, Any] = raw_entry if isinstance(raw_entry, dict) else {}
    models["providers"] = {**providers, provider: {**entry, "baseUrl": base_url}}
    (target / "models.json").write_text(json.dumps(models, indent=2), encoding="utf-8")
    return target


class PiConfig(AgentConfig, omit_defaults=True):
    subprovider: str | None = None
    api_key: str | None = None
    base_url: str | None = None
    tools: str | None = None
    thinking: str | None = None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [str(b.get("text", "")) for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(p for p in parts if p)


class PiStreamReader:
    """pi's `--mode json` events into a transcript."""

    finished = False

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.events = 0
        self.assistant_messages = 0
        self.error: str | None = None
        self.final_messages: list[Any] = []

    def opening(self) -> list[bytes]:
        return []

    def feed(self, event: dict[str, Any], at_ms: float) -> list[bytes]:
        self.events += 1
        kind = event.get("type")
        if kind == "message_end":
            self._message_end(event.get("message"), at_ms)
        elif kind == "tool_execution_start":
            call_id = str(event.get("toolCallId", ""))
            if not self.transcript.restart_tool(call_id, at_ms):
                self.transcript.start_tool(call_id, str(event.get("toolName", "")), event.get("args"), at_ms)
        elif kind == "tool_execution_end":
            call_id = str(event.get("toolCallId", ""))
            ok = not event.get("isError", False)
            if not self.transcript.finish_tool(call_id, event.get("result"), ok=ok, at_ms=at_ms):
                name = str(event.get("toolName", ""))
                self.transcript.record_tool(
                    call_id, name, event.get("args"), event.get("result"), ok=ok, at_ms=at_ms
                )
        elif kind == "agent_end" and isinstance(event.get("messages"), list):
            self.final_messages = event["messages"]
        return []

    def _message_end(self, message: Any, at_ms: float) -> None:
        if not isinstance(message, dict) or message.get("role") != "assistant":
            return
        self.assistant_messages += 1
        self.transcript.llm_calls += 1
        if isinstance(message.get("model"), str):
            self.transcript.model = message["model"]
        if message.get("stopReason") == "error":
            self.error = str(message.get("errorMessage") or "the model call failed")
        text = _text(message.get("content"))
        if text.strip():
            self.transcript.say(text)
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") in ("toolCall", "tool_call", "tool_use"):
                arguments = block.get("arguments", block.get("input"))
                call_id = block.get("id") if isinstance(block.get("id"), str) else None
                self.transcript.start_tool(call_id, str(block.get("name", "")), arguments, at_ms)
        self._usage(message.get("usage"))

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        previous = self.transcript.usage or TokenUsage()
        cached = _number(usage.get("cacheRead"))
        self.transcript.usage = TokenUsage(
            input=previous.input + int(_number(usage.get("input")) or 0),
            output=previous.output + int(_number(usage.get("output")) or 0),
            cached=(previous.cached or 0) + int(cached) if cached is not None else previous.cached,
        )
        cost = usage.get("cost")
        total = _number(cost.get("total")) if isinstance(cost, dict) else None
        if total is not None:
            self.transcript.cost_usd = (self.transcript.cost_usd or 0.0) + total

    def answer_from_agent_end(self) -> str:
        for message in reversed(self.final_messages):
            if isinstance(message, dict) and message.get("role") == "assistant":
                text = _text(message.get("content"))
                if text:
                    return text
        return ""


class PiTarget(AgentCliTarget):
    """pi (`pi --mode json --print`). Settings: `executable`, `subprovider`, `model`, `api_key`,
    `base_url`, `tools`, `thinking`, `system_prompt`, `args`, `cwd`, `timeout_seconds`, `env`, `pricing`."""

    Config: ClassVar[type[msgspec.Struct]] = PiConfig
    FIELD_ALIASES: ClassVar[dict[str, str]] = {
        **AGENT_FIELD_ALIASES,
        "pi_model": "model",
        "pi_tools": "tools",
        "pi_thinking": "thinking",
        "endpoint": "base_url",
    }
    FAMILY: ClassVar[str] = "pi"
    CONFIG_ENV: ClassVar[tuple[str, ...]] = ("PI_CODING_AGENT_DIR", "PI_OFFLINE", "PI_SKIP_VERSION_CHECK")
    AGENT: ClassVar[str] = "pi"
    DEFAULT_EXECUTABLE: ClassVar[str] = "pi"
    config: PiConfig

    def _subprovider(self) -> tuple[str, str | None, str | None] | None:
        name = (self.config.subprovider or "").strip()
        if not name:
            return None
        return SUBPROVIDERS.get(name.lower(), (name, None, None))

    def arguments(self, request: TargetRequest, workdir: Path) -> list[str]:
        args: list[str] = []
        sub = self._subprovider()
        if sub is not None:
            args += ["--provider", sub[0]]
        if self.config.model:
            args += ["--model", self.config.model]
        if self.config.api_key and (sub is None or sub[1] is None):
            args += ["--api-key", self.config.api_key]  # no variable known for this provider
        args += ["--mode", "json", "--print", "--no-session"]
        if self.config.tools:
            args += ["--tools", self.config.tools]
        if self.config.thinking:
            args += ["--thinking", self.config.thinking]
        args += self.config.args
        args += [f"@{path}" for path in request.files]
        # pi reads `@[...]:` as a file reference; AgentV rewrites role markers so they stay text.
        return [*args, _ROLE_MARKER.sub(r"[[\1]]:", self.prompt_with_system(request))]

    def environment(self, base: dict[str, str], scratch: Path) -> dict[str, str]:
        env = dict(base)
        sub = self._subprovider()
        if sub is None:
            return env
        provider, key_variable, url_variable = sub
        if self.config.api_key and key_variable:
            env[key_variable] = self.config.api_key
        if self.config.base_url and url_variable:
            env[url_variable] = self.config.base_url  # as AgentV sets it (pi itself reads models.json)
        if self.config.base_url:
            env["PI_CODING_AGENT_DIR"] = str(
                routed_agent_dir(env, scratch / "pi-agent", provider, self.config.base_url)
            )
        return env

    def reader(self, transcript: Transcript, request: TargetRequest, workdir: Path) -> PiStreamReader:
        return PiStreamReader(transcript)

    def finish(self, reader: Any, transcript: Transcript, outcome: StreamOutcome) -> TargetResponse:
        assert isinstance(reader, PiStreamReader)
        if outcome.exit_code != 0:
            raise self.failed(outcome, reader.error)
        if reader.events == 0:
            detail = outcome.detail()
            raise TargetError("pi printed no JSON events" + (f": {detail}" if detail else ""))
        if reader.error is not None and not transcript.messages:
            raise self.failed(outcome, reader.error)
        return transcript.response(
            fallback_answer=reader.answer_from_agent_end(),
            duration_ms=outcome.duration_ms,
            pricing=self.config.pricing,
        )
