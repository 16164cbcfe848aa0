"""End to end: `python -m agentv_ci` in a subprocess on the bundled examples (no API key)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.cli_helpers import mock_project, run_cli
from tests.conftest import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples"


def _run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    environment.update(env or {})
    return run_cli(*args, cwd=cwd, env=environment, timeout=300)


def test_examples_run_end_to_end_with_passes_and_failures(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    done = _run(
        "run", str(EXAMPLES), "-o", str(out), "--junit", str(out / "junit.xml"),
        "--sarif", str(out / "results.sarif"), "--markdown", str(out / "summary.md"),
        cwd=tmp_path, env={"CI": "true"},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # some examples fail on purpose: the gate fails
    rows = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    by_id = {(r["suite"], r["test_id"]): r for r in rows}
    assert by_id[("basic", "arithmetic")]["execution_status"] == "ok"
    assert by_id[("basic", "capital-germany")]["execution_status"] == "quality_failure"
    assert by_id[("capitals-dataset", "japan")]["execution_status"] == "ok"
    assert by_id[("workspace-hooks", "sees-hook-edit")]["execution_status"] == "ok"
    assert by_id[("basic", "capital-france")]["execution_status"] == "ok"  # contains + code-grader
    assert by_id[("agent-trajectory", "weather-lookup")]["execution_status"] == "ok"  # replay + tools
    assert by_id[("agent-trajectory", "refund-flow")]["execution_status"] == "quality_failure"
    assert not [r for r in rows if r["execution_status"] == "execution_error"]
    # plugin graders (the in-repo packages, installed by `make setup`)
    assert by_id[("plugins", "profile-matches-schema")]["score"] == 1.0
    misses = by_id[("plugins", "profile-misses-fields")]
    assert misses["score"] == 0.6 and misses["scores"][0]["type"] == "json-schema"
    assert [a["text"] for a in misses["scores"][0]["assertions"]] == [
        "$.died: 'died' is a required property",
        "$.field: 'mathematics' is not one of ['computing', 'poetry']",
    ]
    assert [s["type"] for s in by_id[("plugins", "short-answer")]["scores"]] == ["text-stats", "contains"]
    row = by_id[("basic", "capital-germany")]
    assert row["eval_path"].endswith("basic.eval.yaml") and row["line"] > 0
    assert row["target"] == "toy-agent" and row["scores"][0]["type"] == "contains"
    for name in ("summary.json", "junit.xml", "results.sarif", "summary.md"):
        assert (out / name).is_file()
    # CI=true: one plain line per test on stderr
    assert "FAIL    basic/capital-germany [toy-agent]" in done.stderr
    # --no-fail shows the same failures but exits 0
    again = _run("run", str(EXAMPLES), "-o", str(tmp_path / "again"), "--no-fail", "-q", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "capital-germany" in again.stdout


def test_dry_run_marks_results_and_needs_no_key(tmp_path: Path) -> None:
    out = tmp_path / "dry"
    done = _run(
        "run", str(EXAMPLES), "--dry-run", "--target", "openai", "-o", str(out), "-q", "--no-fail",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    assert rows and all(r["dry_run"] for r in rows)
    assert {r["target"] for r in rows} == {"openai"}
    assert json.loads((out / "summary.json").read_text())["dry_run"] is True


def test_a_dry_run_of_the_examples_is_green_and_says_the_scores_are_placeholders(tmp_path: Path) -> None:
    out = tmp_path / "dry"
    done = _run("run", str(EXAMPLES), "--dry-run", "-o", str(out), "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    result = next(line for line in done.stdout.splitlines() if line.startswith("RESULT:"))
    assert result.startswith("RESULT: PASSED (dry run): 16/16 tests ran; scores are placeholders, not gated")
    rows = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    assert {r["target"] for r in rows} == {"toy-agent", "recorded-agent", "workspace-agent"}  # as declared
    assert all(r["dry_run"] and "verdict" in r for r in rows)


def test_a_dry_run_refuses_an_unknown_target_as_a_real_run_does(tmp_path: Path) -> None:
    for extra in ((), ("--dry-run",)):
        out = tmp_path / f"out{len(extra)}"
        done = _run("run", str(EXAMPLES), "--target", "toy-agnet", *extra, "-o", str(out), cwd=tmp_path)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "unknown target 'toy-agnet'" in done.stderr and "did you mean 'toy-agent'?" in done.stderr
        assert not (out / "index.jsonl").exists()  # refused before the first test


def test_missing_api_key_is_bad_input_before_anything_runs(tmp_path: Path) -> None:
    out = tmp_path / "nokey"
    done = _run(
        "run", str(EXAMPLES / "basic" / "basic.eval.yaml"), "--target", "openai", "-o", str(out), cwd=tmp_path
    )
    assert done.returncode == 2
    assert "OPENAI_API_KEY" in done.stderr
    assert "targets.yaml:" in done.stderr
    assert not (out / "index.jsonl").exists()


def test_bad_flags_exit_2(tmp_path: Path) -> None:
    assert _run("run", str(EXAMPLES), "--shard", "5/2", cwd=tmp_path).returncode == 2
    assert _run("run", str(tmp_path / "missing"), cwd=tmp_path).returncode == 2


def test_run_sarif_category_sets_automation_details(tmp_path: Path) -> None:
    evals = mock_project(
        tmp_path / "evals",
        response="hello",
        eval_file="s.eval.yaml",
        eval_yaml="name: s\ntests:\n  - id: t\n    input: hi\n"
        "    assertions:\n      - type: contains\n        value: bye\n",
    )
    sarif = tmp_path / "r.sarif"
    proc = run_cli(
        "run", str(evals), "-o", str(tmp_path / "out"),
        "--sarif", str(sarif), "--sarif-category", "evals/linux", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # the failing test fails the run
    run = json.loads(sarif.read_text())["runs"][0]
    assert run["automationDetails"]["id"] == "evals/linux/"  # SARIF: a trailing "/" names a category
    assert run["results"][0]["ruleId"] == "agentv/contains"


def test_legacy_grader_name_runs_with_a_deprecation_warning(tmp_path: Path) -> None:
    evals = mock_project(
        tmp_path / "evals",
        response="hello",
        eval_file="s.eval.yaml",
        eval_yaml="name: s\nevalcases:\n  - id: t\n    expected_outcome: greets\n    input: hi\n"
        "    execution:\n      evaluators:\n        - name: kw\n          type: code_judge\n"
        "          script: [python3, -c, 'print(1)']\n",
    )
    proc = run_cli("run", str(evals), "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "`code_judge` is deprecated; use `code-grader`" in proc.stderr
    row = json.loads((tmp_path / "out" / "index.jsonl").read_text().splitlines()[0])
    assert row["scores"][0]["type"] == "code-grader" and row["score"] == 1.0  # run, not skipped


def test_max_regression_without_baseline_is_bad_input_before_anything_runs(tmp_path: Path) -> None:
    evals = mock_project(
        tmp_path / "evals",
        response="hello",
        eval_file="s.eval.yaml",
        eval_yaml="name: s\ntests:\n  - id: t\n    input: hi\n"
        "    assertions:\n      - type: contains\n        value: hello\n",
    )
    proc = run_cli("run", str(evals), "-o", str(tmp_path / "out"), "--max-regression", "0.1", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--max-regression needs --baseline" in proc.stderr
    assert not (tmp_path / "out" / "index.jsonl").exists()  # nothing ran
