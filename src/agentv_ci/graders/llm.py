"""`llm-grader`: asks a grader model to judge the answer (AgentV v4.42.4 `graders/llm-grader.ts`).

Three modes: freeform (`{score, assertions}`), rubric checklist (`checks[].satisfied`) and
score ranges (`checks[].score` 0..10). Replies are parsed tolerantly; an unreadable reply is retried
(3 attempts), then one structure-repair call quotes it back; still unreadable -> a grader error
(the test becomes an execution error), never a made-up score.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agentv_ci.errors import ConfigError, GraderError
from agentv_ci.graders import llm_prompts as prompts
from agentv_ci.graders.code import DEFAULT_TIMEOUT_S, command_argv
from agentv_ci.graders.code_process import ScriptFailure
from agentv_ci.graders.code_protocol import run_with_payload
from agentv_ci.graders.judge_calls import ATTEMPTS, JudgeParseError, ask_judge, require_caller
from agentv_ci.graders.judge_replies import parse_checks, parse_freeform
from agentv_ci.graders.outcome import GRADER_PASS_BAR, errored, excerpt, scored
from agentv_ci.graders.preprocessing import (
    extract_text,
    has_file_blocks,
    merge_preprocessors,
    resolve_commands,
)
from agentv_ci.graders.rubric_items import normalise_rubrics, score_checklist, score_ranges
from agentv_ci.model.bounds import Temperature
from agentv_ci.model.result import GraderResult, TargetResponse, TokenUsage
from agentv_ci.model.suite import GraderSpec, Test
from agentv_ci.plugins import GradingContext


class LlmGraderConfig(msgspec.Struct):
    """`prompt` (inline, `file://path`, or a bare path for legacy `llm_judge`), `rubrics`, `target`, `model`,
    `temperature`, `max_steps`, `config` (for prompt scripts)."""

    prompt: Any = None
    rubrics: list[Any] | None = None
    target: str | None = None
    model: str | None = None
    temperature: Temperature | None = None
    max_steps: int | None = None
    config: dict[str, Any] | None = None
    preprocessors: list[dict[str, Any]] | None = None


def load_prompt(raw: Any, spec: GraderSpec, base_dir: Path) -> tuple[str | None, list[str]]:
    """The custom template text (None = default) and warnings about how it was found."""
    where = spec.config_locations.get("prompt", spec.location)
    if raw is None or raw == "":
        return None, []
    if isinstance(raw, dict):
        return None, []  # an executable prompt generator: see `PromptScript`
    if not isinstance(raw, str):
        raise ConfigError(f"llm-grader {spec.name!r}: `prompt` must be a string", location=where)
    if raw.startswith("file://"):
        path = (base_dir / raw.removeprefix("file://")).resolve()
        if not path.is_file():
            raise ConfigError(f"llm-grader {spec.name!r}: prompt file not found: {path}", location=where)
        text = path.read_text(encoding="utf-8")
        if not prompts.references_output(text):
            raise ConfigError(
                f"llm-grader {spec.name!r}: prompt file {path.name} references neither {{{{output}}}} "
                "nor {{expected_output}}",
                location=where,
                hint="add {{output}} where the answer should go",
            )
        return text, []
    # A bare path is a file only in the legacy `llm_judge` dialect (the AgentEvals seeds); an
    # `llm-grader` reads it as the prompt text itself, as AgentV >= 4.6.
    if spec.written_type in ("llm_judge", "llm-judge") and "\n" not in raw and len(raw) < 300:
        candidate = base_dir / raw
        try:
            is_file = candidate.is_file()
        except OSError:
            is_file = False
        if is_file:
            warning = f"prompt {raw!r} was read as a file (legacy); write `file://{raw}` to be explicit"
            return candidate.read_text(encoding="utf-8"), [warning]
    return raw, []


class PromptScript:
    """`prompt: {command: [...], config: {...}}`: a script that writes the grader prompt to stdout.
    It reads the code-grader stdin payload (with `config`), runs like a code-grader (cwd = the eval
    file's directory, own process group, timeout, output cap)."""

    def __init__(self, argv: list[str], config: dict[str, Any], base_dir: Path, timeout_s: float) -> None:
        self.argv = argv
        self.config = config
        self.base_dir = base_dir
        self.timeout_s = timeout_s

    @classmethod
    def from_config(cls, raw: Any, spec: GraderSpec, base_dir: Path) -> PromptScript | None:
        if not isinstance(raw, dict):
            return None
        where = spec.config_locations.get("prompt", spec.location)
        argv = command_argv(
            raw.get("command", raw.get("script")), what=f"llm-grader {spec.name!r} prompt", where=where
        )
        config = raw.get("config") if isinstance(raw.get("config"), dict) else {}
        cwd = base_dir / raw["cwd"] if isinstance(raw.get("cwd"), str) else base_dir
        return cls(argv, dict(config or {}), cwd, float(raw.get("timeout_seconds") or DEFAULT_TIMEOUT_S))

    async def render(self, ctx: GradingContext, name: str) -> str:
        try:
            run = await run_with_payload(
                self.argv,
                ctx.test,
                ctx.response,
                config=self.config,
                workspace_path=ctx.workspace_path,
                cwd=self.base_dir,
                timeout_s=self.timeout_s,
                spill_prefix="agentv-ci-prompt-",
                dependencies=ctx.dependency_results,
            )
        except ScriptFailure as exc:
            raise GraderError(f"llm-grader {name!r}: prompt script failed: {exc}") from None
        if run.exit_code != 0 or not run.stdout.strip():
            detail = run.stderr.strip() or run.stdout.strip() or "no output"
            raise GraderError(
                f"llm-grader {name!r}: prompt script exited {run.exit_code}: {excerpt(detail, 300)}"
            )
        return run.stdout


class LlmGrader:
    """`llm-grader`: a grader model scores the answer (freeform, rubric checklist or score ranges)."""

    Config: ClassVar[type[msgspec.Struct]] = LlmGraderConfig

    def __init__(self, spec: GraderSpec, config: LlmGraderConfig, *, base_dir: Path) -> None:
        self.spec = spec
        self.config = config
        self.base_dir = base_dir
        where = spec.config_locations.get("rubrics", spec.location)
        self.rubrics = normalise_rubrics(self._rubric_source(config), where)
        self.template, self.warnings = load_prompt(config.prompt, spec, base_dir)
        self.prompt_script = PromptScript.from_config(config.prompt, spec, base_dir)
        self.preprocessors = resolve_commands(getattr(config, "preprocessors", None), base_dir)
        if any("score_ranges" in r for r in self.rubrics):
            self.mode = "score_ranges"
        elif self.rubrics:
            self.mode = "checklist"
        else:
            self.mode = "freeform"

    def _rubric_source(self, config: Any) -> list[Any] | None:
        return config.rubrics  # type: ignore[no-any-return]

    async def _prompt(self, ctx: GradingContext) -> tuple[str, str]:
        if self.prompt_script is not None:
            return await self.prompt_script.render(ctx, self.spec.name), self.system_prompt()
        return self.prompt_for(ctx.test, ctx.response)

    def system_prompt(self) -> str:
        return {
            "freeform": prompts.FREEFORM_SYSTEM,
            "checklist": prompts.CHECKLIST_SYSTEM,
            "score_ranges": prompts.SCORE_RANGE_SYSTEM,
        }[self.mode]

    def prompt_for(self, test: Test, response: TargetResponse) -> tuple[str, str]:
        """(prompt, system) the grader model is asked about `response` (a prompt script's output is
        not known before it runs: the default template stands in for it; the cost estimate uses this)."""
        values = prompts.template_variables(test, response, self.rubrics)
        system = self.system_prompt()
        if self.template is not None:
            return prompts.render_template(self.template, values), system
        if self.mode == "freeform":
            return prompts.default_prompt(values), system
        return prompts.rubric_prompt(values, self.rubrics, score_ranges=self.mode == "score_ranges"), system

    async def _read_files(self, ctx: GradingContext) -> GradingContext:
        """An answer of content blocks becomes the text the grader reads: file blocks through the
        suite's and this grader's `preprocessors` (graders/preprocessing.py)."""
        last = next((m for m in reversed(ctx.response.messages) if m.role == "assistant"), None)
        if last is None or not has_file_blocks(last.content):
            return ctx
        preprocessors = merge_preprocessors(list(ctx.test.preprocessors), self.preprocessors)
        base_dir = ctx.workspace_path or ctx.eval_path.parent
        text = await extract_text(last.content, preprocessors, base_dir=base_dir)
        return dataclasses.replace(ctx, response=msgspec.structs.replace(ctx.response, text=text))

    async def grade(self, ctx: GradingContext) -> GraderResult:
        what = f"{self.spec.type} {self.spec.name!r}"
        caller = require_caller(ctx.call_grader_target, what)
        ctx = await self._read_files(ctx)
        prompt, system = await self._prompt(ctx)
        try:
            return await ask_judge(
                caller,
                prompt,
                system,
                lambda reply, usage: self._interpret(reply, usage, ctx),
                what=what,
                target=self.config.target,
                temperature=self.config.temperature,
            )
        except JudgeParseError as exc:
            # Still an error (the test becomes an execution error), shown as AgentV shows it: verdict
            # skip and its "Grader parse failure" text.
            text = (
                f"Grader parse failure after {ATTEMPTS} attempts: Failed to parse evaluator response after "
                f"{ATTEMPTS} attempts and 1 structure-fix attempt: {exc.problem}"
            )
            return msgspec.structs.replace(errored(self.spec, exc.message, text=text), verdict="skip")

    def _interpret(self, reply: str, usage: TokenUsage | None, ctx: GradingContext) -> GraderResult:
        details: dict[str, Any] = {"mode": self.mode}
        if self.config.target:
            details["grader_target"] = self.config.target
        if self.warnings:
            details["warnings"] = list(self.warnings)
        if self.mode != "freeform":
            checks, overall = parse_checks(reply, scored=self.mode == "score_ranges")
            if not checks and ctx.dry_run:
                return self._freeform(reply, usage, details)
            scorer = score_ranges if self.mode == "score_ranges" else score_checklist
            score, gate_failed, assertions, extra = scorer(self.rubrics, checks)
            details.update(extra)
            if overall:
                details["overall_reasoning"] = overall
            verdict = "fail" if gate_failed or score < GRADER_PASS_BAR else "pass"
            return scored(self.spec, score, assertions, details=details, verdict=verdict, token_usage=usage)
        return self._freeform(reply, usage, details)

    def _freeform(self, reply: str, usage: TokenUsage | None, details: dict[str, Any]) -> GraderResult:
        score, assertions, extra = parse_freeform(reply)
        details.update(extra)
        return scored(self.spec, score, assertions, details=details, token_usage=usage)
