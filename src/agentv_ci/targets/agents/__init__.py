"""Coding-agent CLIs as targets: Claude Code (`claude`, `claude-cli`), Codex (`codex`), Copilot CLI
(`copilot-cli`) and pi (`pi-cli`, `pi-coding-agent`).

Each runs the agent non-interactively in the test's workspace, reads its JSON event stream
(`stream_runner`), and turns the events into a transcript (`transcript`): the final answer, every tool
call with its arguments, output and duration, token usage and cost. One module per agent family says
which flags start it and what its events mean.
"""
