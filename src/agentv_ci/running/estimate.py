"""The cost estimate of a run, made while its tests are first read (before anything is spent).

For each job (test x target x attempts), per target and per grader target (the judge of the test's
llm-graders): the requests, their input tokens (the rendered prompts, counted by
running/token_count.py) and output tokens, each as low / expected / high; then the cost from the
price table (targets/pricing.py). Nothing is held per test: figures are summed per target as the
tests go by. docs/running.md ("Cost before spending") says how each figure is made and how accurate
it is.

Output tokens per request:
- recorded (the `--baseline` run's usage of the same test and target): low 1/2, expected, high 2x
  the recorded figure (high capped at `max_tokens`);
- else the answer: low 1, expected the reference answer's size (else `DEFAULT_ANSWER_TOKENS`), high
  `max_tokens` (else `DEFAULT_MAX_ANSWER_TOKENS`);
- else a judge reply: low 1, expected `DEFAULT_JUDGE_TOKENS`, high `max_tokens` (else
  `DEFAULT_MAX_JUDGE_TOKENS`).
A judge reads the answer, so its input is the judge prompt (the grader's template rendered for the
test with an empty answer) plus the answer's output tokens (low, expected, high).
Attempts multiply; `pass_at_k` may stop at the first pass, so its low end and its expected value
count one attempt.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentv_ci.errors import AgentvCiError, UsageError
from agentv_ci.model.estimate import CostEstimate, EstimateLine, Span
from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import GraderSpec, Message, RepeatStrategy, Suite, Test
from agentv_ci.plugins import build_grader
from agentv_ci.prompting import reference_answer
from agentv_ci.running.estimate_targets import TargetFacts, TargetFactsReader
from agentv_ci.running.needs import matrix_alias
from agentv_ci.running.recorded_usage import RecordedOutput, RecordedUsage
from agentv_ci.running.token_count import MESSAGE_OVERHEAD, REPLY_PRIMING, TokenCounter, token_counter
from agentv_ci.targets.system_prompt import with_default_system

if TYPE_CHECKING:
    from agentv_ci.running.estimate_cache import CacheProbe

__all__ = ["CostEstimator", "OverBudget", "settle_estimate"]

DEFAULT_ANSWER_TOKENS = 512
DEFAULT_MAX_ANSWER_TOKENS = 4096
DEFAULT_JUDGE_TOKENS = 256
DEFAULT_MAX_JUDGE_TOKENS = 2048
RECORDED_LOW, RECORDED_HIGH = 0.5, 2.0
MODEL_GRADERS = frozenset({"llm-grader", "rubrics"})


@dataclass
class _Line:
    facts: TargetFacts
    requests: Span = field(default_factory=Span)
    cached: Span = field(default_factory=Span)
    input_tokens: Span = field(default_factory=Span)
    output_tokens: Span = field(default_factory=Span)


class CostEstimator:
    """Called with each job of the first reading (`add`); `finish()` gives the `CostEstimate`."""

    def __init__(
        self,
        targets_file: Path | None = None,
        env: Mapping[str, str] | None = None,
        grader_target: str | None = None,
        recorded: RecordedUsage | None = None,
        *,
        cache: bool | None = None,
        cache_dir: Path | None = None,
        cache_watch: Sequence[str] = (),
        counter: TokenCounter | None = None,
    ) -> None:
        """`cache`, `cache_dir`: the run's `--cache/--no-cache` (None: each suite's `execution.cache`)
        and `--cache-dir` (`cache_watch`: select_all_on): answers the cache holds are counted as free."""
        self.targets = TargetFactsReader(targets_file, env, grader_target)
        self.cache = cache
        self.cache_dir = cache_dir
        self.cache_watch = cache_watch
        self._probe: CacheProbe | None = None
        self.recorded = recorded
        self.counter = counter or token_counter()
        self._lines: dict[tuple[str, str], _Line] = {}
        self._used_recorded = False

    def _line(self, role: str, facts: TargetFacts) -> _Line:
        line = self._lines.get((role, facts.name))
        if line is None:
            line = self._lines[(role, facts.name)] = _Line(facts)
        return line

    def add(
        self,
        suite: Suite,
        test: Test,
        target: str,
        attempts: int,
        strategy: RepeatStrategy,
        early: int | None = None,
    ) -> None:
        """One job: `test` of `suite` against `target`, `attempts` times (`early`: the attempts it
        surely makes, for --adaptive-repeats: the low end)."""
        if not self.targets.any_priced(suite.path):
            return  # mocks and agents only (a mock's fixed `cost_usd` is the run's own to count)
        facts = self.targets.target(suite.path, target, matrix_alias(test, target))
        # pass_at_k stops at the first pass: one attempt at the low end and, most tests passing, expected
        if early is None:
            early = 1 if strategy == "pass_at_k" else attempts
        recorded = self.recorded.get((test.suite or suite.name, test.id, target)) if self.recorded else None
        requests = len(test.turns) if test.mode == "conversation" and test.turns else 1
        line = self._line("target", facts)
        judges = [(spec, self._judge_facts(suite, target, spec)) for spec in _model_graders(test)]
        probe = self._cache_probe(suite) if facts.priced else None
        cached = probe.answers(suite, test, facts, attempts) if probe is not None else [None] * attempts
        answer: Span | None = None
        for attempt, hit in enumerate(cached):
            weight = (1.0, 1.0, 1.0) if attempt < early else (0.0, 0.0, 1.0)  # (low, expected, high)
            if hit is not None:  # read back from the response cache: nothing sent, nothing paid
                line.cached += Span(requests, requests, requests).times(*weight)
                size = float(hit.token_usage.output) if hit.token_usage is not None else None
                reply = Span(size, size, size) if size is not None else None
            else:
                line.requests += Span(requests, requests, requests).times(*weight)
                reply = None
                if facts.priced:
                    answer = answer or self._answer_tokens(test, facts, recorded)
                    line.input_tokens += self._input_span(test).times(*weight)
                    line.output_tokens += answer.times(requests, requests, requests).times(*weight)
            for spec, judge in judges:
                judge_line = self._line("grader", judge)
                judge_line.requests += Span(1, 1, 1).times(*weight)
                if not judge.priced:
                    continue
                if reply is None:
                    answer = answer or self._answer_tokens(test, facts, recorded)
                prompt = self._judge_prompt_tokens(spec, test, Path(suite.path).parent)
                spread = Span(prompt * self.counter.low, prompt, prompt * self.counter.high)
                judge_line.input_tokens += (spread + (reply or answer or Span())).times(*weight)
                judge_line.output_tokens += self._judge_tokens(judge, recorded).times(*weight)

    def _judge_facts(self, suite: Suite, target: str, spec: GraderSpec) -> TargetFacts:
        own = spec.config.get("target")
        name = self.targets.grader_name(suite.path, target, own if isinstance(own, str) else None)
        return self.targets.target(suite.path, name)

    def _cache_probe(self, suite: Suite) -> CacheProbe | None:
        """The response cache a real run of `suite` reads (`--cache`, else the suite's
        `execution.cache`), or None."""
        on = self.cache if self.cache is not None else suite.execution.cache
        if not on:
            return None
        if self._probe is None:
            # lazy: `running.estimate_cache` loaded only when `_cache_probe` runs
            from agentv_ci.running.estimate_cache import CacheProbe

            self._probe = CacheProbe(self.cache_dir, self.targets, self.cache_watch)
        return self._probe

    def _input_span(self, test: Test) -> Span:
        """The target's input tokens for one attempt: every request's rendered messages (a
        conversation resends its history each turn)."""
        if test.mode == "conversation" and test.turns:
            history: list[Message] = list(test.input)
            total = 0
            for turn in test.turns:
                history = [*history, *turn.input]
                total += self.counter.count_messages(with_default_system(history))
                history = [*history, *turn.expected_output]
        else:
            total = self.counter.count_messages(with_default_system(test.input))
        return Span(total * self.counter.low, total, total * self.counter.high)

    def _answer_tokens(self, test: Test, facts: TargetFacts, recorded: RecordedOutput | None) -> Span:
        """Output tokens of one answer."""
        if recorded is not None and recorded.answer is not None:
            self._used_recorded = True
            return _around(recorded.answer, facts.max_tokens)
        high = facts.max_tokens or DEFAULT_MAX_ANSWER_TOKENS
        expected = DEFAULT_ANSWER_TOKENS
        if test.expected_output:
            expected = max(1, self.counter.count(reference_answer(test.expected_output)))
        return Span(1, min(expected, high), high)

    def _judge_tokens(self, judge: TargetFacts, recorded: RecordedOutput | None) -> Span:
        if recorded is not None and recorded.judge is not None:
            self._used_recorded = True
            return _around(recorded.judge, judge.max_tokens)
        high = judge.max_tokens or DEFAULT_MAX_JUDGE_TOKENS
        return Span(1, min(DEFAULT_JUDGE_TOKENS, high), high)

    def _judge_prompt_tokens(self, spec: GraderSpec, test: Test, base_dir: Path) -> int:
        """Tokens of the judge's system prompt and prompt for this test, the answer left empty."""
        # lazy: the LLM grader loaded only when `_judge_prompt_tokens` runs
        from agentv_ci.graders.llm import LlmGrader
        from agentv_ci.graders.llm_prompts import FREEFORM_SYSTEM, default_prompt, template_variables

        empty = TargetResponse(text="")
        try:
            grader = build_grader(spec, base_dir=base_dir)
        except AgentvCiError:
            grader = None  # the run reports the broken grader; its judge is counted as the default's
        if isinstance(grader, LlmGrader):
            prompt, system = grader.prompt_for(test, empty)
        else:
            prompt, system = default_prompt(template_variables(test, empty, [])), FREEFORM_SYSTEM
        return self.counter.count(system) + self.counter.count(prompt) + 2 * MESSAGE_OVERHEAD + REPLY_PRIMING

    def finish(self) -> CostEstimate:
        lines: list[EstimateLine] = []
        total = Span()
        unpriced: list[str] = []
        for (role, _), line in self._lines.items():
            facts = line.facts
            cost: Span | None = None
            if facts.price is not None:
                price = facts.price
                cost = Span(
                    _cost(
                        line.input_tokens.low,
                        line.output_tokens.low,
                        price.input_per_mtok,
                        price.output_per_mtok,
                    ),
                    _cost(
                        line.input_tokens.expected,
                        line.output_tokens.expected,
                        price.input_per_mtok,
                        price.output_per_mtok,
                    ),
                    _cost(
                        line.input_tokens.high,
                        line.output_tokens.high,
                        price.input_per_mtok,
                        price.output_per_mtok,
                    ),
                )
            elif facts.fixed_cost is not None:
                each = facts.fixed_cost
                cost = line.requests.times(each, each, each)
            else:
                unpriced.append(facts.name)
            if cost is not None:
                total += cost
            lines.append(
                EstimateLine(
                    role="target" if role == "target" else "grader",
                    target=facts.name,
                    requests=line.requests,
                    cached=line.cached if line.cached.high else None,
                    input_tokens=_rounded(line.input_tokens),
                    output_tokens=_rounded(line.output_tokens),
                    model=facts.model,
                    cost_usd=_rounded_usd(cost) if cost is not None else None,
                    note=facts.note,
                )
            )
        source = "the baseline's recorded usage, else " if self._used_recorded else ""
        if self._probe is not None and self._probe.hits:
            source = "the response cache's entries, " + source
        return CostEstimate(
            lines=lines,
            cost_usd=_rounded_usd(total),
            tokenizer=self.counter.method,
            output_source=source + "max_tokens and defaults",
            unpriced=sorted(set(unpriced)),
        )

    @property
    def relevant(self) -> bool:
        """Whether any target or grader target is a model API (a run of mocks and agents has no
        token cost to estimate)."""
        return any(line.facts.priced for line in self._lines.values())


