from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from agentv_ci.model.result import TestResult
from agentv_ci.model.workspace import WorkspaceHook, WorkspaceSpec
from agentv_ci.running.hooks import HookContext, interpolate_command, run_hook
from agentv_ci.running.plan import PlanOptions, plan_jobs
from agentv_ci.running.scheduler import Runner, RunnerOptions
from tests.process_groups import assert_cancel_during_spawn_leaves_no_children
from tests.running.support import make_suite, write_targets

AGENT = (
    "import json, os, sys\n"
    "text = open('state.txt').read().strip()\n"
    "open('state.txt', 'a').write('+agent')\n"  # leaks into the next test of a shared workspace
    "json.dump({'text': text + ' @' + os.path.basename(os.getcwd())}, open(sys.argv[1], 'w'))\n"
)


def _hooks(**hooks: object) -> dict[str, WorkspaceHook]:
    out: dict[str, WorkspaceHook] = {}
    for name, value in hooks.items():
        out[name] = value if isinstance(value, WorkspaceHook) else WorkspaceHook(command=value)  # type: ignore[arg-type]
    return out


def _setup(
    tmp_path: Path, hooks: dict[str, WorkspaceHook], *, isolation: str = "shared", workers: int = 3
) -> tuple[list[TestResult], Runner]:
    template = tmp_path / "template"
    template.mkdir()
    (template / "state.txt").write_text("fresh")
    (template / "agent.py").write_text(AGENT)
    write_targets(
        tmp_path,
        f"targets:\n  - name: t\n    provider: cli\n    command: {sys.executable} agent.py {{OUTPUT_FILE}}\n",
    )
    suite = make_suite(tmp_path, "ws", 3, expect="ready")
    suite.workspace = WorkspaceSpec(template=str(template), hooks=hooks, isolation=isolation)
    results: list[TestResult] = []
    runner = Runner(plan_jobs([suite], PlanOptions()), RunnerOptions(workers=workers), results.append)
    asyncio.run(runner.run())
    return sorted(results, key=lambda r: r.test_id), runner


def _logger(tmp_path: Path) -> tuple[Path, str]:
    log = tmp_path / "hooks.log"
    script = tmp_path / "hook.py"
    script.write_text(
        "import json, os, sys\n"
        "data = json.load(sys.stdin)\n"
        f"open(r'{log}', 'a').write('%s %s %s\\n' % (sys.argv[1], data['test_id'], "
        "os.path.basename(data['workspace_path'])))\n"
    )
    return log, f"{sys.executable} {script}"


def test_per_test_isolation_copies_the_template_per_test_with_its_own_before_all(tmp_path: Path) -> None:
    log, hook = _logger(tmp_path)
    results, runner = _setup(
        tmp_path,
        _hooks(
            before_all=f"{hook} before_all",
            before_each=f"sed -i.bak s/fresh/ready/ {{{{workspace_path}}}}/state.txt && {hook} before_each",
            after_each=f"{hook} after_each",
            after_all=f"{hook} after_all",
        ),
        isolation="per_test",
    )
    assert [r.execution_status for r in results] == ["ok", "ok", "ok"]
    answers = [r.output or "" for r in results]
    assert all(a.startswith("ready @agentv-ci-ws-") for a in answers)  # hook edit seen, +agent not leaked
    assert len({a.split("@")[1] for a in answers}) == 3  # a separate copy per test
    assert (tmp_path / "template" / "state.txt").read_text() == "fresh"  # the template is untouched
    lines = log.read_text().splitlines()
    # per_test: each test's workspace gets before_all / after_all with the test's id (AgentV)
    assert sorted(line.split()[1] for line in lines if line.startswith("before_all")) == [
        "ws-0",
        "ws-1",
        "ws-2",
    ]
    assert len([line for line in lines if line.startswith("after_all")]) == 3
    assert runner.warnings == []


def test_shared_workspace_is_prepared_once_and_tests_take_turns(tmp_path: Path) -> None:
    log, hook = _logger(tmp_path)
    results, runner = _setup(
        tmp_path,
        _hooks(
            before_all=f"sed -i.bak s/fresh/ready/ {{{{workspace_path}}}}/state.txt && {hook} before_all",
            after_all=f"{hook} after_all",
        ),
    )
    lines = log.read_text().splitlines()
    before_all = [line.split() for line in lines if line.startswith("before_all")]
    assert len(before_all) == 1 and before_all[0][1] == "__before_all__"  # AgentV's id, a real path
    assert before_all[0][2].startswith("agentv-ci-ws-")
    answers = sorted(r.output or "" for r in results)
    # one workspace, used by one test at a time: each test sees the +agent of those before it
    assert [a.split(" @")[0] for a in answers] == ["ready", "ready+agent", "ready+agent+agent"]
    assert len({a.split("@")[1] for a in answers}) == 1
    assert [line.split()[1] for line in lines if line.startswith("after_all")] == ["__after_all__"]
    assert runner.warnings == []


