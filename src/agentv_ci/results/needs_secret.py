"""The tests a fork's pull request could not run for want of a secret (`failure_reason_code:
needs_secret`, running/withheld_secrets.py), counted from the rows and said in the gate's reason.

The rows may come from a fork's artifact (the `workflow_run` comment reads them): a variable name
that is not a plain environment variable name is not repeated, and at most a few are named.
"""

from __future__ import annotations

import re

from agentv_ci.model.result import TestResult

__all__ = ["NEEDS_SECRET", "SecretNeeds"]

NEEDS_SECRET = "needs_secret"
_NAMED = 3
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
# Where docs/github.md says how a maintainer runs them.
HOW_TO_RUN = (
    "a maintainer can run {them} after review: push the PR's commits to a branch of this repository, "
    "or `agentv-ci run` with the key (docs/github.md#tests-that-need-a-secret)"
)


class SecretNeeds:
    """How many `not_run` rows need a secret, and the first few variables they name."""

    __slots__ = ("count", "variables")

    def __init__(self) -> None:
        self.count = 0
        self.variables: list[str] = []

    def add(self, result: TestResult) -> None:
        """Count `result` when it is a `needs_secret` row (the caller checked it is `not_run`)."""
        if result.failure_reason_code != NEEDS_SECRET:
            return
        self.count += 1
        name = result.missing_secret
        named = isinstance(name, str) and _VARIABLE.fullmatch(name) is not None
        if named and name not in self.variables and len(self.variables) < _NAMED:
            self.variables.append(str(name))

    def reason(self) -> str:
        """The gate's reason: how many tests need a secret, which, and how a maintainer runs them."""
        one = self.count == 1
        named = f" ({', '.join(self.variables)})" if self.variables else ""
        return (
            f"{self.count} {'test needs' if one else 'tests need'} a secret a fork's pull request does not "
            f"get{named}: not run; " + HOW_TO_RUN.format(them="it" if one else "them")
        )
