"""Output side of the model: target responses, grader results, test results, run summaries.

`TestResult` encodes to an `index.jsonl` row compatible with AgentV v4.42.4
(`test_id`, `suite`, `target`, `score`, `scores[]`, `execution_status`, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from agentv_ci.model.baseline import BaselineSource
from agentv_ci.model.cache_use import CacheUse
from agentv_ci.model.estimate import CostEstimate
from agentv_ci.model.provenance import Provenance
from agentv_ci.model.suite import Message

Verdict = Literal["pass", "fail", "skip"]
ExecutionStatus = Literal["ok", "quality_failure", "execution_error", "not_run"]
# Why `run --adaptive-repeats` stopped a test's attempts (the docstring of `AdaptiveStop`).
AdaptiveStopReason = Literal[
    "decided-pass", "decided-fail", "regression-decided", "max", "error", "budget", "cost-limit"
]
DependencyStatus = Literal["passed", "error", "failed"]  # AgentV's DependencyResult.status


def _failing() -> Verdict:
    return "fail"


class TokenUsage(msgspec.Struct, omit_defaults=True):
    input: int = 0
    output: int = 0
    cached: int | None = None
    reasoning: int | None = None

    @property
    def total(self) -> int:
        return self.input + self.output + (self.cached or 0)


class TargetResponse(msgspec.Struct, omit_defaults=True):
    """What a target answered. `messages` are the output messages (with tool calls);
    `text` is the final answer (text of the last assistant message)."""

    text: str = ""
    messages: list[Message] = []
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None
    duration_ms: float | None = None
    start_time: str | None = None
    end_time: str | None = None
    file_changes: str | None = None
    llm_call_count: int | None = None
    dry_run: bool = False
    raw: Any = None
    # The size in bytes of what the target answered, when `text` holds only part of it (a target
    # that read a huge answer partly sets it; the runner's answer cap sets it when it cuts).
    answer_bytes: int | None = None
    notes: list[str] = []  # what the runner says about this answer (copied to the row's `notes`)


class AssertionResult(msgspec.Struct, omit_defaults=True):
    """One check of a grader. `expected` / `actual` are what the check wanted and what came back,
    as short display text (JSON for values, `/pattern/flags` for patterns; bounded and cleaned by the
    grader), set where the grader knows both; `path` is the field a field-accuracy check compared.
    Reporters show them as they are: they never parse `text`."""

    text: str
    passed: bool
    evidence: str | None = None
    expected: str | None = None
    actual: str | None = None
    path: str | None = None


class GraderResult(msgspec.Struct, omit_defaults=True):
    """One grader's verdict on one answer. Encodes as an AgentV `scores[]` item."""

    name: str
    type: str  # an open set: plugin graders' entry-point names, and AgentV's in rows read back
    score: float
    verdict: Verdict
    weight: float = 1.0
    assertions: list[AssertionResult] = []
    details: dict[str, Any] | None = None
    error: str | None = None  # set when the grader itself failed (execution error, not a low score)
    required: bool = False
    token_usage: TokenUsage | None = None
    duration_ms: float | None = None
    target: str | None = None
    scores: list[GraderResult] = []  # composite members
    min_score: float | None = None  # the grader's own bar when `required` (min_score or numeric required)


class AttemptSummary(msgspec.Struct, omit_defaults=True):
    """Aggregation of repeated attempts (AgentV `aggregation`)."""

    # Not `RepeatStrategy`: rows are read back from AgentV's and other versions' results files, and a
    # strategy this version does not know must not make a baseline unreadable. We write only those.
    strategy: str
    passed_attempts: int
    total_attempts: int
    scores: list[float] = []
    mean: float | None = None
    stddev: float | None = None
    ci95_lower: float | None = None
    ci95_upper: float | None = None


class AdaptiveStop(msgspec.Struct, frozen=True):
    """`run --adaptive-repeats`: the attempts a test used and why it stopped
    (statistics/sequential.py): `decided-pass` / `decided-fail` (its verdict against the threshold),
    `regression-decided` (significantly below its baseline), `max` (MAX reached, undecided), `error`
    (no attempt that could be graded at a look), `budget` / `cost-limit` (--budget-usd or the
    test's `cost_limit_usd` spent)."""

    attempts: int
    # Written as an `AdaptiveStopReason`; read back as any text, as `AttemptSummary.strategy`.
    stopped: str


