"""The `extra_packages` input: third-party plugin packages pip installs into the container at start.

Each item is a requirement specifier for the package index (`name`, `name[extra]==1.2`, `name>=1,<2`):
no paths, URLs or pip options, so a pull request's checkout can never be installed this way (local
code belongs in a derived image, docs/github.md). The index is pip's: PyPI, or `PIP_INDEX_URL` and
the other `PIP_*` variables of the step's `env:`. Installing runs the package's code with the job's
environment, secrets included: pin versions (`==`), and prefer a derived image when you can.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

from agentv_ci.action.log import ActionLog
from agentv_ci.errors import UsageError

PIP_TIMEOUT_S = 600.0


def install_extra_packages(items: list[str], log: ActionLog) -> None:
    """pip install the packages into this interpreter's environment; a failure is bad input (exit 2)."""
    if not items:
        return
    log.echo(f"installing extra packages: {' '.join(items)}")
    command = [sys.executable, "-m", "pip", "install", "--no-input", "--disable-pip-version-check"]
    try:
        done = subprocess.run(
            [*command, "--", *items], capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise UsageError(
            f"input `extra_packages`: pip did not finish within {PIP_TIMEOUT_S:.0f} s (wall clock)"
        ) from None
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise UsageError(
            f"input `extra_packages`: pip could not install {' '.join(items)}:\n{tail}",
            hint="check the names and versions, and PIP_INDEX_URL if you use your own index",
        )
    installed = [line for line in done.stdout.splitlines() if line.startswith("Successfully installed")]
    log.echo(installed[-1] if installed else "extra packages already installed")
    importlib.invalidate_caches()
    # lazy: the plugin registry (entry points) loaded only when `install_extra_packages` runs
    from agentv_ci.plugins.registry import read_installed_again

    read_installed_again()  # the new packages' plugins are seen (an earlier check listed some kinds)
