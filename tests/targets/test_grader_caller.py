from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agentv_ci.errors import ConfigError
from agentv_ci.model.suite import Message
from agentv_ci.plugins import GraderTargetRequest
from agentv_ci.targets.config import load_targets
from agentv_ci.targets.grader_caller import make_grader_caller
from tests.fakes.llm_server import FakeLlmServer

TARGETS = """
targets:
  - name: agent
    provider: mock
    response: agent-answer
    grader_target: judge
  - name: judge
    provider: mock
    response: judge-answer
  - name: strict-judge
    provider: mock
    response: strict-answer
  - name: lonely
    provider: mock
    response: lonely-answer
  - name: llm
    provider: openai
    base_url: ${{ BASE }}
    api_key: ${{ KEY }}
"""


def _ask(caller: object, target: str | None = None) -> str:
    request = GraderTargetRequest(
        messages=[Message(role="user", content="grade")], system="sys", target=target
    )
    return asyncio.run(caller(request)).text  # type: ignore[operator]


def _targets(tmp_path: Path, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "targets.yaml").write_text(TARGETS)
    return load_targets(tmp_path / "a.eval.yaml", env=env or {})


def test_precedence(tmp_path: Path) -> None:
    targets = _targets(tmp_path)
    by_target = make_grader_caller(targets, eval_target="agent", override=None, dry_run=False)
    assert _ask(by_target) == "judge-answer"  # the eval target's grader_target
    assert _ask(by_target, target="strict-judge") == "strict-answer"  # the grader's own target
    forced = make_grader_caller(targets, eval_target="agent", override="lonely", dry_run=False)
    assert _ask(forced, target="strict-judge") == "lonely-answer"  # --grader-target wins
    itself = make_grader_caller(targets, eval_target="lonely", override=None, dry_run=False)
    assert _ask(itself) == "lonely-answer"  # no grader_target: the target itself


def test_dry_run_answers_agentv_mock_json(tmp_path: Path) -> None:
    caller = make_grader_caller(_targets(tmp_path), eval_target="llm", override=None, dry_run=True)
    assert caller is not None
    request = GraderTargetRequest(messages=[Message(role="user", content="grade")])
    response = asyncio.run(caller(request))
    assert json.loads(response.text) == {
        "score": 1,
        "assertions": [],
        "checks": [],
        "overall_reasoning": "dry-run mock",
    }
    assert response.dry_run


def test_override_is_checked_before_running(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown target 'nope'"):
        make_grader_caller(_targets(tmp_path), eval_target="agent", override="nope", dry_run=False)
    with pytest.raises(ConfigError, match="KEY"):
        make_grader_caller(_targets(tmp_path), eval_target="agent", override="llm", dry_run=False)
    # A dry run needs no key, but an unknown grader target fails it just the same.
    with pytest.raises(ConfigError, match="unknown target 'nope'"):
        make_grader_caller(_targets(tmp_path), eval_target="agent", override="nope", dry_run=True)
    assert make_grader_caller(_targets(tmp_path), eval_target="agent", override="llm", dry_run=True)


def test_system_prompt_reaches_a_real_model(tmp_path: Path, llm_server: FakeLlmServer) -> None:
    targets = _targets(tmp_path, {"BASE": llm_server.base_url, "KEY": "k"})
    caller = make_grader_caller(targets, eval_target="agent", override="llm", dry_run=False)
    assert caller is not None

    async def go() -> str:
        try:
            request = GraderTargetRequest(messages=[Message(role="user", content="grade")], system="sys")
            return (await caller(request)).text
        finally:
            await caller.aclose()

    assert asyncio.run(go()) == "echo: grade"
    assert llm_server.calls[0].body["messages"][0] == {"role": "system", "content": "sys"}
