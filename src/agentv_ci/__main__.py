"""`python -m agentv_ci`, the `agentv-ci` console script and the Action's `agentv-ci-action`."""

from __future__ import annotations

import sys
import types


def _without_httpx_cli() -> None:
    """httpx imports its own command line (`httpx._main`) with itself wherever click is installed, and
    that loads click, rich and pygments: ~55 ms of start-up in every command that talks HTTP, for a
    client no command uses. An agentv-ci process registers an empty module under that name first;
    httpx's `from ._main import main` then fails as it does where click is missing, and httpx keeps
    its stand-in `main` (which says to install httpx[cli])."""
    sys.modules.setdefault("httpx._main", types.ModuleType("httpx._main"))


def main() -> None:
    _without_httpx_cli()
    # lazy: nothing is imported before the GC threshold is raised (below)
    from agentv_ci.running.gc_tuning import fewer_gc_passes

    # Start-up builds ~100k long-lived objects (modules, classes, functions, the loaded suites): at the
    # default gen-0 threshold the cyclic GC scans them some 80 times before the first model request
    # (~5 ms of the ~0.18 s to it). The whole command runs with the threshold a run uses anyway.
    with fewer_gc_passes():
        # lazy: the CLI's start-up imports run under the raised GC threshold
        from agentv_ci.cli import run_app

        run_app()


def action_main() -> None:
    """The Docker action's entry point: `agentv-ci action`, configured by INPUT_* only.

    GitHub passes a workflow's `with: args:` as the container's arguments; they are refused with a
    clear message instead of being run as flags.
    """
    _without_httpx_cli()
    # lazy: typer and the command tree, only when the Action's entry point runs
    from agentv_ci.cli import run_app

    run_app(["action", *sys.argv[1:]])


if __name__ == "__main__":
    main()
