from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentv_ci.errors import TargetError
from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import Message
from agentv_ci.model.suite import Test as EvalTest
from agentv_ci.plugins import TargetRequest
from agentv_ci.targets.anthropic import AnthropicConfig, AnthropicTarget
from tests.fakes.llm_server import FakeLlmServer, Reply


def _invoke(server: FakeLlmServer, messages: list[Message], **overrides: object) -> TargetResponse:
    config = AnthropicConfig(
        model="claude-sonnet-4-20250514",
        api_key="ak-test",
        base_url=server.base_url,
        retry_initial_delay_ms=1.0,
        **overrides,  # type: ignore[arg-type]
    )
    request = TargetRequest(
        test=EvalTest(id="t", input=messages), messages=messages, prompt="", eval_path=Path("/tmp/x.yaml")
    )

    async def go() -> TargetResponse:
        target = AnthropicTarget("claude", config, base_dir=Path.cwd())
        try:
            return await target.invoke(request)
        finally:
            await target.aclose()

    return asyncio.run(go())


def test_messages_api_text_tools_usage_cost(llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: Reply(
        text="checking", tool_calls=[{"name": "search", "arguments": {"q": "x"}}], usage=(2000, 100)
    )
    messages = [Message(role="system", content="be brief"), Message(role="user", content="find x")]
    response = _invoke(llm_server, messages)
    assert response.text == "checking"
    calls = response.messages[-1].tool_calls
    assert calls is not None and (calls[0].tool, calls[0].input) == ("search", {"q": "x"})
    assert response.token_usage is not None and response.token_usage.input == 2000
    assert response.cost_usd == pytest.approx((2000 * 3.0 + 100 * 15.0) / 1e6)
    call = llm_server.calls[0]
    assert call.path == "/v1/messages"
    assert call.headers["x-api-key"] == "ak-test"
    assert call.headers["anthropic-version"] == "2023-06-01"
    assert call.body["system"] == "be brief"
    assert call.body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "find x"}]}]


def test_default_system_prompt_when_the_test_has_none(llm_server: FakeLlmServer) -> None:
    from agentv_ci.targets.system_prompt import DEFAULT_SYSTEM_PROMPT

    _invoke(llm_server, [Message(role="user", content="hi")])
    assert llm_server.calls[0].body["system"] == DEFAULT_SYSTEM_PROMPT


def test_retry_then_success_and_malformed(llm_server: FakeLlmServer) -> None:
    llm_server.fail_next(529, retry_after=0)
    assert _invoke(llm_server, [Message(role="user", content="hi")]).text == "echo: hi"
    llm_server.responder = lambda call: {"type": "message", "content": "not-a-list"}
    with pytest.raises(TargetError, match="malformed Anthropic message"):
        _invoke(llm_server, [Message(role="user", content="hi")])
