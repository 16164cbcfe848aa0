from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentv_ci.errors import LoadError
from agentv_ci.model.result import GraderResult, TestResult, TokenUsage
from agentv_ci.results.results_file import (
    ResultsWriter,
    aggregate_attempts,
    load_run,
    read_results,
    summary_from_results,
    write_summary_json,
)

DATA = Path(__file__).resolve().parent.parent / "reporting" / "data"


def test_writer_round_trips_our_rows(tmp_path: Path) -> None:
    rows = [
        TestResult("a", "s", "m", 1.0, "ok", verdict="pass", token_usage=TokenUsage(3, 4), cost_usd=0.1),
        TestResult("b", "s", "m", 0.1, "quality_failure", scores=[GraderResult("g", "regex", 0.1, "fail")]),
        TestResult("c", "s", "m", 0.0, "not_run", verdict="skip", threshold=0.5),
    ]
    path = tmp_path / "run" / "index.jsonl"
    with ResultsWriter(path) as writer:
        for row in rows:
            writer.append(row)
    assert read_results(path) == rows
    assert read_results(path.parent) == rows  # a run dir works too


def test_each_append_is_on_disk_before_the_writer_closes(tmp_path: Path) -> None:
    # A separate process reads the file while the writer is still open: nothing is buffered.
    path = tmp_path / "index.jsonl"
    with ResultsWriter(path) as writer:
        writer.append(TestResult("a", "s", "m", 1.0, "ok", verdict="pass"))
        code = f"import pathlib; print(len(pathlib.Path({str(path)!r}).read_text().splitlines()))"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "1"


def test_reads_agentv_rows_with_derived_verdicts_and_trials() -> None:
    rows = {r.test_id: r for r in read_results(DATA / "agentv_base.jsonl")}
    assert rows["capital-of-france"].verdict == "pass"
    assert rows["capital-of-france"].token_usage == TokenUsage(input=52, output=7)
    assert rows["capital-of-france"].metadata == {"owner": "@someone"}
    assert rows["tallest-mountain"].execution_status == "execution_error"
    assert rows["tallest-mountain"].verdict == "fail"
    assert rows["tallest-mountain"].failure_reason_code == "provider_error"
    ocean = rows["ocean-count"]
    assert ocean.verdict == "fail"
    assert [t.score for t in ocean.trials] == [1, 1, 0, 1, 0]
    assert all(t.test_id == "ocean-count" and t.suite == "geography" for t in ocean.trials)
    assert ocean.aggregation is not None and ocean.aggregation.passed_attempts == 3


def test_rows_without_suite_or_target_get_defaults(tmp_path: Path) -> None:
    path = tmp_path / "index.jsonl"
    path.write_text('{"test_id": "a", "score": 0.9, "eval_path": "evals/demo.eval.yaml"}\n')
    (row,) = read_results(path)
    assert (row.suite, row.target, row.verdict, row.execution_status) == ("demo", "default", "pass", "ok")


def test_reads_legacy_camel_case_rows() -> None:
    legacy = read_results(DATA / "agentv_head.jsonl")[-1]
    assert legacy.test_id == "new-legacy-row"
    assert legacy.cost_usd == 0.5 and legacy.duration_ms == 100
    assert legacy.token_usage == TokenUsage(input=10, output=2)
    assert legacy.execution_status == "quality_failure" and legacy.verdict == "fail"  # 0.75 < 0.8
    assert [a.text for a in legacy.scores[0].assertions] == ["mentions X", "mentions Y"]


def test_bad_line_reports_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "index.jsonl"
    path.write_text('{"test_id": "a", "suite": "s", "target": "m", "score": 1}\n\n{"test_id": oops}\n')
    with pytest.raises(LoadError) as info:
        read_results(path)
    assert str(info.value.location) == f"{path}:3:1"
    path.write_text('{"test_id": "a", "score": "high"}\n')
    with pytest.raises(LoadError, match="`score` must be a number") as info:
        read_results(path)
    assert info.value.location is not None and info.value.location.line == 1


def test_missing_file_and_dir_without_index(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="results file not found"):
        read_results(tmp_path / "nope.jsonl")
    with pytest.raises(LoadError, match=r"no index\.jsonl"):
        read_results(tmp_path)


def test_per_attempt_rows_are_aggregated() -> None:
    rows = aggregate_attempts(read_results(DATA / "agentv_head.jsonl"))
    ocean = next(r for r in rows if r.test_id == "ocean-count")
    assert len(ocean.trials) == 5 and ocean.attempt is None
    assert ocean.aggregation is not None
    assert (ocean.aggregation.passed_attempts, ocean.aggregation.total_attempts) == (0, 5)
    assert ocean.score == 0.0 and ocean.verdict == "fail"
    assert len(rows) == 5


