"""`openrouter` against the fake OpenAI-compatible server: headers, usage accounting, reported cost."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agentv_ci.errors import ConfigError
from agentv_ci.model.result import TargetResponse
from agentv_ci.targets.config import load_targets
from agentv_ci.targets.factory import create_target
from agentv_ci.targets.openrouter import OpenRouterConfig, OpenRouterTarget
from tests.cli_helpers import run_cli
from tests.fakes.llm_server import FakeLlmServer, Reply
from tests.targets.helpers import make_request


def _invoke(target: OpenRouterTarget, text: str = "hello") -> TargetResponse:
    async def go() -> TargetResponse:
        try:
            return await target.invoke(make_request(text))
        finally:
            await target.aclose()

    return asyncio.run(go())


def test_sends_attribution_headers_asks_for_usage_and_reports_openrouters_cost(
    llm_server: FakeLlmServer,
) -> None:
    llm_server.responder = lambda call: Reply(text="hi from router", usage=(120, 30), cost=0.00042)
    config = OpenRouterConfig(
        model="anthropic/claude-sonnet-4",
        api_key="or-key",
        base_url=llm_server.base_url,
        site_url="https://ci.example",
        app_name="agentv-ci tests",
    )
    response = _invoke(OpenRouterTarget("router", config, base_dir=Path.cwd()))
    assert response.text == "hi from router"
    assert response.cost_usd == 0.00042  # what OpenRouter charged, not a price-table guess
    assert response.token_usage is not None and (response.token_usage.input, response.token_usage.output) == (
        120,
        30,
    )
    call = llm_server.calls[0]
    assert call.path == "/v1/chat/completions"
    assert call.headers["authorization"] == "Bearer or-key"
    assert call.headers["http-referer"] == "https://ci.example"
    assert call.headers["x-title"] == "agentv-ci tests"
    assert call.body["usage"] == {"include": True}
    assert call.body["model"] == "anthropic/claude-sonnet-4"


def test_model_is_required_and_the_key_comes_from_openrouter_api_key(tmp_path: Path) -> None:
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text("targets:\n  - name: r\n    provider: openrouter\n")
    config = load_targets(tmp_path / "x.eval.yaml", env={"OPENROUTER_API_KEY": "k"})
    with pytest.raises(ConfigError, match=r"target 'r' \(openrouter\) needs `model`"):
        create_target("r", config)
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: r\n    provider: openrouter\n    model: x/y\n"
    )
    with pytest.raises(ConfigError, match="OPENROUTER_API_KEY"):
        create_target("r", load_targets(tmp_path / "x.eval.yaml", env={}))
    target = create_target("r", load_targets(tmp_path / "x.eval.yaml", env={"OPENROUTER_API_KEY": "k"}))
    assert isinstance(target, OpenRouterTarget) and target.config.base_url == "https://openrouter.ai/api/v1"
    asyncio.run(target.aclose())


def test_end_to_end_through_the_cli(tmp_path: Path, llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: Reply(text="Paris", usage=(50, 2), cost=0.0001)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: router\n    provider: openrouter\n    model: openai/gpt-4o-mini\n"
        f"    api_key: ${{{{ OPENROUTER_API_KEY }}}}\n    endpoint: {llm_server.base_url}\n"
    )
    (tmp_path / "geo.eval.yaml").write_text(
        "name: geo\nexecution:\n  target: router\ntests:\n  - id: capital\n    input: Capital of France?\n"
        "    assertions:\n      - type: equals\n        value: Paris\n"
    )
    env = {"PATH": "/usr/bin:/bin", "OPENROUTER_API_KEY": "or-secret"}
    done = run_cli("run", "geo.eval.yaml", "-o", "out", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    row = json.loads((tmp_path / "out" / "index.jsonl").read_text())
    assert (row["target"], row["verdict"], row["cost_usd"]) == ("router", "pass", 0.0001)
    assert llm_server.calls[0].headers["authorization"] == "Bearer or-secret"
