from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from agentv_ci.model.result import TestResult
from agentv_ci.running.plan import PlanOptions, plan_jobs
from agentv_ci.running.scheduler import Runner, RunnerOptions
from tests.process_groups import assert_cancel_during_spawn_leaves_no_children
from tests.running.support import make_suite, write_targets

AGENT = (
    "import json, os, sys\n"
    "text = open('state.txt').read().strip()\n"
    "open('state.txt', 'a').write('+agent')\n"  # must not leak into the next test's copy
    "json.dump({'text': text + ' @' + os.path.basename(os.getcwd())}, open(sys.argv[1], 'w'))\n"
)


def _setup(tmp_path: Path, hooks: dict[str, object]) -> tuple[list[TestResult], Runner]:
    template = tmp_path / "template"
    template.mkdir()
    (template / "state.txt").write_text("fresh")
    (template / "agent.py").write_text(AGENT)
    write_targets(
        tmp_path,
        f"targets:\n  - name: t\n    provider: cli\n    command: {sys.executable} agent.py {{OUTPUT_FILE}}\n",
    )
    suite = make_suite(tmp_path, "ws", 3, expect="ready")
    suite.workspace = {"template": "template", "hooks": hooks}
    results: list[TestResult] = []
    runner = Runner(plan_jobs([suite], PlanOptions()), RunnerOptions(workers=3), results.append)
    asyncio.run(runner.run())
    return sorted(results, key=lambda r: r.test_id), runner


def test_template_copied_per_test_and_hooks_run(tmp_path: Path) -> None:
    log = tmp_path / "hooks.log"
    script = tmp_path / "hook.py"
    script.write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        f"open(r'{log}', 'a').write('%s %s\\n' % (sys.argv[1], data['test_id']))\n"
    )
    hook = f"{sys.executable} {script}"
    results, runner = _setup(
        tmp_path,
        {
            "before_all": {"command": f"{hook} before_all"},
            "before_each": {"command": f"sed -i.bak s/fresh/ready/ state.txt && {hook} before_each"},
            "after_each": {"command": f"{hook} after_each"},
            "after_all": {"command": f"{hook} after_all"},
        },
    )
    assert [r.execution_status for r in results] == ["ok", "ok", "ok"]
    answers = [r.output or "" for r in results]
    assert all(a.startswith("ready @agentv-ci-ws-") for a in answers)  # hook edit seen, +agent not leaked
    assert len({a.split("@")[1] for a in answers}) == 3  # a separate copy per test
    assert (tmp_path / "template" / "state.txt").read_text() == "fresh"  # the template is untouched
    lines = log.read_text().splitlines()
    assert lines.count("before_all None") == 1 and lines[0] == "before_all None"
    assert lines.count("after_all None") == 1 and lines[-1] == "after_all None"
    assert sorted(line for line in lines if line.startswith("before_each")) == [
        "before_each ws-0",
        "before_each ws-1",
        "before_each ws-2",
    ]
    assert len([line for line in lines if line.startswith("after_each")]) == 3
    assert runner.warnings == []


def test_failing_setup_is_an_execution_error_and_teardown_only_warns(tmp_path: Path) -> None:
    results, runner = _setup(
        tmp_path, {"before_each": "exit 7", "after_each": {"command": "sleep 5", "timeout_ms": 100}}
    )
    assert {r.execution_status for r in results} == {"execution_error"}
    assert all(r.failure_stage == "setup" and "exited with code 7" in (r.error or "") for r in results)
    assert {r.failure_reason_code for r in results} == {"script_error"}  # AgentV's code for a hook
    assert len(runner.warnings) == 3 and all("timed out after 0.1s" in w for w in runner.warnings)


def test_before_all_failure_fails_every_test_of_the_suite(tmp_path: Path) -> None:
    results, _ = _setup(tmp_path, {"before_all": {"command": "sleep 5", "timeout_ms": 100}})
    assert [r.execution_status for r in results] == ["execution_error"] * 3
    assert all("before_all" in (r.error or "") and "timed out" in (r.error or "") for r in results)


def test_hook_gets_agentv_stdin_payload(tmp_path: Path) -> None:
    dump = tmp_path / "payload.json"
    command = [sys.executable, "-c", f"import sys; open(r'{dump}', 'w').write(sys.stdin.read())"]
    _setup(tmp_path, {"before_each": {"command": command}})
    payload = json.loads(dump.read_text())
    assert set(payload) == {"workspace_path", "test_id", "eval_run_id", "case_input", "case_metadata"}
    assert payload["case_input"].startswith("question ")


def test_cancelling_a_hook_kills_its_process_group(tmp_path: Path) -> None:
    """Ctrl-C while a hook runs (or starts) must not leave the hook's children running."""
    from agentv_ci.running.workspace import run_hook

    assert_cancel_during_spawn_leaves_no_children(
        tmp_path,
        lambda command: run_hook(
            {"command": command}, cwd=tmp_path, payload={}, default_timeout_ms=30_000, env={}
        ),
        (0, 1, 2, 3, 5, 40),  # loop iterations before the cancel: during and after the spawn
        step_s=lambda delay: 0 if delay < 40 else 0.005,
    )