def test_summary_json_and_load_run(tmp_path: Path) -> None:
    rows = read_results(DATA / "agentv_base.jsonl")
    summary = summary_from_results(
        rows, started_at="2026-03-01T10:00:00Z", budget_exhausted=True, selection={"a": "b"}
    )
    (tmp_path / "index.jsonl").write_bytes((DATA / "agentv_base.jsonl").read_bytes())
    write_summary_json(tmp_path / "summary.json", summary)
    document = json.loads((tmp_path / "summary.json").read_text())
    assert "results" not in document
    assert document["totals"]["tests"] == 4 and document["totals"]["errors"] == 1
    assert document["suites"][0]["name"] == "geography"
    loaded = load_run(tmp_path)
    assert loaded.started_at == "2026-03-01T10:00:00Z"
    assert loaded.budget_exhausted is True and loaded.selection == {"a": "b"}
    assert [r.test_id for r in loaded.results] == [r.test_id for r in rows]


def test_summary_from_results_counts_not_run() -> None:
    rows = [TestResult("a", "s", "m", 0, "not_run", verdict="skip"), TestResult("b", "s", "m", 1, "ok")]
    assert summary_from_results(rows).not_run == 1
    assert summary_from_results(rows, not_run=7).not_run == 7


def test_dry_run_rows_mark_the_summary_dry_run_without_summary_json() -> None:
    # `report` on a dry run's index.jsonl alone must still say "dry run", never look like a real run
    rows = [TestResult("a", "s", "m", 1.0, "ok", dry_run=True), TestResult("b", "s", "m", 1.0, "ok")]
    assert summary_from_results(rows).dry_run is True
    assert summary_from_results(rows, dry_run=False).dry_run is True
    assert summary_from_results([TestResult("b", "s", "m", 1.0, "ok")]).dry_run is False


def test_load_run_keeps_the_dry_run_marking_without_summary_json(tmp_path: Path) -> None:
    index = tmp_path / "index.jsonl"
    index.write_text(
        '{"test_id":"a","suite":"s","target":"m","score":1,"execution_status":"ok","dry_run":true}\n'
    )
    assert load_run(tmp_path).dry_run is True
    index.write_text('{"test_id":"a","suite":"s","target":"m","score":1,"execution_status":"ok"}\n')
    assert load_run(tmp_path).dry_run is False


def test_bad_summary_json_is_a_load_error(tmp_path: Path) -> None:
    (tmp_path / "index.jsonl").write_text(textwrap.dedent('{"test_id":"a","suite":"s","score":1}\n'))
    (tmp_path / "summary.json").write_text("{not json")
    with pytest.raises(LoadError, match="not valid JSON"):
        load_run(tmp_path)


def test_lone_surrogate_in_model_text_does_not_lose_the_row(tmp_path: Path) -> None:
    path = tmp_path / "index.jsonl"
    with ResultsWriter(path) as writer:
        writer.append(TestResult("a", "s", "m", 1.0, "ok", verdict="pass", output="half an emoji \ud83d!"))
        writer.append(TestResult("b", "s", "m", 1.0, "ok", verdict="pass"))
    rows = read_results(path)
    assert [r.test_id for r in rows] == ["a", "b"]
    assert rows[0].output == "half an emoji ?!"


def test_agentv_summary_json_with_other_shapes_is_tolerated(tmp_path: Path) -> None:
    (tmp_path / "index.jsonl").write_bytes((DATA / "agentv_base.jsonl").read_bytes())
    agentv_summary = {
        "started_at": "2026-03-01T10:00:00Z",
        "selection": ["not", "a", "map"],
        "tool": {"name": "agentv"},
    }
    (tmp_path / "summary.json").write_text(json.dumps(agentv_summary))
    loaded = load_run(tmp_path)
    assert loaded.started_at == "2026-03-01T10:00:00Z"
    assert loaded.selection == {} and loaded.tool == "agentv-ci"
    assert len(loaded.results) == 4


def test_fingerprint_is_read_when_present_and_optional_otherwise(tmp_path: Path) -> None:
    path = tmp_path / "index.jsonl"
    rows = [
        {"test_id": "ours", "suite": "s", "target": "m", "score": 1.0, "execution_status": "ok",
         "fingerprint": "0123456789abcdef"},
        {"test_id": "agentv", "suite": "s", "target": "m", "score": 1.0, "execution_status": "ok"},
        {"testId": "camel", "score": 0.5, "fingerprint": "fedcba9876543210"},
        # another tool's field of the same name: dropped, the row still reads
        {"test_id": "foreign", "suite": "s", "target": "m", "score": 1.0, "fingerprint": {"sha": "x"}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert [(r.test_id, r.fingerprint) for r in read_results(path)] == [
        ("ours", "0123456789abcdef"),
        ("agentv", None),
        ("camel", "fedcba9876543210"),
        ("foreign", None),
    ]
