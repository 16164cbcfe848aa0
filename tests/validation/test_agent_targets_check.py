"""`validate` on agent targets: AgentV's Copilot custom-endpoint fields are known (no W108), and
W112 warns when a test's graders expect edits that a read-only Codex sandbox will reject."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.validation.validator import validate_paths

TARGETS = """\
targets:
  - name: copilot-byok
    provider: copilot-cli
    base_url: http://127.0.0.1:9/v1
    subprovider: openai
    api_key: sk-local
    bearer_token: tok
    api_version: "2024-10-21"
    api_format: completions
    model: gpt-4o-mini
  - name: codex-default
    provider: codex
  - name: codex-read-only
    provider: codex-cli
    sandbox: read-only
  - name: codex-write
    provider: codex
    sandbox: workspace-write
  - name: codex-args
    provider: codex
    args: ["--sandbox", "workspace-write"]
"""


def _project(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / ".agentv").mkdir()
    (root / ".agentv" / "targets.yaml").write_text(TARGETS)
    return root


def _codes(root: Path) -> list[tuple[str, str, int]]:
    report = validate_paths([root], env={})
    return sorted((d.code, d.message, d.line) for d in report.diagnostics)


def test_copilot_custom_endpoint_fields_are_known(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "a.eval.yaml").write_text(
        "execution:\n  target: copilot-byok\ntests:\n  - id: t\n    input: hi\n    criteria: says hi\n"
    )
    assert _codes(root) == []


EDIT_TRAJECTORY = """\
    assertions:
      - type: tool-trajectory
        mode: any_order
        minimums: {Edit: 1}
"""
NESTED_TRAJECTORY = """\
    assertions:
      - type: composite
        assertions:
          - type: tool-trajectory
            mode: in_order
            expected: [{tool: Bash}, {tool: Write}]
"""
READ_TRAJECTORY = """\
    assertions:
      - type: tool-trajectory
        mode: in_order
        expected: [{tool: Bash}, {tool: Read}]
"""
CODE_GRADER = """\
    workspace:
      template: ./ws
    assertions:
      - type: code-grader
        command: [python3, check.py]
"""


@pytest.mark.parametrize(
    ("target", "graders", "warned"),
    [
        ("codex-default", EDIT_TRAJECTORY, True),
        ("codex-read-only", EDIT_TRAJECTORY, True),
        ("codex-default", NESTED_TRAJECTORY, True),
        ("codex-default", CODE_GRADER, True),
        ("codex-default", READ_TRAJECTORY, False),  # no edit expected
        ("codex-write", EDIT_TRAJECTORY, False),  # the sandbox lets it write
        ("codex-args", EDIT_TRAJECTORY, False),  # so do its own args
        ("copilot-byok", EDIT_TRAJECTORY, False),  # not Codex
    ],
)
def test_w112_edits_expected_under_a_read_only_codex(
    tmp_path: Path, target: str, graders: str, warned: bool
) -> None:
    root = _project(tmp_path)
    (root / "ws").mkdir()
    (root / "check.py").write_text("print('{\"score\": 1}')\n")
    (root / "a.eval.yaml").write_text(
        f"execution:\n  target: {target}\ntests:\n  - id: fix-it\n    input: fix calc.py\n{graders}"
    )
    found = [c for c in _codes(root) if c[0] == "W112"]
    if not warned:
        assert found == []
        return
    ((_, message, line),) = found
    assert line == 4  # at the test
    assert "test 'fix-it' expects file edits" in message
    assert f"target {target!r} runs Codex read-only" in message
