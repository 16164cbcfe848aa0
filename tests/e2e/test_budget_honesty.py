"""`--budget-usd` end to end against a $1-per-answer model on a fake OpenAI-compatible server
(127.0.0.1): work in flight counts against the budget, so `--workers 4` overshoots by at most one
answer; a run that stops at its budget or ends over it says "budget reached: $X of $Y" and exits 3;
`--resume` counts what the run it continues already spent; the Action's `budget_usd` does the same."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli
from tests.e2e.scaffold import Project, run_action
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import Call, FakeLlmServer, Reply

# $0.01 per output token, 100 output tokens an answer: $1 an answer. The estimate's low end (1 output
# token, $0.01 a request) stays under the budgets below, so the runs start.
TARGETS = """\
targets:
  - name: paid
    provider: openai
    model: priced-model
    base_url: ${{ FAKE_URL }}
    api_key: sk-test
    max_tokens: 100
    pricing: {input_per_mtok: 0, output_per_mtok: 10000}
"""
ANSWER_S = 0.3  # long enough for four workers to have sent before the first answer is paid


def eval_yaml(tests: int) -> str:
    graders = "    assertions:\n      - type: contains\n        value: Paris\n"
    body = "".join(f"  - id: t{i}\n    input: Question {i}?\n{graders}" for i in range(tests))
    return f"execution:\n  target: paid\ntests:\n{body}"


class PaidModel:
    """Answers `Paris` for $1 after ANSWER_S, counting the requests in flight at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0

    def __call__(self, call: Call) -> Reply:
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        time.sleep(ANSWER_S)
        with self._lock:
            self.in_flight -= 1
        return Reply(text="Paris.", usage=(5, 100))


@pytest.fixture
def model() -> PaidModel:
    return PaidModel()


@pytest.fixture
def server(model: PaidModel) -> Iterator[FakeLlmServer]:
    with FakeLlmServer(model) as fake:
        yield fake


