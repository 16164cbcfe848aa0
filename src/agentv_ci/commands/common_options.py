"""Options several commands take, declared once (typer reads them from the annotation)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentv_ci.security.confinement import ALLOW_OUTSIDE_ENV

__all__ = ["AllowOutsideRepo"]

# `run`, `grade` and `validate`: directories outside the repository that eval files may reference.
AllowOutsideRepo = Annotated[
    list[Path] | None,
    typer.Option(
        "--allow-outside-repo",
        help="Also allow referenced files under DIR (repeatable; see docs/security.md).",
        envvar=ALLOW_OUTSIDE_ENV,
    ),
]
