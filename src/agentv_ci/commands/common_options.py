"""Options several commands take, declared once (typer reads them from the annotation)."""

from pathlib import Path
from typing import Annotated

import typer

from agentv_ci.security.confinement import ALLOW_OUTSIDE_ENV

__all__ = ["AllowOutsideRepo", "History", "MaxCostUsd", "check_max_cost"]

# `run`, `grade` and `validate`: directories outside the repository that eval files may reference.
AllowOutsideRepo = Annotated[
    list[Path] | None,
    typer.Option(
        "--allow-outside-repo",
        help="Also allow referenced files under DIR (repeatable; see docs/security.md).",
        envvar=ALLOW_OUTSIDE_ENV,
    ),
]

# `run` and `report`: the `max_cost_usd` gate (gating.py).
MaxCostUsd = Annotated[
    float | None,
    typer.Option(
        "--max-cost-usd",
        metavar="USD",
        help="Gate: fail (exit 1) when the run actually cost more than this (targets + grader models).",
        show_default=False,
    ),
]

# `run` and `report`: earlier runs of the base branch; tests they label flaky do not block (gating.py).
History = Annotated[
    list[Path] | None,
    typer.Option(
        "--history",
        metavar="RUN",
        help="A run of the base branch (dir or index.jsonl; repeatable, oldest first): a failing test "
        "these runs label flaky is a note, not a gate failure.",
        show_default=False,
    ),
]


def check_max_cost(value: float | None) -> None:
    """A cost limit must be a positive, finite amount (bad input, exit 2, otherwise)."""
    if value is not None and not 0 < value < float("inf"):
        from agentv_ci.errors import UsageError

        raise UsageError(f"--max-cost-usd must be an amount greater than 0, got {value}")
