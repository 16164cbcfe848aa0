"""agentv-ci: a CI-native runner for AgentEvals / AgentV eval files."""

__version__ = "0.1.0"
__all__ = ["__version__"]
