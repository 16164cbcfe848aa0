"""Loading matrix target entries (`execution.targets: [{name, use_target, hooks}]`): an eval file's
own entries are run (no W110), a test's are reported, and their hooks are checked as workspace hooks."""

from __future__ import annotations

from pathlib import Path

from agentv_ci.model.workspace import WorkspaceHook
from tests.loading.helpers import codes, load_text


def test_an_eval_files_entries_keep_their_hooks_and_alias_without_w110(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    result = load_text(
        tmp_path,
        """\
        experiment:
          targets:
            - name: fast
              use_target: default
              hooks:
                before_all: {command: [echo, "{{workspace_path}}"], timeout_ms: 5000}
                before_each: "echo {{test_id}}"
                after_each: {command: [echo, done], cwd: ./scripts, env: {A: "1"}}
            - plain
        workspace: {template: .}
        tests:
          - id: a
            input: hi
            criteria: c
        """,
    )
    assert codes(result) == []
    assert result.suite is not None
    test = result.suite.tests[0]
    assert test.execution.targets == ["fast", "plain"]
    entry = (test.execution.target_hooks or {})["fast"]
    assert entry.use_target == "default"
    assert entry.use_target_location is not None and entry.use_target_location.line == 4
    assert entry.hooks == {
        "before_all": WorkspaceHook(command=["echo", "{{workspace_path}}"], timeout_ms=5000),
        "before_each": WorkspaceHook(command="echo {{test_id}}"),
        "after_each": WorkspaceHook(command=["echo", "done"], cwd=str(tmp_path / "scripts"), env={"A": "1"}),
    }
    assert "plain" not in (test.execution.target_hooks or {})


def test_a_tests_own_entry_keeps_the_suites_hooks_and_reports_its_own(tmp_path: Path) -> None:
    result = load_text(
        tmp_path,
        """\
        execution:
          targets: [{name: fast, hooks: {before_each: {command: [echo, suite]}}}]
        workspace: {template: .}
        tests:
          - id: a
            input: hi
            criteria: c
            execution:
              targets: [{name: fast, use_target: other, hooks: {before_each: {command: [echo, test]}}}]
        """,
    )
    assert [(d.code, d.line) for d in result.diagnostics] == [("W110", 9), ("W110", 9)]
    assert all("a test's matrix target" in d.message for d in result.diagnostics)
    assert result.suite is not None
    entry = (result.suite.tests[0].execution.target_hooks or {})["fast"]
    assert entry.hooks["before_each"].command == ["echo", "suite"] and entry.use_target is None


def test_target_hooks_are_checked_like_workspace_hooks(tmp_path: Path) -> None:
    result = load_text(
        tmp_path,
        """\
        execution:
          targets:
            - name: a
              use_target: 7
              hooks:
                before_each: {command: "cat '{{case_input}}'"}
                after_each: {reset: fast}
                before_every: {command: [x]}
                after_all: {command: [python3, -c, "print('{{test_id}}')"]}
        workspace: {template: .}
        tests:
          - id: a
            input: hi
            criteria: c
        """,
    )
    got = sorted((d.code, d.line) for d in result.diagnostics)
    # a use_target that is not a name; data inside quotes in a shell string and in python code (E501);
    # a reset, which a target hook does not run (W110, as AgentV ignores it); an unknown hook point (W101)
    assert got == [("E101", 4), ("E501", 6), ("E501", 9), ("W101", 8), ("W110", 7)]


def test_hooks_with_no_workspace_anywhere_warn_that_they_never_run(tmp_path: Path) -> None:
    text = """\
        execution:
          targets: [{name: a, hooks: {before_each: {command: [echo]}}}, {name: b, use_target: a}]
        tests:
          - id: a
            input: hi
            criteria: c
        """
    result = load_text(tmp_path, text)
    assert codes(result) == [("W106", 2, 12)]
    assert "'a' never run" in result.diagnostics[0].message
    with_one = text.replace("criteria: c\n", "criteria: c\n            workspace: {template: .}\n")
    assert codes(load_text(tmp_path, with_one)) == []


def test_an_empty_use_target_is_no_alias_as_agentv(tmp_path: Path) -> None:
    # AgentV's bug-fix benchmark writes `use_target: ${{ AGENT_TARGET }}`: unset, the entry is a name
    result = load_text(
        tmp_path,
        """\
        execution:
          targets: [{name: a, use_target: "${{ AGENT_TARGET }}", hooks: {before_each: {command: [echo]}}}]
        workspace: {template: .}
        tests:
          - id: a
            input: hi
            criteria: c
        """,
    )
    assert codes(result) == []
    assert result.suite is not None
    entry = (result.suite.tests[0].execution.target_hooks or {})["a"]
    assert entry.use_target is None and entry.hooks["before_each"].command == ["echo"]
