"""`python -m agentv_ci`, the `agentv-ci` console script and the Action's `agentv-ci-action`."""

from __future__ import annotations

import sys


def main() -> None:
    from agentv_ci.cli import run_app

    run_app()


def action_main() -> None:
    """The Docker action's entry point: `agentv-ci action`, configured by INPUT_* only.

    GitHub passes a workflow's `with: args:` as the container's arguments; they are refused with a
    clear message instead of being run as flags.
    """
    from agentv_ci.cli import run_app

    run_app(["action", *sys.argv[1:]])


if __name__ == "__main__":
    main()
