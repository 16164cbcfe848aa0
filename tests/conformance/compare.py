"""Shared logic of the AgentV v4.42.4 conformance corpora: run `agentv-ci run` on a copy of a corpus
and compare its rows with the reference's compact rows (made by `make_expected.py`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

EXPECTED_NAME = "expected-agentv-4.42.4.jsonl"
Key = tuple[str, str]


def load_expected(corpus: Path) -> list[dict[str, Any]]:
    lines = (corpus / EXPECTED_NAME).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def run_corpus(
    corpus: Path, work_root: Path, eval_files: Sequence[str], env: Mapping[str, str] | None = None
) -> tuple[dict[Key, dict[str, Any]], Path]:
    """Copy `corpus` under `work_root`, run `agentv-ci run` there, return rows by (suite, test_id)."""
    work = work_root / "corpus"
    shutil.copytree(corpus, work)
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    out = work / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "agentv_ci", "run", *eval_files, "-o", str(out), "--no-fail"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    rows = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines() if line.strip()]
    return {(r["suite"], r["test_id"]): r for r in rows}, work


_MEASURED = re.compile(r"Duration [0-9.]+ms")


def _texts(grader: Mapping[str, Any]) -> list[list[Any]]:
    """[text, passed] pairs; measured wall-clock durations are masked (they differ run to run)."""
    pairs = [
        a if isinstance(a, list) else [a.get("text"), a.get("passed")] for a in grader.get("assertions", [])
    ]
    return [[_MEASURED.sub("Duration <ms>", str(t)), p] for t, p in pairs]


def compare_graders(
    got_graders: list[dict[str, Any]],
    want_graders: list[dict[str, Any]],
    override: Mapping[str, Any],
    *,
    check_texts: bool,
) -> None:
    assert [g["type"] for g in got_graders] == [g["type"] for g in want_graders]
    assert [g["name"] for g in got_graders] == [g["name"] for g in want_graders]
    want_scores = override.get("grader_scores", [g["score"] for g in want_graders])
    assert [g["score"] for g in got_graders] == pytest.approx(want_scores, abs=1e-9)
    assert [g.get("weight", 1) for g in got_graders] == [g["weight"] for g in want_graders]
    for got, want in zip(got_graders, want_graders, strict=True):
        if "grader_scores" not in override:
            assert got["verdict"] == want["verdict"], got["name"]
        if check_texts and got["name"] not in override.get("free_text", ()):
            assert _texts(got) == _texts(want), got["name"]
        if override.get("no_children"):
            continue
        got_children = [c["score"] for c in got.get("scores", [])]
        assert got_children == pytest.approx([c["score"] for c in want.get("scores", [])], abs=1e-9)


def compare_row(
    expected: dict[str, Any], ours: dict[str, Any], override: Mapping[str, Any], *, check_texts: bool = False
) -> None:
    """Assert that our row scores like the reference's; `override` holds documented divergences."""
    assert ours["score"] == pytest.approx(override.get("score", expected["score"]), abs=1e-9)
    assert ours["execution_status"] == override.get("execution_status", expected["execution_status"])
    compare_graders(ours.get("scores", []), expected.get("scores", []), override, check_texts=check_texts)
