from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agentv_ci.model.result import GraderResult
from agentv_ci.model.suite import GraderSpec
from tests.fakes.llm_server import FakeLlmServer
from tests.graders.contexts import make_ctx, run_spec
from tests.graders.test_llm import judge

ANSWER = "The refund was approved. Ticket #123."
MEMBERS = [
    {"type": "contains", "name": "approved", "config": {"value": "approved"}},  # 1
    {"type": "contains", "name": "ticket", "config": {"value": "Ticket"}},  # 1
    {"type": "contains", "name": "apology", "config": {"value": "sorry"}},  # 0
]


def composite(aggregator: Any, members: list[dict] = MEMBERS, tmp: Path | None = None) -> GraderResult:
    spec = GraderSpec(
        type="composite", name="combo", config={"assertions": members, "aggregator": aggregator}
    )
    base = tmp or Path("/tmp")
    return run_spec(spec, make_ctx(ANSWER, eval_path=base / "EVAL.yaml"), base_dir=base)


@pytest.mark.parametrize(
    ("aggregator", "score", "verdict"),
    [
        ({"type": "weighted_average"}, 2 / 3, "fail"),
        ({"type": "weighted_average", "weights": {"approved": 3, "ticket": 1, "apology": 0}}, 1.0, "pass"),
        ({"type": "threshold", "threshold": 0.6}, 2 / 3, "pass"),
        ({"type": "threshold", "threshold": 0.7}, 2 / 3, "fail"),
        ({"type": "minimum"}, 0.0, "fail"),
        ({"type": "maximum"}, 1.0, "pass"),
        ({"type": "all_or_nothing"}, 0.0, "fail"),
        ({"type": "safety_gate", "required": ["approved"]}, 2 / 3, "fail"),
        ({"type": "safety_gate", "required": ["apology"]}, 0.0, "fail"),
    ],
)
def test_builtin_aggregators(aggregator: dict, score: float, verdict: str) -> None:
    result = composite(aggregator)
    assert result.error is None
    assert result.score == pytest.approx(score) and result.verdict == verdict
    assert [s.name for s in result.scores] == ["approved", "ticket", "apology"]
    texts = [a.text for a in result.assertions]
    assert '[approved] Output contains "approved"' in texts


def test_threshold_aggregator_reports_the_count() -> None:
    result = composite({"type": "threshold", "threshold": 0.5})
    assert result.assertions[0].text == "2/3 evaluators passed (threshold: 0.5)"


def test_all_or_nothing_passes_when_every_member_passes() -> None:
    assert composite({"type": "all_or_nothing"}, MEMBERS[:2]).score == 1.0


def test_member_negate_is_ignored_like_agentv_and_composites_nest() -> None:
    members = [
        {"type": "contains", "name": "no-sorry", "negate": True, "config": {"value": "sorry"}},
        {
            "type": "composite",
            "name": "inner",
            "config": {"assertions": MEMBERS[:2], "aggregator": {"type": "minimum"}},
        },
    ]
    result = composite({"type": "weighted_average"}, members)
    # AgentV applies `negate` to top-level graders only: the member scores 0 (no "sorry"), inner 1.
    assert result.score == 0.5 and result.scores[0].score == 0.0
    assert result.scores[1].scores[0].name == "approved"


def test_member_weight_is_ignored_only_aggregator_weights_count() -> None:
    members = [{**MEMBERS[0], "weight": 5}, MEMBERS[2]]
    assert composite({"type": "weighted_average"}, members).score == 0.5
    assert composite({"type": "weighted_average", "weights": {"approved": 3}}, members).score == 0.75


def test_skipped_members_are_left_out_of_the_assertions() -> None:
    skipping = {"type": "composite", "name": "noagg", "config": {"assertions": MEMBERS[:1]}}
    result = composite({"type": "weighted_average"}, [MEMBERS[0], skipping])
    assert result.score == 1.0 and [a.text for a in result.assertions] == [
        '[approved] Output contains "approved"'
    ]
    alone = composite({"type": "weighted_average"}, [skipping])
    assert alone.verdict == "skip"
    assert [a.text for a in alone.assertions] == ["All evaluators skipped (infrastructure failure)"]


def test_missing_aggregator_skips_like_agentv() -> None:
    result = composite(None)
    assert result.verdict == "skip" and result.error is None


def test_member_error_makes_the_composite_an_error() -> None:
    members = [*MEMBERS, {"type": "regex", "name": "broken", "config": {"value": "("}}]
    result = composite({"type": "weighted_average"}, members)
    assert result.error is not None and "broken" in result.error


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"assertions": [], "aggregator": {"type": "weighted_average"}}, "needs member `assertions`"),
        ({"assertions": MEMBERS, "aggregator": {"type": "median"}}, "unknown aggregator 'median'"),
        ({"assertions": MEMBERS, "aggregator": {"type": "threshold"}}, "needs `threshold`"),
        ({"assertions": [MEMBERS[0], MEMBERS[0]], "aggregator": "weighted_average"}, "must be unique"),
    ],
)
def test_bad_composite_config(config: dict, message: str) -> None:
    result = run_spec(GraderSpec(type="composite", name="c", config=config), make_ctx(ANSWER))
    assert result.error is not None and message in result.error


def test_code_grader_aggregator_reads_member_results(tmp_path: Path) -> None:
    script = tmp_path / "agg.py"
    script.write_text(
        "import json, sys\n"
        "results = json.load(sys.stdin)['results']\n"
        "open('seen.json', 'w').write(json.dumps(results))\n"
        "ok = results['approved']['score'] == 1 and results['apology']['verdict'] == 'fail'\n"
        "print(json.dumps({'score': 0.9 if ok else 0.1, 'assertions': [{'text': 'policy', 'passed': ok}]}))\n"
    )
    result = composite({"type": "code_grader", "path": [sys.executable, str(script)]}, tmp=tmp_path)
    assert result.error is None and result.score == 0.9
    assert result.assertions[0].text == "policy"
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert set(seen["ticket"]) >= {"score", "verdict", "assertions", "expectedAspectCount"}


def test_llm_grader_aggregator_through_a_real_server(llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: '{"score": 0.7, "verdict": "pass", "assertions": []}'
    spec = GraderSpec(
        type="composite", name="combo", config={"assertions": MEMBERS, "aggregator": {"type": "llm-grader"}}
    )
    result = judge(llm_server, spec, ANSWER)
    # AgentV: the verdict follows the score (0.7 < 0.8), whatever the reply's `verdict` says.
    assert result.error is None and result.score == 0.7 and result.verdict == "fail"
    prompt = llm_server.calls[0].body["messages"][-1]["content"]
    assert prompt.startswith("Review the following evaluation results:\n{")
    results_json = prompt.split("\n", 1)[1].split("\n\nDecide the final score", 1)[0]
    assert json.loads(results_json)["approved"] == {
        "score": 1,
        "verdict": "pass",
        "assertions": [{"text": 'Output contains "approved"', "passed": True}],
        "expectedAspectCount": 1,
    }
