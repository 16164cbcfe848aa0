"""JSON nested 100k deep in the files a run reads besides eval files and results: a replay fixture
and a response-cache entry. Through the real CLI, neither ends in exit 4 (both crashed with
RecursionError): the fixture is a located error of the test, the cache entry a miss that re-asks."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_helpers import run_cli

DEEP = "[" * 100_000 + "]" * 100_000
EVAL = "tests:\n  - id: t1\n    input: hi\n    assertions: [{type: contains, value: ok}]\n"


def _project(root: Path, target: dict[str, object]) -> Path:
    evals = root / "evals"
    (evals / ".agentv").mkdir(parents=True)
    (evals / ".agentv" / "targets.yaml").write_text(json.dumps({"targets": [{"name": "default", **target}]}))
    (evals / "a.eval.yaml").write_text(EVAL)
    return evals


def test_a_deep_replay_fixture_row_is_a_located_error_not_a_crash(tmp_path: Path) -> None:
    evals = _project(tmp_path, {"provider": "replay", "fixtures": "fix.jsonl"})
    row = '{"test_id": "t1", "output": [{"role": "assistant", "content": ' + DEEP + "}]}\n"
    (evals / "fix.jsonl").write_text('{"test_id": "t0", "text": "ok"}\n' + row)
    result = run_cli("run", str(evals), "-o", str(tmp_path / "out"), cwd=tmp_path, timeout=120)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "internal error" not in result.stdout + result.stderr
    assert f"{evals / 'fix.jsonl'}:2:" in result.stdout
    assert "nested more than 200 levels deep" in result.stdout


def test_a_deep_cache_entry_is_a_miss_and_the_target_answers_again(tmp_path: Path) -> None:
    evals = _project(tmp_path, {"provider": "cli", "command": "echo ok > {OUTPUT_FILE}"})
    cache = tmp_path / "cache"
    flags = ["--cache", "--cache-dir", str(cache)]
    first = run_cli("run", str(evals), "-o", str(tmp_path / "out1"), *flags, cwd=tmp_path, timeout=120)
    assert first.returncode == 0, first.stdout + first.stderr
    [entry] = cache.rglob("*.json")
    entry.write_text('{"text": "ok", "messages": [{"role": "assistant", "content": ' + DEEP + "}]}")
    second = run_cli("run", str(evals), "-o", str(tmp_path / "out2"), *flags, cwd=tmp_path, timeout=120)
    assert second.returncode == 0, second.stdout + second.stderr
    summary = json.loads((tmp_path / "out2" / "summary.json").read_text())
    assert summary["cache"]["hits"] == 0 and summary["cache"]["misses"] == 1
    assert len(entry.read_bytes()) < 10_000  # written again from the real answer
