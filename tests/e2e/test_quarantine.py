"""End to end: `.agentv/quarantine.yaml`, read from the base branch (a real git repository), through
`run --base`, `report --base`, `validate` and `agentv-ci action`.

A quarantined test still runs and is reported; its failure does not block (a note, and a
`<flakyFailure>` in JUnit instead of a `<failure>`). An entry that exists only in the pull request
has no effect, and the output says so. An expired entry blocks again, naming its owner and reason.
"""

from __future__ import annotations

import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from tests.cli_helpers import run_cli
from tests.e2e.scaffold import Project, run_action
from tests.fakes.github_server import FakeGitHub
from tests.git_repos import git

SCHEMA = Path(__file__).resolve().parent.parent / "schemas" / "junit-10.xsd"  # the unmodified XSD

TARGETS = "targets:\n  - name: default\n    provider: mock\n    response: Paris\n"
# `capital` passes; `broken` fails (the mock answers "Paris"), deterministically.
GEO = """\
tests:
  - id: capital
    input: What is the capital of France?
    assertions:
      - {type: contains, value: Paris}
  - id: broken
    input: What is the capital of Germany?
    assertions:
      - {type: contains, value: Berlin}
"""
QUARANTINE = """\
quarantine:
  - test: geo/broken
    owner: "@ana"
    reason: slow vendor API
    expires: {expires}
"""
FUTURE = "2999-12-31"
PAST = "2020-01-31"
WAIVED = "quarantined (owner @ana, until 2999-12-31): slow vendor API"


def _project(tmp_path: Path, base_quarantine: str | None) -> Project:
    """`main` holds the eval (and `base_quarantine` when given); `feature` is checked out on top."""
    project = Project(tmp_path)
    files = {".agentv/targets.yaml": TARGETS, "evals/geo.eval.yaml": GEO}
    if base_quarantine is not None:
        files[".agentv/quarantine.yaml"] = base_quarantine
    project.commit(files, "geo evals")
    git(project.repo, "checkout", "-q", "main")
    git(project.repo, "merge", "-q", "--ff-only", "feature")
    project.base = git(project.repo, "rev-parse", "HEAD")
    git(project.repo, "checkout", "-q", "feature")
    return project


def _cli(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env["GIT_CONFIG_GLOBAL"] = str(project.root / "gitconfig")
    return run_cli(*args, cwd=project.repo, env=env, timeout=300)


def _junit_cases(path: Path) -> dict[str, ET.Element]:
    if SCHEMA.is_file():
        errors = [str(e.reason) for e in xmlschema.XMLSchema(str(SCHEMA)).iter_errors(str(path))]
        assert errors == []
    root = ET.parse(path).getroot()
    return {str(case.get("name")): case for case in root.iter("testcase")}


def test_a_quarantine_entry_on_the_base_keeps_the_failure_from_blocking(tmp_path: Path) -> None:
    project = _project(tmp_path, QUARANTINE.format(expires=FUTURE))
    junit = tmp_path / "junit.xml"

    done = _cli(project, "run", "evals", "--base", "main", "--no-changed", "-o", "out", "--junit", str(junit))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 failed" in done.stdout  # still run and reported
    assert f"geo/broken [default]: failed; not blocking, {WAIVED}" in done.stdout
    cases = _junit_cases(junit)
    broken = cases["broken [default]"]
    assert broken.find("failure") is None  # viewers show it as flaky, not failed
    flaky = broken.find("flakyFailure")
    assert flaky is not None and flaky.get("type") == "quarantined"
    assert WAIVED in str(flaky.get("message"))
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "0"

    # `report --base` gates a finished run the same way.
    report = _cli(project, "report", "out", "--base", "main", "--junit", str(tmp_path / "r.xml"))
    assert report.returncode == 0, report.stdout + report.stderr
    assert WAIVED in report.stdout
    assert _junit_cases(tmp_path / "r.xml")["broken [default]"].find("flakyFailure") is not None


def test_an_entry_only_in_the_pull_request_has_no_effect_and_says_so(tmp_path: Path) -> None:
    project = _project(tmp_path, None)
    project.commit({".agentv/quarantine.yaml": QUARANTINE.format(expires=FUTURE)}, "park my own test")
    junit = tmp_path / "junit.xml"

    done = _cli(project, "run", "evals", "--base", "main", "--no-changed", "-o", "out", "--junit", str(junit))

    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 test(s) below threshold: geo/broken [default]" in done.stdout
    assert (
        ".agentv/quarantine.yaml:2:5: quarantine entry geo/broken exists only in this change, "
        "not on the base main: it has no effect"
    ) in done.stdout
    broken = _junit_cases(junit)["broken [default]"]
    assert broken.find("failure") is not None and broken.find("flakyFailure") is None

    report = _cli(project, "report", "out", "--base", "main")
    assert report.returncode == 1, report.stdout + report.stderr
    assert "exists only in this change" in report.stdout

    # With no base, the work tree's file is the one there is: it applies.
    local = _cli(project, "run", "evals", "-o", "out2")
    assert local.returncode == 0, local.stdout + local.stderr
    assert WAIVED in local.stdout


def test_an_extension_made_in_the_pull_request_does_not_revive_an_expired_entry(tmp_path: Path) -> None:
    project = _project(tmp_path, QUARANTINE.format(expires=PAST))
    project.commit({".agentv/quarantine.yaml": QUARANTINE.format(expires=FUTURE)}, "extend it myself")

    done = _cli(project, "run", "evals", "--base", "main", "--no-changed", "-o", "out")

    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        "geo/broken [default]: failed, quarantine expired on 2020-01-31 (owner @ana): slow vendor API"
    ) in done.stdout
    assert "differs from the base main's: the base's applies" in done.stdout


