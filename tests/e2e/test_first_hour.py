"""The first hour of a new user, each sharp edge once seen: the CLI in a subprocess, as typed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli_helpers import run_cli
from tests.conftest import REPO_ROOT

PLAIN_TEST = "name: s\ntests:\n  - id: t\n    input: hi\n    expected_output: hi\n"


def test_validate_and_run_word_a_missing_path_the_same_way(tmp_path: Path) -> None:
    validate = run_cli("validate", "evals/", cwd=tmp_path)
    run = run_cli("run", "evals/", cwd=tmp_path)
    assert validate.returncode == run.returncode == 2
    assert validate.stderr == run.stderr
    assert validate.stderr.startswith("error: path evals does not exist\n  hint: pass eval files")
    assert "E001" not in validate.stdout and "file(s)" not in validate.stdout


def test_nothing_was_run_comes_after_the_located_diagnostics(tmp_path: Path) -> None:
    (tmp_path / "bad.eval.yaml").write_text(
        "name: s\ntests:\n  - id: t\n    input: hi\n    criteria: ok\n    execution:\n      threshold: 7\n"
    )
    done = run_cli("run", "bad.eval.yaml", "--target", "mock", cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("bad.eval.yaml:7:") and "error[E108]" in lines[0]
    assert lines[-1] == "error: 1 error(s) in eval files; nothing was run"


def test_no_targets_file_says_how_to_go_on_and_the_way_works(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # the search for targets.yaml stops at the repository root
    (tmp_path / "s.eval.yaml").write_text(PLAIN_TEST)
    done = run_cli("run", "s.eval.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert "unknown target 'default' (no targets.yaml was found)" in done.stderr
    assert "--target mock" in done.stderr and "--dry-run" in done.stderr
    follow = run_cli("run", "s.eval.yaml", "--target", "mock", "--dry-run", "-o", "out", cwd=tmp_path)
    assert follow.returncode == 0, follow.stdout + follow.stderr


def test_a_misspelled_grader_list_is_judged_the_same_by_validate_and_run(tmp_path: Path) -> None:
    typo = "    assertion:\n      - type: contains\n        value: '4'\n"
    (tmp_path / ".git").mkdir()
    (tmp_path / "graded.eval.yaml").write_text(
        f"name: graded\ntests:\n  - id: t\n    input: 2+2?\n    expected_output: '4'\n{typo}"
    )
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "ungraded.eval.yaml").write_text(
        f"name: ungraded\ntests:\n  - id: t\n    input: 2+2?\n{typo}"
    )

    # With a reference answer: a warning for the typo, and AgentV's implicit llm-grader grades it.
    checked = run_cli("validate", "graded.eval.yaml", "--target", "mock", cwd=tmp_path)
    assert checked.returncode == 0 and "warning[W101]" in checked.stdout
    ran = run_cli("run", "graded.eval.yaml", "--target", "mock", "--dry-run", "-o", "out", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    row = json.loads((tmp_path / "out" / "index.jsonl").read_text())
    assert row["execution_status"] == "ok" and row["scores"][0]["type"] == "llm-grader"
    assert "not run" not in ran.stdout

    # With nothing to grade: an error in both, before anything runs.
    checked = run_cli("validate", "empty", "--target", "mock", cwd=tmp_path)
    ran = run_cli("run", "empty", "--target", "mock", "-o", "out2", cwd=tmp_path)
    assert checked.returncode == ran.returncode == 2
    assert "error[E112]" in checked.stdout and "error[E112]" in ran.stderr
    assert not (tmp_path / "out2").exists()


def test_no_doc_or_workflow_installs_the_unpublished_package_name() -> None:
    # agentv-ci is not on PyPI: `pip install agentv-ci` fails; workflows use the Action, docs `pip install .`
    # Ours (agentv-ci and the in-repo plugins) as a bare name: ending at a space, a version specifier,
    # an extra, a quote or a backtick; `"agentv-ci @ git+https://..."` installs from the repository.
    ours = r"agentv-ci(?:-html-report|-jsonschema|-text-stats-grader)?"
    unpublished = re.compile(rf"pip install (?:-\S+ )*[\"']?{ours}(?:\s(?!@)|[=<>\[`\"']|$)", re.M)
    files = [REPO_ROOT / "README.md", REPO_ROOT / "action.yml", *REPO_ROOT.glob("docs/*.md")]
    files += [REPO_ROOT / "CONTRIBUTING.md", *REPO_ROOT.glob("plugins/*/README.md")]
    files += [*REPO_ROOT.glob("examples/**/*.yml"), *REPO_ROOT.glob("examples/**/*.md")]
    offenders = [str(f.relative_to(REPO_ROOT)) for f in files if unpublished.search(f.read_text())]
    assert offenders == []
