"""Built-in targets (mock, replay, cli, openai, azure, anthropic, openrouter, gemini, and the coding-agent
CLIs in `agents/`: claude, codex, copilot-cli, pi) and `targets.yaml` loading.

Targets are plugins in the `agentv_ci.targets` namespace; see `agentv_ci.plugins.TargetPlugin`.
"""
