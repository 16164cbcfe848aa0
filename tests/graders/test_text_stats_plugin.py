"""The in-repo third-party-style plugin (plugins/text-stats-grader, installed by `make setup`) in the
scoring engine next to the built-ins, through `build_grader` and `run_grader_spec` as the runner uses
them. Its own behaviour is tested in plugins/text-stats-grader/tests."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentv_ci import plugins
from agentv_ci.grading import grade_test
from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import GraderSpec
from agentv_ci.model.suite import Test as EvalTest
from tests.graders.contexts import make_ctx, run_spec


def test_the_installed_entry_point_loads_the_plugin_class() -> None:
    cls = plugins.load_plugin_class(plugins.GRADERS_NAMESPACE, "text-stats")
    assert cls is not None and (cls.__module__, cls.__name__) == ("text_stats_grader", "TextStatsGrader")


@pytest.mark.parametrize(
    ("config", "answer", "score"),
    [
        ({"max_words": 5}, "Short and sweet.", 1.0),
        ({"max_words": 2}, "Short and sweet.", 0.0),
        ({"min_words": 2, "max_words": 10, "max_chars": 5}, "Short and sweet.", 2 / 3),
        ({"max_sentence_words": 3}, "One two three. Four five six seven!", 0.0),
        ({"max_sentence_words": 4}, "One two three. Four five six seven!", 1.0),
        ({"min_words": 1}, "", 0.0),
    ],
)
def test_text_stats_scores(config: dict, answer: str, score: float) -> None:
    result = run_spec(GraderSpec(type="text-stats", name="length", config=config), make_ctx(answer))
    assert result.error is None and result.score == pytest.approx(score)


def test_plugin_config_errors_are_grader_errors() -> None:
    no_limits = run_spec(GraderSpec(type="text-stats", name="length"), make_ctx("x"))
    assert no_limits.error is not None and "needs at least one limit" in no_limits.error
    bad_type = run_spec(
        GraderSpec(type="text-stats", name="length", config={"max_words": "ten"}), make_ctx("x")
    )
    assert bad_type.error is not None and "max_words" in bad_type.error


def test_plugin_works_in_the_scoring_engine_next_to_builtins(tmp_path: Path) -> None:
    test = EvalTest(
        id="t",
        graders=[
            GraderSpec(type="text-stats", name="length", required=True, config={"max_words": 3}),
            GraderSpec(type="contains", name="has-ok", config={"value": "ok"}),
        ],
    )
    result = asyncio.run(
        grade_test(
            test,
            TargetResponse(text="ok but far too long"),
            target="x",
            eval_path=tmp_path / "E.yaml",
            threshold=0.5,
        )
    )
    assert [s.type for s in result.scores] == ["text-stats", "contains"]
    assert result.score == 0.0  # the required plugin grader missed its bar
