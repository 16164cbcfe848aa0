"""Tests that cannot run because the event withholds a secret (a fork's `pull_request`).

GitHub gives a fork's pull request no secrets. A run there still runs every test whose target
and judges need no key. A target or judge whose API key is missing is noted while the runner
prepares. The tests that need it get a `not_run` row with `failure_reason_code: needs_secret`,
naming the variable. The gate then calls the run inconclusive (gating.py), never green. Everywhere
else a missing key is still bad input (exit 2), raised before anything runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentv_ci.results.needs_secret import NEEDS_SECRET
from agentv_ci.running.needs import model_grader_targets
from agentv_ci.running.plan import Job
from agentv_ci.running.target_configs import TargetKey
from agentv_ci.targets.factory import MissingApiKeyError
from agentv_ci.targets.grader_caller import GraderCaller

__all__ = ["NEEDS_SECRET", "MissingSecret", "WithheldSecrets"]


@dataclass(frozen=True)
class MissingSecret:
    """Why a job cannot run: the variable, and a sentence for its row's `error`."""

    variable: str
    error: str


@dataclass
class WithheldSecrets:
    """The targets (by the runner's target key) and judges (target key, judge name) whose API key
    the event did not provide. `withheld`: the event gives no secrets; otherwise a missing key is
    raised as before."""

    withheld: bool
    targets: dict[TargetKey, str] = field(default_factory=dict)
    judges: dict[tuple[TargetKey, str], str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.targets or self.judges)

    def note_target(self, key: TargetKey, error: MissingApiKeyError) -> None:
        """Record that the eval target `key` lacks its key, or raise `error` when secrets are not withheld."""
        if not self.withheld:
            raise error
        self.targets[key] = error.variable

    def note_judge(self, key: TargetKey, name: str, error: MissingApiKeyError) -> None:
        """Record that the judge `name` of the eval target `key` lacks its key (or raise `error`)."""
        if not self.withheld:
            raise error
        self.judges[(key, name)] = error.variable

    def of_job(self, job: Job, key: TargetKey, caller: object) -> MissingSecret | None:
        """The secret `job` needs and does not have: its target's, else that of a judge one of its
        model graders asks (chosen as its grader `caller` chooses)."""
        variable = self.targets.get(key)
        if variable is not None:
            return MissingSecret(variable, _sentence(f"target {job.target!r}", variable))
        if not self.judges or not isinstance(caller, GraderCaller):
            return None
        override, default = caller.override, caller.default
        for own in model_grader_targets(job.test):
            name = override or own or default
            variable = self.judges.get((key, name)) if name else None
            if variable is not None:
                return MissingSecret(variable, _sentence(f"grader target {name!r}", variable))
        return None


def _sentence(what: str, variable: str) -> str:
    return f"not run: {what} needs {variable}, a secret this event does not provide (a fork's pull request)"
