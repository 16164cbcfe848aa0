"""`run --changed` through the CLI on real repositories: a PR that breaks a `python -m` code grader,
or bumps a git submodule holding a dataset to a version that fails, runs those evals and exits 1,
as the full run does (both used to select nothing and exit 0)."""

from __future__ import annotations

from pathlib import Path

from tests.cli_helpers import run_cli
from tests.git_repos import GitRepo, git

TARGETS = "targets:\n  - name: default\n    provider: mock\n    response: Paris\n"
GRADE = """\
import json, sys
payload = json.load(sys.stdin)
print(json.dumps({"score": 1.0 if WANTED in payload["output"] else 0.0}))
"""
GRADED_EVAL = """\
tests:
  - id: capital
    input: Capital of France?
    assertions:
      - type: code-grader
        command: [python3, -m, checks.grade]
        cwd: ..
"""
OTHER_EVAL = (
    "tests:\n  - id: x\n    input: hi\n    assertions:\n      - type: contains\n        value: Paris\n"
)


def _runs(repo: GitRepo, tmp_path: Path) -> tuple[int, int, str]:
    full = run_cli("run", "evals", "-o", str(tmp_path / "full"), cwd=repo.root)
    changed = run_cli(
        "run", "evals", "--changed", "--base", "main", "-o", str(tmp_path / "ch"), cwd=repo.root
    )
    return full.returncode, changed.returncode, changed.stderr


def test_a_broken_python_dash_m_grader_fails_run_changed(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.write(".agentv/targets.yaml", TARGETS)
    repo.write("checks/__init__.py", "")
    repo.write("checks/grade.py", "WANTED = 'Paris'\n" + GRADE)
    repo.write("evals/graded.eval.yaml", GRADED_EVAL)
    repo.write("evals/other.eval.yaml", OTHER_EVAL)
    repo.commit("base")
    repo.branch("feature")
    repo.write("checks/grade.py", "WANTED = 'Lyon'\n" + GRADE)
    repo.commit("the grader now wants Lyon")

    full, changed, stderr = _runs(repo, tmp_path)

    assert (full, changed) == (1, 1), stderr
    assert "1 of 2 eval(s) affected" in stderr
    assert "evals/graded.eval.yaml: checks/grade.py changed" in stderr


def test_a_submodule_bump_that_breaks_a_dataset_fails_run_changed(tmp_path: Path) -> None:
    data = GitRepo.init(tmp_path / "data")
    row = (
        '{"id": "capital", "input": "Capital of France?", '
        '"assertions": [{"type": "contains", "value": "%s"}]}\n'
    )
    data.write("cases.jsonl", row % "Paris")
    data.commit("v1")
    repo = GitRepo.init(tmp_path / "repo")
    repo.write(".agentv/targets.yaml", TARGETS)
    repo.write("evals/dataset.eval.yaml", "tests: ../vendor/data/cases.jsonl\n")
    repo.write("evals/other.eval.yaml", OTHER_EVAL)
    allow = ("-c", "protocol.file.allow=always")
    git(repo.root, *allow, "submodule", "add", "--quiet", str(data.root), "vendor/data")
    repo.commit("base")
    repo.branch("feature")
    data.write("cases.jsonl", row % "Lyon")
    data.commit("v2")
    git(repo.root / "vendor/data", *allow, "pull", "--quiet", "origin", "main")
    repo.commit("bump the dataset")

    full, changed, stderr = _runs(repo, tmp_path)

    assert (full, changed) == (1, 1), stderr
    assert (
        "evals/dataset.eval.yaml: submodule vendor/data changed (vendor/data/cases.jsonl is in it)" in stderr
    )


CODE_TARGETS = """\
targets:
  - name: bot
    provider: cli
    command: python3 ../agent/bot.py {PROMPT_FILE} {OUTPUT_FILE}
    cwd: ../examples
  - name: shaped
    provider: cli
    command: python3 run.py {PROMPT_FILE} {OUTPUT_FILE}
    sources: [lib/]
  - name: made
    provider: cli
    command: make answer
"""


def test_discover_says_why_a_change_under_a_directory_selects_an_eval(tmp_path: Path) -> None:
    # `examples/` is only read because target `bot` runs there: the reason says so, not just
    # "(under examples/)".
    repo = GitRepo.init(tmp_path / "repo")
    repo.write(".agentv/targets.yaml", CODE_TARGETS)
    repo.write("agent/bot.py", "")
    repo.write("agent/prompt.md", "Be nice.\n")
    repo.write("examples/data.txt", "a\n")
    repo.write("lib/core.py", "")
    repo.write("evals/bot.eval.yaml", "execution:\n  target: bot\n" + OTHER_EVAL)
    repo.write("evals/shaped.eval.yaml", "execution:\n  target: shaped\n" + OTHER_EVAL)
    repo.write("evals/made.eval.yaml", "execution:\n  target: made\n" + OTHER_EVAL)
    repo.commit("base")
    repo.branch("feature")
    repo.write("examples/data.txt", "b\n")
    repo.write("agent/prompt.md", "Be rude.\n")
    repo.write("lib/core.py", "x = 1\n")
    repo.commit("change")

    done = run_cli("discover", "evals", "--base", "main", cwd=repo.root)

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    made = "the code of target 'made': its command names no file"
    assert lines[1:] == [
        "evals/bot.eval.yaml",
        "  - agent/prompt.md changed (under agent/, the script directory of target 'bot')",
        "  - examples/data.txt changed (under examples/, the working directory of target 'bot')",
        "evals/made.eval.yaml",
        f"  - agent/prompt.md changed (under the repository root, {made})",
        f"  - examples/data.txt changed (under the repository root, {made})",
        f"  - lib/core.py changed (under the repository root, {made})",
        "evals/shaped.eval.yaml",
        "  - lib/core.py changed (under lib/, in the `sources:` of target 'shaped')",
    ], done.stdout