def test_validate_reports_a_broken_quarantine_file_at_file_line_col(tmp_path: Path) -> None:
    project = _project(tmp_path, None)
    (project.repo / ".agentv" / "quarantine.yaml").write_text(
        "quarantine:\n"
        "  - test: geo/broken\n"
        "    owner: '@ana'\n"
        "    reason: slow vendor API\n"
        "    expires: 2026-02-30\n"
        "  - test: no-slash\n"
        "    reason: r\n"
        "    expires: 2030-01-01\n"
        "    until: soon\n",
        encoding="utf-8",
    )

    done = _cli(project, "validate", "evals")

    assert done.returncode == 2, done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert (
        ".agentv/quarantine.yaml:5:14: error[E118]: `expires` is not a date (YYYY-MM-DD): '2026-02-30'" in out
    )
    assert ".agentv/quarantine.yaml:6:5: error[E118]: quarantine entry has no `owner`" in out
    assert ".agentv/quarantine.yaml:6:11: error[E118]: `test` must be suite/test_id, got 'no-slash'" in out
    assert ".agentv/quarantine.yaml:9:5: warning[W101]: unknown key 'until' in a quarantine entry" in out

    # `run` with that file in the work tree (no base) refuses it the same way: bad input, exit 2.
    run = _cli(project, "run", "evals", "-o", "out")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "quarantine.yaml:5:14: error[E118]" in run.stdout + run.stderr


def test_the_action_reads_the_quarantine_from_the_pull_requests_base(tmp_path: Path) -> None:
    with FakeGitHub() as github:
        project = _project(tmp_path, QUARANTINE.format(expires=FUTURE))
        project.commit({"README.md": "a change\n"})
        env = project.env(github, project.event(), changed_only="false")

        done = run_action(env, project.root)

        assert done.returncode == 0, done.stdout + done.stderr
        assert WAIVED in done.stdout
        # the annotation is a warning that says why it does not block
        assert "::error file=evals/geo.eval.yaml" not in done.stdout
        assert "< threshold 0.80; not blocking, quarantined (owner @ana" in done.stdout
        [comment] = github.comments_on(7)
        assert "Quarantined" in comment.body
        cases = _junit_cases(project.repo / ".agentv-ci" / "results" / "junit.xml")
        assert cases["broken [default]"].find("flakyFailure") is not None

        # A pull request that adds its own entry for a test the base does not quarantine: no effect.
        project = _project(tmp_path / "second", None)
        project.commit({".agentv/quarantine.yaml": QUARANTINE.format(expires=FUTURE)})
        env = project.env(github, project.event(), changed_only="false", comment="false")

        done = run_action(env, project.root)

        assert done.returncode == 1, done.stdout + done.stderr
        assert "exists only in this change" in done.stdout


@pytest.fixture(autouse=True)
def _schema_present() -> None:
    if not SCHEMA.is_file():
        pytest.skip(f"JUnit schema absent at {SCHEMA}")


def test_an_invalid_quarantine_file_on_the_base_is_bad_input_located_on_the_base(tmp_path: Path) -> None:
    project = _project(tmp_path, QUARANTINE.format(expires="2030-02-30"))

    done = _cli(project, "run", "evals", "--base", "main", "--no-changed", "-o", "out")

    assert done.returncode == 2, done.stdout + done.stderr
    assert "main:.agentv/quarantine.yaml:5:14: error[E118]: `expires` is not a date" in done.stderr
    assert not (project.repo / "out" / "index.jsonl").exists()  # refused before anything ran
