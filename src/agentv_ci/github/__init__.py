"""GitHub Actions integration: the job step summary (more to come: PR comment, outputs)."""
