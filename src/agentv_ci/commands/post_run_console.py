"""The post-run service (finishing/) as `run` and `report` print it: the verdict on stdout, warnings
on stderr, the Markdown summary appended to GitHub's step summary when the job has one."""

from __future__ import annotations

import typer

from agentv_ci.finishing import PostRun
from agentv_ci.github.step_summary import append_step_summary

__all__ = ["console_post_run"]


def console_post_run() -> PostRun:
    return PostRun(echo=typer.echo, warn=_warn, step_summary=append_step_summary)


def _warn(text: str) -> None:
    typer.echo(text, err=True)
