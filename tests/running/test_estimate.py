"""The cost estimate's arithmetic (running/estimate.py), on eval files loaded as a run loads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.model.result import GraderResult, TestResult, TokenUsage
from agentv_ci.running.estimate import (
    DEFAULT_ANSWER_TOKENS,
    DEFAULT_MAX_ANSWER_TOKENS,
    CostEstimator,
    OverBudget,
    settle_estimate,
)
from agentv_ci.running.recorded_usage import RecordedUsage
from agentv_ci.running.selected_suites import load_selected_suites
from agentv_ci.running.token_count import APPROXIMATE, token_counter
from agentv_ci.targets.system_prompt import with_default_system

TARGETS = """\
targets:
  - name: bot
    provider: openai
    model: gpt-4o-mini
    api_key: sk-test
  - name: local
    provider: openai
    model: my-own-model
    api_key: sk-test
  - name: canned
    provider: mock
    response: hi
"""
EVAL = """\
tests:
  - id: long
    input: "{question}"
    assertions:
      - type: contains
        value: x
"""


def _estimator(tmp_path: Path, question: str, target: str, attempts: int = 1, strategy: str = "pass_at_k"):
    (tmp_path / ".agentv").mkdir(exist_ok=True)
    (tmp_path / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    path = tmp_path / "e.eval.yaml"
    path.write_text(EVAL.format(question=question), encoding="utf-8")
    [suite] = load_selected_suites([path], env={})
    estimator = CostEstimator(counter=APPROXIMATE)
    estimator.add(suite, suite.tests[0], target, attempts, strategy)
    return estimator, suite.tests[0]


def test_input_tokens_are_counted_on_the_messages_the_target_is_sent(tmp_path: Path) -> None:
    estimator, test = _estimator(tmp_path, "word " * 400, "bot")
    [line] = estimator.finish().lines
    counted = APPROXIMATE.count_messages(with_default_system(test.input))
    assert counted > 400  # the question's 2,000 characters, and AgentV's default system prompt
    assert line.input_tokens.expected == counted
    assert (line.input_tokens.low, line.input_tokens.high) == (int(counted * 0.75), -(-counted * 5 // 4))
    # no reference answer, no max_tokens, nothing recorded: the documented defaults
    assert (line.output_tokens.low, line.output_tokens.expected, line.output_tokens.high) == (
        1,
        DEFAULT_ANSWER_TOKENS,
        DEFAULT_MAX_ANSWER_TOKENS,
    )
    assert line.cost_usd is not None
    assert line.cost_usd.high == pytest.approx((line.input_tokens.high * 0.15 + 4096 * 0.60) / 1e6, abs=2e-6)


def test_attempts_multiply_and_pass_at_k_may_stop_after_one(tmp_path: Path) -> None:
    estimator, _ = _estimator(tmp_path, "q", "bot", attempts=3)
    [line] = estimator.finish().lines
    assert (line.requests.low, line.requests.high) == (1, 3)
    estimator, _ = _estimator(tmp_path, "q", "bot", attempts=3, strategy="mean")
    [line] = estimator.finish().lines
    assert (line.requests.low, line.requests.high) == (3, 3)


def test_a_model_without_a_price_is_left_out_of_the_total_and_named(tmp_path: Path) -> None:
    estimator, _ = _estimator(tmp_path, "q", "local")
    estimate = settle_estimate(estimator, budget_usd=1e-9)  # no price: nothing known to be over
    assert estimate is not None
    [line] = estimate.lines
    assert (line.cost_usd, line.note) == (None, "no price for model my-own-model")
    assert estimate.unpriced == ["local"] and estimate.cost_usd.high == 0


def test_a_run_of_mocks_has_no_estimate(tmp_path: Path) -> None:
    estimator, _ = _estimator(tmp_path, "q", "canned")
    assert settle_estimate(estimator, budget_usd=1e-9) is None


def test_a_budget_below_the_low_end_is_refused_with_the_figures(tmp_path: Path) -> None:
    estimator, _ = _estimator(tmp_path, "word " * 4000, "bot")
    with pytest.raises(OverBudget) as refused:
        settle_estimate(estimator, budget_usd=1e-6)
    assert refused.value.exit_code == 2
    assert "over the budget of $0.000001" in refused.value.message
    assert "target bot (gpt-4o-mini) $0.0" in refused.value.message


def test_recorded_usage_is_per_request_over_attempts_and_judges() -> None:
    judge = GraderResult("j", "llm-grader", 1.0, "pass", token_usage=TokenUsage(input=900, output=40))
    trial = TestResult(
        "t", "s", "bot", 1.0, "ok", token_usage=TokenUsage(input=50, output=100), scores=[judge]
    )
    other = TestResult(
        "t", "s", "bot", 1.0, "ok", token_usage=TokenUsage(input=50, output=300), scores=[judge]
    )
    row = TestResult("t", "s", "bot", 1.0, "ok", trials=[trial, other])
    recorded = RecordedUsage.of([row, TestResult("u", "s", "bot", 0.0, "not_run")])
    output = recorded.get(("s", "t", "bot"))
    assert output is not None and (output.answer, output.judge) == (200, 40)
    assert len(recorded) == 1


def test_without_tiktoken_tokens_are_approximated_as_a_quarter_of_the_characters() -> None:
    # tiktoken is not a dependency; when it is installed, it counts instead
    try:
        import tiktoken  # noqa: F401
    except ImportError:
        assert token_counter().method == "chars/4"
        assert APPROXIMATE.count("x" * 400) == 100
    else:
        assert token_counter().method.startswith("tiktoken")
