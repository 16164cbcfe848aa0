from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentv_ci.errors import ConfigError
from agentv_ci.model.result import TestResult
from agentv_ci.model.suite import GraderSpec, RepeatSpec
from agentv_ci.running.budget import Budget
from agentv_ci.running.cache import ResponseCache
from agentv_ci.running.plan import PlanOptions, plan_jobs
from agentv_ci.running.scheduler import Runner, RunnerOptions
from tests.running.support import CountingTarget, make_suite, write_targets


@pytest.fixture(autouse=True)
def _reset() -> None:
    CountingTarget.reset()


def _run(suites: list, options: RunnerOptions, plan: PlanOptions | None = None) -> list[TestResult]:  # type: ignore[type-arg]
    results: list[TestResult] = []
    jobs = plan_jobs(suites, plan or PlanOptions())
    runner = Runner(jobs, options, results.append)
    asyncio.run(runner.run())
    return results


def test_workers_bound_concurrency_across_files(tmp_path: Path) -> None:
    write_targets(tmp_path, "targets:\n  - name: t\n    provider: counting\n    delay_s: 0.05\n")
    suites = [make_suite(tmp_path, "alpha", 6), make_suite(tmp_path, "beta", 6)]
    results = _run(suites, RunnerOptions(workers=4))
    assert len(results) == 12
    assert all(r.execution_status == "ok" for r in results)
    assert CountingTarget.max_in_flight == 4
    assert CountingTarget.max_suites_in_flight == 2  # files are not run one at a time


def test_per_test_timeout_is_an_execution_error(tmp_path: Path) -> None:
    write_targets(tmp_path, "targets:\n  - name: t\n    provider: counting\n    delay_s: 30\n")
    results = _run([make_suite(tmp_path, "slow", 2)], RunnerOptions(workers=2), PlanOptions(timeout_s=0.1))
    assert [r.execution_status for r in results] == ["execution_error", "execution_error"]
    assert all(
        r.error == "timed out after 0.1s (wall clock)" and r.failure_reason_code == "timeout" for r in results
    )


def test_target_error_does_not_stop_the_run(tmp_path: Path) -> None:
    write_targets(tmp_path, "targets:\n  - name: t\n    provider: counting\n    fail_ids: [s-1]\n")
    results = {r.test_id: r for r in _run([make_suite(tmp_path, "s", 3)], RunnerOptions(workers=1))}
    assert results["s-1"].execution_status == "execution_error"
    assert results["s-1"].error == "refused s-1"
    assert results["s-1"].line == 2
    assert (results["s-1"].failure_stage, results["s-1"].failure_reason_code) == ("agent", "provider_error")
    assert results["s-0"].execution_status == results["s-2"].execution_status == "ok"


def test_budget_stops_scheduling_and_marks_the_rest_not_run(tmp_path: Path) -> None:
    write_targets(tmp_path, "targets:\n  - name: t\n    provider: counting\n    cost_usd: 1.0\n")
    budget = Budget(2.5)
    results = _run([make_suite(tmp_path, "paid", 6)], RunnerOptions(workers=1, budget=budget))
    statuses = [r.execution_status for r in results]
    assert statuses == ["ok", "ok", "ok", "not_run", "not_run", "not_run"]
    assert len(CountingTarget.calls) == 3
    not_run = results[-1]
    assert not_run.verdict == "skip" and not_run.failure_reason_code == "budget_exceeded"
    assert budget.spent_usd == 3.0


def test_matrix_runs_every_test_per_target(tmp_path: Path) -> None:
    write_targets(
        tmp_path,
        "targets:\n  - name: a\n    provider: counting\n"
        "  - name: b\n    provider: counting\n    answer: no\n",
    )
    results = _run([make_suite(tmp_path, "m", 2)], RunnerOptions(), PlanOptions(targets=("a", "b")))
    verdicts = sorted((r.test_id, r.target, r.verdict) for r in results)
    assert verdicts == [
        ("m-0", "a", "pass"),
        ("m-0", "b", "fail"),
        ("m-1", "a", "pass"),
        ("m-1", "b", "fail"),
    ]


def test_repeats_are_independent_attempts(tmp_path: Path) -> None:
    write_targets(
        tmp_path,
        "targets:\n  - name: t\n    provider: counting\n    flaky_answers: [no, yes, no]\n",
    )
    suite = make_suite(tmp_path, "r", 1)
    [at_k] = _run([suite], RunnerOptions(), PlanOptions(repeat=3))
    assert [c[2] for c in CountingTarget.calls] == [0, 1]  # pass_at_k stops at the first pass
    assert at_k.verdict == "pass" and at_k.aggregation is not None
    assert at_k.aggregation.total_attempts == 2
    CountingTarget.reset()
    suite.execution.repeat = RepeatSpec(count=3, strategy="mean")
    [mean] = _run([suite], RunnerOptions())
    assert [c[2] for c in CountingTarget.calls] == [0, 1, 2]
    assert mean.score == pytest.approx(1 / 3)
    assert [t.attempt for t in mean.trials] == [0, 1, 2]


def test_cache_reuses_answers_but_never_across_attempts(tmp_path: Path) -> None:
    write_targets(tmp_path, "targets:\n  - name: t\n    provider: counting\n    answer: no\n")
    suite = make_suite(tmp_path, "c", 2)
    cache = ResponseCache(tmp_path / "cache")
    _run([suite], RunnerOptions(cache=cache), PlanOptions(repeat=2))
    assert len(CountingTarget.calls) == 4  # 2 tests x 2 attempts, all distinct keys
    CountingTarget.reset()
    second = _run([suite], RunnerOptions(cache=ResponseCache(tmp_path / "cache")), PlanOptions(repeat=2))
    assert CountingTarget.calls == []
    assert all(r.aggregation and r.aggregation.total_attempts == 2 for r in second)
    CountingTarget.reset()
    write_targets(tmp_path, "targets:\n  - name: t\n    provider: counting\n    answer: yes\n")
    changed = _run([suite], RunnerOptions(cache=ResponseCache(tmp_path / "cache")))
    assert len(CountingTarget.calls) == 2  # a changed target config is a different key
    assert all(r.verdict == "pass" for r in changed)


