"""`python -m agentv_ci` and the `agentv-ci` console script."""

from __future__ import annotations


def main() -> None:
    from agentv_ci.cli import run_app

    run_app()


if __name__ == "__main__":
    main()
