"""bench/noise.py simulates the product's regression gate with its own fast code: check that it
blocks exactly when compare_runs + regression_reasons do, on random suites."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

from agentv_ci.compare import compare_runs
from agentv_ci.gating import regression_reasons
from agentv_ci.model.result import AttemptSummary, TestResult
from agentv_ci.statistics.regressions import PassCounts

BENCH = Path(__file__).resolve().parents[1] / "bench" / "noise.py"


def _bench() -> object:
    spec = importlib.util.spec_from_file_location("noise_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["noise_bench"] = module
    spec.loader.exec_module(module)
    return module


def _result(test_id: str, passes: int, attempts: int) -> TestResult:
    scores = [1.0] * passes + [0.0] * (attempts - passes)
    mean = passes / attempts
    verdict = "pass" if mean >= 0.8 else "fail"
    aggregation = AttemptSummary("mean", passes, attempts, scores=scores, mean=mean) if attempts > 1 else None
    return TestResult(
        test_id, "s", "m", mean, "ok" if verdict == "pass" else "quality_failure",
        verdict=verdict, threshold=0.8, aggregation=aggregation,
    )  # fmt: skip


@pytest.mark.parametrize("repeats", [1, 3, 5])
def test_the_bench_blocks_exactly_when_the_product_does(repeats: int) -> None:
    bench = _bench()
    rng = random.Random(repeats)
    seen = set()
    for _ in range(120):
        size = rng.randint(2, 30)
        probabilities = [rng.choice([1.0, 0.0, rng.uniform(0.3, 1.0)]) for _ in range(size)]
        drop = rng.choice([0.0, 0.5, 1.0])
        counts = []
        for p in probabilities:
            head_p = max(0.0, p - drop) if rng.random() < 0.2 else p
            counts.append(
                PassCounts(
                    sum(rng.random() < p for _ in range(repeats)), repeats,
                    sum(rng.random() < head_p for _ in range(repeats)), repeats,
                )
            )  # fmt: skip
        base = [_result(f"t{i}", c.base_pass, c.base_n) for i, c in enumerate(counts)]
        head = [_result(f"t{i}", c.head_pass, c.head_n) for i, c in enumerate(counts)]
        reasons, _ = regression_reasons(compare_runs(base, head), 0.0)
        product = bool(reasons)
        assert bench.blocked(counts, 0.0) == product, (counts, reasons)  # type: ignore[attr-defined]
        seen.add(product)
    assert seen == {True, False}  # both outcomes were exercised
