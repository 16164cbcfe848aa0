"""A model reply that is no answer (null or missing content, a refusal, a filtered or blocked reply)
is an execution error with its reason, never an empty string to grade. Real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentv_ci.errors import TargetError
from agentv_ci.model.result import TargetResponse
from agentv_ci.targets.anthropic import AnthropicConfig, AnthropicTarget
from agentv_ci.targets.gemini import GeminiConfig, GeminiTarget
from agentv_ci.targets.openai import AzureConfig, AzureTarget, OpenAIConfig, OpenAITarget
from agentv_ci.targets.openrouter import OpenRouterConfig, OpenRouterTarget
from tests.fakes.llm_server import FakeLlmServer, Reply
from tests.targets.helpers import make_request

BIG = int("1" + "0" * 399)


def _ask(target: Any) -> TargetResponse:
    async def go() -> TargetResponse:
        try:
            response: TargetResponse = await target.invoke(make_request("hello"))
            return response
        finally:
            await target.aclose()

    return asyncio.run(go())


def _openai(server: FakeLlmServer, kind: str = "openai") -> Any:
    common: dict[str, Any] = {"api_key": "k", "max_retries": 0, "model": "gpt-4o-mini"}
    if kind == "azure":
        return AzureTarget(
            "llm", AzureConfig(endpoint=f"http://127.0.0.1:{server.port}", **common), base_dir=Path.cwd()
        )
    if kind == "openrouter":
        return OpenRouterTarget(
            "llm", OpenRouterConfig(base_url=server.base_url, **common), base_dir=Path.cwd()
        )
    return OpenAITarget("llm", OpenAIConfig(base_url=server.base_url, **common), base_dir=Path.cwd())


def _chat(message: dict[str, Any], finish: str = "stop", usage: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (_chat({"content": None}), "openai: the reply had no content (finish_reason: stop)"),
        (_chat({}, finish="length"), "openai: the reply had no content (finish_reason: length)"),
        (_chat({"content": "  \n"}), "openai: the reply had no content (finish_reason: stop)"),
        (
            _chat({"content": None, "refusal": "I can't help with that."}),
            "openai: refused: I can't help with that.",
        ),
        (
            _chat({"content": "Sure, here is", "refusal": "I can't help with that."}),
            "openai: refused: I can't help with that.",
        ),
        (
            _chat({"content": None}, finish="content_filter"),
            "openai: refused: the reply was filtered (finish_reason: content_filter)",
        ),
        (
            _chat({"content": "ok"}, usage={"prompt_tokens": BIG, "completion_tokens": 1}),
            "openai: the reply's usage is not plausible: input tokens 100000... (400 digits) is outside",
        ),
        (
            _chat({"content": "ok"}, usage={"prompt_tokens": -3, "completion_tokens": 1}),
            "openai: the reply's usage is not plausible: input tokens -3 is outside",
        ),
    ],
)
def test_openai_replies_that_are_no_answer(llm_server: FakeLlmServer, body: dict, reason: str) -> None:
    llm_server.responder = lambda call: Reply(body=body)
    with pytest.raises(TargetError) as caught:
        _ask(_openai(llm_server))
    assert caught.value.message.startswith(reason), caught.value.message


@pytest.mark.parametrize("kind", ["azure", "openrouter"])
def test_openai_compatible_targets_name_themselves(llm_server: FakeLlmServer, kind: str) -> None:
    llm_server.responder = lambda call: Reply(body=_chat({"content": None}))
    with pytest.raises(TargetError, match=rf"^{kind}: the reply had no content \(finish_reason: stop\)$"):
        _ask(_openai(llm_server, kind))


def test_tool_calls_without_text_are_still_an_answer(llm_server: FakeLlmServer) -> None:
    # The legitimate empty-text reply: a tool-use turn. Its calls are what tool graders judge.
    llm_server.responder = lambda call: Reply(
        text="", tool_calls=[{"name": "search", "arguments": {"q": "x"}}]
    )
    for target in (
        _openai(llm_server),
        AnthropicTarget("a", AnthropicConfig(base_url=llm_server.base_url, api_key="k"), base_dir=Path.cwd()),
        GeminiTarget(
            "g", GeminiConfig(base_url=llm_server.gemini_base_url, api_key="k"), base_dir=Path.cwd()
        ),
    ):
        response = _ask(target)
        assert response.text == ""
        calls = response.messages[-1].tool_calls
        assert calls is not None and calls[0].tool == "search"


def _anthropic_reply(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": content,
        "stop_reason": stop,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (_anthropic_reply([], "end_turn"), "anthropic: the reply had no content (stop_reason: end_turn)"),
        (
            _anthropic_reply([{"type": "text", "text": ""}], "max_tokens"),
            "anthropic: the reply had no content (stop_reason: max_tokens)",
        ),
        (_anthropic_reply([], "refusal"), "anthropic: refused: stop_reason: refusal"),
        (
            _anthropic_reply([{"type": "text", "text": "I won't do that"}], "refusal"),
            "anthropic: refused: I won't do that",
        ),
    ],
)
def test_anthropic_replies_that_are_no_answer(llm_server: FakeLlmServer, body: dict, reason: str) -> None:
    llm_server.responder = lambda call: Reply(body=body)
    target = AnthropicTarget(
        "a", AnthropicConfig(base_url=llm_server.base_url, api_key="k", max_retries=0), base_dir=Path.cwd()
    )
    with pytest.raises(TargetError) as caught:
        _ask(target)
    assert caught.value.message == reason


def _gemini_reply(parts: list[dict[str, Any]] | None, finish: str) -> dict[str, Any]:
    candidate: dict[str, Any] = {"finishReason": finish, "index": 0}
    if parts is not None:
        candidate["content"] = {"role": "model", "parts": parts}
    return {"candidates": [candidate], "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 0}}


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (_gemini_reply(None, "SAFETY"), "gemini: refused: the reply was blocked (finishReason: SAFETY)"),
        (
            _gemini_reply([{"text": "Partial ans"}], "RECITATION"),
            "gemini: refused: the reply was blocked (finishReason: RECITATION)",
        ),
        (_gemini_reply(None, "STOP"), "gemini: the reply had no content (finishReason: STOP)"),
        (
            _gemini_reply([{"text": "thinking...", "thought": True}], "MAX_TOKENS"),
            "gemini: the reply had no content (finishReason: MAX_TOKENS)",
        ),
    ],
)
def test_gemini_replies_that_are_no_answer(llm_server: FakeLlmServer, body: dict, reason: str) -> None:
    llm_server.responder = lambda call: Reply(body=body)
    target = GeminiTarget(
        "g",
        GeminiConfig(base_url=llm_server.gemini_base_url, api_key="k", max_retries=0),
        base_dir=Path.cwd(),
    )
    with pytest.raises(TargetError) as caught:
        _ask(target)
    assert caught.value.message == reason
