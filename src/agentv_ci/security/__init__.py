"""What keeps a hostile pull request in its box: file confinement, secret redaction, the scrubbed
environment of child processes. Imports nothing else of agentv_ci: every layer may use it."""
