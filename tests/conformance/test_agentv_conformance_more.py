"""The second AgentV v4.42.4 corpus (agentv_4_42_4_more/): edge cases of every deterministic grader,
the scoring contract, code-grader outputs and repeats. Scores, statuses, grader names/weights/verdicts
and assertion texts must equal the reference's rows, except the DIVERGENCES listed with their reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conformance.compare import Key, compare_row, load_expected, run_corpus

CORPUS = Path(__file__).parent / "agentv_4_42_4_more"
EVAL_FILES = sorted(p.name for p in CORPUS.glob("*.eval.yaml"))

_ERROR_NOT_SCORE = (
    "issue 3: a grader that crashes is a grader error, never a silent score: the test is an "
    "execution_error with score 0 (AgentV counts the failed grader as 0 and calls it a quality failure)"
)
_STATUS_FOLLOWS_VERDICT = (
    "AgentV marks a repeated test `ok` when any attempt was ok even if the aggregated mean / CI score "
    "is below the threshold; here the status follows the aggregated verdict the CI gate uses"
)

# (suite, test_id) -> overrides of the expected row: {"reason": ..., and the fields that differ}.
DIVERGENCES: dict[Key, dict[str, Any]] = {
    ("agentic", "traj__metrics_seed_limits"): {
        "reason": "max_input_tokens / max_output_tokens come from the AgentEvals seeds (issue 3 names them); "
        "AgentV 4.42.4 ignores them. Output tokens 50 > 40 fails here.",
        "score": 2 / 3,
        "execution_status": "quality_failure",
        "grader_scores": [2 / 3],
        "free_text": ["execution-metrics"],
    },
    ("agentic", "trajnone__metrics_seed_limits"): {
        "reason": "as above: with no token data each of the three token limits fails on its own",
        "free_text": ["execution-metrics"],
    },
    ("code-grader", "code__checks"): {
        "reason": "`pass`/`checks` is the v5 code-grader output the issue asks for; AgentV 4.42.4 ignores "
        "it and scores 0. Here the checks score 1/2.",
        "score": 0.75,
        "grader_scores": [0.5, 1.0],
        "free_text": ["passchecks"],
    },
    ("code-grader", "code__errors"): {
        "reason": _ERROR_NOT_SCORE,
        "score": 0.0,
        "execution_status": "execution_error",
    },
    ("suite-threshold", "code__suite_bar"): {
        "reason": "AgentV 4.42.4 ignores a suite-level `execution.threshold`; issue 3: CLI > test > suite "
        "> 0.8, so 0.5 meets the suite's 0.5 bar here",
        "execution_status": "ok",
    },
    ("trials-mean", "flaky__mean"): {
        "reason": _STATUS_FOLLOWS_VERDICT,
        "execution_status": "quality_failure",
    },
    ("trials-confidence-interval", "flaky__confidence_interval"): {
        "reason": _STATUS_FOLLOWS_VERDICT,
        "execution_status": "quality_failure",
    },
}


@pytest.fixture(scope="module")
def our_rows(tmp_path_factory: pytest.TempPathFactory) -> dict[Key, dict[str, Any]]:
    rows, _ = run_corpus(CORPUS, tmp_path_factory.mktemp("conformance-more"), EVAL_FILES)
    return rows


def test_every_reference_row_is_compared(our_rows: dict[Key, dict[str, Any]]) -> None:
    expected = {(r["suite"], r["test_id"]) for r in load_expected(CORPUS)}
    assert expected == set(our_rows)
    assert set(DIVERGENCES) <= expected


@pytest.mark.parametrize("expected", load_expected(CORPUS), ids=lambda r: f"{r['suite']}/{r['test_id']}")
def test_scores_and_texts_match_reference(
    expected: dict[str, Any], our_rows: dict[Key, dict[str, Any]]
) -> None:
    key = (expected["suite"], expected["test_id"])
    compare_row(expected, our_rows[key], DIVERGENCES.get(key, {}), check_texts=True)


def test_repeats_keep_every_attempt(our_rows: dict[Key, dict[str, Any]]) -> None:
    # AgentV keeps attempts in memory only; we write them: 3 for mean / CI, pass_at_k stops at a pass.
    attempts = {
        k[1]: [t["score"] for t in row.get("trials", [])] for k, row in our_rows.items() if "flaky" in k[1]
    }
    assert attempts == {
        "flaky__mean": [0.0, 1.0, 0.5],
        "flaky__confidence_interval": [0.0, 1.0, 0.5],
        "flaky__pass_at_k": [0.0, 1.0],
    }
