"""The LLM-grader corpus (agentv_4_42_4_more/llm/): the reference CLI and `agentv-ci run` grade the same
mock answers through the same scripted judge (a real OpenAI-compatible server on 127.0.0.1). The judge
requests (system + user prompts, retries, the structure-repair call) and the resulting rows must match.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conformance.compare import Key, compare_row, load_expected, run_corpus
from tests.fakes.llm_server import FakeLlmServer

CORPUS = Path(__file__).parent / "agentv_4_42_4_more" / "llm"

DIVERGENCES: dict[Key, dict[str, Any]] = {
    ("judge", "implicit"): {
        "reason": "AgentV leaves the implicit criteria judge out of `scores`; we keep it there (its "
        "assertions and token usage are the only evidence of why the test scored as it did)",
        "only_ours": ["llm-grader"],
    },
    ("judge", "legacy-judge"): {
        "reason": "AgentV 4.42.4 silently skips a `type: llm_judge` grader; issue 3: legacy names run as "
        "their modern equivalent with a deprecation warning, never silently skipped (the judge gives 0.5)",
        "only_ours": ["llm-grader"],
        "score": 0.75,
        "execution_status": "quality_failure",
    },
    ("judge", "garbage-forever"): {
        "reason": "same score, status and verdict; the quoted parser message is V8's",
        "free_text": ["judge-g9"],
    },
    ("judge", "composite-skip-member"): {
        "reason": "AgentV drops a member whose judge never parses (verdict skip) and scores the rest: a "
        "silent score. Issue 3: a parse failure is an execution error, never a silent score.",
        "score": 0.0,
        "execution_status": "execution_error",
        "grader_scores": [0.0],
        "free_text": ["composite"],
        "no_children": True,
    },
}
# Requests only we send (the legacy judge above); every other request must match the reference's.
_ONLY_OURS = ("LEGACY",)
# The structure-repair prompt quotes the parser's message, which is engine-specific (V8's JSON.parse).
_VALIDATION_ERROR = re.compile(r"(Validation error:\n)[^\n]*")


def _judge() -> ModuleType:
    spec = importlib.util.spec_from_file_location("conformance_judge", CORPUS / "judge.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[Key, dict[str, Any]], list[Any]]]:
    judge = _judge()
    with FakeLlmServer(lambda call: judge.respond(call.body)) as server:
        env = {"LLM_API_KEY": "k", "LLM_MODEL": "gpt-fake", "LLM_BASE_URL": server.base_url}
        rows, _ = run_corpus(CORPUS, tmp_path_factory.mktemp("conformance-llm"), ["judge.eval.yaml"], env)
        yield rows, [c.body["messages"] for c in server.calls]


def _normalised(messages: list[dict[str, Any]]) -> str:
    return json.dumps(
        [{**m, "content": _VALIDATION_ERROR.sub(r"\1<message>", m["content"])} for m in messages],
        ensure_ascii=False,
    )


def test_judge_requests_match_reference(run: tuple[dict[Key, dict[str, Any]], list[Any]]) -> None:
    expected = [json.loads(line) for line in (CORPUS / "expected-calls.jsonl").read_text().splitlines()]
    ours = [m for m in run[1] if not m[-1]["content"].startswith(_ONLY_OURS)]
    assert len(ours) == len(run[1]) - 1
    assert sorted(_normalised(m) for m in ours) == sorted(_normalised(m) for m in expected)


@pytest.mark.parametrize("expected", load_expected(CORPUS), ids=lambda r: r["test_id"])
def test_rows_match_reference(
    expected: dict[str, Any], run: tuple[dict[Key, dict[str, Any]], list[Any]]
) -> None:
    key = (expected["suite"], expected["test_id"])
    override = DIVERGENCES.get(key, {})
    ours = run[0][key]
    if "only_ours" in override:
        extra = [g for g in ours["scores"] if g["name"] in override["only_ours"]]
        assert [g["type"] for g in extra] == ["llm-grader"]
        ours = {**ours, "scores": [g for g in ours["scores"] if g["name"] not in override["only_ours"]]}
    compare_row(expected, ours, override, check_texts=True)
