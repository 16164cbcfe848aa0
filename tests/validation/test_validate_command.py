from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from agentv_ci.cli import app
from tests.cli_helpers import run_cli
from tests.conftest import SHARED_SCHEMAS
from tests.loading.corpus import INVALID, VALID

runner = CliRunner()


def _bad_file(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text("targets:\n  - name: default\n    provider: mock\n")
    path = tmp_path / "bad.eval.yaml"
    path.write_text(
        "tests:\n"
        "  - id: a\n"
        "    input: hi\n"
        "    critera: typo\n"
        "    assertions:\n"
        "      - {type: regex, value: '('}\n"
    )
    return path


def test_text_output_lists_every_problem_and_exits_2(tmp_path: Path) -> None:
    path = _bad_file(tmp_path)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert f"{path}:4:5: warning[W101]: unknown key `critera` in a test" in lines
    assert "  hint: did you mean `criteria`?" in lines
    assert any(line.startswith(f"{path}:6:30: error[E106]: invalid regex") for line in lines)
    assert lines[-1] == "1 file(s), 1 test(s): 1 error(s), 1 warning(s)"


# The corpus has no targets file: like `run`, `validate` needs `--target mock` to run it (E402).
MOCK = ["--target", "mock"]


def test_valid_corpus_passes_and_warnings_gate_with_max_warnings() -> None:
    ok = runner.invoke(app, ["validate", str(VALID / "v4-math"), str(VALID / "v4-vars"), *MOCK])
    assert ok.exit_code == 0, ok.output
    assert ok.output.strip().endswith("0 error(s), 0 warning(s)")
    legacy = str(INVALID / "deprecated-forms" / "main.eval.yaml")
    assert runner.invoke(app, ["validate", legacy, *MOCK]).exit_code == 0
    assert runner.invoke(app, ["validate", legacy, *MOCK, "--max-warnings", "5"]).exit_code == 0
    gated = runner.invoke(app, ["validate", legacy, *MOCK, "--max-warnings", "4"])
    assert gated.exit_code == 2


def test_strict_turns_unknown_keys_into_errors() -> None:
    path = str(INVALID / "unknown-key" / "main.eval.yaml")
    assert runner.invoke(app, ["validate", path, *MOCK]).exit_code == 0
    strict = runner.invoke(app, ["validate", path, *MOCK, "--strict"])
    assert strict.exit_code == 2
    assert "error[W101]: unknown key `critera` in a test" in strict.output


def test_json_format(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(_bad_file(tmp_path)), "--format", "json"])
    payload = json.loads(result.output)
    assert (payload["errors"], payload["warnings"], payload["tests"]) == (1, 1, 1)
    assert [(d["code"], d["line"], d["col"]) for d in payload["diagnostics"]] == [
        ("W101", 4, 5),
        ("E106", 6, 30),
    ]


def test_github_annotations(tmp_path: Path) -> None:
    path = _bad_file(tmp_path)
    result = runner.invoke(app, ["validate", str(path), "--format", "github"])
    lines = result.output.splitlines()
    assert lines[0] == (
        f"::warning file={path},line=4,col=5,title=W101::"
        "unknown key `critera` in a test%0Ahint: did you mean `criteria`?"
    )
    assert lines[1].startswith(f"::error file={path},line=6,col=30,title=E106::invalid regex")


