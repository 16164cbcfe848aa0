"""What a run needs before its first test starts (`RunNeeds`): the targets to create and the
grader targets their model graders ask, gathered while the jobs are first planned."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import GraderSpec, Test
from agentv_ci.running.plan import Job

__all__ = ["MODEL_GRADERS", "Need", "RunNeeds", "matrix_alias", "model_grader_targets"]

MODEL_GRADERS = frozenset({"llm-grader", "rubrics"})  # graders that ask a grader target


class Need(NamedTuple):
    """("target", eval path, target) or ("grader", eval path, target, the model grader's own
    `target`); `alias`: the `use_target` (and where it is written) of the eval file's matrix entry
    for `target`, which makes the name an alias when no targets file declares it."""

    kind: str
    eval_path: str
    target: str
    grader: str | None = None
    alias: tuple[str, SourceLocation | None] | None = None


def matrix_alias(test: Test, target: str) -> tuple[str, SourceLocation | None] | None:
    """The `use_target` of `test`'s matrix entry named `target`, and where it is written."""
    entry = (test.execution.target_hooks or {}).get(target)
    if entry is None or entry.use_target is None:
        return None
    return entry.use_target, entry.use_target_location


class RunNeeds:
    """How many jobs a run has and what they need before the first one starts: the targets to create
    and the grader targets their model graders ask (each once, in the order the jobs first need it,
    so a missing one is reported as a run over the jobs themselves reports it)."""

    def __init__(self) -> None:
        self.jobs = 0
        self._needs: dict[Need, None] = {}
        self._last: Need | None = None

    def add(self, job: Job) -> None:
        self.add_test(job.suite.path, job.target, job.test)

    def add_test(self, eval_path: str, target: str, test: Test) -> None:
        """One job: `test` of the eval file `eval_path` against `target`."""
        self.jobs += 1
        needs = self._needs
        alias = matrix_alias(test, target) if test.execution.target_hooks else None
        last = self._last
        # A suite's tests mostly need what the one before needed (the same path and name objects).
        if (
            last is None
            or last.eval_path is not eval_path
            or last.target is not target
            or last.alias != alias
        ):
            need = Need("target", eval_path, target, None, alias)
            if need != last:
                needs.setdefault(need)
                self._last = need
        if test.turns or not test.graders or _asks_a_model(test.graders):
            for own in model_grader_targets(test):
                needs.setdefault(Need("grader", eval_path, target, own, alias))

    def __iter__(self) -> Iterator[Need]:
        return iter(self._needs)

    @classmethod
    def of(cls, jobs: Iterable[Job]) -> RunNeeds:
        needs = cls()
        for job in jobs:
            needs.add(job)
        return needs


def _asks_a_model(specs: list[GraderSpec]) -> bool:
    for spec in specs:  # noqa: SIM110 (a loop, not any(genexpr): once per test)
        if spec.type in MODEL_GRADERS:
            return True
    return False


def model_grader_targets(test: Test) -> list[str | None]:
    """The own `target` of each model grader of `test` (None: the eval target's grader target)."""
    # lazy: the graders loaded only when `model_grader_targets` runs
    from agentv_ci.grading import graders_for

    specs = graders_for(test) if not test.turns else [*graders_for(test), *_turn_graders(test)]
    owns: list[str | None] = []
    for spec in specs:
        if spec.type in MODEL_GRADERS:
            own = spec.config.get("target")
            owns.append(own if isinstance(own, str) and own else None)
    return owns


def _turn_graders(test: Test) -> list[GraderSpec]:
    return [g for turn in test.turns for g in turn.graders]
