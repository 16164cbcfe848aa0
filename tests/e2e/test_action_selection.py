"""The README's workflow (no `select_all_on`) through `agentv-ci action`, with a real git repository,
a real subprocess agent and the fake GitHub API: a PR that changes only the agent's code, or only a
module it imports, runs that agent's evals, and the gate fails when the change breaks them (as the
full run and `run --changed` do). Changed files that selected nothing are listed in the comment."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_helpers import run_cli
from tests.e2e.scaffold import Project, run_action
from tests.fakes.github_server import FakeGitHub
from tests.git_repos import git

TARGETS = """\
targets:
  - name: default
    provider: cli
    command: python3 agent/support_bot.py {PROMPT_FILE} {OUTPUT_FILE}
    cwd: ..
  - name: canned
    provider: mock
    response: Paris
"""
# The agent answers from a module outside its own directory.
BOT = """\
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from shared.answers import answer

question = Path(sys.argv[1]).read_text()
Path(sys.argv[2]).write_text(answer(question))
"""
ANSWERS = """\
def answer(question):
    return "Refunds take 5 days." if "refund" in question else "Ask support."
"""
SUPPORT_EVAL = """\
tests:
  - id: refund
    input: How long does a refund take?
    assertions:
      - type: contains
        value: 5 days
  - id: other
    input: Where is my parcel?
    assertions:
      - type: contains
        value: support
"""
CANNED_EVAL = """\
execution:
  target: canned
tests:
  - id: capital
    input: Capital of France?
    assertions:
      - type: contains
        value: Paris
"""
# The README's step, as written: no select_all_on.
README_INPUTS = {"paths": "evals", "threshold": "0.8", "baseline_ref": "merge-base", "max_regression": "0.1"}


def _project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    (project.repo / "agent").mkdir()
    (project.repo / "shared").mkdir()
    project.commit(
        {
            ".agentv/targets.yaml": TARGETS,
            "agent/support_bot.py": BOT,
            "shared/__init__.py": "",
            "shared/answers.py": ANSWERS,
            "evals/support.eval.yaml": SUPPORT_EVAL,
            "evals/geo.eval.yaml": CANNED_EVAL,
            "evals/math.eval.yaml": CANNED_EVAL,
        },
        "a support bot",
    )
    git(project.repo, "checkout", "-q", "main")
    git(project.repo, "merge", "-q", "--ff-only", "feature")
    project.base = git(project.repo, "rev-parse", "HEAD")
    git(project.repo, "checkout", "-q", "feature")
    return project


def _selected_rows(project: Project) -> set[tuple[str, str, str]]:
    lines = (project.repo / ".agentv-ci/results/index.jsonl").read_text().splitlines()
    return {(r["suite"], r["test_id"], r["execution_status"]) for r in map(json.loads, lines)}


def test_a_pr_changing_only_the_agent_script_runs_its_evals_and_fails(tmp_path: Path) -> None:
    with FakeGitHub() as github:
        project = _project(tmp_path)
        project.commit({"agent/support_bot.py": BOT.replace("answer(question)", "'I do not know.'")})

        done = run_action(project.env(github, project.event(), **README_INPUTS), project.root)

        assert done.returncode == 1, done.stdout + done.stderr
        assert "selected 1 of 3 eval file(s)" in done.stdout
        assert "evals/support.eval.yaml: agent/support_bot.py changed" in done.stdout
        assert _selected_rows(project) == {
            ("support", "refund", "quality_failure"),
            ("support", "other", "quality_failure"),
        }
        assert project.outputs()["verdict"] == "failed"
        [comment] = github.comments_on(7)
        assert "FAILED" in comment.body
        assert "Why these evals ran (1)" in comment.body
        assert "- `evals/support.eval.yaml`: agent/support\\_bot.py changed" in comment.body
        assert "broken vs baseline" in comment.body  # the merge-base re-run answered as before
        assert "selected no eval" not in comment.body  # every changed file selected something

    # The CLI agrees: the full run fails, and so does `run --changed` (it used to exit 0).
    full = run_cli("run", "evals", "-o", str(tmp_path / "full"), cwd=project.repo)
    assert full.returncode == 1, full.stdout + full.stderr
    changed = run_cli(
        "run", "evals", "--changed", "--base", "main", "-o", str(tmp_path / "ch"), cwd=project.repo
    )
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "evals/support.eval.yaml: agent/support_bot.py changed" in changed.stderr


def test_a_pr_changing_only_a_module_the_agent_imports_runs_its_evals(tmp_path: Path) -> None:
    with FakeGitHub() as github:
        project = _project(tmp_path)
        project.commit(
            {
                "shared/answers.py": ANSWERS.replace("5 days", "a while"),
                "README.md": "how refunds work\n",
                "notes.txt": "unrelated\n",
            }
        )

        done = run_action(project.env(github, project.event(), **README_INPUTS), project.root)

        assert done.returncode == 1, done.stdout + done.stderr
        assert "evals/support.eval.yaml: shared/answers.py changed" in done.stdout
        assert _selected_rows(project) == {
            ("support", "refund", "quality_failure"),
            ("support", "other", "ok"),
        }
        # The files that selected nothing are in the log and in the comment's "Why these evals ran".
        assert "changed, selected no eval: README.md" in done.stdout
        [comment] = github.comments_on(7)
        why = comment.body[comment.body.index("Why these evals ran") :]
        assert "Changed files that selected no eval (2):" in why
        assert "- `README.md`" in why and "- `notes.txt`" in why
        summary = (project.repo / ".agentv-ci/results/summary.json").read_text()
        assert json.loads(summary)["unselecting"] == ["README.md", "notes.txt"]


def test_a_pr_that_selects_nothing_names_the_files_it_did_not_consider(tmp_path: Path) -> None:
    with FakeGitHub() as github:
        project = _project(tmp_path)
        project.commit({"README.md": "docs only\n"})

        done = run_action(project.env(github, project.event(), **README_INPUTS), project.root)

        assert done.returncode == 0, done.stdout + done.stderr
        assert project.outputs()["verdict"] == "skipped"
        assert github.comments_on(7) == []  # a PR that never had a comment gets none for this
        summary = (project.root / "files" / "summary.md").read_text()
        assert "No eval is affected" in summary
        assert "Changed files that selected no eval: README.md." in summary
