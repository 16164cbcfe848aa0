from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentv_ci.errors import TargetError
from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import Message
from agentv_ci.targets.openai import AzureConfig, AzureTarget, OpenAIConfig, OpenAITarget
from agentv_ci.targets.pricing import Price, register_price
from agentv_ci.targets.system_prompt import DEFAULT_SYSTEM_PROMPT
from tests.fakes.llm_server import FakeLlmServer, Reply
from tests.targets.helpers import make_request


def _invoke(config: OpenAIConfig, text: str = "hello") -> TargetResponse:
    async def go() -> TargetResponse:
        target = OpenAITarget("llm", config, base_dir=Path.cwd())
        try:
            return await target.invoke(make_request(text))
        finally:
            await target.aclose()

    return asyncio.run(go())


def _config(server: FakeLlmServer, **overrides: object) -> OpenAIConfig:
    values: dict[str, object] = {
        "model": "gpt-4o-mini",
        "api_key": "sk-test",
        "base_url": server.base_url,
        "retry_initial_delay_ms": 1.0,
        "retry_max_delay_ms": 5.0,
    }
    values.update(overrides)
    return OpenAIConfig(**values)  # type: ignore[arg-type]


def test_chat_completion_text_usage_and_cost(llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: Reply(text=f"echo: {call.last_user_text()}", usage=(1000, 500))
    response = _invoke(_config(llm_server), "ping")
    assert response.text == "echo: ping"
    assert response.token_usage is not None
    assert (response.token_usage.input, response.token_usage.output) == (1000, 500)
    # gpt-4o-mini: $0.15 / $0.60 per million tokens
    assert response.cost_usd == pytest.approx((1000 * 0.15 + 500 * 0.60) / 1e6)
    call = llm_server.calls[0]
    assert call.path == "/v1/chat/completions"
    assert call.headers["authorization"] == "Bearer sk-test"
    # No system message in the test: AgentV 4.42.4's default system prompt goes first, as AgentV sends it.
    assert call.body["messages"] == [
        {"role": "system", "content": DEFAULT_SYSTEM_PROMPT},
        {"role": "user", "content": "ping"},
    ]
    assert DEFAULT_SYSTEM_PROMPT.startswith("You are a careful assistant.")


def test_a_test_system_message_replaces_the_default(llm_server: FakeLlmServer) -> None:
    async def go() -> None:
        target = OpenAITarget("llm", _config(llm_server), base_dir=Path.cwd())
        try:
            request = make_request("ping")
            request.messages.insert(0, Message(role="system", content="be terse"))
            await target.invoke(request)
        finally:
            await target.aclose()

    asyncio.run(go())
    assert [m["role"] for m in llm_server.calls[0].body["messages"]] == ["system", "user"]
    assert llm_server.calls[0].body["messages"][0]["content"] == "be terse"


def test_tool_calls_are_mapped(llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: Reply(
        text="", tool_calls=[{"name": "get_weather", "arguments": {"city": "Oslo"}}]
    )
    response = _invoke(_config(llm_server))
    calls = response.messages[-1].tool_calls
    assert calls is not None and calls[0].tool == "get_weather"
    assert calls[0].input == {"city": "Oslo"}
    assert calls[0].id == "call_0"


def test_price_table_is_extendable(llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: Reply(text="x", usage=(1_000_000, 0))
    assert _invoke(_config(llm_server, model="house-model-7")).cost_usd is None
    register_price("house-model", 2.0, 4.0)
    assert _invoke(_config(llm_server, model="house-model-7")).cost_usd == pytest.approx(2.0)
    per_target = _config(llm_server, model="house-model-7", pricing=Price(3.0, 1.0))
    assert _invoke(per_target).cost_usd == pytest.approx(3.0)


def test_429_with_retry_after_is_retried(llm_server: FakeLlmServer) -> None:
    llm_server.fail_next(429, times=2, retry_after=0)
    response = _invoke(_config(llm_server, max_retries=2))
    assert response.text.startswith("echo:")
    assert len(llm_server.calls) == 3


def test_500s_exhaust_retries(llm_server: FakeLlmServer) -> None:
    llm_server.fail_next(500, times=3)
    with pytest.raises(TargetError, match=r"HTTP 500.*gave up after 3 attempts"):
        _invoke(_config(llm_server, max_retries=2))
    assert len(llm_server.calls) == 3


def test_400_is_not_retried(llm_server: FakeLlmServer) -> None:
    llm_server.fail_next(400, body={"error": {"message": "bad model"}})
    with pytest.raises(TargetError, match=r"HTTP 400.*bad model"):
        _invoke(_config(llm_server, max_retries=3))
    assert len(llm_server.calls) == 1


def test_malformed_bodies(llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: Reply(body="<html>oops</html>")
    with pytest.raises(TargetError, match="malformed response body"):
        _invoke(_config(llm_server))
    llm_server.responder = lambda call: {"choices": []}
    with pytest.raises(TargetError, match="malformed chat completion"):
        _invoke(_config(llm_server))


def test_timeout_is_a_target_error(llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: Reply(text="late", delay_s=1.0)
    with pytest.raises(TargetError, match="timed out"):
        _invoke(_config(llm_server, timeout_seconds=0.1, max_retries=0))


def test_azure_deployment_url_and_key_header(llm_server: FakeLlmServer) -> None:
    endpoint = llm_server.base_url.removesuffix("/v1")
    config = AzureConfig(api_key="az-key", endpoint=endpoint, model="my-deploy", version="2024-10-21")

    async def go() -> TargetResponse:
        target = AzureTarget("az", config, base_dir=Path.cwd())
        try:
            return await target.invoke(make_request("hi"))
        finally:
            await target.aclose()

    assert asyncio.run(go()).text == "echo: hi"
    call = llm_server.calls[0]
    assert call.path == "/openai/deployments/my-deploy/chat/completions?api-version=2024-10-21"
    assert call.headers["api-key"] == "az-key"


def _flaky(status: int, headers: dict[str, str]) -> object:
    """A responder failing the first call with `status` + `headers`, then answering normally."""
    seen: list[float] = []

    def respond(call: object) -> Reply:
        import time

        seen.append(time.monotonic())
        if len(seen) == 1:
            return Reply(status=status, headers=headers, body={"error": {"message": "slow down"}})
        return Reply(text="recovered")

    respond.seen = seen  # type: ignore[attr-defined]
    return respond


@pytest.mark.parametrize("headers", [{"retry-after": "0.3"}, {"retry-after-ms": "300"}])
def test_retry_after_is_waited_even_above_the_backoff_cap(
    llm_server: FakeLlmServer, headers: dict[str, str]
) -> None:
    """The server's retry-after (seconds or -ms) is honoured, not cut to retry_max_delay_ms (5 ms)."""
    responder = _flaky(429, headers)
    llm_server.responder = responder  # type: ignore[assignment]
    assert _invoke(_config(llm_server, max_retries=1)).text == "recovered"
    first, second = responder.seen  # type: ignore[attr-defined]
    assert second - first >= 0.29


@pytest.mark.parametrize("status", [408, 409, 502, 503, 504])
def test_transient_statuses_are_retried(llm_server: FakeLlmServer, status: int) -> None:
    llm_server.responder = _flaky(status, {})  # type: ignore[assignment]
    assert _invoke(_config(llm_server, max_retries=1)).text == "recovered"
    assert len(llm_server.calls) == 2
