"""Built-in targets (mock, replay, cli, openai, azure, anthropic) and `targets.yaml` loading.

Targets are plugins in the `agentv_ci.targets` namespace; see `agentv_ci.plugins.TargetPlugin`.
"""