class DependencyResult(msgspec.Struct, omit_defaults=True, kw_only=True):
    """One finished dependency as a dependent test's graders see it (AgentV's `DependencyResult`):
    `status` is "passed" (execution ok), "error" (execution error) or "failed" (anything else);
    `details` maps each of its graders to `{score, verdict}`."""

    score: float
    output: str
    workspace_path: str | None = None
    details: dict[str, Any] | None = None
    status: DependencyStatus


class TestResult(msgspec.Struct, omit_defaults=True, frozen=True):
    """One test x target (x attempt, or aggregated over attempts). One `index.jsonl` row.

    Frozen: built once with all its fields; a later stage that adds one (the scheduler's fingerprint
    and provenance) makes a copy with `msgspec.structs.replace`, so no holder sees a row change."""

    __test__ = False  # keeps pytest from collecting this class when a test module imports it

    test_id: str
    suite: str
    target: str
    score: float
    execution_status: ExecutionStatus
    # A factory default, not `= "fail"`: omit_defaults leaves out fields equal to a plain default, and
    # every row must carry its verdict (AgentV's do); msgspec never omits a factory-made value.
    verdict: Verdict = msgspec.field(default_factory=_failing)
    threshold: float = 0.8
    scores: list[GraderResult] = []
    error: str | None = None
    failure_stage: str | None = None
    failure_reason_code: str | None = None
    # `needs_secret` rows: the environment variable (an API key) the event did not provide.
    missing_secret: str | None = None
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None
    duration_ms: float | None = None
    timestamp: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    eval_path: str | None = None  # repo-relative when possible
    line: int | None = None  # the test's line in its eval file
    attempt: int | None = None
    aggregation: AttemptSummary | None = None
    adaptive: AdaptiveStop | None = None  # run --adaptive-repeats
    trials: list[TestResult] = []
    conversation_id: str | None = None
    input: str | None = None  # excerpt of the rendered input
    output: str | None = None  # final answer text (excerpt for huge answers)
    metadata: dict[str, Any] = {}
    tags: list[str] = []
    dry_run: bool = False
    # Hash of the test's definition (input, graders, threshold, target; running/fingerprints.py):
    # compare calls a test whose fingerprint differs from the baseline's `changed`.
    fingerprint: str | None = None
    # What produced the row (target and judge models and parameters, judge prompt, grader plugin
    # versions; model/provenance.py): compare calls a test produced otherwise than its baseline
    # `incomparable`. None in a dry run (a mock answered) and in older runs' and AgentV's rows.
    provenance: Provenance | None = None
    # What the runner says about this row, e.g. that the answer was cut at --max-answer-bytes.
    notes: list[str] = []


class RunSummary(msgspec.Struct, omit_defaults=True):
    """Everything reporters and gates need: results plus run facts.

    `results` is a sequence: a list, or for a run, the rows read back from its `index.jsonl` as they
    are iterated (`reporting.stored_results.StoredResults`: a run holds no result in memory).
    """

    results: Sequence[TestResult]
    started_at: str | None = None
    ended_at: str | None = None
    duration_ms: float | None = None
    dry_run: bool = False
    not_run: int = 0
    budget_exhausted: bool = False
    interrupted: bool = False  # stopped by Ctrl-C / SIGTERM: the results are a partial run
    selection: dict[str, str] = {}  # eval path -> why it was selected
    # The jobs (test x target) the run planned (its plan.jsonl), None when unknown. `not_run` then
    # counts the planned jobs without a finished row (plus those of `missing_shards`).
    planned: int | None = None
    plan_unknown: bool = False  # read from results with no plan record (AgentV's, older agentv-ci's)
    missing_shards: list[str] = []  # "2/3": shards of a merged run that brought no results
    # Why nothing ran: change-based selection chose no eval (a shard, or every shard of a merged run,
    # whose plan says `nothing_selected`); None for a run that planned tests.
    skipped: str | None = None
    baseline: BaselineSource | None = None  # what the deltas were measured against (or why none)
    unselecting: list[str] = []  # changed files that selected no eval (change-based selection)
    cache: CacheUse | None = None  # the response cache's use (None: the cache was off)
    # Cost: the estimate made before the run (running/estimate.py), and what it actually paid (targets
    # and grader models, cached answers free; `unpriced`: answers with no known cost, so a floor).
    estimate: CostEstimate | None = None
    spent_usd: float | None = None
    unpriced: int = 0
    budget_usd: float | None = None  # the run's `--budget-usd` (spent_usd counts against it)
    tool: str = "agentv-ci"
    version: str = ""
