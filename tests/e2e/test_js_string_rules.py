"""The five string-semantics misses of issue 26 (item 10), through the real CLI on recorded answers:
each test's verdict is the one AgentV's JavaScript graders give (checked against node in
tests/graders/test_js_strings.py). Before: `.` took a whole emoji, the `i` flag folded the Kelvin
sign, `\\s` missed U+FEFF and took U+0085, trimming kept U+FEFF and dropped U+001F, and a valid
document 5,000 deep was an execution error (exit 3)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_helpers import run_cli

DEEP = "[" * 5000 + "]" * 5000

# id -> (recorded answer, assertion, the verdict of AgentV 4.42.4 / node)
CASES: dict[str, tuple[str, dict[str, str], str]] = {
    "dot-is-a-code-unit": ("😀", {"type": "regex", "value": "^..$"}, "pass"),
    "dot-with-u-is-a-code-point": ("😀", {"type": "regex", "value": "^.$", "flags": "u"}, "pass"),
    "kelvin-is-not-k": ("\u212a", {"type": "regex", "value": "k", "flags": "i"}, "fail"),
    "kelvin-is-k-with-u": ("\u212a", {"type": "regex", "value": "k", "flags": "ui"}, "pass"),
    "feff-is-space": ("a\ufeffb", {"type": "regex", "value": "a\\sb"}, "pass"),
    "nel-is-not-space": ("a\u0085b", {"type": "regex", "value": "a\\sb"}, "fail"),
    "trim-removes-feff": ("\ufeffdone", {"type": "equals", "value": "done"}, "pass"),
    "trim-keeps-unit-separator": ("done\u001f", {"type": "equals", "value": "done"}, "fail"),
    "trim-keeps-nel": ("\u0085done", {"type": "starts-with", "value": "done"}, "fail"),
    "json-5000-deep": (DEEP, {"type": "is-json"}, "pass"),
    "json-5000-deep-unclosed": (DEEP[:-1], {"type": "is-json"}, "fail"),
}


def _project(root: Path) -> Path:
    evals = root / "evals"
    (evals / ".agentv").mkdir(parents=True)
    target = {"name": "default", "provider": "replay", "fixtures": "answers.jsonl"}
    (evals / ".agentv" / "targets.yaml").write_text(json.dumps({"targets": [target]}))
    rows = [json.dumps({"test_id": test_id, "text": answer}) for test_id, (answer, _, _) in CASES.items()]
    (evals / "answers.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    tests = [{"id": test_id, "input": "hi", "assertions": [a]} for test_id, (_, a, _) in CASES.items()]
    (evals / "strings.eval.yaml").write_text(json.dumps({"tests": tests}), encoding="utf-8")
    return evals


def test_each_string_rule_gives_javascripts_verdict(tmp_path: Path) -> None:
    evals = _project(tmp_path)
    out = tmp_path / "out"
    result = run_cli("run", str(evals), "-o", str(out), cwd=tmp_path, timeout=120)
    # some tests fail as they do under AgentV: a gate failure, never "inconclusive" or a crash
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    text = (out / "index.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.split("\n") if line]  # not splitlines(): U+0085 is in answers
    verdicts = {row["test_id"]: row["verdict"] for row in rows}
    assert verdicts == {test_id: verdict for test_id, (_, _, verdict) in CASES.items()}
    assert all(row.get("error") in (None, "") for row in rows)
    assert "RecursionError" not in result.stdout + result.stderr
