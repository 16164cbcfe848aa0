"""Built-in graders, one module per family. Each class is registered in the `agentv_ci.graders`
entry-point namespace exactly as a third-party grader would be (see pyproject.toml)."""
