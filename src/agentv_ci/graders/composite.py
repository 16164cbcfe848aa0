"""`composite`: runs member graders in parallel and combines them with an aggregator.

AgentV v4.42.4 aggregators: `weighted_average` (+ `weights: {member: w}`), `threshold` (+ `threshold`:
fraction of passing members), `code-grader` (+ `path`/`command`: a script reads
`{"results": {member: {...}}}` on stdin), `llm-grader` (+ optional `prompt`). The AgentEvals spec's
`minimum`, `maximum`, `safety_gate` (+ `required: [member names]`) and `all_or_nothing`
(+ optional `threshold`) are supported too. A member that errors makes the composite an error.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar, Literal, assert_never, get_args

import msgspec

from agentv_ci.errors import ConfigError, GraderError
from agentv_ci.graders.code import command_argv
from agentv_ci.graders.code_process import ScriptFailure, run_script
from agentv_ci.graders.code_protocol import ProtocolError, interpret
from agentv_ci.graders.invoke import run_grader_spec
from agentv_ci.graders.judge_calls import ask_judge, require_caller
from agentv_ci.graders.judge_replies import parse_freeform
from agentv_ci.graders.llm import load_prompt
from agentv_ci.graders.llm_prompts import FREEFORM_SYSTEM, render_template, template_variables
from agentv_ci.graders.outcome import GRADER_PASS_BAR, errored, scored, skipped
from agentv_ci.model.result import AssertionResult, GraderResult, TokenUsage
from agentv_ci.model.suite import GraderSpec
from agentv_ci.plugins import GradingContext
from agentv_ci.scoring import js_sum

Aggregator = Literal[
    "weighted_average",
    "threshold",
    "code-grader",
    "llm-grader",
    "minimum",
    "maximum",
    "safety_gate",
    "all_or_nothing",
]
AGGREGATORS: tuple[Aggregator, ...] = get_args(Aggregator)
_ALIASES: dict[str, Aggregator] = {
    "code_grader": "code-grader",
    "code_judge": "code-grader",
    "code-judge": "code-grader",
    "llm_grader": "llm-grader",
    "llm_judge": "llm-grader",
    "llm-judge": "llm-grader",
}

# AgentV's DEFAULT_COMPOSITE_AGGREGATOR_PROMPT, word for word.
DEFAULT_AGGREGATOR_PROMPT = """Review the following evaluation results:
{{EVALUATOR_RESULTS_JSON}}

