"""Matrix target hooks and `use_target` (`execution.targets: [{name, use_target, hooks}]`), run
through the CLI as AgentV v4.42.4 runs them: the eight hook points in its order, a target's setup a
test needs, an alias run under the entry's name, and what a failing target hook does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli

PY = sys.executable  # the hooks and agents run with `-S`: no site-packages to scan, once per test and hook
READY = "ready=(alpha|beta|fast)"  # what a test needs: its target's before_each ran

# Each hook appends one line: its name, the target it belongs to ("-": the workspace's), the test id
# and the workspace path it got on stdin; the target's before_each leaves `ready.txt` for the agent
# and its after_each takes it away again.
LOG_HOOK = textwrap.dedent(
    """\
    import json, os, sys
    ctx = json.load(sys.stdin)
    name, target = sys.argv[1], sys.argv[2]
    ws = ctx["workspace_path"]
    assert ctx["eval_run_id"], ctx
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "order.log"), "a") as log:
        log.write(f"{name} {target} {ctx['test_id']} {ws}\\n")
    if name == "before_each" and target != "-":
        open(os.path.join(ws, "ready.txt"), "w").write(target)
    if name == "after_each" and target != "-":
        os.remove(os.path.join(ws, "ready.txt"))
    if os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), f"fail-{name}-{target}")):
        sys.exit(3)
    """
)

# The agent (a cli target, run in the workspace): which agent it is, and what the target's setup left.
AGENT = textwrap.dedent(
    """\
    import json, os, sys
    ready = open("ready.txt").read() if os.path.exists("ready.txt") else "none"
    json.dump({"text": f"agent={sys.argv[1]} ready={ready}"}, open(sys.argv[2], "w"))
    """
)


def _hooks(target: str, indent: str) -> str:
    lines = []
    for name in ("before_all", "before_each", "after_each", "after_all"):
        lines.append(f"{name}:")
        lines.append(f"  command: [{PY}, -S, ../scripts/log.py, {name}, {target}]")
    return textwrap.indent("\n".join(lines), indent)


def _project(tmp_path: Path, targets: str, *, tests: int = 2) -> Path:
    project = tmp_path / "project"
    (project / "evals" / "template").mkdir(parents=True)
    (project / "scripts").mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / "evals" / "template" / "notes.txt").write_text("template\n")
    (project / "scripts" / "log.py").write_text(LOG_HOOK)
    (project / "scripts" / "agent.py").write_text(AGENT)
    (project / ".agentv").mkdir()
    (project / ".agentv" / "targets.yaml").write_text(
        "targets:\n"
        + "".join(
            f"  - name: {name}\n    provider: cli\n"
            f"    command: {PY} -S {project}/scripts/agent.py {name} {{OUTPUT_FILE}}\n"
            for name in ("alpha", "beta")
        )
    )
    cases = "".join(
        f"  - id: t{i}\n    input: go {i}\n    assertions: [{{type: regex, value: '{READY}'}}]\n"
        for i in range(1, tests + 1)
    )
    (project / "evals" / "matrix.eval.yaml").write_text(
        "execution:\n  targets:\n"
        + targets
        + "workspace:\n  template: ./template\n  hooks:\n"
        + _hooks("-", "    ")
        + "\ntests:\n"
        + cases
    )
    return project


def _entry(name: str, *, use_target: str | None = None) -> str:
    alias = f"      use_target: {use_target}\n" if use_target else ""
    return f"    - name: {name}\n{alias}      hooks:\n" + _hooks(name, "        ") + "\n"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTV_CI_"))}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), **extra)
    return env


def _run(project: Path, tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path / "out"
    done = run_cli(
        "run", str(project / "evals" / "matrix.eval.yaml"), "-o", str(out), *args,
        cwd=project, env=_env(tmp_path), timeout=180,
    )  # fmt: skip
    return done, out


def _rows(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    rows = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines() if line.strip()]
    return {(row["test_id"], row["target"]): row for row in rows}


def _log(project: Path) -> list[tuple[str, str, str, str]]:
    lines = (project / "scripts" / "order.log").read_text().splitlines()
    return [tuple(line.split(" ", 3)) for line in lines]  # type: ignore[misc]


def _by_workspace(log: list[tuple[str, str, str, str]]) -> dict[str, list[tuple[str, str, str]]]:
    """The log lines of each workspace (each target has its own), without the path."""
    grouped: dict[str, list[tuple[str, str, str]]] = {}
    for name, target, test_id, ws in log:
        grouped.setdefault(ws, []).append((name, target, test_id))
    return grouped


def _expected_for(target: str, tests: list[str]) -> list[tuple[str, str, str]]:
    """AgentV's order of the eight hook points, for one target's tests run one after another."""
    lines = [("before_all", "-", "__before_all__"), ("before_all", target, "__target_before_all__")]
    for test in tests:
        lines += [
            ("before_each", "-", test),
            ("before_each", target, test),
            ("after_each", target, test),
            ("after_each", "-", test),
        ]
    return [*lines, ("after_all", target, "__target_after_all__"), ("after_all", "-", "__after_all__")]


def test_eight_hook_points_run_in_agentv_order_and_a_test_needing_its_target_setup_passes(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path, _entry("alpha") + _entry("beta"))
    done, out = _run(project, tmp_path, "--workers", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _rows(out)
    # the agent found what its own target's before_each left in the workspace: 1.0, as AgentV
    for test in ("t1", "t2"):
        for target in ("alpha", "beta"):
            row = rows[(test, target)]
            assert row["output"] == f"agent={target} ready={target}", row
            assert row["score"] == 1.0
    log = _log(project)
    workspace = {target: ws for name, target, _, ws in log if name == "before_all" and target != "-"}
    assert len(set(workspace.values())) == 2  # each target has its own workspace
    shown = [(name, target, test, "A" if ws == workspace["alpha"] else "B") for name, target, test, ws in log]

    def steps(target: str, ws: str, tests: list[str]) -> list[tuple[str, str, str, str]]:
        return [(*line, ws) for line in _expected_for(target, tests)]

    alpha_t1, beta_t1 = steps("alpha", "A", ["t1"]), steps("beta", "B", ["t1"])
    # --workers 1: t1/alpha, t1/beta, t2/alpha, t2/beta; the after_all hooks when the run ends
    expected = (
        alpha_t1[:6]
        + beta_t1[:6]
        + steps("alpha", "A", ["t2"])[2:6]
        + steps("beta", "B", ["t2"])[2:6]
        + alpha_t1[6:]
        + beta_t1[6:]
    )
    assert shown == expected


def test_with_several_workers_each_target_keeps_agentv_order(tmp_path: Path) -> None:
    project = _project(tmp_path, _entry("alpha") + _entry("beta"), tests=4)
    done, out = _run(project, tmp_path, "--workers", "4")
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(row["score"] == 1.0 for row in _rows(out).values())
    grouped = _by_workspace(_log(project))
    assert len(grouped) == 2
    for lines in grouped.values():
        target = lines[1][1]
        assert lines[:2] == [
            ("before_all", "-", "__before_all__"),
            ("before_all", target, "__target_before_all__"),
        ]
        assert lines[-2:] == [
            ("after_all", target, "__target_after_all__"),
            ("after_all", "-", "__after_all__"),
        ]
        middle = lines[2:-2]
        # a shared (template) workspace is lent to one test at a time: each test's four hooks in a row
        assert len(middle) == 16
        for start in range(0, 16, 4):
            test = middle[start][2]
            assert middle[start : start + 4] == _expected_for(target, [test])[2:6]
        assert sorted({line[2] for line in middle}) == ["t1", "t2", "t3", "t4"]


def test_use_target_in_a_matrix_entry_runs_the_aliased_target_under_the_entry_name(tmp_path: Path) -> None:
    project = _project(tmp_path, _entry("fast", use_target="beta") + _entry("alpha"), tests=1)
    done, out = _run(project, tmp_path, "--workers", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _rows(out)
    assert set(rows) == {("t1", "fast"), ("t1", "alpha")}
    assert rows[("t1", "fast")]["output"] == "agent=beta ready=fast"  # beta's agent, fast's hooks
    assert rows[("t1", "alpha")]["output"] == "agent=alpha ready=alpha"
    assert rows[("t1", "fast")]["score"] == rows[("t1", "alpha")]["score"] == 1.0
    checked = run_cli("validate", str(project / "evals"), cwd=project, env=_env(tmp_path))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "W110" not in checked.stdout + checked.stderr
    assert "W111" not in checked.stdout + checked.stderr


def test_an_alias_to_an_unknown_target_is_located_at_its_use_target(tmp_path: Path) -> None:
    project = _project(tmp_path, _entry("fast", use_target="gamma"), tests=1)
    checked = run_cli("validate", "--strict", str(project / "evals"), cwd=project, env=_env(tmp_path))
    assert checked.returncode == 2
    text = checked.stdout + checked.stderr
    assert "matrix.eval.yaml:4:19" in text and "unknown target 'gamma' (via fast)" in text, text
    done, _ = _run(project, tmp_path)
    assert done.returncode == 2
    assert "unknown target 'gamma'" in done.stdout + done.stderr


@pytest.mark.parametrize("target", ["alpha", "beta"])
def test_a_failing_target_before_each_is_that_tests_setup_error(tmp_path: Path, target: str) -> None:
    project = _project(tmp_path, _entry("alpha") + _entry("beta"))
    (project / "scripts" / f"fail-before_each-{target}").touch()
    done, out = _run(project, tmp_path, "--workers", "1")
    assert done.returncode == 3, done.stdout + done.stderr  # an execution error: inconclusive
    rows = _rows(out)
    other = "beta" if target == "alpha" else "alpha"
    for test in ("t1", "t2"):
        failed = rows[(test, target)]
        assert failed["execution_status"] == "execution_error"
        assert failed["score"] == 0.0
        assert failed["failure_stage"] == "setup" and failed["failure_reason_code"] == "script_error"
        assert "target before_each: hook" in failed["error"] and "exited with code 3" in failed["error"]
        assert rows[(test, other)]["score"] == 1.0
    log = _log(project)
    # as AgentV: after a failed setup, that test gets no after_each (neither the target's nor the
    # workspace's); the suite's after_all still runs
    assert not [
        line
        for line in log
        if line[0] == "after_each" and line[2] in ("t1", "t2") and _of(log, line) == target
    ]
    assert ("after_all", target, "__target_after_all__") in [line[:3] for line in log]


def _of(log: list[tuple[str, str, str, str]], line: tuple[str, str, str, str]) -> str:
    """The target whose workspace a log line ran in."""
    return next(t for name, t, _, ws in log if name == "before_all" and t != "-" and ws == line[3])


def test_a_failing_target_before_all_errors_every_test_of_that_target(tmp_path: Path) -> None:
    project = _project(tmp_path, _entry("alpha") + _entry("beta"))
    (project / "scripts" / "fail-before_all-beta").touch()
    done, out = _run(project, tmp_path, "--workers", "1")
    assert done.returncode == 3, done.stdout + done.stderr
    rows = _rows(out)
    for test in ("t1", "t2"):
        assert rows[(test, "alpha")]["score"] == 1.0
        failed = rows[(test, "beta")]
        assert failed["execution_status"] == "execution_error" and failed["failure_stage"] == "setup"
        assert "target before_all: hook" in failed["error"]
    names = [line[:2] for line in _log(project)]
    assert names.count(("before_all", "beta")) == 1  # tried once, not again for t2
    assert ("before_each", "beta") not in names


@pytest.mark.parametrize("point", ["after_each", "after_all"])
def test_a_failing_target_teardown_hook_only_warns(tmp_path: Path, point: str) -> None:
    project = _project(tmp_path, _entry("alpha") + _entry("beta"))
    (project / "scripts" / f"fail-{point}-alpha").touch()
    done, out = _run(project, tmp_path, "--workers", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(row["score"] == 1.0 for row in _rows(out).values())
    assert f"target {point}: hook" in done.stderr
    # the workspace's own teardown still ran after the failing target hook
    names = [line[:2] for line in _log(project)]
    assert names.index((point, "alpha")) < len(names) - 1


def test_target_hooks_without_a_workspace_are_not_run_and_the_run_says_so(tmp_path: Path) -> None:
    project = _project(tmp_path, _entry("alpha"), tests=1)
    eval_file = project / "evals" / "matrix.eval.yaml"
    text = eval_file.read_text()
    eval_file.write_text(text[: text.index("workspace:")] + text[text.index("tests:") :])
    done, out = _run(project, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr  # the test needed its target's setup
    row = _rows(out)[("t1", "alpha")]
    assert row["output"] == "agent=alpha ready=none" and row["score"] == 0.0
    assert not (project / "scripts" / "order.log").exists()
    assert "its matrix hooks run in the test's workspace" in done.stderr
    checked = run_cli("validate", str(project / "evals"), cwd=project, env=_env(tmp_path))
    assert "warning[W106]: the hooks of matrix target(s) 'alpha' never run" in checked.stdout, checked.stdout


def test_per_test_workspaces_get_the_targets_before_all_and_after_all_too(tmp_path: Path) -> None:
    project = _project(tmp_path, _entry("alpha"))
    eval_file = project / "evals" / "matrix.eval.yaml"
    eval_file.write_text(
        eval_file.read_text().replace(
            "  template: ./template\n", "  template: ./template\n  isolation: per_test\n"
        )
    )
    done, out = _run(project, tmp_path, "--workers", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(row["score"] == 1.0 for row in _rows(out).values())
    grouped = _by_workspace(_log(project))
    assert len(grouped) == 2  # a fresh workspace per test
    for test, lines in zip(("t1", "t2"), grouped.values(), strict=True):
        # agentv-ci: the target's before_all / after_all run on each test's own workspace, after /
        # before the workspace's (AgentV runs them on a shared workspace only)
        assert lines == [
            ("before_all", "-", test),
            ("before_all", "alpha", test),
            *_expected_for("alpha", [test])[2:6],
            ("after_all", "alpha", "__target_after_all__"),
            ("after_all", "-", "__after_all__"),
        ]
