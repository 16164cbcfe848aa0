"""`run`, `report` and the Action finish a run through one post-run service (finishing/): for the same
results, baseline and gates they print the same verdict, exit with the same code and write the same
JUnit, SARIF and Markdown bytes (timestamps aside). Real subprocesses, a real git repository and the
fake GitHub API (tests/e2e/scaffold.py); a guard fails if a command or the Action gates
or writes reports by itself again."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.cli_helpers import run_cli
from tests.e2e.scaffold import FAILING, Project, project, run_action
from tests.fakes.github_server import FakeGitHub

__all__ = ["project"]  # the repository fixture of tests/e2e/scaffold.py

SRC = Path(__file__).resolve().parents[2] / "src" / "agentv_ci"
GATES = ("--min-pass-rate", "0.9", "--max-regression", "0.1")
_STAMPS = re.compile(r'timestamp="[^"]*"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?')
_DURATIONS = re.compile(r'time="[^"]*"')


def _stable(path: Path) -> str:
    """The report's text with its clock readings (timestamps, durations) blanked."""
    return _DURATIONS.sub('time="-"', _STAMPS.sub("<t>", path.read_text(encoding="utf-8")))


def test_run_report_and_the_action_decide_and_report_alike(
    project: Project, github_server: FakeGitHub
) -> None:
    root, repo = project.root, project.repo
    base = run_cli("run", "evals", "-o", str(root / "base"), cwd=repo)
    assert base.returncode == 0, base.stdout + base.stderr
    project.commit({"evals/math.eval.yaml": FAILING})
    out = root / "run"
    ran = run_cli(
        "run", "evals", "-o", str(out), "--baseline", str(root / "base"), *GATES,
        "--junit", str(out / "junit.xml"), "--sarif", str(out / "results.sarif"),
        "--markdown", str(out / "summary.md"),
        cwd=repo,
    )  # fmt: skip
    again = root / "report"
    again.mkdir()
    reported = run_cli(
        "report", str(out), "--baseline", str(root / "base"), *GATES,
        "--junit", str(again / "junit.xml"), "--sarif", str(again / "results.sarif"),
        "--markdown", str(again / "summary.md"),
        cwd=repo,
    )  # fmt: skip
    env = project.env(
        github_server,
        project.event(),
        results=str(out / "index.jsonl"),
        baseline=str(root / "base"),
        min_pass_rate="0.9",
        max_regression="0.1",
    )
    acted = run_action(env, repo)
    step = repo / ".agentv-ci" / "results"

    assert (ran.returncode, reported.returncode, acted.returncode) == (1, 1, 1), (
        ran.stderr + reported.stderr + acted.stdout + acted.stderr
    )
    verdict = reported.stdout.strip()  # the console verdict, all `report` prints
    assert "RESULT: FAILED" in verdict and f"baseline: results at {root / 'base'}" in verdict, verdict
    assert verdict in ran.stdout, ran.stdout
    assert verdict in acted.stdout, acted.stdout
    for name in ("junit.xml", "results.sarif", "summary.md"):
        assert _stable(again / name) == _stable(out / name), name
        assert _stable(step / name) == _stable(out / name), name
    assert str(root / "base") in (out / "summary.md").read_text(encoding="utf-8")


def _calls(tree: ast.AST, names: set[str]) -> list[int]:
    """Lines calling any of `names`, as a bare name or an attribute (`reporting.write_reports(...)`)."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id in names)
            or (isinstance(node.func, ast.Attribute) and node.func.attr in names)
        )
    ]


def test_no_command_or_platform_gates_or_reports_outside_the_post_run_service() -> None:
    """A fourth copy of the post-run flow would call the gate, the report writers or the console
    verdict itself; they pass the step summary in (a collaborator) but never call it."""
    names = {"decide", "write_reports", "gate_and_report", "render_console", "append_step_summary"}
    found = [
        f"{path.relative_to(SRC)}:{line}"
        for folder in ("commands", "action", "platforms")
        for path in sorted((SRC / folder).rglob("*.py"))
        for line in _calls(ast.parse(path.read_text(encoding="utf-8")), names)
    ]
    assert found == [], "call agentv_ci.finishing instead (docs/architecture.md)"
    assert not (SRC / "reporting" / "finish.py").exists()
