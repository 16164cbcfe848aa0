"""`agentv-ci run` / `merge` in-process (typer's CliRunner) on real files in tmp_path."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_ci.cli import app
from agentv_ci.errors import AgentvCiError

AGENT = """
import json, sys
prompt = open(sys.argv[1]).read()
with open("calls.log", "a") as log:
    log.write(sys.argv[3] + "\\n")
answer = "yes" if "good" in prompt else "no"
json.dump({"text": answer, "cost_usd": 0.4}, open(sys.argv[2], "w"))
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: cli\n"
        f"    command: {sys.executable} agent.py {{PROMPT_FILE}} {{OUTPUT_FILE}} {{EVAL_ID}}\n"
        "  - name: replayed\n    provider: replay\n    fixtures: recorded.jsonl\n"
    )
    graders = "    assertions:\n      - type: contains\n        value: 'yes'\n"
    tests = "".join(f"  - id: good-{i}\n    input: good {i}\n    tags: [smoke]\n{graders}" for i in range(3))
    tests += f"  - id: bad-0\n    input: bad\n{graders}"
    (tmp_path / "a.eval.yaml").write_text(f"name: a\ntests:\n{tests}")
    return tmp_path


def _invoke(*args: str) -> tuple[int, str]:
    """Exit code as `cli.run_app` would map it (CliRunner bypasses its error boundary)."""
    result = CliRunner().invoke(app, ["run", *args])
    if isinstance(result.exception, AgentvCiError):
        return int(result.exception.exit_code), result.output + result.exception.render()
    return result.exit_code, result.output


def _rows(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in (path / "index.jsonl").read_text().splitlines()]


def _calls(project: Path) -> list[str]:
    log = project / "calls.log"
    return sorted(log.read_text().split()) if log.exists() else []


def test_gate_exit_codes_and_no_fail(project: Path) -> None:
    code, output = _invoke("a.eval.yaml", "-o", "out")
    assert code == 1, output
    assert "bad-0" in output
    assert _invoke("a.eval.yaml", "-o", "out2", "--no-fail")[0] == 0
    assert _invoke("a.eval.yaml", "-o", "out3", "--test-id", "good-*")[0] == 0
    assert {r["test_id"] for r in _rows(project / "out3")} == {"good-0", "good-1", "good-2"}
    assert _invoke("a.eval.yaml", "-o", "out4", "--min-pass-rate", "0.7")[0] == 0


def test_a_new_run_into_an_old_dir_replaces_its_rows(project: Path) -> None:
    _invoke("a.eval.yaml", "-o", "out", "--no-fail")
    _invoke("a.eval.yaml", "-o", "out", "--test-id", "good-0")
    assert [r["test_id"] for r in _rows(project / "out")] == ["good-0"]


def test_tag_filter_and_default_output_dir(project: Path) -> None:
    code, output = _invoke("a.eval.yaml", "--tag", "smoke")
    assert code == 0, output
    [run_dir] = list((project / ".agentv-ci" / "runs").iterdir())
    assert len(_rows(run_dir)) == 3
    assert (run_dir / "summary.json").is_file()


def test_resume_skips_finished_tests(project: Path) -> None:
    _invoke("a.eval.yaml", "-o", "out", "--test-id", "good-0", "--test-id", "good-1")
    assert _calls(project) == ["good-0", "good-1"]
    code, _ = _invoke("a.eval.yaml", "-o", "out", "--resume", "--no-fail")
    assert code == 0
    assert _calls(project) == ["bad-0", "good-0", "good-1", "good-2"]  # only the two missing ran
    rows = _rows(project / "out")
    assert sorted(r["test_id"] for r in rows) == ["bad-0", "good-0", "good-1", "good-2"]
    summary = json.loads((project / "out" / "summary.json").read_text())
    assert summary["totals"]["tests"] == 4


def test_resume_after_a_kill_mid_write_drops_the_torn_last_line(project: Path) -> None:
    """A kill can land between the bytes of a row: resume keeps the complete rows, reruns the torn one."""
    _invoke("a.eval.yaml", "-o", "out", "--test-id", "good-0", "--no-fail")
    with (project / "out" / "index.jsonl").open("a") as index:
        index.write('{"test_id":"good-1","suite":"a","tar')  # no newline: the process died here
    code, output = _invoke("a.eval.yaml", "-o", "out", "--resume", "--no-fail")
    assert code == 0, output
    rows = _rows(project / "out")
    assert sorted(r["test_id"] for r in rows) == ["bad-0", "good-0", "good-1", "good-2"]
    assert _calls(project) == ["bad-0", "good-0", "good-1", "good-2"]


def test_budget_stop_is_inconclusive_not_a_pass(project: Path) -> None:
    code, output = _invoke(
        "a.eval.yaml", "-o", "out", "--test-id", "good-*", "--workers", "1", "--budget-usd", "0.5"
    )
    assert code == 3, output
    statuses = [r["execution_status"] for r in _rows(project / "out")]
    assert statuses == ["ok", "ok", "not_run"]
    summary = json.loads((project / "out" / "summary.json").read_text())
    assert summary["budget_exhausted"] is True and summary["not_run"] == 1


def test_record_with_cache_hits_records_every_answer(project: Path) -> None:
    _invoke("a.eval.yaml", "-o", "warm", "--cache", "--no-fail")
    assert _invoke("a.eval.yaml", "-o", "live", "--cache", "--record", "rec.jsonl", "--no-fail")[0] == 0
    assert len(_calls(project)) == 4  # the second run was all cache hits...
    recorded = [json.loads(line) for line in (project / "rec.jsonl").read_text().splitlines()]
    assert sorted(r["test_id"] for r in recorded) == ["bad-0", "good-0", "good-1", "good-2"]  # ...recorded