def test_failing_setup_is_an_execution_error_without_teardown(tmp_path: Path) -> None:
    log, hook = _logger(tmp_path)
    results, runner = _setup(tmp_path, _hooks(before_each="exit 7", after_each=f"{hook} after_each"))
    assert {r.execution_status for r in results} == {"execution_error"}
    assert all(r.failure_stage == "setup" and "exited with code 7" in (r.error or "") for r in results)
    assert {r.failure_reason_code for r in results} == {"script_error"}  # AgentV's code for a hook
    assert not log.exists()  # AgentV: a test whose setup failed gets no after_each
    assert runner.warnings == []


def test_failing_teardown_only_warns(tmp_path: Path) -> None:
    results, runner = _setup(tmp_path, _hooks(after_each=WorkspaceHook(command="sleep 5", timeout_ms=100)))
    assert {r.execution_status for r in results} != {"execution_error"}
    assert len(runner.warnings) == 3 and all("timed out after 0.1s" in w for w in runner.warnings)


def test_before_all_failure_fails_every_test_of_the_suite(tmp_path: Path) -> None:
    results, _ = _setup(tmp_path, _hooks(before_all=WorkspaceHook(command="sleep 5", timeout_ms=100)))
    assert [r.execution_status for r in results] == ["execution_error"] * 3
    assert all("before_all" in (r.error or "") and "timed out" in (r.error or "") for r in results)


def test_hook_gets_agentv_stdin_payload_and_runs_in_the_eval_directory(tmp_path: Path) -> None:
    dump = tmp_path / "payload.json"
    command = [
        sys.executable,
        "-c",
        f"import os, sys; open(r'{dump}', 'w').write(os.getcwd() + chr(10) + sys.stdin.read())",
    ]
    _setup(tmp_path, _hooks(before_each=command), workers=1)
    cwd, payload_text = dump.read_text().split("\n", 1)
    payload = json.loads(payload_text)
    assert set(payload) == {"workspace_path", "test_id", "eval_run_id", "case_input", "case_metadata"}
    assert payload["case_input"].startswith("question ")
    assert Path(cwd) == tmp_path  # the eval file's directory, not the workspace (AgentV)
    assert Path(payload["workspace_path"]).name.startswith("agentv-ci-ws-")


def test_placeholders_are_argv_values_or_variables_in_shell_strings() -> None:
    """An argv gets each value as one argument; a shell string gets data as `"$VAR"` expansions (the
    value in the child's environment) and the runner-made workspace path as written."""
    context = HookContext(Path("/w s"), "t-1", "run", case_input="a 'b' $(x)")
    argv, env = interpolate_command(["cp", "{{workspace_path}}/x", "{{ test_id }}", "{{unknown}}"], context)
    assert argv == ["cp", "/w s/x", "t-1", "{{unknown}}"]
    assert env == {}
    plain = HookContext(Path("/tmp/agentv-ci-ws-1"), "t-1", "run", case_input="a 'b' $(x)")
    argv, env = interpolate_command("echo {{case_input}} > {{workspace_path}}/o", plain)
    assert argv == ["sh", "-c", 'echo "$AGENTV_CASE_INPUT" > /tmp/agentv-ci-ws-1/o']
    assert env == {"AGENTV_CASE_INPUT": "a 'b' $(x)"}


def test_cancelling_a_hook_kills_its_process_group(tmp_path: Path) -> None:
    """Ctrl-C while a hook runs (or starts) must not leave the hook's children running."""
    context = HookContext(tmp_path, "t", "run")
    assert_cancel_during_spawn_leaves_no_children(
        tmp_path,
        lambda command: run_hook(command, cwd=tmp_path, context=context, timeout_ms=30_000, env={}),
        (0, 1, 2, 3, 5, 40),  # loop iterations before the cancel: during and after the spawn
        step_s=lambda delay: 0 if delay < 40 else 0.005,
    )


def test_a_hook_cwd_swapped_for_a_symlink_after_loading_does_not_run(tmp_path: Path) -> None:
    """The loader confines `cwd` (E305) and stores its real path; a directory replaced by a symlink to
    somewhere else before the hook runs is refused, not followed."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    swapped = tmp_path / "hooks-dir"
    swapped.symlink_to(elsewhere, target_is_directory=True)
    marker = tmp_path / "ran-in"
    command = [sys.executable, "-c", f"import os; open(r'{marker}', 'w').write(os.getcwd())"]
    results, _ = _setup(
        tmp_path, _hooks(before_each=WorkspaceHook(command=command, cwd=str(swapped))), workers=1
    )
    assert not marker.exists()
    assert all(r.execution_status == "execution_error" for r in results)
    assert all(f"hook cwd {swapped} now resolves to {elsewhere}: refused" in (r.error or "") for r in results)
