"""Each coding-agent target end to end through the CLI: a fake agent first on PATH fixes a bug in
the test's workspace copy, and `tool-trajectory` grades the tool calls it made (with durations)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.fakes.agents import install_fake_agents, path_with

EVAL = """\
name: fix-bug
execution:
  target: agent
workspace:
  template: ./template
tests:
  - id: fix-add
    input: The test in test_calc.py fails. Fix calc.py.
    assertions:
      - type: tool-trajectory
        name: trajectory
        mode: in_order
        expected:
{expected}
      - type: contains
        value: a + b
      - type: code-grader
        name: calc-fixed
        command: [python3, check.py]
      - type: execution-metrics
        max_tool_calls: 10
"""
CHECK = """\
import json, pathlib, sys
workspace = pathlib.Path(json.load(sys.stdin)["workspace_path"])
fixed = "return a + b" in (workspace / "calc.py").read_text()
print(json.dumps({"score": 1 if fixed else 0, "assertions": [{"text": "calc.py fixed", "passed": fixed}]}))
"""
# provider -> the tool names AgentV reports for the recorded run, and the reported cost
AGENTS = {
    "claude-cli": (["Read", "Edit", "Bash"], 0.0421386),
    "codex": (["Bash", "Edit", "Bash"], None),
    "copilot-cli": (["Read", "Edit", "Bash"], None),
    "pi-coding-agent": (["Read", "Edit", "Bash"], 0.00325),
}


def _project(root: Path, provider: str, tools: list[str]) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / ".agentv").mkdir()
    (root / ".agentv" / "targets.yaml").write_text(
        f"targets:\n  - name: agent\n    provider: {provider}\n    timeout_seconds: 60\n"
    )
    template = root / "template"
    template.mkdir()
    (template / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (template / "test_calc.py").write_text(
        "from calc import add\n\ndef test_add():\n    assert add(2, 2) == 4\n"
    )
    (root / "check.py").write_text(CHECK)
    items = [f"          - tool: {tool}" for tool in tools]
    items[-1] += "\n            max_duration_ms: 10000"  # the last call (the test run) took ~200-300 ms
    (root / "fix.eval.yaml").write_text(EVAL.format(expected="\n".join(items)))
    return root


@pytest.mark.parametrize("provider", sorted(AGENTS))
def test_a_coding_agent_run_is_graded_on_its_tool_trajectory(tmp_path: Path, provider: str) -> None:
    tools, cost = AGENTS[provider]
    root = _project(tmp_path / "project", provider, tools)
    bin_dir = install_fake_agents(tmp_path / "bin")
    env = {**os.environ, "PATH": path_with(bin_dir), "CI": "true"}
    done = run_cli("run", "fix.eval.yaml", "-o", "out", cwd=root, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    row = json.loads((root / "out" / "index.jsonl").read_text())
    assert (row["target"], row["execution_status"], row["verdict"], row["score"]) == (
        "agent",
        "ok",
        "pass",
        1.0,
    )
    scores = {s["name"]: s for s in row["scores"]}
    assert scores["trajectory"]["score"] == 1.0
    latency = [a["text"] for a in scores["trajectory"]["assertions"] if "max: 10000ms" in a["text"]]
    assert latency and " completed in " in latency[0]  # a measured duration, not a skipped check
    assert scores["calc-fixed"]["score"] == 1.0  # the agent really edited the workspace copy
    assert (root / "template" / "calc.py").read_text().endswith("a - b\n")  # ...not the template
    assert row["token_usage"]["input"] > 0
    if cost is not None:
        assert row["cost_usd"] == pytest.approx(cost)


def test_a_wrong_trajectory_fails_the_test(tmp_path: Path) -> None:
    root = _project(tmp_path / "project", "claude", ["Write", "Bash"])
    bin_dir = install_fake_agents(tmp_path / "bin", ("claude",))
    done = run_cli(
        "run", "fix.eval.yaml", "-o", "out", cwd=root, env={**os.environ, "PATH": path_with(bin_dir)}
    )
    assert done.returncode == 1, done.stdout + done.stderr
    row = json.loads((root / "out" / "index.jsonl").read_text())
    trajectory = next(s for s in row["scores"] if s["name"] == "trajectory")
    assert trajectory["score"] < 1.0 and row["execution_status"] == "quality_failure"


def test_an_agent_that_is_not_installed_is_an_execution_error_not_a_crash(tmp_path: Path) -> None:
    root = _project(tmp_path / "project", "codex", ["Bash"])
    env = {**os.environ, "PATH": str(tmp_path / "empty")}
    done = run_cli("run", "fix.eval.yaml", "-o", "out", cwd=root, env=env)
    assert done.returncode == 3, done.stdout + done.stderr
    row = json.loads((root / "out" / "index.jsonl").read_text())
    assert row["execution_status"] == "execution_error" and row["failure_reason_code"] == "provider_error"
    assert "'codex' was not found on PATH" in row["error"]
