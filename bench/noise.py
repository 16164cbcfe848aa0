"""A gate that knows noise (issue 27): the false-block rate and the power of the regression gate,
by simulation.

Each simulated run draws a suite of N tests, each with a true pass probability p, runs the baseline
and the head R times per test (attempts are independent Bernoulli(p) draws: score 1 on a pass, 0 on
a fail) and applies the product's regression gate to the two runs: one family of one-sided tests
(Fisher exact per test on its pass counts, the paired sign-flip test of the suite's mean delta),
corrected together by `agentv_ci.statistics.regressions.regression_family` (Tarone's trimmed
family, Holm's step-down), blocked when a corrected p-value is below 5% and the drop exceeds
`--max-regression` (0 by default: any significant drop blocks, the strictest gate). With one attempt
a side (`--repeats 1`) a test has no noise estimate and is judged by its verdicts' word, as the
product does: a pass -> fail flip blocks. Thresholds are off
(`--min-pass-rate 0`), as in the issue's trial: only the regression gate is measured.

Populations of p (`--population`):
- `stochastic`: every test p ~ U(0.5, 1.0) (the issue's stochastic cli agent);
- `mixed`: 70% of tests always pass (p = 1), 10% never (p = 0), 20% p ~ U(0.5, 0.99).

Rows:
- `A/A`: an unchanged agent; the share of runs blocked is the false-block rate (goal <= 5%).
- `drop D in F`: the head's p falls by D (floored at 0) in a share F of the tests (at least one);
  the share of runs blocked is the power.
- `broken`: one test that always passed (p = 1) now never does (p = 0).

Every cell prints its rate with a Wilson 95% interval over the simulated runs.

Usage: python bench/noise.py [--sims 1000] [--sizes 10,100,1000] [--repeats 1,5,20]
       [--population stochastic|mixed] [--max-regression 0] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from agentv_ci.statistics.family import ALPHA
from agentv_ci.statistics.paired import paired_delta
from agentv_ci.statistics.proportions import wilson_interval
from agentv_ci.statistics.regressions import PassCounts, regression_family
from agentv_ci.statistics.sequential import AdaptiveRule, looks


@dataclass(frozen=True)
class Scenario:
    name: str
    drop: float = 0.0  # how far the chosen tests' p falls
    share: float = 0.0  # the share of tests it falls in (at least one test when > 0)
    broken: bool = False  # one always-passing test now always fails


SCENARIOS = (
    Scenario("A/A"),
    Scenario("drop 0.1 in 1%", 0.1, 0.01),
    Scenario("drop 0.1 in 5%", 0.1, 0.05),
    Scenario("drop 0.3 in 1%", 0.3, 0.01),
    Scenario("drop 0.3 in 5%", 0.3, 0.05),
    Scenario("drop 0.5 in 1%", 0.5, 0.01),
    Scenario("drop 0.5 in 5%", 0.5, 0.05),
    Scenario("broken", broken=True),
)


def draw_suite(rng: random.Random, size: int, population: str) -> list[float]:
    if population == "stochastic":
        return [rng.uniform(0.5, 1.0) for _ in range(size)]
    suite = []
    for _ in range(size):
        kind = rng.random()
        suite.append(1.0 if kind < 0.7 else 0.0 if kind < 0.8 else rng.uniform(0.5, 0.99))
    return suite


def passes(rng: random.Random, p: float, repeats: int) -> int:
    if p >= 1.0:
        return repeats
    if p <= 0.0:
        return 0
    return sum(1 for _ in range(repeats) if rng.random() < p)


def head_probabilities(rng: random.Random, base: list[float], scenario: Scenario) -> list[float]:
    head = list(base)
    if scenario.broken:
        index = rng.randrange(len(head))
        base[index], head[index] = 1.0, 0.0
    elif scenario.share > 0:
        chosen = rng.sample(range(len(head)), max(1, round(scenario.share * len(head))))
        for index in chosen:
            head[index] = max(0.0, head[index] - scenario.drop)
    return head


def blocked(counts: Sequence[PassCounts], max_regression: float) -> bool:
    """The product's regression gate on one simulated run (one suite; tests/test_noise_bench.py
    checks it against compare_runs + regression_reasons on random suites)."""
    deltas = [c.head_pass / c.head_n - c.base_pass / c.base_n for c in counts]
    suite = paired_delta(deltas)
    # one attempt a side: outside the family, judged by the verdicts' word (compare._single_sample)
    for c, delta in zip(counts, deltas, strict=True):
        if c.base_n == 1 and c.head_n == 1 and c.base_pass and not c.head_pass and -delta > max_regression:
            return True
    repeated = [i for i, c in enumerate(counts) if c.base_n > 1 or c.head_n > 1]
    family = regression_family([counts[i] for i in repeated], [suite] if suite is not None else [])
    for position, index in enumerate(repeated):
        if family.adjusted[position] < ALPHA and -deltas[index] > max_regression:
            return True
    if suite is not None:
        return family.adjusted[-1] < ALPHA and -suite.mean > max(max_regression, 0.01)
    return False


def adaptive_head(rng: random.Random, p: float, base: tuple[int, int], rule: AdaptiveRule) -> tuple[int, int]:
    """The head's (passes, attempts) under adaptive repeats: the product's rule, thresholds off."""
    done = won = 0
    while True:
        wanted = rule.next_look(done) if done else rule.looks[0]
        won += passes(rng, p, wanted - done)
        done = wanted
        if rule.decide(won, done, None, base) is not None:
            return won, done


def simulate(
    size: int, repeats: int, scenario: Scenario, args: argparse.Namespace, rng: random.Random, start: int = 0
) -> tuple[int, int, int]:
    """(runs blocked, runs, head attempts) over `args.sims` runs; `start` > 0: the head's repeats are
    adaptive from `start` to `repeats` (the baseline has `repeats`)."""
    hits = attempts = 0
    rule = AdaptiveRule(looks(start, repeats), tests=size) if start else None
    for _ in range(args.sims):
        base_p = draw_suite(rng, size, args.population)
        head_p = head_probabilities(rng, base_p, scenario)
        counts = []
        for b, h in zip(base_p, head_p, strict=True):
            base = (passes(rng, b, repeats), repeats)
            head = (
                adaptive_head(rng, h, base, rule) if rule is not None else (passes(rng, h, repeats), repeats)
            )
            counts.append(PassCounts(*base, *head))
            attempts += head[1]
        hits += blocked(counts, args.max_regression)
    return hits, args.sims, attempts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sims", type=int, default=1000)
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--repeats", default="1,5,20")
    parser.add_argument("--population", choices=("stochastic", "mixed"), default="stochastic")
    parser.add_argument("--max-regression", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--adaptive", default="1,5", help="adaptive starts, up to the largest --repeats (empty: none)"
    )
    parser.add_argument("--scenarios", default="", help="comma-separated scenario names (default: all)")
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    repeat_counts = [int(x) for x in args.repeats.split(",")]
    wanted = {s.strip() for s in args.scenarios.split(",") if s.strip()}
    scenarios = [s for s in SCENARIOS if not wanted or s.name in wanted]
    print(
        f"# regression gate, {args.sims} simulated runs a cell, population {args.population}, "
        f"max regression {args.max_regression}, alpha {ALPHA} (seed {args.seed})"
    )
    starts = [int(x) for x in args.adaptive.split(",") if x.strip()]
    top = max(repeat_counts)
    print("| scenario | tests | repeats | blocked | 95% interval | attempts per test |")
    print("|---|---:|---|---:|---|---:|")
    started = time.perf_counter()
    for scenario in scenarios:
        for size in sizes:
            cells = [(r, 0, str(r)) for r in repeat_counts] + [
                (top, s, f"adaptive {s}..{top}") for s in starts
            ]
            for repeats, start, label in cells:
                rng = random.Random(f"{args.seed}/{scenario.name}/{size}/{repeats}/{start}")
                hits, runs, attempts = simulate(size, repeats, scenario, args, rng, start)
                low, high = wilson_interval(hits, runs)
                print(
                    f"| {scenario.name} | {size} | {label} | {hits / runs:.1%} | [{low:.1%}, {high:.1%}] "
                    f"| {attempts / (runs * size):.1f} |"
                )
                sys.stdout.flush()
    print(f"# {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