Decide the final score and verdict based on all grader results.
Return a JSON object with: score (0.0-1.0), verdict (pass/fail), and reasoning."""

SCRIPT_TIMEOUT_S = 300.0


def _aggregator_kind(written: object) -> Aggregator | None:
    """The aggregator `written` names (aliases resolved), None when it names none."""
    name = str(written)
    if name in _ALIASES:
        return _ALIASES[name]
    for kind in AGGREGATORS:  # a loop, not `in`: it narrows the text to the Literal for mypy
        if name == kind:
            return kind
    return None


class CompositeConfig(msgspec.Struct):
    """`assertions` (member graders) and `aggregator` (`{type, weights?, threshold?, path?/command?,
    prompt?, required?}`)."""

    assertions: list[Any] = []
    aggregator: Any = None


def _js_number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _assertion_json(assertion: AssertionResult) -> dict[str, Any]:
    item: dict[str, Any] = {"text": assertion.text, "passed": assertion.passed}
    if assertion.evidence is not None:
        item["evidence"] = assertion.evidence
    return item


def _member_json(result: GraderResult) -> dict[str, Any]:
    """A member as AgentV's EvaluationScore for aggregator scripts and prompts (JSON numbers as
    JavaScript prints them: 1, not 1.0)."""
    member: dict[str, Any] = {
        "score": _js_number(result.score),
        "verdict": result.verdict,
        # AgentV's assertion fields only: `expected` / `actual` / `path` are for our reports
        "assertions": [_assertion_json(a) for a in result.assertions],
        "expectedAspectCount": max(1, len(result.assertions)),
    }
    if result.details is not None:
        member["details"] = result.details
    return member


class Composite:
    """`composite`: a grader made of graders."""

    Config: ClassVar[type[msgspec.Struct]] = CompositeConfig

    def __init__(self, spec: GraderSpec, config: CompositeConfig, *, base_dir: Path) -> None:
        self.spec = spec
        self.base_dir = base_dir
        what = f"composite grader {spec.name!r}"
        where = spec.config_locations.get("assertions", spec.location)
        if not config.assertions:
            raise ConfigError(f"{what} needs member `assertions`", location=where)
        try:
            self.members = [msgspec.convert(m, GraderSpec) for m in config.assertions]
        except msgspec.ValidationError as exc:
            raise ConfigError(f"{what}: invalid member: {exc}", location=where) from None
        names = [m.name for m in self.members]
        if len(set(names)) != len(names):
            raise ConfigError(f"{what}: member names must be unique, got {names}", location=where)
        self.aggregator: dict[str, Any] | None = None
        self.kind: Aggregator = "weighted_average"  # read only when `aggregator` is set
        if config.aggregator is not None:
            raw = config.aggregator if isinstance(config.aggregator, dict) else {"type": config.aggregator}
            agg_where = spec.config_locations.get("aggregator", spec.location)
            kind = _aggregator_kind(raw.get("type"))
            if kind is None:
                raise ConfigError(
                    f"{what}: unknown aggregator {raw.get('type')!r}",
                    location=agg_where,
                    hint=f"use one of {', '.join(AGGREGATORS)}",
                )
            self.aggregator, self.kind = {**raw, "type": kind}, kind
            if kind == "threshold" and not isinstance(raw.get("threshold"), int | float):
                raise ConfigError(
                    f"{what}: the threshold aggregator needs `threshold` (0..1)", location=agg_where
                )
            if kind == "code-grader":
                self.argv = command_argv(
                    raw.get("command", raw.get("path", raw.get("script"))),
                    what=f"{what} aggregator",
                    where=agg_where,
                )
            if kind == "llm-grader":
                self.template, _ = load_prompt(raw.get("prompt"), spec, base_dir)

    async def grade(self, ctx: GradingContext) -> GraderResult:
        if self.aggregator is None:
            return skipped(self.spec, "composite has no `aggregator`: skipped (AgentV v4 requires one)")
        # AgentV applies `negate` only to top-level graders: a member's `negate` does not change its score.
        members = [msgspec.structs.replace(m, negate=False) for m in self.members]
        results = list(
            await asyncio.gather(*(run_grader_spec(m, ctx, base_dir=self.base_dir) for m in members))
        )
        failed = [r for r in results if r.error is not None]
        if failed:
            errors = "; ".join(f"{r.name}: {r.error}" for r in failed)
            raise GraderError(f"composite {self.spec.name!r}: member grader failed: {errors}")
        assertions = [
            msgspec.structs.replace(a, text=f"[{r.name}] {a.text}")
            for r in results
            if r.verdict != "skip"
            for a in r.assertions
        ]
        result = await self._aggregate(results, assertions, ctx)
        return msgspec.structs.replace(result, scores=results)

    async def _aggregate(
        self, results: list[GraderResult], assertions: list[AssertionResult], ctx: GradingContext
    ) -> GraderResult:
        assert self.aggregator is not None
        kind = self.kind
        active = [r for r in results if r.verdict != "skip"]
        details: dict[str, Any] = {"aggregator": kind}
        if not active and kind not in ("code-grader", "llm-grader"):
            return skipped(self.spec, "All evaluators skipped (infrastructure failure)")
        if kind == "weighted_average":
            return scored(self.spec, self._weighted(active), assertions, details=details)
        if kind == "minimum":
            return scored(self.spec, min(r.score for r in active), assertions, details=details)
        if kind == "maximum":
            return scored(self.spec, max(r.score for r in active), assertions, details=details)
        if kind == "threshold":
            bar = float(self.aggregator["threshold"])
            passed = sum(1 for r in active if r.verdict == "pass")
            score = passed / len(active)
            head = AssertionResult(
                f"{passed}/{len(active)} evaluators passed (threshold: {bar:g})", score >= bar
            )
            verdict = "pass" if score >= bar else "fail"
            return scored(self.spec, score, [head, *assertions], details=details, verdict=verdict)
        if kind == "safety_gate":
            required = self.aggregator.get("required") or [m.name for m in self.members if m.required]
            tripped = [r.name for r in active if r.name in required and r.verdict != "pass"]
            if tripped:
                details["failed_gates"] = tripped
                head = AssertionResult(f"safety gate failed: {', '.join(tripped)}", False)
                return scored(self.spec, 0.0, [head, *assertions], details=details, verdict="fail")
            return scored(self.spec, self._weighted(active), assertions, details=details)
        if kind == "all_or_nothing":
            cut = self.aggregator.get("threshold")
            ok = all((r.score >= float(cut)) if cut is not None else r.verdict == "pass" for r in active)
            return scored(self.spec, 1.0 if ok else 0.0, assertions, details=details)
        if kind == "code-grader":
            return await self._script(results, assertions, details, ctx)
        if kind == "llm-grader":
            return await self._judge(results, assertions, details, ctx)
        assert_never(kind)  # mypy: every aggregator has its branch

    def _weighted(self, active: list[GraderResult]) -> float:
        weights = self.aggregator.get("weights") if self.aggregator else None
        weights = weights if isinstance(weights, dict) else {}
        # AgentV: only the aggregator's `weights` count; a member's own `weight` is ignored (default 1).
        pairs = [(r.score, float(weights.get(r.name, 1.0))) for r in active]
        total = js_sum(w for _, w in pairs)
        return js_sum(s * w for s, w in pairs) / total if total > 0 else 0.0

    async def _script(
        self,
        results: list[GraderResult],
        assertions: list[AssertionResult],
        details: dict[str, Any],
        ctx: GradingContext,
    ) -> GraderResult:
        payload = {"results": {r.name: _member_json(r) for r in results}}
        try:
            run = await run_script(
                self.argv,
                stdin=json.dumps(payload, indent=2).encode(),
                cwd=self.base_dir,
                timeout_s=float(self.aggregator.get("timeout_seconds", SCRIPT_TIMEOUT_S))
                if self.aggregator
                else SCRIPT_TIMEOUT_S,
            )
            score, script_assertions, extra, verdict = interpret(run.exit_code, run.stdout, run.stderr)
        except (ScriptFailure, ProtocolError) as exc:
            return errored(
                self.spec,
                f"composite {self.spec.name!r}: aggregator script failed: {exc}",
                text=f"Code aggregator failed: {exc}",
            )
        details.update(extra)
        # AgentV: the composite shows only the script's own assertions (members stay under `scores`).
        return scored(self.spec, score, script_assertions, details=details, verdict=verdict)

    async def _judge(
        self,
        results: list[GraderResult],
        assertions: list[AssertionResult],
        details: dict[str, Any],
        ctx: GradingContext,
    ) -> GraderResult:
        what = f"composite {self.spec.name!r} llm aggregator"
        caller = require_caller(ctx.call_grader_target, what)
        values = template_variables(ctx.test, ctx.response, [])
        values["EVALUATOR_RESULTS_JSON"] = json.dumps({r.name: _member_json(r) for r in results}, indent=2)
        prompt = render_template(self.template or DEFAULT_AGGREGATOR_PROMPT, values)

        def accept(reply: str, usage: TokenUsage | None) -> GraderResult:
            # AgentV: the verdict comes from the score (a `verdict` in the reply is ignored) and only
            # the judge's assertions (at most 8) are shown.
            score, judged, extra = parse_freeform(reply)
            verdict = "pass" if score >= GRADER_PASS_BAR else "fail"
            return scored(
                self.spec,
                score,
                judged[:8],
                details={**details, **extra},
                verdict=verdict,
                token_usage=usage,
            )

        return await ask_judge(
            caller,
            prompt,
            FREEFORM_SYSTEM,
            accept,
            what=what,
            target=self.aggregator.get("target") if self.aggregator else None,
        )
