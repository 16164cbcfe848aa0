"""Run the AgentV v4.42.4 conformance corpus through `agentv-ci run` and compare scores.

The expected rows were produced by the reference CLI (see agentv_4_42_4/README.md); any divergence
from them must be listed in DIVERGENCES with its reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conformance.compare import Key, compare_row, load_expected, run_corpus

CORPUS = Path(__file__).parent / "agentv_4_42_4"

# (suite, test_id) -> overrides of the expected row, each with the reason.
DIVERGENCES: dict[Key, dict[str, Any]] = {
    # AgentV parses "05/03/2024" as 3 May even with `formats: [DD/MM/YYYY]`; the declared format wins
    # here (issue 3: "05/03/2024 with DD/MM/YYYY is 5 March"), so the date field matches: 5/6 weight.
    ("graders-matrix", "fa"): {"score": 5 / 6, "execution_status": "ok", "grader_scores": [5 / 6]},
}


@pytest.fixture(scope="module")
def our_rows(tmp_path_factory: pytest.TempPathFactory) -> dict[Key, dict[str, Any]]:
    rows, _ = run_corpus(
        CORPUS,
        tmp_path_factory.mktemp("conformance"),
        ["graders-matrix.eval.yaml", "text-assertions.eval.yaml"],
    )
    return rows


@pytest.mark.parametrize("expected", load_expected(CORPUS), ids=lambda r: f"{r['suite']}/{r['test_id']}")
def test_scores_match_reference(expected: dict[str, Any], our_rows: dict[Key, dict[str, Any]]) -> None:
    key = (expected["suite"], expected["test_id"])
    compare_row(expected, our_rows[key], DIVERGENCES.get(key, {}))
