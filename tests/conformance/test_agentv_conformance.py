"""Run the AgentV v4.42.4 conformance corpus through `agentv-ci run` and compare scores.

The expected rows were produced by the reference CLI (see agentv_4_42_4/README.md); any divergence
from them must be listed in DIVERGENCES with its reason.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

CORPUS = Path(__file__).parent / "agentv_4_42_4"

# (suite, test_id) -> overrides of the expected row, each with the reason.
DIVERGENCES: dict[tuple[str, str], dict[str, Any]] = {
    # AgentV parses "05/03/2024" as 3 May even with `formats: [DD/MM/YYYY]`; the declared format wins
    # here (issue 3: "05/03/2024 with DD/MM/YYYY is 5 March"), so the date field matches: 5/6 weight.
    ("graders-matrix", "fa"): {"score": 5 / 6, "execution_status": "ok", "grader_scores": [5 / 6]},
}


def _load_expected() -> list[dict[str, Any]]:
    lines = (CORPUS / "expected-agentv-4.42.4.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def our_rows(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, Any]]:
    work = tmp_path_factory.mktemp("conformance") / "corpus"
    shutil.copytree(CORPUS, work)
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    out = work / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentv_ci",
            "run",
            "graders-matrix.eval.yaml",
            "text-assertions.eval.yaml",
            "-o",
            str(out),
            "--no-fail",
        ],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    rows = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines() if line.strip()]
    return {(r["suite"], r["test_id"]): r for r in rows}


@pytest.mark.parametrize("expected", _load_expected(), ids=lambda r: f"{r['suite']}/{r['test_id']}")
def test_scores_match_reference(
    expected: dict[str, Any], our_rows: dict[tuple[str, str], dict[str, Any]]
) -> None:
    key = (expected["suite"], expected["test_id"])
    override = DIVERGENCES.get(key, {})
    ours = our_rows[key]
    assert ours["score"] == pytest.approx(override.get("score", expected["score"]), abs=1e-9)
    assert ours["execution_status"] == override.get("execution_status", expected["execution_status"])
    want_graders = expected["scores"]
    got_graders = ours.get("scores", [])
    assert [g["type"] for g in got_graders] == [g["type"] for g in want_graders]
    assert [g["name"] for g in got_graders] == [g["name"] for g in want_graders]
    want_scores = override.get("grader_scores", [g["score"] for g in want_graders])
    assert [g["score"] for g in got_graders] == pytest.approx(want_scores, abs=1e-9)
    assert [g.get("weight", 1) for g in got_graders] == [g["weight"] for g in want_graders]
    for got, want in zip(got_graders, want_graders, strict=True):
        if "grader_scores" not in override:
            assert got["verdict"] == want["verdict"], got["name"]
        got_children = [c["score"] for c in got.get("scores", [])]
        assert got_children == pytest.approx([c["score"] for c in want.get("scores", [])], abs=1e-9)
