import json
import sys

d = json.load(sys.stdin)
# the keys AgentV 4.42.4 sends on stdin (a runner may send more, e.g. legacy aliases)
agentv = {
    "config",
    "cost_usd",
    "criteria",
    "duration_ms",
    "end_time",
    "expected_output",
    "file_changes",
    "input",
    "input_files",
    "messages",
    "metadata",
    "output",
    "start_time",
    "token_usage",
    "trace",
    "trace_summary",
    "workspace_path",
}
missing = sorted(agentv - set(d))
print(
    json.dumps(
        {
            "score": 1 if "42" in json.dumps(d["output"]) else 0,
            "assertions": [{"text": "missing keys: " + ",".join(missing), "passed": not missing}],
        }
    )
)
