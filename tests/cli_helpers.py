"""Helpers for tests that run `python -m agentv_ci` in a subprocess on small eval projects."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """`python -m agentv_ci <args>` with text output captured (the real process exit code)."""
    return subprocess.run(
        [sys.executable, "-m", "agentv_ci", *args],
        cwd=cwd,
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def mock_project(evals: Path, *, response: str, eval_file: str, eval_yaml: str) -> Path:
    """`evals/.agentv/targets.yaml` with one mock target `default` answering `response`, and
    `evals/<eval_file>` holding `eval_yaml`. Returns `evals`."""
    (evals / ".agentv").mkdir(parents=True)
    (evals / ".agentv" / "targets.yaml").write_text(
        f"targets:\n  - name: default\n    provider: mock\n    response: {response}\n"
    )
    (evals / eval_file).write_text(eval_yaml)
    return evals