def test_record_then_replay(project: Path) -> None:
    assert _invoke("a.eval.yaml", "-o", "live", "--record", "recorded.jsonl", "--no-fail")[0] == 0
    recorded = [json.loads(line) for line in (project / "recorded.jsonl").read_text().splitlines()]
    assert {r["test_id"] for r in recorded} == {"good-0", "good-1", "good-2", "bad-0"}
    (project / "calls.log").unlink()
    code, _ = _invoke("a.eval.yaml", "-o", "replayed", "--target", "replayed", "--no-fail")
    assert code == 0
    assert _calls(project) == []  # no live call
    live = {r["test_id"]: r["score"] for r in _rows(project / "live")}
    assert {r["test_id"]: r["score"] for r in _rows(project / "replayed")} == live


def test_cache_flag_reuses_answers(project: Path) -> None:
    _invoke("a.eval.yaml", "-o", "one", "--cache", "--no-fail")
    assert len(_calls(project)) == 4
    _invoke("a.eval.yaml", "-o", "two", "--cache", "--no-fail")
    assert len(_calls(project)) == 4  # all from the cache
    _invoke("a.eval.yaml", "-o", "three", "--no-fail")
    assert len(_calls(project)) == 8  # --cache is off by default


def test_shards_then_merge(project: Path) -> None:
    for index in (1, 2, 3):
        _invoke("a.eval.yaml", "-o", f"shard-{index}", "--shard", f"{index}/3", "--no-fail")
    shard_ids = [
        {r["test_id"] for r in _rows(project / f"shard-{i}")}
        for i in (1, 2, 3)
        if (project / f"shard-{i}" / "index.jsonl").exists()
    ]
    assert sum(len(s) for s in shard_ids) == 4
    inputs = [f"shard-{i}" for i in (1, 2, 3) if (project / f"shard-{i}" / "index.jsonl").exists()]
    result = CliRunner().invoke(app, ["merge", *inputs, "-o", "merged"])
    assert result.exit_code == 0, result.output
    assert sorted(r["test_id"] for r in _rows(project / "merged")) == ["bad-0", "good-0", "good-1", "good-2"]
    assert json.loads((project / "merged" / "summary.json").read_text())["totals"]["tests"] == 4


def test_merge_prefers_a_finished_row_over_a_not_run_one(project: Path) -> None:
    """A retried shard (finished rows) merged before a budget-stopped one (not_run rows) must not lose
    the finished results, whatever the order of the inputs."""
    _invoke("a.eval.yaml", "-o", "full", "--no-fail")
    _invoke("a.eval.yaml", "-o", "stopped", "--budget-usd", "0.1", "--workers", "1", "--no-fail")
    assert any(r["execution_status"] == "not_run" for r in _rows(project / "stopped"))
    for order in (["full", "stopped"], ["stopped", "full"]):
        result = CliRunner().invoke(app, ["merge", *order, "-o", "merged"])
        assert result.exit_code == 0, result.output
        assert {r["execution_status"] for r in _rows(project / "merged")} == {"ok", "quality_failure"}
        summary = json.loads((project / "merged" / "summary.json").read_text())
        assert not summary.get("budget_exhausted")  # nothing is left unrun, so not inconclusive


def test_bad_input_exits_2_before_running(project: Path) -> None:
    (project / "broken.eval.yaml").write_text("tests:\n  - id: x\n    input: [unclosed\n")
    code, output = _invoke("broken.eval.yaml", "a.eval.yaml", "-o", "out")
    assert code == 2
    assert "broken.eval.yaml:4:1: error[E002]" in output
    assert _calls(project) == []
    assert _invoke("a.eval.yaml", "--target", "nope")[0] == 2
    assert _invoke("a.eval.yaml", "--budget-usd", "0")[0] == 2
    assert _invoke("a.eval.yaml", "--threshold", "2")[0] == 2
    for flag in ("--timeout", "--budget-usd"):  # NaN and infinity are not limits
        for value in ("nan", "inf"):
            code, output = _invoke("a.eval.yaml", flag, value)
            assert code == 2 and flag in output, (flag, value, output)
    assert _calls(project) == []


def test_grader_model_spend_counts_toward_the_budget(project: Path) -> None:
    """--budget-usd caps all money spent, including what llm-graders pay their grader target."""
    (project / "judge.py").write_text(
        "import json, sys\n"
        "verdict = {'score': 1, 'assertions': [{'text': 'ok', 'passed': True}], 'reasoning': 'fine'}\n"
        "json.dump({'text': json.dumps(verdict), 'cost_usd': 1.0}, open(sys.argv[1], 'w'))\n"
    )
    (project / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: agent\n    provider: mock\n    response: 'yes'\n    grader_target: judge\n"
        f"  - name: judge\n    provider: cli\n    command: {sys.executable} judge.py {{OUTPUT_FILE}}\n"
    )
    tests = "".join(
        f"  - id: j-{i}\n    input: q {i}\n    criteria: says yes\n"
        "    assertions:\n      - type: llm-grader\n"
        for i in range(5)
    )
    (project / "j.eval.yaml").write_text(f"name: j\nexecution:\n  target: agent\ntests:\n{tests}")
    code, output = _invoke("j.eval.yaml", "-o", "out", "--budget-usd", "1.5", "--workers", "1")
    statuses = [r["execution_status"] for r in _rows(project / "out")]
    assert statuses.count("ok") == 2, output  # 1.0 spent after the first, 2.0 >= 1.5 after the second
    assert statuses.count("not_run") == 3
    assert code == 3