def test_sarif_output_is_valid_sarif_2_1_0(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(_bad_file(tmp_path)), "--format", "sarif"])
    log = json.loads(result.output)
    schema = json.loads((SHARED_SCHEMAS / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(log)
    results = log["runs"][0]["results"]
    # The same shape as `run --sarif`: rules named agentv/<id>, one per diagnostic code.
    by_rule = {r["ruleId"]: r for r in results}
    levels = {rule: r["level"] for rule, r in by_rule.items()}
    assert levels == {"agentv/W101": "warning", "agentv/E106": "error"}
    rules = {rule["id"] for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert rules == {"agentv/W101", "agentv/E106"}
    assert all(r["partialFingerprints"] for r in results)
    region = by_rule["agentv/E106"]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (6, 30)


def test_bad_format_and_empty_directory_exit_2(tmp_path: Path) -> None:
    assert runner.invoke(app, ["validate", str(tmp_path), "--format", "xml"]).exit_code == 2
    empty = runner.invoke(app, ["validate", str(tmp_path)])
    assert empty.exit_code == 2
    assert "no eval files found" in empty.output


@pytest.mark.parametrize(("target", "code"), [("invalid/syntax-error", 2), ("valid/v4-features", 0)])
def test_real_exit_code_in_subprocess(target: str, code: int) -> None:
    path = VALID.parent / target
    out = subprocess.run(
        [sys.executable, "-m", "agentv_ci", "validate", str(path), *MOCK],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == code, out.stdout + out.stderr
    assert "Traceback" not in out.stdout + out.stderr
    if code:
        assert "error[E002]: YAML syntax error" in out.stdout


def test_a_quoted_glob_matching_nothing_is_reported_as_such(tmp_path: Path) -> None:
    result = run_cli("validate", f"{tmp_path}/evals/*.eval.yaml")
    assert result.returncode == 2
    assert f"error: no files match {tmp_path}/evals/*.eval.yaml" in result.stderr


GARBAGE: dict[str, bytes] = {
    "binary.eval.yaml": b"\x00\x01\x02\xff\xfe",
    "empty.eval.yaml": b"",
    "list.eval.yaml": b"- a\n- b\n",
    "tests5.eval.yaml": b"tests: 5\n",
    "nulls.eval.yaml": b"name: ~\ntests:\n  - id: ~\n    input: ~\n  - ~\n",
    "deep.eval.yaml": b"tests: " + b"[" * 5000 + b"]" * 5000 + b"\n",
    "deepmap.eval.yaml": b"metadata: " + b"{a: " * 950 + b'"${{ X }}"' + b"}" * 950 + b"\ntests: []\n",
    "latin1.eval.yaml": b"tests:\n  - id: a\n    input: caf\xe9\n",
    "tabs.eval.yaml": b"tests:\n\t- id: a\n",
    "multi.eval.yaml": b"tests: []\n---\ntests: []\n",
    "cplxkey.eval.yaml": b"? [a]\n: 1\ntests: []\n",
    "huge.eval.yaml": b"tests:\n  - id: a\n    input: hi\n    criteria: c\n    execution: {workers: 1"
    + b"0" * 400
    + b"}\n",
    "bad.jsonl": b'{"id": "a", "input": "caf\xe9"}\n[1]\n{"id":\n',
}


def test_garbage_files_exit_2_without_a_traceback(tmp_path: Path) -> None:
    for name, data in GARBAGE.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "bad.yaml").write_text("name: bad\n")
    (tmp_path / "dir.eval.yaml").mkdir()
    (tmp_path / "loop.eval.yaml").symlink_to("loop.eval.yaml")
    out = subprocess.run(
        [sys.executable, "-m", "agentv_ci", "validate", str(tmp_path), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr
    report = json.loads(out.stdout)
    failing = {Path(d["file"]).name for d in report["diagnostics"] if d["severity"] == "error"}
    assert failing == set(GARBAGE) | {"loop.eval.yaml"}


UNCLOSED_QUOTE = """\
name: quotes
tests:
  - id: t
    input: "What is the capital of France?
    expected_output: Paris
  - id: u
    input: hi
    expected_output: hi
"""


@pytest.mark.parametrize("quote", ['"', "'"])
def test_an_unclosed_quote_is_reported_where_it_opens_with_a_hint(tmp_path: Path, quote: str) -> None:
    # PyYAML's problem is at the end of the file (9:1); the mistake is the quote on line 4.
    (tmp_path / ".git").mkdir()
    path = tmp_path / "q.eval.yaml"
    path.write_text(UNCLOSED_QUOTE.replace('"', quote))
    result = run_cli("validate", str(path), *MOCK)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == [
        f"{path}:4:12: error[E002]: YAML syntax error: a quoted string is not closed "
        "(found unexpected end of stream at 9:1)",
        f"  hint: the quoted string opened here ({quote}) is not closed: add the closing {quote}",
    ], result.stdout


def test_an_unclosed_bracket_names_where_it_opens(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    path = tmp_path / "b.eval.yaml"
    path.write_text("tests:\n  - id: x\n    input: [unclosed\n")
    result = run_cli("validate", str(path), *MOCK)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout.splitlines()[:2] == [
        f"{path}:4:1: error[E002]: YAML syntax error: did not find expected ',' or ']'",
        "  hint: the [ opened at 3:12 is not closed (or a ',' is missing)",
    ], result.stdout


def test_a_quote_left_open_until_a_later_quote_names_where_it_opens(tmp_path: Path) -> None:
    # The quote on line 4 is closed by the first quote of line 7: YAML fails there.
    (tmp_path / ".git").mkdir()
    path = tmp_path / "q.eval.yaml"
    path.write_text(UNCLOSED_QUOTE.replace("input: hi", 'input: "hi"'))
    result = run_cli("validate", str(path), *MOCK)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout.splitlines()[:2] == [
        f"{path}:7:13: error[E002]: YAML syntax error: did not find expected key",
        '  hint: the quoted string opened at 4:12 (") is closed only on this line: '
        "is its closing quote missing?",
    ], result.stdout
