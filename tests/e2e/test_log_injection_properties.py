"""Property test (issue 19, item 2): hostile test ids, inputs, file names and YAML keys, generated,
go through `discover` and `run --changed` in a real git repository under GITHUB_ACTIONS=true. No
generated value becomes a workflow command line or reaches the console as a terminal sequence, and
no run ends in exit 4.

The CLI runs in-process (`cli.run_app`, its error boundary and console layer included) so each
example takes a fraction of a second; test_log_injection.py runs the same attack in subprocesses.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from agentv_ci.cli import run_app
from tests.e2e.test_log_injection import stray_commands, terminal_bytes
from tests.properties import property_settings

FRAGMENTS = [
    "\n",
    "\r",
    "\r\n",
    "::",
    "::add-mask::Paris",
    "::stop-commands::abc",
    "::error::forged",
    "##[error]x",
    " ",
    "\t",
    "\x1b[31m",
    "\x1b]0;title\x07",
    "\x07",
    "\x9b2J",
    "\u2028",
    "\u202e",
    "%0A",
    "a",
    "é",
]
hostile = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=6).map("".join)
file_names = hostile.filter(lambda n: n not in (".", "..") and not n.startswith("."))


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _cli(args: list[str], cwd: Path) -> tuple[int, str]:
    """`agentv-ci ARGS` in this process, as `python -m agentv_ci` runs it: (exit code, stdout+stderr)."""
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.update({"GITHUB_ACTIONS": "true", "CI": "true"})
    os.environ.pop("GITHUB_BASE_REF", None)
    os.chdir(cwd)
    code: int | str | None = 0
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                run_app(args)
            except SystemExit as exc:
                code = exc.code
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return (code if isinstance(code, int) else 1), out.getvalue() + "\n" + err.getvalue()


def _repository(root: Path, test_id: str, text: str, key: str, file_name: str) -> Path:
    repo = root / "repo"
    (repo / ".agentv").mkdir(parents=True)
    (repo / ".agentv" / "targets.yaml").write_text("targets:\n  - name: default\n    provider: mock\n")
    (repo / "evals" / "cases").mkdir(parents=True)
    (repo / "evals" / "hostile.eval.yaml").write_text("tests: cases/*.cases.yaml\n")
    (repo / "evals" / "cases" / "base.cases.yaml").write_text("- id: base\n  input: hi\n  criteria: ok\n")
    config = root / "gitconfig"
    config.write_text("[user]\n\tname = T\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n")
    os.environ["GIT_CONFIG_GLOBAL"], os.environ["GIT_CONFIG_NOSYSTEM"] = str(config), "1"
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    _git(repo, "checkout", "-qb", "pr")
    case = {
        "id": test_id,
        "input": text,
        key: 1,
        "assertions": [{"type": "contains", "value": "ok"}],
    }
    # JSON is YAML: every control character written as a \\u escape.
    (repo / "evals" / "cases" / "pr.cases.yaml").write_text(json.dumps([case]))
    (repo / "evals" / "cases" / file_name).write_text("data\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "pr")
    return repo


@property_settings(12, deadline_ms=None)
@given(test_id=hostile, text=hostile, key=hostile, file_name=file_names)
def test_no_generated_value_becomes_a_workflow_command(
    test_id: str, text: str, key: str, file_name: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        saved = {k: os.environ.get(k) for k in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")}
        try:
            repo = _repository(Path(tmp), test_id, text, key, file_name)
            outputs = [
                _cli(["discover", "--base", "main"], repo),
                _cli(["run", "evals", "--changed", "--base", "main", "-o", str(Path(tmp) / "out")], repo),
            ]
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    for code, log in outputs:
        assert code != 4, log
        assert stray_commands(log) == [], log
        assert terminal_bytes(log) == [], log
