"""How a run used the response cache (`summary.json` `cache`, the console line), for `run` and
`merge`, through the CLI on real files: a subprocess cli agent that records a cost per answer."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentv_ci.cli import app
from agentv_ci.model.cache_use import CacheCounts, CacheUse

AGENT = """
import json, sys
with open("calls.log", "a") as log:
    log.write("call\\n")
json.dump({"text": "yes", "cost_usd": 0.4, "token_usage": {"input": 30, "output": 7}}, open(sys.argv[2], "w"))
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: cli\n"
        f"    command: {sys.executable} agent.py {{PROMPT_FILE}} {{OUTPUT_FILE}}\n"
    )
    graders = "    assertions:\n      - type: contains\n        value: 'yes'\n"
    tests = "".join(f"  - id: t-{i}\n    input: question {i}\n{graders}" for i in range(4))
    (tmp_path / "a.eval.yaml").write_text(f"name: a\ntests:\n{tests}")
    return tmp_path


NO_JUDGE = {
    "hits": 0,
    "misses": 0,
    "saved_input_tokens": 0,
    "saved_output_tokens": 0,
    "saved_usd": 0.0,
    "unpriced": 0,
}


def _run(*args: str) -> str:
    result = CliRunner().invoke(app, ["run", "a.eval.yaml", "--cache", "--cache-dir", "cache", *args])
    assert result.exit_code == 0, result.output
    return result.output


def _cache(directory: Path) -> Any:
    return json.loads((directory / "summary.json").read_text()).get("cache")


def test_the_run_and_the_merge_of_its_shards_count_the_answers_from_the_cache(project: Path) -> None:
    first = _run("-o", "first")
    assert _cache(project / "first") == {
        "hits": 0,
        "misses": 4,
        "saved_input_tokens": 0,
        "saved_output_tokens": 0,
        "saved_usd": 0.0,
        "unpriced": 0,
        "judge": NO_JUDGE,
    }
    assert "Response cache: 0 of 4 answers came from the cache" in first
    for shard in ("1/2", "2/2"):
        output = _run("-o", f"shard-{shard[0]}", "--shard", shard)
        assert "answers came from the cache (no request sent)" in output
    assert (project / "calls.log").read_text().count("call") == 4  # the shards sent nothing

    merged = CliRunner().invoke(app, ["merge", "shard-1", "shard-2", "-o", "merged"])

    assert merged.exit_code == 0, merged.output
    assert _cache(project / "merged") == {
        "hits": 4,
        "misses": 0,
        "unpriced": 0,
        "saved_input_tokens": 120,
        "saved_output_tokens": 28,
        "saved_usd": pytest.approx(1.6),
        "judge": NO_JUDGE,
    }
    report = CliRunner().invoke(app, ["report", "merged", "--markdown", "merged.md"])
    assert report.exit_code == 0, report.output
    line = "Response cache: 4 of 4 answers came from the cache (no request sent); they saved 148 tokens"
    assert line in report.output
    assert line in (project / "merged.md").read_text()


def test_no_cache_no_line(project: Path) -> None:
    result = CliRunner().invoke(app, ["run", "a.eval.yaml", "-o", "out"])
    assert result.exit_code == 0, result.output
    assert _cache(project / "out") is None
    assert "Response cache" not in result.output


def test_the_line_names_answers_without_a_recorded_cost() -> None:
    use = CacheUse(hits=2, misses=1, saved_input_tokens=10, saved_output_tokens=5, saved_usd=0.5, unpriced=1)
    assert use.describe().startswith(
        "Response cache: 2 of 3 answers came from the cache (no request sent); they saved 15 tokens "
        "(10 in, 5 out) and $0.5000 (1 of them recorded no cost)."
    )
    assert CacheUse().describe() == "Response cache: on; no answer could be cached in this run."


def test_the_line_counts_the_judge_replies_and_adds_their_savings() -> None:
    judge = CacheCounts(hits=2, misses=0, saved_input_tokens=600, saved_output_tokens=80, saved_usd=0.06)
    use = CacheUse(hits=1, misses=1, saved_input_tokens=10, saved_output_tokens=5, saved_usd=0.5, judge=judge)
    assert use.describe().startswith(
        "Response cache: 1 of 2 answers and 2 of 2 judge replies came from the cache (no request sent); "
        "they saved 695 tokens (610 in, 85 out) and $0.5600."
    )
    cold = CacheUse(misses=2, judge=CacheCounts(misses=3))
    assert cold.describe() == (
        "Response cache: 0 of 2 answers and 0 of 3 judge replies came from the cache (all were requested)."
    )
    assert CacheUse(judge=CacheCounts(misses=1)).merged(use).judge == CacheCounts(
        hits=2, misses=1, saved_input_tokens=600, saved_output_tokens=80, saved_usd=0.06
    )
