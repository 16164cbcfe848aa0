"""Where the Action's messages go: the job log (stdout), stderr, and GitHub's `::notice`/`::warning`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agentv_ci.github.annotations import workflow_command
from agentv_ci.security.streams import print_workflow_command

Echo = Callable[[str], None]


@dataclass
class ActionLog:
    """`echo` prints to the log (stdout), `warn` to stderr; `in_actions`: inside GitHub Actions, where
    notices and warnings are workflow commands (shown on the run page)."""

    echo: Echo
    warn: Echo
    in_actions: bool

    def notice(self, text: str) -> None:
        if self.in_actions:
            return print_workflow_command(workflow_command("notice", text, title="agentv-ci"))
        self.echo(f"note: {text}")

    def warning(self, text: str) -> None:
        if self.in_actions:
            return print_workflow_command(workflow_command("warning", text, title="agentv-ci"))
        self.warn(f"warning: {text}")
