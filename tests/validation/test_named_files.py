"""`validate` given a targets file by name, and `--skip-non-eval-files` (the pre-commit hook)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from agentv_ci.cli import app

runner = CliRunner()

TARGETS = "targets:\n  - name: default\n    provider: mock\n  - name: agentv-only\n    provider: vscode\n"
EVAL = "name: s\nexecution:\n  target: default\ntests:\n  - id: t\n    input: hi\n    expected_output: hi\n"


def _project(root: Path) -> Path:
    (root / ".git").mkdir()
    (root / "evals" / ".agentv").mkdir(parents=True)
    (root / "evals" / ".agentv" / "targets.yaml").write_text(TARGETS)
    (root / "evals" / "s.eval.yaml").write_text(EVAL)
    return root / "evals" / ".agentv" / "targets.yaml"


def _validate(*args: str) -> tuple[int, list[str]]:
    result = runner.invoke(app, ["validate", *args])
    return result.exit_code, result.output.splitlines()


def test_a_targets_file_is_checked_with_the_eval_files_that_read_it(tmp_path: Path) -> None:
    targets = _project(tmp_path)
    code, lines = _validate(str(targets))
    # Checked as a targets file (not loaded as an eval file: no E102 "no tests"), with the eval file
    # that reads it; the AgentV-only provider no eval file uses is not held against it.
    assert code == 0, lines
    assert lines[-1] == "1 file(s), 1 test(s): 0 error(s), 0 warning(s)"

    # A renamed target shows at the eval file that names it (W111: `run --target` may replace it).
    targets.write_text(TARGETS.replace("name: default", "name: renamed"))
    code, lines = _validate(str(targets), "--strict")
    assert code == 2
    eval_file = targets.parent.parent / "s.eval.yaml"
    assert any(line.startswith(f"{eval_file}:3:11: error[W111]") for line in lines), lines

    targets.write_text(TARGETS.replace("provider: mock", "provider: mokc"))
    code, lines = _validate(str(targets))
    assert code == 2
    assert any(line.startswith(f"{targets}:3:5: error[E205]") for line in lines), lines
    assert not any("E102" in line for line in lines)


def test_a_targets_file_no_eval_file_reads_is_checked_whole(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    lone = tmp_path / "targets.yaml"
    lone.write_text("targets:\n  - name: a\n    provider: mock\n")
    assert _validate(str(lone)) == (0, ["1 file(s), 0 test(s): 0 error(s), 0 warning(s)"])
    lone.write_text("targets:\n  - name: a\n    provider: mock\n  - name: b\n    provider: opneai\n")
    code, lines = _validate(str(lone))
    assert code == 2
    assert any(line.startswith(f"{lone}:5:5: error[E205]") for line in lines), lines
    lone.write_text("targets: [\n")
    code, lines = _validate(str(lone))
    assert code == 2 and any("error[E207]" in line for line in lines)


def test_skip_non_eval_files_keeps_what_a_directory_scan_would_pick_up(tmp_path: Path) -> None:
    _project(tmp_path)
    evals = tmp_path / "evals"
    recording = evals / "answers.jsonl"
    recording.write_text('{"test_id": "t", "output": "hi"}\n')
    baseline = evals / "s.eval.baseline.jsonl"
    baseline.write_text('{"test_id": "t", "score": 1}\n')
    # Without the flag a named file is an eval file, as before: the recording is no dataset.
    code, lines = _validate(str(recording))
    assert code == 2 and any("error[E102]" in line for line in lines)
    # With it, a recording and a baseline are skipped, and nothing left to check passes.
    assert _validate("--skip-non-eval-files", str(recording), str(baseline))[0] == 0

    # A JSONL file an eval file in its directory pulls in as cases: that eval file is checked.
    cases = evals / "cases.jsonl"
    cases.write_text('{"id": "a", "input": "hi", "expected_output": "hi"}\n{"id": "b", "input": 7}\n')
    (evals / "cases.eval.yaml").write_text("name: cases\ntests: cases.jsonl\n")
    code, lines = _validate("--skip-non-eval-files", str(cases), str(recording))
    assert code == 2
    assert any(line.startswith(f"{cases}:2:") and "error[" in line for line in lines), lines

    # A dataset with a YAML sidecar is checked; its sidecar stands for it.
    dataset = evals / "set.jsonl"
    dataset.write_text('{"id": "a", "input": "hi", "expected_output": "hi"}\n')
    (evals / "set.yaml").write_text("name: set\n")
    for named in (dataset, evals / "set.yaml"):
        code, lines = _validate("--skip-non-eval-files", str(named))
        assert (code, lines[-1]) == (0, "1 file(s), 1 test(s): 0 error(s), 0 warning(s)")
    dataset.write_text('{"id": "a"}\n')
    code, lines = _validate("--skip-non-eval-files", str(evals / "set.yaml"))
    assert code == 2 and any(line.startswith(f"{dataset}:1:") for line in lines)


def test_skip_non_eval_files_skips_other_tools_yaml_and_their_targets_yaml(tmp_path: Path) -> None:
    # The hook passes every staged YAML file (a sidecar can have any name): others' are skipped.
    _project(tmp_path)
    (tmp_path / "deploy").mkdir()
    prometheus = tmp_path / "deploy" / "targets.yaml"
    prometheus.write_text("targets:\n  - job: node\n")  # no `name`: E207 if it were read as ours
    workflow = tmp_path / "ci.yml"
    workflow.write_text("on: push\n")
    assert _validate("--skip-non-eval-files", str(prometheus), str(workflow)) == (
        0,
        ["0 file(s), 0 test(s): 0 error(s), 0 warning(s)"],
    )
    # Ours stays checked: a `.agentv/targets.yaml` read by no eval file, and one outside `.agentv/`
    # that an eval file reads.
    (tmp_path / "evals" / "s.eval.yaml").unlink()
    ours = tmp_path / "evals" / ".agentv" / "targets.yaml"
    ours.write_text("targets:\n  - job: node\n")
    code, lines = _validate("--skip-non-eval-files", str(ours), str(workflow))
    assert code == 2 and any(line.startswith(f"{ours}:2:5: error[E207]") for line in lines), lines
    ours.unlink()
    read = tmp_path / "evals" / "targets.yaml"
    read.write_text("targets:\n  - name: default\n    provider: mokc\n")
    (tmp_path / "evals" / "s.eval.yaml").write_text(EVAL)
    code, lines = _validate("--skip-non-eval-files", str(read))
    assert code == 2 and any(line.startswith(f"{read}:3:5: error[E205]") for line in lines), lines