def test_unknown_target_fails_before_anything_runs(tmp_path: Path) -> None:
    write_targets(tmp_path, "targets:\n  - name: t\n    provider: counting\n")
    suites = [make_suite(tmp_path, "ok", 1), make_suite(tmp_path, "bad", 1, target="missing")]
    results: list[TestResult] = []
    runner = Runner(plan_jobs(suites, PlanOptions()), RunnerOptions(), results.append)
    with pytest.raises(ConfigError, match="unknown target 'missing'"):
        asyncio.run(runner.run())
    assert results == [] and CountingTarget.calls == []


def test_dry_run_swaps_targets_and_marks_results(tmp_path: Path) -> None:
    write_targets(tmp_path, "targets:\n  - name: t\n    provider: openai\n")  # no key: fine in dry-run
    results = _run([make_suite(tmp_path, "d", 2)], RunnerOptions(dry_run=True))
    assert all(r.dry_run for r in results)
    assert CountingTarget.calls == []


def test_target_workers_limit_calls_in_flight(tmp_path: Path) -> None:
    write_targets(
        tmp_path, "targets:\n  - name: t\n    provider: counting\n    delay_s: 0.02\n    workers: 2\n"
    )
    results = _run([make_suite(tmp_path, "lim", 8)], RunnerOptions(workers=6))
    assert len(results) == 8 and all(r.execution_status == "ok" for r in results)
    assert CountingTarget.max_in_flight == 2


def test_fail_on_error_halts_the_rest(tmp_path: Path) -> None:
    write_targets(tmp_path, "targets:\n  - name: t\n    provider: counting\n    fail_ids: [h-1]\n")
    suite = make_suite(tmp_path, "h", 4)
    suite.execution.fail_on_error = True
    results = _run([suite], RunnerOptions(workers=1))
    assert [r.execution_status for r in results] == ["ok", "execution_error", "not_run", "not_run"]
    assert results[-1].failure_reason_code == "error_threshold_exceeded"
    assert "h/h-1" in (results[-1].error or "")


def test_grader_target_without_key_fails_before_running_only_if_needed(tmp_path: Path) -> None:
    write_targets(
        tmp_path,
        "targets:\n  - name: t\n    provider: counting\n    grader_target: judge\n"
        "  - name: judge\n    provider: anthropic\n    api_key: ${{ JUDGE_KEY }}\n",
    )
    plain = make_suite(tmp_path, "plain", 1)
    assert _run([plain], RunnerOptions(env={}))[0].execution_status == "ok"  # no llm-grader: no key needed
    judged = make_suite(tmp_path, "judged", 1)
    judged.tests[0].graders.append(GraderSpec(type="llm-grader", name="judge"))
    CountingTarget.reset()
    runner = Runner(plan_jobs([judged], PlanOptions()), RunnerOptions(env={}), lambda r: None)
    with pytest.raises(ConfigError, match="JUDGE_KEY"):
        asyncio.run(runner.run())
    assert CountingTarget.calls == []


def _timeless(row: TestResult) -> TestResult:
    """`row` without the times a run stamps (they differ between two runs)."""
    import msgspec

    scores = [msgspec.structs.replace(s, duration_ms=None) for s in row.scores]
    return msgspec.structs.replace(row, timestamp="", start_time=None, end_time=None, scores=scores)


def test_a_dry_runs_placeholder_answers_without_a_request_and_writes_the_same_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31: a dry run asks its placeholder at once, without rendering a prompt nobody reads or
    awaiting it; its rows are those of the usual request path, an answer cut at --max-answer-bytes and
    a test's deadline included."""
    import msgspec

    from agentv_ci.model.suite import Message
    from agentv_ci.running import scheduler
    from agentv_ci.targets.mock import DRY_RUN_ANSWER

    write_targets(tmp_path, "targets:\n  - name: t\n    provider: openai\n")
    suite = make_suite(tmp_path, "d", 3, expect="answer")
    long = "answer " + "x" * 200
    suite.tests[0].expected_output = [Message(role="assistant", content=long)]
    suite.tests[1].expected_output = [Message(role="assistant", content="the answer")]
    suite.tests[2].execution.timeout_seconds = 5.0
    options = RunnerOptions(dry_run=True, max_answer_bytes=100)

    def rows(immediate: bool) -> list[TestResult]:
        results: list[TestResult] = []
        runner = Runner(plan_jobs([suite], PlanOptions()), options, results.append)
        runner.prepare()
        if not immediate:
            runner._immediate.clear()
        asyncio.run(runner.run())
        return results

    usual = rows(immediate=False)
    rendered: list[object] = []
    real_render = scheduler.render_input
    monkeypatch.setattr(scheduler, "render_input", lambda *a, **k: rendered.append(a) or real_render(*a, **k))
    at_once = rows(immediate=True)
    assert rendered == []  # no request was built
    assert [_timeless(r) for r in at_once] == [_timeless(r) for r in usual]
    assert at_once[0].output is not None and "truncated" in msgspec.json.encode(at_once[0]).decode()
    assert [r.output for r in at_once][1:] == ["the answer", DRY_RUN_ANSWER]
