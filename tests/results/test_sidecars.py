"""Sidecar baselines: naming, reading (ours and AgentV's, including AgentV v4.42.4's own 38 sidecars),
trimming for git, and when `--update-baseline` refuses to write."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import msgspec
import pytest

from agentv_ci.errors import LoadError
from agentv_ci.model.baseline import BaselineSource
from agentv_ci.model.result import AttemptSummary, GraderResult, RunSummary, TestResult
from agentv_ci.reporting.baseline_report import baseline_log_line, baseline_markdown_line
from agentv_ci.results.results_file import read_results
from agentv_ci.results.sidecar_writer import encode_sidecar_row, update_refusal, write_sidecars
from agentv_ci.results.sidecars import load_sidecar_baseline, sidecar_path

MIRROR = Path("/work/.mirror/EntityProcess+agentv/repo")
TAG = "v4.42.4"


@pytest.mark.parametrize(
    ("eval_file", "sidecar"),
    [
        ("evals/dataset.eval.yaml", "evals/dataset.eval.baseline.jsonl"),
        ("evals/dataset.eval.yml", "evals/dataset.eval.baseline.jsonl"),
        ("suite/EVAL.yaml", "suite/EVAL.baseline.jsonl"),
        ("suite/eval.yml", "suite/eval.baseline.jsonl"),
        ("data/cases.jsonl", "data/cases.baseline.jsonl"),
    ],
)
def test_sidecar_names_follow_agentv(eval_file: str, sidecar: str) -> None:
    assert sidecar_path(Path(eval_file)) == Path(sidecar)


def _result(test_id: str, eval_path: str, **fields: object) -> TestResult:
    return msgspec.convert(
        {
            "test_id": test_id,
            "suite": "dataset",
            "target": "default",
            "score": 1.0,
            "execution_status": "ok",
            "verdict": "pass",
            "eval_path": eval_path,
            **fields,
        },
        TestResult,
    )


# Rows in the shapes AgentV 4.42.4 writes to its sidecars (written for this test, not copied): a
# timestamp, flat `assertions`, `trials` of bare attempts with `aggregation`, an errored row, debug
# fields its trimming keeps in older files (`requests`, `trace`, `answer`), and camelCase keys.
AGENTV_SHAPED = [
    {
        "timestamp": "2026-02-20T21:38:05.833Z",
        "test_id": "flat",
        "suite": "dataset.eval",
        "score": 1,
        "target": "default",
        "assertions": [{"text": "Mentions Paris", "passed": True, "evidence": "it does"}],
    },
    {
        "timestamp": "2026-02-20T21:38:06.000Z",
        "test_id": "graded",
        "suite": "dataset.eval",
        "score": 0.75,
        "target": "default",
        "scores": [
            {
                "name": "judge",
                "type": "llm-grader",
                "score": 0.75,
                "weight": 1,
                "verdict": "fail",
                "assertions": [{"text": "Complete", "passed": False}],
            }
        ],
        "assertions": [{"text": "Complete", "passed": False}],
    },
    {
        "timestamp": "2026-02-20T21:40:25.928Z",
        "test_id": "trials",
        "suite": "dataset.eval",
        "score": 1,
        "target": "default",
        "trials": [{"attempt": 0, "score": 1, "verdict": "pass"}],
        "aggregation": {"strategy": "pass_at_k", "passed_attempts": 1, "total_attempts": 1},
        "assertions": [],
    },
    {
        "timestamp": "2026-02-20T21:41:00.000Z",
        "test_id": "broken",
        "suite": "dataset.eval",
        "score": 0,
        "target": "default",
        "error": "provider failed",
        "assertions": [],
    },
    {
        "timestamp": "2026-02-20T21:42:00.000Z",
        "testId": "camel",
        "suite": "dataset.eval",
        "score": 0.5,
        "target": "default",
        "answer": "x",
        "requests": {"agent": {}},
        "trace": {"eventCount": 1},
        "input": [{"role": "user", "content": "q"}],
    },
]


def test_an_agentv_shaped_sidecar_becomes_the_baseline_of_its_eval_file(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "dataset.eval.baseline.jsonl").write_text(
        "".join(json.dumps(row, separators=(",", ":")) + "\n" for row in AGENTV_SHAPED), encoding="utf-8"
    )
    run = [_result("flat", "evals/dataset.eval.yaml"), _result("other", "evals/other.eval.yaml")]

    found = load_sidecar_baseline(run, tmp_path)

    assert found is not None
    assert found.source == BaselineSource("sidecar", files=("evals/dataset.eval.baseline.jsonl",))
    by_id = {r.test_id: r for r in found.summary.results}
    assert set(by_id) == {"flat", "graded", "trials", "broken", "camel"}
    # AgentV called the suite `dataset.eval`; the run calls it `dataset`: one suite each side, so
    # the sidecar's rows are matched to the run's.
    assert {r.suite for r in by_id.values()} == {"dataset"}
    assert by_id["flat"].verdict == "pass" and by_id["graded"].score == 0.75
    assert by_id["broken"].execution_status == "execution_error"
    assert by_id["trials"].aggregation is not None


def test_no_sidecar_means_no_baseline(tmp_path: Path) -> None:
    assert load_sidecar_baseline([_result("a", "evals/x.eval.yaml")], tmp_path) is None
    assert load_sidecar_baseline([], tmp_path) is None


def test_a_broken_sidecar_row_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "x.eval.baseline.jsonl").write_text('{"test_id":"a","score":1}\n{"test_id":"b"}\n')
    with pytest.raises(LoadError) as raised:
        load_sidecar_baseline([_result("a", "x.eval.yaml")], tmp_path)
    assert raised.value.location is not None and raised.value.location.line == 2
    assert raised.value.message.startswith("baseline sidecar: ")
    assert "--update-baseline" in (raised.value.hint or "")


@pytest.fixture(scope="module")
def agentv_sidecars(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """AgentV v4.42.4's committed sidecars and their eval files, from the AgentV mirror (fetched from
    github.com/EntityProcess/agentv, tag v4.42.4 = commit 719513785ed4bcd8bcd6bee66b988cb68cb24e91)."""
    if not (MIRROR / "HEAD").exists():
        pytest.skip(f"the AgentV mirror is not on this machine ({MIRROR})")
    names = subprocess.run(
        ["git", "--git-dir", str(MIRROR), "ls-tree", "-r", "--name-only", TAG],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    wanted = [n for n in names if n.endswith(".baseline.jsonl") or n.endswith((".eval.yaml", ".yaml"))]
    tree = tmp_path_factory.mktemp("agentv-sidecars")
    archive = subprocess.run(
        ["git", "--git-dir", str(MIRROR), "archive", TAG, *wanted], check=True, capture_output=True
    )
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def test_agentv_4_42_4_own_38_sidecars_are_read(agentv_sidecars: Path) -> None:
    sidecars = sorted(agentv_sidecars.rglob("*.baseline.jsonl"))
    assert len(sidecars) == 38
    lines = 0
    for path in sidecars:
        rows = read_results(path)
        text = path.read_text(encoding="utf-8")
        assert len(rows) == len([line for line in text.splitlines() if line.strip()]), path
        lines += len(rows)
        assert all(r.test_id != "unknown" for r in rows), path
    assert lines == 181  # the v4.42.4 rows (some files end without a newline)
    # Found through their eval files by AgentV's naming: all but one, whose name
    # (`tool-eval-demo.baseline.jsonl` beside `tool-eval-demo.eval.yaml`) AgentV's own
    # check-eval-baselines.ts does not pair with it either.
    run = [
        _result("x", str(path.with_name(path.name.replace(".baseline.jsonl", ".yaml"))))
        for path in sidecars
        if path.with_name(path.name.replace(".baseline.jsonl", ".yaml")).is_file()
    ]
    found = load_sidecar_baseline(run, agentv_sidecars)
    assert found is not None
    assert len(found.source.files) == 37
    assert "examples/showcase/tool-evaluation-plugins/tool-eval-demo.baseline.jsonl" not in found.source.files
    assert "examples/features/basic/evals/dataset.eval.baseline.jsonl" in found.source.files


def test_sidecar_rows_are_trimmed_sorted_and_stable(tmp_path: Path) -> None:
    judge = GraderResult(
        name="judge",
        type="llm-grader",
        score=0.1 + 0.2,  # 0.30000000000000004: summation noise must not churn the file
        verdict="fail",
        duration_ms=12.5,
        details={"raw_request": {"prompt": "..."}, "input": "q", "reasoning": "short", "z": 1, "a": 2},
    )

    def attempt(number: int) -> TestResult:
        return _result(
            "t", "e.eval.yaml", attempt=number, timestamp=f"2026-01-0{number + 1}", duration_ms=5.0
        )

    row = _result(
        "t",
        "e.eval.yaml",
        score=0.1 + 0.2,
        verdict="fail",
        execution_status="quality_failure",
        scores=[msgspec.to_builtins(judge)],
        timestamp="2026-01-01T00:00:00Z",
        start_time="2026-01-01T00:00:00Z",
        duration_ms=10.0,
        cost_usd=0.01,
        token_usage={"input": 3, "output": 4},
        output="the answer",
        input="the question",
        line=12,
        metadata={"ratio": 0.1 + 0.2},
        fingerprint="abc",
    )
    row = msgspec.structs.replace(
        row,
        trials=[attempt(1), attempt(0)],
        aggregation=AttemptSummary(strategy="mean", passed_attempts=0, total_attempts=2, mean=-0.0),
    )

    line = encode_sidecar_row(row)

    assert line.endswith(b"\n") and line.count(b"\n") == 1
    data = json.loads(line)
    assert data["score"] == 0.3 and data["scores"][0]["score"] == 0.3
    assert data["metadata"] == {"ratio": 0.1 + 0.2}  # user data kept exactly
    assert data["fingerprint"] == "abc"
    gone = {"timestamp", "start_time", "duration_ms", "cost_usd", "token_usage", "output", "input", "line"}
    assert not gone & set(data) and "eval_path" not in data
    assert "duration_ms" not in data["scores"][0]
    assert list(data["scores"][0]["details"]) == ["a", "reasoning", "z"]  # sorted; AgentV's debug fields gone
    assert [t.get("timestamp") for t in data["trials"]] == [None, None]
    assert b'"attempt"' not in line
    assert data["aggregation"]["mean"] == 0.0 and b"-0.0" not in line
    assert encode_sidecar_row(row) == line

    # write_sidecars: one file per eval file, rows sorted by suite, test id and target
    results = [
        _result("b", "e.eval.yaml"),
        _result("a", "e.eval.yaml", target="z"),
        _result("a", "e.eval.yaml"),
    ]
    [written] = write_sidecars(results, tmp_path)
    assert written == tmp_path / "e.eval.baseline.jsonl"
    ids = [(json.loads(x)["test_id"], json.loads(x)["target"]) for x in written.read_text().splitlines()]
    assert ids == [("a", "default"), ("a", "z"), ("b", "default")]
    assert not list(tmp_path.glob(".*.tmp"))


def test_update_refusals() -> None:
    ok = _result("a", "e.eval.yaml")
    failing = _result("b", "e.eval.yaml", score=0.2, verdict="fail", execution_status="quality_failure")
    errored = _result(
        "c", "e.eval.yaml", score=0.0, verdict="fail", execution_status="execution_error", error="x"
    )
    not_run = _result("d", "e.eval.yaml", score=0.0, verdict="skip", execution_status="not_run")
    assert update_refusal(RunSummary(results=[ok, failing]), regressed=False) is None  # red tests are kept
    assert "1 test(s) errored" in (update_refusal(RunSummary(results=[ok, errored]), regressed=False) or "")
    assert "1 test(s) did not run" in (
        update_refusal(RunSummary(results=[ok, not_run]), regressed=False) or ""
    )
    assert "did not run" in (update_refusal(RunSummary(results=[ok], not_run=2), regressed=False) or "")
    assert "budget" in (
        update_refusal(RunSummary(results=[ok], budget_exhausted=True), regressed=False) or ""
    )
    assert "dry run" in (update_refusal(RunSummary(results=[ok], dry_run=True), regressed=False) or "")
    assert "interrupted" in (
        update_refusal(RunSummary(results=[ok], interrupted=True), regressed=False) or ""
    )
    assert "regressed" in (update_refusal(RunSummary(results=[ok]), regressed=True) or "")
    assert update_refusal(RunSummary(results=[]), regressed=False) == "no test ran"


def test_the_reports_name_the_sidecars() -> None:
    source = BaselineSource("sidecar", files=("evals/a.eval.baseline.jsonl", "evals/EVAL.baseline.jsonl"))
    assert baseline_log_line(source) == (
        "baseline: committed sidecar evals/a.eval.baseline.jsonl, evals/EVAL.baseline.jsonl"
    )
    assert baseline_markdown_line(source, compared=True) == (
        "**Baseline:** committed sidecar `evals/a.eval.baseline.jsonl`, `evals/EVAL.baseline.jsonl`."
    )
    many = BaselineSource("sidecar", files=tuple(f"e/{n}.eval.baseline.jsonl" for n in range(13)))
    assert baseline_markdown_line(many, compared=True).endswith("`e/9.eval.baseline.jsonl` and 3 more.")
    odd = BaselineSource("sidecar", files=("evals/a b [x](y).eval.baseline.jsonl",))
    assert "[x](y)" not in baseline_markdown_line(odd, compared=True)  # escaped, never a link
    recorded = msgspec.json.decode(msgspec.json.encode(source), type=BaselineSource)
    assert recorded == source
