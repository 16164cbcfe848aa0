"""What keeps a hostile pull request in its box: file confinement, secret redaction, the scrubbed
environment of child processes, the print sanitiser. Imports nothing else of agentv_ci but the leaf
text_safety: every layer may use it."""
