"""GitHub: the workflow run the Action is in (`event`, `inputs`), what it writes back to the job
(`outputs`, `step_summary`, `annotations`; the `::` escaping is `agentv_ci.workflow_commands`), the
sticky PR comment (`comment`), the REST client (`api`, `wall_clock`) and the base branch's results
artifact (`artifacts`, `safe_unzip`). The Action's flow that uses them is in `agentv_ci.action`."""
