"""What a run needs before its first test starts (`RunNeeds`): the targets to create and the
grader targets their model graders ask, gathered while the jobs are first planned."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from agentv_ci.model.suite import GraderSpec, Test
from agentv_ci.running.plan import Job

__all__ = ["MODEL_GRADERS", "Need", "RunNeeds"]

MODEL_GRADERS = frozenset({"llm-grader", "rubrics"})  # graders that ask a grader target

# ("target", eval path, target) or ("grader", eval path, target, the model grader's own `target`)
Need = tuple[str, str, str] | tuple[str, str, str, str | None]


class RunNeeds:
    """How many jobs a run has and what they need before the first one starts: the targets to create
    and the grader targets their model graders ask (each once, in the order the jobs first need it,
    so a missing one is reported as a run over the jobs themselves reports it)."""

    def __init__(self) -> None:
        self.jobs = 0
        self._needs: dict[Need, None] = {}

    def add(self, job: Job) -> None:
        self.add_test(job.suite.path, job.target, job.test)

    def add_test(self, eval_path: str, target: str, test: Test) -> None:
        """One job: `test` of the eval file `eval_path` against `target`."""
        from agentv_ci.grading import graders_for

        self.jobs += 1
        needs = self._needs
        needs.setdefault(("target", eval_path, target))
        specs = graders_for(test) if not test.turns else [*graders_for(test), *_turn_graders(test)]
        for spec in specs:
            if spec.type in MODEL_GRADERS:
                own = spec.config.get("target")
                needs.setdefault(("grader", eval_path, target, own if isinstance(own, str) and own else None))

    def __iter__(self) -> Iterator[Need]:
        return iter(self._needs)

    @classmethod
    def of(cls, jobs: Iterable[Job]) -> RunNeeds:
        needs = cls()
        for job in jobs:
            needs.add(job)
        return needs


def _turn_graders(test: Test) -> list[GraderSpec]:
    return [g for turn in test.turns for g in turn.graders]
