"""One bill (issue 28 item 1): with `baseline_ref: merge-base`, what the baseline re-run spends is
part of the run's spend. `agentv-ci action` in a real git repository, the fake GitHub API, and one
fake OpenAI-compatible server on 127.0.0.1 serving the model under test and its judge, counting each
one's requests.

- `spent_usd` in summary.json, the comment's cost line and the `cost_usd` output are the same total:
  the pull request's answers and judge replies plus the re-run's;
- the re-run's estimate is printed before it starts, labelled as the re-run's;
- a `budget_usd` that the two runs together exceed is "budget reached" (exit 3), never green.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.scaffold import Project, run_action
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import Call, FakeLlmServer, Reply
from tests.git_repos import git

# $1 per million tokens for both models: an answer (600 in, 400 out) costs $0.001 and a judge reply
# (1,000 in, 1,000 out) $0.002.
TARGETS = """\
targets:
  - name: default
    provider: openai
    model: bot-model
    base_url: {url}
    api_key: sk-test
    max_retries: 0
    grader_target: judge
    pricing: {{input_per_mtok: 1, output_per_mtok: 1}}
  - name: judge
    provider: openai
    model: judge-model
    base_url: {url}
    api_key: sk-test
    max_retries: 0
    pricing: {{input_per_mtok: 1, output_per_mtok: 1}}
"""
JUDGED = """\
tests:
  - id: judged
    input: Is Paris the capital of France?
    assertions:
      - type: llm-grader
        prompt: "Is this right? {{output}}"
"""
PLAIN = """\
  - id: {name}
    input: Say {name}.
    assertions:
      - type: contains
        value: answer
"""
PASSED = json.dumps({"score": 1, "assertions": [{"text": "right", "passed": True}]})
PR_SPEND = 4 * 0.001 + 0.002  # 4 answers and 1 judge reply
RERUN_SPEND = 3 * 0.001 + 0.002  # the merge-base has one test fewer


def _is_judge(call: Call) -> bool:
    return bool(call.body and call.body.get("model") == "judge-model")


def _reply(call: Call) -> Reply:
    if _is_judge(call):
        return Reply(text=PASSED, usage=(1000, 1000))
    return Reply(text="The answer: yes.", usage=(600, 400))


@pytest.fixture
def llm() -> Iterator[FakeLlmServer]:
    with FakeLlmServer(_reply) as server:
        yield server


def _counts(server: FakeLlmServer) -> tuple[int, int]:
    judged = sum(1 for call in server.calls if _is_judge(call))
    return len(server.calls) - judged, judged


def _eval(*names: str) -> str:
    return JUDGED + "".join(PLAIN.format(name=name) for name in names)


def _project(root: Path, llm: FakeLlmServer) -> Project:
    """main: one eval of three tests (one judged); the PR adds a fourth test."""
    project = Project(root)
    git(project.repo, "checkout", "-q", "main")
    project.commit(
        {
            ".agentv/targets.yaml": TARGETS.format(url=llm.base_url),
            ".gitignore": ".agentv-ci/\n",
            "evals/math.eval.yaml": _eval("one", "two"),
        },
        "priced model and judge",
    )
    project.base = git(project.repo, "rev-parse", "HEAD")
    git(project.repo, "checkout", "-q", "-B", "feature")
    project.commit({"evals/math.eval.yaml": _eval("one", "two", "three")}, "a fourth test")
    return project


def _summary_json(project: Project) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project.repo / ".agentv-ci/results/summary.json").read_text())
    return data


def _comment(github: FakeGitHub) -> str:
    [comment] = github.comments_on(7)
    return comment.body


def test_the_bill_covers_the_merge_base_rerun_in_spent_usd_the_comment_and_the_output(
    tmp_path: Path, llm: FakeLlmServer, github_server: FakeGitHub
) -> None:
    project = _project(tmp_path, llm)
    env = project.env(github_server, project.event(), baseline_ref="merge-base", budget_usd="1")

    done = run_action(env, project.root)

    assert done.returncode == 0, done.stdout + done.stderr
    assert _counts(llm) == (7, 2)  # 4+1 for the PR, 3+1 for the re-run
    total = PR_SPEND + RERUN_SPEND
    summary = _summary_json(project)
    assert summary["spent_usd"] == pytest.approx(total)
    assert summary["baseline_spent_usd"] == pytest.approx(RERUN_SPEND)
    assert project.outputs()["cost_usd"] == "0.011"  # before: 0.004, the PR's answers alone
    assert "Cost: $0.0110 spent" in _comment(github_server)  # before: $0.0060, the PR's run alone
    assert "the baseline re-run at merge-base spent $0.005000; the run's spend" in done.stdout
    # The estimate before the run says the re-run comes on the same bill.
    assert (
        "  + the baseline re-run at merge-base: estimated when it starts, after this run; its spend "
        "counts against the same budget\n" in done.stdout
    )
    # The re-run's estimate, before it starts, says whose it is and what is left of the budget.
    assert re.search(
        rf"cost estimate of the baseline re-run at {project.base} \(merge-base\), before it starts; "
        r"\$0\.9940 of budget_usd \$1\.00 left:\n",
        done.stdout,
    ), done.stdout


def test_a_budget_the_pr_and_the_rerun_together_exceed_is_budget_reached(
    tmp_path: Path, llm: FakeLlmServer, github_server: FakeGitHub
) -> None:
    project = _project(tmp_path, llm)
    # The PR's run ($0.006) fits; the re-run ($0.005) does not fit in the $0.002 left.
    env = project.env(github_server, project.event(), baseline_ref="merge-base", budget_usd="0.008")

    done = run_action(env, project.root)

    assert done.returncode == 3, done.stdout + done.stderr  # before: 0, green over its budget
    summary = _summary_json(project)
    spent = summary["spent_usd"]
    assert spent > 0.008
    assert spent < 0.008 + 0.002 + 1e-9  # the re-run stopped at the budget: at most one answer over
    assert summary["budget_exhausted"] is True
    outputs = project.outputs()
    assert outputs["verdict"] == "inconclusive"
    assert float(outputs["cost_usd"]) == pytest.approx(spent)
    assert "budget reached" in outputs["verdict_text"]
    assert re.search(r"budget reached: \$0\.0\d+ of \$0\.008", _comment(github_server)), _comment(
        github_server
    )
