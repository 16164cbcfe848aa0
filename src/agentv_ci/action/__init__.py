"""The GitHub Action's pipeline (`agentv-ci action`): select -> run -> baseline -> report -> comment.

It sits between `commands/` and the packages it drives (`running/`, `selection/`, `github/`), and is
configured only by `INPUT_*` and the `GITHUB_*` environment (see `github/inputs.py`, `github/event.py`).
"""
