"""The text-stats grader through agentv_ci.api's test helpers (the runner's contract check and
config conversion)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from agentv_ci.api import GRADERS_NAMESPACE, ConfigError, check_plugin, grade_answer, make_grader
from text_stats_grader import TextStatsGrader

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def test_meets_the_plugin_contract_and_is_registered() -> None:
    check_plugin("grader", TextStatsGrader)
    entry_points = tomllib.loads(PYPROJECT.read_text())["project"]["entry-points"]
    assert entry_points[GRADERS_NAMESPACE]["text-stats"] == "text_stats_grader:TextStatsGrader"


@pytest.mark.parametrize(
    ("config", "answer", "score"),
    [
        ({"max_words": 5}, "Short and sweet.", 1.0),
        ({"max_words": 2}, "Short and sweet.", 0.0),
        ({"min_words": 2, "max_words": 10, "max_chars": 5}, "Short and sweet.", 2 / 3),
        ({"max_sentence_words": 3}, "One two three. Four five six seven!", 0.0),
        ({"max_sentence_words": 4}, "One two three. Four five six seven!", 1.0),
    ],
)
def test_score_is_the_share_of_limits_met(config: dict[str, int], answer: str, score: float) -> None:
    result = grade_answer(TextStatsGrader, answer, config)
    assert result.score == pytest.approx(score)
    assert result.verdict == ("pass" if score >= 0.8 else "fail")


def test_one_assertion_per_limit() -> None:
    result = grade_answer(
        TextStatsGrader, "One two. Three four five.", {"min_words": 2, "max_sentence_words": 2}
    )
    assert [(a.text, a.passed) for a in result.assertions] == [
        ("5 words >= 2", True),
        ("longest sentence 3 words <= 2", False),
    ]
    assert result.details == {"words": 5, "chars": 25, "sentences": 2}


def test_config_without_limits_or_with_a_wrong_type_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="needs at least one limit"):
        make_grader(TextStatsGrader, {})
    with pytest.raises(ConfigError, match=r"Expected `int \| null`, got `str` - at `\$.max_words`"):
        make_grader(TextStatsGrader, {"max_words": "ten"})
