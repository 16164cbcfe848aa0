"""The Action's `threshold` input overrides every test's own threshold (as `run --threshold`), so the
workflow examples leave it out: each test is then judged at the threshold its eval file declares."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.conftest import REPO_ROOT
from tests.e2e.scaffold import Project, run_action
from tests.fakes.github_server import FakeGitHub

# Three of four checks pass (score 0.75); the eval file asks for 0.9.
STRICT = """\
execution:
  threshold: 0.9
tests:
  - id: capital
    input: What is the capital of France?
    expected_output: Paris
    assertions:
      - {type: contains, value: Paris}
      - {type: contains, value: Par}
      - {type: contains, value: aris}
      - {type: contains, value: Lyon}
"""


def test_each_test_keeps_its_own_threshold_unless_the_input_overrides_it(
    tmp_path: Path, github_server: FakeGitHub
) -> None:
    project = Project(tmp_path)
    project.commit({"evals/geo.eval.yaml": STRICT})
    env = project.env(github_server, project.event(), changed_only="false", comment="false")

    done = run_action(env, project.root)  # as the README's example: no `threshold`
    assert done.returncode == 1, done.stdout + done.stderr
    assert "score 0.750 < 0.90" in done.stdout

    done = run_action({**env, "INPUT_THRESHOLD": "0.7"}, project.root)  # overrides the eval's 0.9
    assert done.returncode == 0, done.stdout + done.stderr
    assert project.outputs()["passed"] == "2"


def _action_steps(workflow: dict[str, object]) -> list[dict[str, object]]:
    jobs = workflow.get("jobs")
    assert isinstance(jobs, dict)
    steps = [step for job in jobs.values() for step in job.get("steps", [])]
    return [step for step in steps if str(step.get("uses", "")).startswith("agentevals/action@")]


def test_no_workflow_example_overrides_the_tests_own_thresholds() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("### In GitHub Actions") :].split("```yaml\n", 1)[1].split("```", 1)[0]
    workflows = [yaml.safe_load(block)]
    workflows += [
        yaml.safe_load(p.read_text()) for p in sorted((REPO_ROOT / "examples/workflows").glob("*.yml"))
    ]
    steps = [step for workflow in workflows for step in _action_steps(workflow)]
    assert len(steps) >= 5
    assert [step for step in steps if "threshold" in (step.get("with") or {})] == []
