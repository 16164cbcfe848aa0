"""Run jobs concurrently: bounded asyncio workers across all files, per-test timeouts, repeats,
cache, budget stop, replay recording and workspaces. Every finished result goes to `sink` at once.

Jobs may be a list or an iterator that plans them as the workers take them (a JSONL dataset read as
it runs); then `RunNeeds`, gathered while the jobs were first planned, says which targets to create
before anything runs, and nothing is kept per job."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from agentv_ci.clock import now_millis
from agentv_ci.errors import AgentvCiError, TargetError, TargetTimeout
from agentv_ci.grading import grade_test, relative_eval_path
from agentv_ci.model.result import AdaptiveStop, AdaptiveStopReason, TargetResponse, TestResult
from agentv_ci.model.suite import Message, Test
from agentv_ci.plugins import GraderTargetCaller, TargetPlugin, TargetRequest
from agentv_ci.prompting import render_input
from agentv_ci.running.adaptive import AdaptiveRepeats, conclusive_counts
from agentv_ci.running.answer_lane import AnswerLanes, Detour
from agentv_ci.running.budget import Budget
from agentv_ci.running.cache import ResponseCache
from agentv_ci.running.cache_keys import CacheKeys
from agentv_ci.running.conversation import run_conversation
from agentv_ci.running.fingerprints import DefinitionFingerprints
from agentv_ci.running.judge_cache import JudgeCache
from agentv_ci.running.needs import RunNeeds
from agentv_ci.running.plan import Job
from agentv_ci.running.provenance import ProvenanceRecorder
from agentv_ci.running.rows import unfinished_result
from agentv_ci.running.target_configs import TargetConfigs, TargetKey, setup_of
from agentv_ci.running.waves import WAIT, Dependencies, JobSource, Ordering
from agentv_ci.running.withheld_secrets import NEEDS_SECRET, WithheldSecrets
from agentv_ci.running.workspace import HookError, Lease, WorkspaceManager, workspace_of
from agentv_ci.scoring import aggregate_attempts
from agentv_ci.targets.answer_cap import DEFAULT_MAX_ANSWER_BYTES, AnswerCap
from agentv_ci.targets.config import TargetsConfig
from agentv_ci.targets.factory import MissingApiKeyError, create_target
from agentv_ci.targets.grader_caller import GraderCaller, make_grader_caller
from agentv_ci.targets.limiter_registry import run_progress
from agentv_ci.targets.plugin_faults import invoke_target
from agentv_ci.targets.replay import ReplayRecorder

ResultSink = Callable[[TestResult], None]
_DRY_RUN_TURN = 32  # a dry run lets the event loop run once per this many attempts


@dataclass
class RunnerOptions:
    workers: int = 10
    dry_run: bool = False
    targets_file: Path | None = None  # --targets
    grader_target: str | None = None  # --grader-target
    cache: ResponseCache | None = None
    budget: Budget = field(default_factory=lambda: Budget(None))
    recorder: ReplayRecorder | None = None
    env: Mapping[str, str] | None = None
    run_id: str = ""
    keep_workspaces: bool = False
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES  # --max-answer-bytes (targets.answer_cap)
    cache_watch: Sequence[str] = ()  # select_all_on: the files they match key every cached answer
    adaptive: AdaptiveRepeats | None = None  # --adaptive-repeats
    # The event gives no secrets (a fork's PR): tests needing a missing key are not run, not refused.
    secrets_withheld: bool = False
    # What the run writes (output, cache, recording): a workspace reset never touches it.
    protected: tuple[Path, ...] = ()


class Runner:
    """Owns target instances and grader callers for one run; `run()` drives every job."""

    def __init__(
        self,
        jobs: Iterable[Job],
        options: RunnerOptions,
        sink: ResultSink,
        *,
        needs: RunNeeds | None = None,
        ordering: Ordering | None = None,
    ) -> None:
        """`jobs`: a list, or an iterator (then `needs` must describe them: see `RunNeeds`).
        `ordering`: the suites with `depends_on` (running/waves.py; found in `jobs` when None)."""
        self.jobs = jobs
        self.ordering = ordering
        self.needs = needs
        self.options = options
        self.sink = sink
        self.warnings: list[str] = []
        self.workspaces = WorkspaceManager(
            options.run_id,
            self.warnings,
            workers=options.workers,
            keep=options.keep_workspaces,
            protected=options.protected,
        )
        self.configs = TargetConfigs(options.targets_file, options.env, self.warnings)
        self._eval_paths: dict[str, tuple[Path, str]] = {}  # suite path -> (eval path, its text)
        self._targets: dict[TargetKey, TargetPlugin] = {}
        self._cache_keys = CacheKeys(self.warnings, watch=options.cache_watch)
        cache = options.cache if not options.dry_run else None
        self._judges = JudgeCache(cache, self._cache_keys, options.budget) if cache is not None else None
        self.answer_cap = AnswerCap(options.max_answer_bytes, self.warnings)
        self._definitions = DefinitionFingerprints()
        self._provenance = ProvenanceRecorder(options.grader_target)
        self._callers: dict[TargetKey, GraderTargetCaller | None] = {}
        # A dry run's placeholders, which answer at once (see run_attempt); none with --record.
        self._immediate: dict[TargetKey, Callable[[Test], TargetResponse]] = {}
        self.missing_secrets = WithheldSecrets(options.secrets_withheld)
        self._unkeyed = False  # some target or judge lacks its key (set by prepare(); checked per job)
        self._limits: dict[int, asyncio.Semaphore] = {}
        self.not_run = 0
        self._checked: set[tuple[int, str]] = set()
        self._prepared = False  # prepare() ran (the session calls it before run(), which calls it too)
        self.halted_by: str | None = None  # set by `execution.fail_on_error` on the first execution error
        self._attempts_since_turn = 0  # a dry run's attempts since the event loop last ran (_turn)
        # A dry run's jobs that its placeholders answer and text graders grade, each in one call.
        self._lanes = AnswerLanes(
            self.configs, self._immediate, self._shown_eval_path, self._definitions.of_job, self._fresh
        )

    # ------------------------------------------------------------------ setup
    def _config_for(self, suite_path: str) -> TargetsConfig:
        return self.configs.for_suite(suite_path)

    def _target_workers(self, config: TargetsConfig, name: str) -> int | None:
        """A target's own `workers:` in targets.yaml: at most that many calls to it in flight."""
        if self.options.dry_run or name not in config.targets:
            return None
        value = config.resolve(name).fields.get("workers")
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

    def definition_fingerprint(self, job: Job, config: TargetsConfig | None = None) -> str:
        """The job's test-definition fingerprint (see running/fingerprints.py); `config`: the job's
        `configs.for_job`, when the caller has it."""
        return self._definitions.of_job(job, config if config is not None else self.configs.for_job(job))

    def _eval_path(self, suite_path: str) -> Path:
        """The eval path as results show it (relative to cwd when below it), computed once per suite."""
        return self._shown_eval_path(suite_path)[0]

    def _shown_eval_path(self, suite_path: str) -> tuple[Path, str]:
        """`_eval_path` and its text (what the rows hold), computed once per suite."""
        shown = self._eval_paths.get(suite_path)
        if shown is None:
            text = relative_eval_path(Path(suite_path))
            shown = self._eval_paths[suite_path] = (Path(text), text)
        return shown

    def prepare(self) -> None:
        """Load targets files and create every target (and the `--grader-target`) before any test runs:
        an unknown target or a missing API key is a `ConfigError` here."""

        if self._prepared:
            return
        if self.needs is None:
            self.needs = RunNeeds.of(self.jobs)
        for need in self.needs:
            path, target = need.eval_path, need.target
            config = self.configs.with_alias(self._config_for(path), target, need.alias)
            key = self.configs.key(config, target)
            if key in self.missing_secrets.targets:
                continue
            if key not in self._targets:
                try:
                    self._targets[key] = create_target(target, config, dry_run=self.options.dry_run)
                except MissingApiKeyError as exc:
                    self.missing_secrets.note_target(key, exc)  # raised unless the event withholds secrets
                    continue
                limit = self._target_workers(config, target)
                if limit is not None:
                    self._limits[id(self._targets[key])] = asyncio.Semaphore(limit)
                self._note_immediate(key, self._targets[key])
                self._callers[key] = make_grader_caller(
                    config,
                    eval_target=target,
                    override=self.options.grader_target,
                    dry_run=self.options.dry_run,
                    on_cost=self.options.budget.add,
                    replies=self._judges,
                )
            caller = self._callers[key]
            if need[0] == "grader" and isinstance(caller, GraderCaller):
                # the grader targets the job's llm-graders ask: an unknown one, or its missing API key,
                # fails before the run, not halfway through it (a dry run checks the names too)
                name = caller.override or need.grader or caller.default
                if name and name != target and (id(caller), name) not in self._checked:
                    self._checked.add((id(caller), name))
                    try:
                        caller.instance(name)
                    except MissingApiKeyError as exc:
                        self.missing_secrets.note_judge(key, name, exc)
        self._unkeyed = bool(self.missing_secrets)
        self._prepared = True

    def _note_immediate(self, key: TargetKey, target: TargetPlugin) -> None:
        """Keep a dry run's placeholder answer, asked without a request or an await (run_attempt). A run
        that records its answers or limits a target asks it the usual way."""
        if not self.options.dry_run or self.options.recorder is not None or id(target) in self._limits:
            return
        # lazy: the dry-run target, only for a dry run (create_target has loaded it then)
        from agentv_ci.targets.dry_run import DryRunTarget

        if type(target) is DryRunTarget:
            self._immediate[key] = target.placeholder.answer  # what its `answer` asks, one call fewer

    async def aclose(self) -> None:
        for target in self._targets.values():
            try:
                await target.aclose()
            except Exception as exc:  # a target failing to close must not lose results
                self.warnings.append(f"closing target failed: {exc}")
        for caller in self._callers.values():
            close = getattr(caller, "aclose", None)
            if close is not None:
                await close()
        await self.workspaces.close()

    # ------------------------------------------------------------------ run
    async def _turn(self) -> None:
        """Let the event loop run (signals, other workers) before an attempt: see run_job."""
        if not self.options.dry_run or self._turn_due():
            await asyncio.sleep(0)

    def _turn_due(self) -> bool:
        """A dry run's attempt that lets the event loop run first (one in _DRY_RUN_TURN)."""
        self._attempts_since_turn += 1
        if self._attempts_since_turn < _DRY_RUN_TURN:
            return False
        self._attempts_since_turn = 0
        return True

    def _stop_reason(self) -> tuple[str, str] | None:
        """Why no new test may start: (reason code, message), or None."""
        budget = self.options.budget
        if budget.exhausted or budget.refused:
            message = f"not run: budget of ${budget.limit_usd:g} reached (spent ${budget.total_usd:.4f})"
            return "budget_exceeded", message
        if self.halted_by is not None:
            return "error_threshold_exceeded", f"not run: halted after an execution error in {self.halted_by}"
        return None

    async def run(self) -> None:
        self.prepare()
        if self.ordering is None:
            self.jobs = jobs = list(self.jobs)
            self.ordering = Ordering(frozenset(j.suite.path for j in jobs if j.test.depends_on))
        # shared by the workers: each takes the next job (one event loop); dependency waves wait
        pending = JobSource(
            self.jobs,
            self.ordering,
            emit=lambda result: self.sink(result),
            fingerprint=self.definition_fingerprint,
            dry_run=self.options.dry_run,
        )
        skipped: list[Job] = []
        progress = run_progress()  # the rate limiters stop probing for more near the run's end
        progress.jobs_left = self.needs.jobs if self.needs is not None else None

        async def worker() -> None:
            while True:
                taken = pending.take_now()  # no coroutine per job while the next one is at hand
                if taken is WAIT:
                    taken = await pending.take()
                if taken is None:
                    return
                job, dependencies = taken
                if progress.jobs_left:
                    progress.jobs_left -= 1
                if self._stop_reason() is not None:
                    skipped.append(job)
                    pending.stop()
                    return
                lane = None if self._unkeyed else self._lanes.lane(job)
                result: TestResult | None
                if lane is None:
                    result = await self.run_job(job, dependencies)
                else:
                    if self._turn_due():  # as run_job waits before an attempt
                        await asyncio.sleep(0)
                    done = self._lanes.run(job, lane)
                    if isinstance(done, Detour):
                        done = await self.run_attempt(
                            job, 0, done.fingerprint, dependencies, answered=done.answer
                        )
                    result = done
                if result is None:  # the budget was spent while its first attempt waited to start
                    skipped.append(job)
                    pending.stop()
                    return
                self.sink(result)
                pending.done(job, result)
                fail_on_error = job.test.execution.fail_on_error
                if fail_on_error is None:
                    fail_on_error = job.suite.execution.fail_on_error
                if result.execution_status == "execution_error" and fail_on_error and self.halted_by is None:
                    self.halted_by = f"{result.suite}/{result.test_id} (execution.fail_on_error)"

        try:
            total = self.needs.jobs if self.needs is not None else self.options.workers
            count = max(1, min(self.options.workers, total))
            await asyncio.gather(*(worker() for _ in range(count)))
            for number, job in enumerate(itertools.chain(skipped, pending.remaining())):
                if number % 256 == 255:
                    await asyncio.sleep(0)  # many rows to write: a stop signal is still heard
                reason, error = self._stop_reason() or ("not_run", "not run")
                self.not_run += 1
                self.sink(
                    unfinished_result(
                        job,
                        status="not_run",
                        error=error,
                        stage=None,
                        reason=reason,
                        dry_run=self.options.dry_run,
                        fingerprint=self.definition_fingerprint(job),
                    )
                )
        finally:
            await self.aclose()

    async def run_job(self, job: Job, dependencies: Dependencies | None = None) -> TestResult | None:
        """All attempts of one job, combined by the job's strategy; None when the budget let none
        of them start."""

        if self._unkeyed:  # a fork's PR: nothing to check otherwise
            unkeyed = self._not_run_without_secret(job)
            if unkeyed is not None:
                return unkeyed
        if job.adaptive and self.options.adaptive is not None:
            return await self._run_adaptive(job, self.options.adaptive, dependencies)
        attempts: list[TestResult] = []
        spent = 0.0
        fingerprint = self.definition_fingerprint(job)  # once per job: its attempts share it
        metered = self._metered()
        for attempt in range(job.attempts):
            # Wait once per attempt even when the target answers at once (a cached answer): Ctrl-C /
            # SIGTERM cancel the run at a task's next wait, and other tests get their turn. A dry
            # run's placeholders wait once per _DRY_RUN_TURN attempts: a loop turn costs more
            # than the attempt, and a stop is still heard within a few milliseconds.
            await self._turn()
            if metered:
                paid = await self._paid_attempt(job, attempt, fingerprint, dependencies)
                if paid is None:  # the budget admits no more
                    break
                result = paid
            else:  # the hot path (a dry run, no budget): no extra coroutine per attempt
                result = await self.run_attempt(job, attempt, fingerprint, dependencies)
            attempts.append(result)
            spent += result.cost_usd or 0.0
            if job.attempts == 1:
                return result
            if job.strategy == "pass_at_k" and result.verdict == "pass":
                break
            if job.cost_limit_usd is not None and spent >= job.cost_limit_usd:
                break
        if not attempts:
            return None
        return aggregate_attempts(attempts, job.strategy)

    def _metered(self) -> bool:
        """Whether attempts go through the budget (a limit is set; a dry run spends nothing)."""
        return self.options.budget.limit_usd is not None and not self.options.dry_run

    async def _paid_attempt(
        self, job: Job, attempt: int, fingerprint: str | None, dependencies: Dependencies | None
    ) -> TestResult | None:
        """One attempt once the budget admits it (None: it admits no more)."""
        budget = self.options.budget
        admission = await budget.admit(self.configs.key(self.configs.for_job(job), job.target))
        if admission is None:
            return None
        with budget.paying(admission):
            return await self.run_attempt(job, attempt, fingerprint, dependencies)

    def _not_run_without_secret(self, job: Job) -> TestResult | None:
        """The `not_run` row of a job whose target or judge needs a secret the event withholds."""
        key = self.configs.key(self.configs.for_job(job), job.target)
        missing = self.missing_secrets.of_job(job, key, self._callers.get(key))
        if missing is None:
            return None
        return unfinished_result(
            job,
            status="not_run",
            error=missing.error,
            stage=None,
            reason=NEEDS_SECRET,
            dry_run=self.options.dry_run,
            fingerprint=self.definition_fingerprint(job),
            missing_secret=missing.variable,
        )

    async def _run_adaptive(
        self, job: Job, adaptive: AdaptiveRepeats, dependencies: Dependencies | None
    ) -> TestResult | None:
        """--adaptive-repeats: attempts in rounds until statistics/sequential.py says the test is
        decided (or MAX); the row records how many it used and why it stopped."""

        rule = adaptive.rule(job.attempts)
        base = adaptive.baseline.get(job.key)
        attempts: list[TestResult] = []
        spent = 0.0
        fingerprint = self.definition_fingerprint(job)
        metered = self._metered()
        wanted = rule.looks[0]
        stopped: AdaptiveStopReason = "max"
        while len(attempts) < wanted:
            await self._turn()  # as run_job: a stop signal is heard between attempts
            if metered:
                result = await self._paid_attempt(job, len(attempts), fingerprint, dependencies)
            else:
                result = await self.run_attempt(job, len(attempts), fingerprint, dependencies)
            if result is None:
                stopped = "budget"
                break
            attempts.append(result)
            spent += result.cost_usd or 0.0
            if job.cost_limit_usd is not None and spent >= job.cost_limit_usd:
                stopped = "cost-limit"
                break
            if len(attempts) == wanted:  # a look
                passes, graded = conclusive_counts(attempts)
                if graded == 0:
                    stopped = "error"  # nothing to decide on: more attempts would only cost
                    break
                decision = rule.decide(passes, graded, job.threshold, base)
                if decision is not None:
                    stopped = decision
                    break
                wanted = rule.next_look(len(attempts))
        if not attempts:
            return None
        row = attempts[0] if len(attempts) == 1 else aggregate_attempts(attempts, job.strategy)
        return msgspec.structs.replace(row, adaptive=AdaptiveStop(attempts=len(attempts), stopped=stopped))

    @staticmethod
    async def _call(job: Job, request: TargetRequest, target: TargetPlugin) -> TargetResponse:
        if not job.timeout_s:  # no deadline: no timer to arm and cancel
            return await invoke_target(target, request)
        async with asyncio.timeout(job.timeout_s):
            return await invoke_target(target, request)

    def _fresh(self, job: Job, test: Test, response: TargetResponse) -> TargetResponse:
        """A target's new answer: its cost spent, and cut before anything keeps it (graders, the cache,
        --record and the row see the cut answer)."""
        self.options.budget.add(response.cost_usd)
        return self.answer_cap.apply(response, f"{test.id} [{job.target}]")

    async def _invoke(self, job: Job, request: TargetRequest, target: TargetPlugin) -> TargetResponse:
        cache = self.options.cache if not self.options.dry_run else None
        key: str | None = None
        hit: TargetResponse | None = None
        if cache is not None:
            part = self._cache_keys.target_part(target, job.target, self.configs.for_job(job))
            key = self._cache_keys.key(part, request, setup_of(job), reads=job.suite.dependencies)
            hit = cache.get(key) if key is not None else None
        if hit is not None:
            response = hit  # no new spend
            self.options.budget.note_cached(hit.cost_usd)
        else:
            limit = self._limits.get(id(target))
            if limit is not None:
                async with limit:
                    response = await self._call(job, request, target)
            else:
                response = await self._call(job, request, target)
            response = self._fresh(job, request.test, response)
            if cache is not None and key is not None:
                cache.put(key, response)
        if self.options.recorder is not None:  # cached answers too: the recording stays complete
            self.options.recorder.record(
                suite=request.test.suite or job.suite.name,
                eval_path=relative_eval_path(request.eval_path),
                test_id=request.test.id,
                target=job.target,
                attempt=request.attempt,
                response=response,
            )
        return response

    async def run_attempt(
        self,
        job: Job,
        attempt: int,
        fingerprint: str | None = None,
        dependencies: Dependencies | None = None,
        *,
        answered: TargetResponse | None = None,
    ) -> TestResult:
        """One attempt: the target asked (`answered`: a dry run's placeholder answer, already given
        and cut), the answer graded, the row finished."""

        config = self.configs.for_job(job)
        key = self.configs.key(config, job.target)
        target = self._targets[key]
        caller = self._callers[key]
        test = job.test
        eval_path, shown_path = self._shown_eval_path(job.suite.path)
        if self._judges is not None:  # the judge's replies are keyed on this answer
            caller = self._judges.bind(caller, job, attempt, eval_path)
        dry_run = self.options.dry_run
        workspace: Path | None = None
        lease: Lease | None = None
        started_at = now_millis()
        try:
            hooks = self.configs.hooks(job, shown_path)  # warns of hooks with no workspace to run in
            if workspace_of(test, job.suite) is not None:  # none: no coroutine to await per test
                lease = await self.workspaces.enter(job.suite, test, job.target, hooks)
            workspace = lease.slot.path if lease is not None else None
            inline = getattr(target, "inline_files", True)

            # Plain functions returning the awaitables: no coroutine frame of their own per test.
            def invoke(asked: Test, messages: list[Message], turn: int) -> Awaitable[TargetResponse]:
                request = TargetRequest(
                    test=asked,
                    messages=messages,
                    prompt=render_input(messages, inline_files=inline),
                    eval_path=eval_path,
                    attempt=attempt,
                    timeout_s=job.timeout_s,
                    workspace_path=workspace,
                    files=test.input_files,
                )
                return self._invoke(job, request, target)

            def grade(graded: Test, response: TargetResponse) -> Awaitable[TestResult]:
                return grade_test(
                    graded,
                    response,
                    target=job.target,
                    eval_path=eval_path,
                    threshold=job.threshold,
                    call_grader_target=caller,
                    dry_run=dry_run,
                    attempt=attempt,
                    workspace_path=workspace,
                    dependency_results=dependencies,
                    shown_eval_path=shown_path,
                )

            immediate = self._immediate.get(key)
            if test.mode == "conversation" and test.turns:
                result = await run_conversation(test, threshold=job.threshold, invoke=invoke, grade=grade)
            elif immediate is not None:
                # A dry run's placeholder: `_invoke` without a prompt to render (nothing reads it), a
                # cache, a recording or a deadline (nothing waits), and no coroutines of its own.
                if answered is None:
                    answered = self._fresh(job, test, immediate(test))
                result = await grade(test, answered)
            else:
                result = await grade(test, await invoke(test, test.input, 0))
        except HookError as exc:
            result = unfinished_result(
                job,
                status="execution_error",
                error=str(exc),
                stage=exc.stage,
                reason=exc.reason,
                dry_run=dry_run,
            )
        except TimeoutError:
            error = f"timed out after {job.timeout_s:g}s (wall clock)"  # as deadlines.timed_out
            result = unfinished_result(
                job, status="execution_error", error=error, stage="agent", reason="timeout", dry_run=dry_run
            )
        except TargetError as exc:
            result = unfinished_result(
                job,
                status="execution_error",
                error=exc.message,
                stage="agent",
                reason="timeout" if isinstance(exc, TargetTimeout) else "provider_error",
                dry_run=dry_run,
            )
        except AgentvCiError as exc:
            result = unfinished_result(
                job,
                status="execution_error",
                error=exc.render(),
                stage="evaluator",
                reason="evaluator_error",
                dry_run=dry_run,
            )
        finally:
            if lease is not None:
                await self.workspaces.leave(job.suite, test, lease)
        # A built row is frozen: what only the scheduler knows is added in one copy.
        if fingerprint is None:
            fingerprint = self.definition_fingerprint(job, config)
        known: dict[str, object] = {"fingerprint": fingerprint}
        if not dry_run:  # a dry run's answers come from a mock: they record nothing about a model
            known["provenance"] = self._provenance.of_job(job, config)
        if result.start_time is None:
            known["start_time"] = started_at
            known["end_time"] = now_millis()
        if attempt and result.attempt is None:
            known["attempt"] = attempt
        if not result.suite:
            known["suite"] = job.suite.name
        return msgspec.structs.replace(result, **known)
