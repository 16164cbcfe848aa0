"""Flakiness measured from earlier runs of the base branch (`agentv-ci flaky`, `--history`)."""
