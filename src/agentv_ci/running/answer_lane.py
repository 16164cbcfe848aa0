"""The answer lane: a dry run's job whose placeholder answers at once and whose graders read the
answer's text alone (graders/answer_only.py) runs in one plain call, without a coroutine, task or
grading context of its own; its row is built once, with what `Runner.run_attempt` adds. The runner
asks `AnswerLanes.lane` of each job and runs the admitted ones with `AnswerLanes.run`; everything else
(and a lane's rare detours) goes the usual way, `Runner.run_job` / `run_attempt`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentv_ci.clock import now_millis
from agentv_ci.errors import AgentvCiError
from agentv_ci.graders.answer_graders import AnswerGraders
from agentv_ci.grading import answer_graders, grade_now
from agentv_ci.model.result import TargetResponse, TestResult
from agentv_ci.model.suite import Test
from agentv_ci.running.plan import Job
from agentv_ci.running.spec_memo import LIMIT, BySpecs, content_key
from agentv_ci.running.target_configs import TargetConfigs, TargetKey
from agentv_ci.running.workspace import workspace_of
from agentv_ci.targets.config import TargetsConfig

__all__ = ["AnswerLanes", "Detour", "Lane"]


@dataclass(frozen=True, slots=True)
class Lane:
    """What `AnswerLanes.run` needs of a job, found by `AnswerLanes.lane`."""

    config: TargetsConfig
    immediate: Callable[[Test], TargetResponse]
    graders: AnswerGraders
    shown_path: str


@dataclass(frozen=True, slots=True)
class Detour:
    """A job `AnswerLanes.run` hands to run_attempt: its fingerprint, and the answer already given
    (None: ask again)."""

    fingerprint: str
    answer: TargetResponse | None


class AnswerLanes:
    """The lanes of a run's jobs, each built once per suite, target and graders. What it reads of the
    runner is given: the target configs, the placeholders that answer at once (filled in as the runner
    prepares), the eval paths as rows show them, the definition fingerprint and how a new answer is
    taken (its cost spent, cut to the answer cap)."""

    def __init__(
        self,
        configs: TargetConfigs,
        immediate: dict[TargetKey, Callable[[Test], TargetResponse]],
        shown_eval_path: Callable[[str], tuple[Path, str]],
        fingerprint: Callable[[Job, TargetsConfig], str],
        fresh: Callable[[Job, Test, TargetResponse], TargetResponse],
    ) -> None:
        self._configs = configs
        self._immediate = immediate
        self._shown_eval_path = shown_eval_path
        self._fingerprint = fingerprint
        self._fresh = fresh
        self._lanes: BySpecs[Lane | None] = BySpecs()
        self._alike: dict[tuple[str, str, bytes], Lane | None] = {}  # see _alike_of

    def lane(self, job: Job) -> Lane | None:
        """What a job needs to run at once: a dry run's placeholder answers it, it has one attempt, no
        workspace, no conversation, and only graders that read the answer's text; else None."""
        if not self._immediate or job.attempts != 1 or job.adaptive:
            return None
        test = job.test
        if (test.mode == "conversation" and test.turns) or workspace_of(test, job.suite) is not None:
            return None
        if test.execution.target_hooks:  # a matrix entry may alias the target: not cached
            return self._new(job)
        return self._lanes.of((job.suite.path, job.target), test.graders, lambda: self._alike_of(job))

    def _alike_of(self, job: Job) -> Lane | None:
        """`_new`, shared by the jobs of a suite and target whose graders are written alike: a test's
        inline graders are specs of its own, but the graders built from them differ only in where
        they were written, which no result of an answer-only grader shows."""
        content = content_key(job.test.graders)
        if content is None:
            return self._new(job)
        key = (job.suite.path, job.target, content)
        try:
            return self._alike[key]
        except KeyError:
            if len(self._alike) >= LIMIT:
                self._alike.clear()
            lane = self._alike[key] = self._new(job)
            return lane

    def _new(self, job: Job) -> Lane | None:
        config = self._configs.for_job(job)
        immediate = self._immediate.get(self._configs.key(config, job.target))
        if immediate is None:
            return None
        eval_path, shown_path = self._shown_eval_path(job.suite.path)
        graders = answer_graders(job.test, eval_path)
        if graders is None:
            return None
        return Lane(config, immediate, graders, shown_path)

    def run(self, job: Job, lane: Lane) -> TestResult | Detour:
        """`Runner.run_job` of a job `lane` admits, in one plain call: its row built once, with what
        run_attempt adds. Its rare detours take run_attempt: an answer that fails (asked again there)
        or a regex that needs longer (graded off the loop)."""
        test = job.test
        fingerprint = self._fingerprint(job, lane.config)
        started_at = now_millis()
        if test.execution.target_hooks:
            self._configs.hooks(job, lane.shown_path)  # warns of hooks with no workspace to run in
        try:
            answer = lane.immediate(test)
        except AgentvCiError:
            return Detour(fingerprint, None)
        answer = self._fresh(job, test, answer)
        row = grade_now(
            test,
            answer,
            lane.graders,
            target=job.target,
            threshold=job.threshold,
            dry_run=True,
            eval_path=lane.shown_path,
            suite=test.suite or job.suite.name,
            fingerprint=fingerprint,
            started_at=started_at,
        )
        return row if row is not None else Detour(fingerprint, answer)
