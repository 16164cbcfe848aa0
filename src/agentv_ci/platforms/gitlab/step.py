"""`agentv-ci gitlab`'s step: the shared pipeline (action/pipeline.py) on the GitLab platform."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from agentv_ci.action.log import ActionLog
from agentv_ci.action.pipeline import run_step
from agentv_ci.errors import AgentvCiError
from agentv_ci.platforms.gitlab.platform import GitLabPlatform

__all__ = ["run_gitlab"]


def run_gitlab(args: Sequence[str], env: Mapping[str, str] | None = None) -> int:
    """Run the step; returns the exit code (`run`'s: 0 pass, 1 gate failed, 2 bad input, 3
    inconclusive). A failure still writes `AGENTV_CI_VERDICT=error` to the dotenv outputs."""
    environment = os.environ if env is None else env
    log = ActionLog(
        echo=lambda s: print(s, flush=True), warn=lambda s: print(s, file=sys.stderr), in_actions=False
    )
    built: list[GitLabPlatform] = []

    def platform() -> GitLabPlatform:
        built.append(GitLabPlatform(environment, log, args))
        built[-1].refuse_fork_in_parent()  # after it exists, so the refusal still writes the outputs
        return built[-1]

    def failed(exc: AgentvCiError) -> None:
        if built:
            built[-1].write_outputs({"verdict": "error"})

    return run_step(environment, log, platform, failed)
