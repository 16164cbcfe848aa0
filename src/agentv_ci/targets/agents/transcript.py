"""An agent run as our messages: assistant texts, tool calls (with timings) attached in order, usage.

Agents report a tool call in two events (started, finished); `start_tool` and `finish_tool` take the
arrival time of each (milliseconds since the agent started), so every finished call carries its
`duration_ms`, `start_time` and `end_time`. A call whose end never arrived keeps status `unknown`
and no duration (a trajectory grader's latency check on it then fails: it never completed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.model.suite import Message, ToolCall
from agentv_ci.prompting import final_answer
from agentv_ci.targets.agents.tool_names import canonical_tool
from agentv_ci.targets.pricing import Price, cost_of


def _iso(wall_start: float, at_ms: float) -> str:
    moment = datetime.fromtimestamp(wall_start + at_ms / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class _OpenCall:
    message: int  # index in `messages`
    position: int  # index in that message's tool calls
    started_ms: float
    native_name: str  # as the agent named the tool (the call shows AgentV's name)


@dataclass
class Transcript:
    """Collects one agent run. `family` picks AgentV's tool-name mapping (see `tool_names`)."""

    family: str
    wall_start: float
    messages: list[Message] = field(default_factory=list)
    usage: TokenUsage | None = None
    cost_usd: float | None = None
    model: str | None = None
    llm_calls: int = 0
    _open: dict[str, _OpenCall] = field(default_factory=dict)
    _anonymous: int = 0

    def say(self, text: str) -> None:
        """One assistant text (a new assistant message; tool calls that follow attach to it)."""
        self.messages.append(Message(role="assistant", content=text))

    def start_tool(self, call_id: str | None, tool: str, arguments: Any, at_ms: float) -> None:
        name, arguments = canonical_tool(self.family, tool, arguments)
        if not self.messages or self.messages[-1].role != "assistant":
            self.messages.append(Message(role="assistant", content=None))
        message = self.messages[-1]
        calls = message.tool_calls if message.tool_calls is not None else []
        call = ToolCall(
            tool=name, input=arguments, id=call_id, status="unknown", start_time=_iso(self.wall_start, at_ms)
        )
        calls.append(call)
        message.tool_calls = calls
        if call_id is None:
            self._anonymous += 1
            call_id = f"#{self._anonymous}"
        self._open[call_id] = _OpenCall(len(self.messages) - 1, len(calls) - 1, at_ms, tool)

    def restart_tool(self, call_id: str, at_ms: float) -> bool:
        """The call `call_id` (announced earlier) began executing now: its duration counts from here."""
        opened = self._open.get(call_id)
        if opened is None:
            return False
        opened.started_ms = at_ms
        self._call(opened).start_time = _iso(self.wall_start, at_ms)
        return True

    def finish_tool(
        self, call_id: str | None, output: Any, *, ok: bool, at_ms: float, arguments: Any = None
    ) -> bool:
        """Close the call `call_id` (None: the oldest anonymous one), with `arguments` when the end
        event carries fuller ones; False when it was never started."""
        key = call_id if call_id is not None else next((k for k in self._open if k.startswith("#")), None)
        opened = self._open.pop(key, None) if key is not None else None
        if opened is None:
            return False
        call = self._call(opened)
        if arguments is not None:
            call.input = canonical_tool(self.family, opened.native_name, arguments)[1]
        call.output = output
        call.status = "ok" if ok else "error"
        call.end_time = _iso(self.wall_start, at_ms)
        call.duration_ms = round(max(0.0, at_ms - opened.started_ms), 1)
        return True

    def record_tool(
        self, call_id: str | None, tool: str, arguments: Any, output: Any, *, ok: bool, at_ms: float
    ) -> None:
        """A call the agent reported only once it had finished: no duration can be told."""
        self.start_tool(call_id, tool, arguments, at_ms)
        self.finish_tool(call_id if call_id is not None else None, output, ok=ok, at_ms=at_ms)
        call = self.tool_calls()[-1]
        call.duration_ms = None
        call.start_time = None

    def _call(self, opened: _OpenCall) -> ToolCall:
        calls = self.messages[opened.message].tool_calls
        assert calls is not None
        return calls[opened.position]

    def tool_calls(self) -> list[ToolCall]:
        return [call for message in self.messages for call in (message.tool_calls or [])]

    def response(
        self, *, fallback_answer: str = "", duration_ms: float, pricing: Price | None
    ) -> TargetResponse:
        """The run as a `TargetResponse`: the last assistant text is the answer (else `fallback_answer`);
        cost is what the agent reported, else priced from usage when the model has a price."""
        answer = final_answer(self.messages) or fallback_answer
        messages = list(self.messages)
        if answer and not final_answer(messages):
            messages.append(Message(role="assistant", content=answer))
        cost = self.cost_usd
        if cost is None and self.model:
            cost = cost_of(self.usage, self.model, pricing)
        if cost is not None:
            cost = round(cost, 10)  # sums of per-call costs: no float dust in the results
        calls = self.llm_calls or sum(1 for m in messages if m.role == "assistant")
        return TargetResponse(
            text=answer,
            messages=messages,
            token_usage=self.usage,
            cost_usd=cost,
            duration_ms=duration_ms,
            start_time=_iso(self.wall_start, 0.0),
            end_time=_iso(self.wall_start, duration_ms),
            llm_call_count=calls,
        )
