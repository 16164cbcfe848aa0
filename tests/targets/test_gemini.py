"""`gemini` against a fake Generative Language API on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agentv_ci.errors import TargetError
from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import Message, ToolCall
from agentv_ci.targets.config import load_targets
from agentv_ci.targets.factory import create_target
from agentv_ci.targets.gemini import GeminiConfig, GeminiTarget, parse_generate_content, to_gemini_request
from agentv_ci.targets.system_prompt import DEFAULT_SYSTEM_PROMPT
from tests.cli_helpers import run_cli
from tests.fakes.llm_server import FakeLlmServer, Reply
from tests.targets.helpers import make_request


def _invoke(config: GeminiConfig, text: str = "hello") -> TargetResponse:
    async def go() -> TargetResponse:
        target = GeminiTarget("g", config, base_dir=Path.cwd())
        try:
            return await target.invoke(make_request(text))
        finally:
            await target.aclose()

    return asyncio.run(go())


def test_generate_content_request_answer_usage_and_cost(llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: Reply(
        text=f"echo: {call.last_user_text()}",
        usage=(1000, 200),
        tool_calls=[{"name": "get_weather", "arguments": {"city": "Oslo"}}],
    )
    config = GeminiConfig(
        model="gemini-2.5-flash", api_key="g-key", base_url=llm_server.gemini_base_url, temperature=0.2
    )
    response = _invoke(config, "ping")
    assert response.text == "echo: ping"
    assert response.messages[0].tool_calls == [ToolCall(tool="get_weather", input={"city": "Oslo"})]
    assert response.token_usage is not None
    assert (response.token_usage.input, response.token_usage.output) == (1000, 200)
    assert response.cost_usd == pytest.approx((1000 * 0.30 + 200 * 2.50) / 1e6)  # gemini-2.5-flash
    call = llm_server.calls[0]
    assert call.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert call.headers["x-goog-api-key"] == "g-key" and "authorization" not in call.headers
    assert call.body["systemInstruction"] == {"parts": [{"text": DEFAULT_SYSTEM_PROMPT}]}
    assert call.body["contents"] == [{"role": "user", "parts": [{"text": "ping"}]}]
    assert call.body["generationConfig"] == {"temperature": 0.2}


def test_turns_tool_calls_and_answers_map_to_gemini_roles_and_parts() -> None:
    messages = [
        Message(role="system", content="be brief"),
        Message(role="user", content="weather?"),
        Message(
            role="assistant", content="", tool_calls=[ToolCall(tool="get_weather", input={"city": "Oslo"})]
        ),
        Message(role="tool", content="sunny", name="get_weather"),
    ]
    body = to_gemini_request(messages)
    assert body["systemInstruction"] == {"parts": [{"text": "be brief"}]}
    assert [turn["role"] for turn in body["contents"]] == ["user", "model", "user"]
    assert body["contents"][1]["parts"] == [
        {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}
    ]
    assert body["contents"][2]["parts"][0]["functionResponse"]["name"] == "get_weather"


def test_thinking_counts_as_output_and_a_blocked_prompt_is_an_error() -> None:
    body = {
        "candidates": [{"content": {"parts": [{"text": "plan", "thought": True}, {"text": "4"}]}}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 1, "thoughtsTokenCount": 40},
    }
    text, _calls, usage = parse_generate_content(body)
    assert text == "4" and usage is not None and (usage.output, usage.reasoning) == (41, 40)
    with pytest.raises(TargetError, match=r"prompt blocked \(SAFETY\)"):
        parse_generate_content({"promptFeedback": {"blockReason": "SAFETY"}})


def test_agentv_spellings_and_key_variables(tmp_path: Path) -> None:
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: g\n    provider: google-gemini\n    max_output_tokens: 64\n"
    )
    config = load_targets(tmp_path / "x.eval.yaml", env={"GOOGLE_GENERATIVE_AI_API_KEY": "from-env"})
    target = create_target("g", config)
    assert isinstance(target, GeminiTarget)
    assert (target.config.api_key, target.config.max_tokens, target.config.model) == (
        "from-env",
        64,
        "gemini-2.5-flash",
    )
    asyncio.run(target.aclose())


def test_end_to_end_through_the_cli(tmp_path: Path, llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: Reply(text="The capital is Paris.", usage=(40, 6))
    (tmp_path / ".git").mkdir()
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: gem\n    provider: gemini\n    model: gemini-2.0-flash\n"
        f"    base_url: {llm_server.gemini_base_url}\n"
    )
    (tmp_path / "geo.eval.yaml").write_text(
        "name: geo\nexecution:\n  target: gem\ntests:\n  - id: capital\n    input: Capital of France?\n"
        "    assertions:\n      - type: contains\n        value: Paris\n"
    )
    done = run_cli("run", "geo.eval.yaml", "-o", "out", cwd=tmp_path, env={"GEMINI_API_KEY": "gk"})
    assert done.returncode == 0, done.stdout + done.stderr
    row = json.loads((tmp_path / "out" / "index.jsonl").read_text())
    assert (row["target"], row["verdict"]) == ("gem", "pass")
    assert row["token_usage"] == {"input": 40, "output": 6}
    assert row["cost_usd"] == pytest.approx((40 * 0.10 + 6 * 0.40) / 1e6)
    assert llm_server.calls[0].path == "/v1beta/models/gemini-2.0-flash:generateContent"