def _model_graders(test: Test) -> list[GraderSpec]:
    # lazy: the graders loaded only when `_model_graders` runs
    from agentv_ci.grading import graders_for

    specs = graders_for(test)
    if test.turns:
        specs = [*specs, *(g for turn in test.turns for g in turn.graders)]
    return [spec for spec in specs if spec.type in MODEL_GRADERS]


def _around(recorded: float, cap: int | None) -> Span:
    high = recorded * RECORDED_HIGH
    if cap is not None:
        high = min(high, float(cap))
    return Span(recorded * RECORDED_LOW, recorded, max(high, recorded))


def _cost(input_tokens: float, output_tokens: float, input_rate: float, output_rate: float) -> float:
    return (input_tokens * input_rate + output_tokens * output_rate) / 1_000_000


def _rounded(span: Span) -> Span:
    return Span(float(math.floor(span.low)), float(round(span.expected)), float(math.ceil(span.high)))


def _rounded_usd(span: Span) -> Span:
    """Micro-dollars, the low end rounded down and the high end up (the range never narrows)."""
    return Span(math.floor(span.low * 1e6) / 1e6, round(span.expected, 6), math.ceil(span.high * 1e6) / 1e6)


class OverBudget(UsageError):
    """`--budget-usd` below even the low end of the estimate: the run does not start (exit 2)."""


def settle_estimate(
    estimator: CostEstimator | None,
    *,
    budget_usd: float | None,
    on_estimate: Callable[[CostEstimate], None] | None = None,
) -> CostEstimate | None:
    """The run's estimate (None when no model API takes part), handed to `on_estimate`; raises
    `OverBudget` when even its low end is over `budget_usd`, before anything is spent."""
    if estimator is None or not estimator.relevant:
        return None
    estimate = estimator.finish()
    if on_estimate is not None:
        on_estimate(estimate)
    if budget_usd is not None and estimate.cost_usd.low > budget_usd:
        # lazy: `model.estimate_text` loaded only when `settle_estimate` runs
        from agentv_ci.model.estimate_text import budget_refusal

        raise OverBudget(
            budget_refusal(estimate, budget_usd),
            hint="raise --budget-usd, or run fewer tests (--test-id, --tag, --shard); "
            "`run --dry-run` prints the estimate",
        )
    return estimate
