"""GitLab's reports through the CLI (issue 29): `run --report gitlab-codequality=... --report
openmetrics=...` in a real git repository writes a Code Quality report that GitLab's documented
format accepts, located at the failing test's line, with fingerprints that survive another run with
another answer, and an OpenMetrics file that both an OpenMetrics parser and GitLab's reading accept."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.cli_helpers import run_cli
from tests.reporting.test_codequality import schema_errors
from tests.reporting.test_openmetrics import gitlab_metrics, parse_openmetrics

EVAL = """\
tests:
  - id: greets
    input: hi
    assertions: [{type: contains, value: hello}]

  - id: "refund # policy"
    input: refund?
    assertions: [{type: contains, value: refund}]
"""


def _repo(root: Path, response: str) -> Path:
    (root / ".agentv").mkdir(parents=True, exist_ok=True)
    (root / ".agentv" / "targets.yaml").write_text(
        f"targets:\n  - name: default\n    provider: mock\n    response: {response}\n", encoding="utf-8"
    )
    (root / "evals" / "support").mkdir(parents=True, exist_ok=True)
    (root / "evals" / "support" / "help desk.eval.yaml").write_text(EVAL, encoding="utf-8")
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def _run(root: Path, out: Path) -> tuple[int, list[dict], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GITLAB_", "CI_"))}
    env["CI"] = "true"
    done = run_cli(
        "run", "evals", "-o", str(out),
        "--report", f"gitlab-codequality={out}/gl-code-quality-report.json",
        "--report", f"openmetrics={out}/metrics.txt",
        cwd=root, env=env, timeout=120,
    )  # fmt: skip
    findings = json.loads((out / "gl-code-quality-report.json").read_text(encoding="utf-8"))
    return done.returncode, findings, (out / "metrics.txt").read_text(encoding="utf-8")


def test_run_writes_gitlabs_reports_with_stable_fingerprints(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", "hello there")
    code, findings, metrics = _run(root, tmp_path / "one")
    assert code == 1
    assert schema_errors(findings) == []
    (finding,) = findings
    assert finding["location"] == {"path": "evals/support/help desk.eval.yaml", "lines": {"begin": 6}}
    assert finding["description"].startswith("help desk/refund # policy [default] failed: ")
    assert finding["severity"] == "major"

    samples = parse_openmetrics(metrics)
    assert samples[("agentv_ci_pass_ratio", ())] == 0.5
    assert gitlab_metrics(metrics)["agentv_ci_suite_pass_ratio{suite=help desk}"] == "0.5"

    _repo(root, "hello, no luck today")  # another answer, the same failure
    code, again, _ = _run(root, tmp_path / "two")
    assert code == 1
    assert [f["fingerprint"] for f in again] == [finding["fingerprint"]]