def project(root: Path, server: FakeLlmServer, tests: int) -> dict[str, str]:
    (root / ".agentv").mkdir(exist_ok=True)
    (root / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    (root / "qa.eval.yaml").write_text(eval_yaml(tests), encoding="utf-8")
    env = {**os.environ, "FAKE_URL": server.base_url}
    env.pop("OPENAI_API_KEY", None)
    return env


def summary_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def statuses(run_dir: Path) -> list[str]:
    rows = (run_dir / "index.jsonl").read_text(encoding="utf-8").splitlines()
    return sorted(json.loads(line)["execution_status"] for line in rows)


def test_four_workers_overshoot_the_budget_by_at_most_one_answer(
    tmp_path: Path, server: FakeLlmServer
) -> None:
    env = project(tmp_path, server, tests=4)

    done = run_cli(
        "run", ".", "--budget-usd", "0.5", "--workers", "4", "-o", "out", cwd=tmp_path, env=env, timeout=120
    )

    assert done.returncode == 3, done.stdout + done.stderr
    summary = summary_of(tmp_path / "out")
    assert len(server.calls) == 1  # before: all 4 sent at once, $4 spent
    assert summary["spent_usd"] == pytest.approx(1.0)
    assert summary["budget_exhausted"] is True and summary["budget_usd"] == 0.5
    assert statuses(tmp_path / "out") == ["not_run", "not_run", "not_run", "ok"]
    assert "budget reached: $1.00 of $0.50, 3 test(s) not run" in done.stdout
    assert "RESULT: PASSED" not in done.stdout


def test_a_larger_budget_with_four_workers_ends_within_one_answer_of_it(
    tmp_path: Path, server: FakeLlmServer
) -> None:
    env = project(tmp_path, server, tests=8)

    done = run_cli(
        "run", ".", "--budget-usd", "2.5", "--workers", "4", "-o", "out", cwd=tmp_path, env=env, timeout=120
    )

    assert done.returncode == 3, done.stdout + done.stderr
    spent = summary_of(tmp_path / "out")["spent_usd"]
    assert spent <= 2.5 + 1.0, spent  # the budget plus one answer's estimate; before: $4
    assert len(server.calls) == round(spent)
    assert "budget reached: $" in done.stdout and "of $2.50" in done.stdout


def test_an_ample_budget_still_runs_the_workers_side_by_side(
    tmp_path: Path, server: FakeLlmServer, model: PaidModel
) -> None:
    """A guard, not a reproduction: the first answer prices the target, then the budget has room
    for several requests in flight."""
    env = project(tmp_path, server, tests=9)

    done = run_cli(
        "run", ".", "--budget-usd", "100", "--workers", "4", "-o", "out", cwd=tmp_path, env=env, timeout=120
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert len(server.calls) == 9 and model.peak >= 3, model.peak
    assert summary_of(tmp_path / "out").get("budget_exhausted", False) is False


def test_a_run_that_ran_everything_but_ended_over_its_budget_is_not_a_pass(
    tmp_path: Path, server: FakeLlmServer
) -> None:
    env = project(tmp_path, server, tests=2)

    done = run_cli(
        "run", ".", "--budget-usd", "1.5", "--workers", "1", "-o", "out", cwd=tmp_path, env=env, timeout=120
    )

    # $1 spent when the second test started, under $1.5: it ran, and the run ended at $2
    assert statuses(tmp_path / "out") == ["ok", "ok"]
    assert done.returncode == 3, done.stdout + done.stderr  # before: exit 0, RESULT: PASSED
    assert "budget reached: $2.00 of $1.50" in done.stdout
    assert "RESULT: PASSED" not in done.stdout
    summary = summary_of(tmp_path / "out")
    assert summary["budget_exhausted"] is True and summary["spent_usd"] == pytest.approx(2.0)


def test_resume_counts_what_the_run_it_continues_already_spent(tmp_path: Path, server: FakeLlmServer) -> None:
    env = project(tmp_path, server, tests=4)
    first = run_cli(
        "run", ".", "--test-id", "t0", "--test-id", "t1", "-o", "out", cwd=tmp_path, env=env, timeout=120
    )
    assert first.returncode == 0, first.stdout + first.stderr
    assert summary_of(tmp_path / "out")["spent_usd"] == pytest.approx(2.0)

    rest = run_cli(
        "run", ".", "--resume", "--budget-usd", "1.5", "-o", "out", cwd=tmp_path, env=env, timeout=120
    )

    assert rest.returncode == 3, rest.stdout + rest.stderr  # before: exit 0, $4 spent
    assert len(server.calls) == 2  # the resumed run sent nothing: $2 of $1.5 already spent
    summary = summary_of(tmp_path / "out")
    assert summary["spent_usd"] == pytest.approx(2.0) and summary["budget_exhausted"] is True
    assert statuses(tmp_path / "out") == ["not_run", "not_run", "ok", "ok"]
    assert "budget reached: $2.00 of $1.50, 2 test(s) not run" in rest.stdout

    # a larger budget lets the resume go on, counted on the total: $2 + $1 reaches $3
    more = run_cli(
        "run", ".", "--resume", "--budget-usd", "3", "-o", "out", cwd=tmp_path, env=env, timeout=120
    )

    assert more.returncode == 3, more.stdout + more.stderr
    assert len(server.calls) == 3
    assert summary_of(tmp_path / "out")["spent_usd"] == pytest.approx(3.0)
    assert "budget reached: $3.00 of $3.00, 1 test(s) not run" in more.stdout


def test_the_action_s_budget_usd_says_budget_reached_and_exits_3(
    tmp_path: Path, server: FakeLlmServer, github_server: FakeGitHub
) -> None:
    project = Project(tmp_path)
    project.commit({".agentv/targets.yaml": TARGETS, "evals/geo.eval.yaml": eval_yaml(3)}, "a paid target")
    env = project.env(github_server, project.event(), budget_usd="0.5", target="paid")
    env["FAKE_URL"] = server.base_url
    env.pop("OPENAI_API_KEY", None)

    done = run_action(env, project.root)

    assert done.returncode == 3, done.stdout + done.stderr  # before: exit 0, 4 answers paid
    assert len(server.calls) == 1
    summary = json.loads((project.repo / ".agentv-ci" / "results" / "summary.json").read_text())
    assert summary["budget_exhausted"] is True and summary["spent_usd"] == pytest.approx(1.0)
    assert "budget reached: $1.00 of $0.50, 3 test(s) not run" in done.stdout
    [comment] = github_server.comments_on(7)
    assert "budget reached: $1.00 of $0.50" in comment.body
