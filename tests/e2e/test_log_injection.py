"""Untrusted text cannot forge the job log (issue 19, item 2): a pull request's file name, test ids
and YAML keys reach `discover`, `run --changed`, `validate`, the progress lines and the Action's
log escaped, never as workflow commands, terminal sequences or extra lines.

Each check runs the real CLI in a subprocess inside a real git repository, with GITHUB_ACTIONS=true;
the Action talks to the fake GitHub REST server on 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.e2e.scaffold import TOKEN, Project, run_action
from tests.fakes.github_server import FakeGitHub

HOSTILE = "notes\n::add-mask::Paris\n::stop-commands::abc"
SHOWN = "notes\\n::add-mask::Paris\\n::stop-commands::abc"  # how we print it: one line, visible escapes
GLOB_EVAL = "tests: globbed/*.cases.yaml\n"
FAILING_CASES = """\
- id: sum
  input: What is 2 + 2?
  expected_output: "4"
  assertions:
    - type: contains
      value: "5"
"""
# Our own commands, from print_workflow_command: a known level and always a `title=` property whose
# values are escaped (no `:` or `,` inside), then the data.
_PROPERTY = r"[a-z]+=[^,:]*"
OURS = re.compile(rf"::(?:error|warning|notice) (?:{_PROPERTY},)*title=[^,:]*(?:,{_PROPERTY})*::")
TERMINAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def stray_commands(output: str, secrets: tuple[str, ...] = ()) -> list[str]:
    """Lines the Actions runner would run as a workflow command that agentv-ci did not mean to print.

    The runner ends a line at LF or CR and ignores leading whitespace; the legacy `##[` form counts
    anywhere in a line."""
    stray = []
    for line in re.split(r"\r\n|\r|\n", output):
        body = line.lstrip()
        if "##[" in line:
            stray.append(line)
        elif body.startswith("::"):
            mask = body.removeprefix("::add-mask::")
            if mask in secrets or OURS.match(body):
                continue
            stray.append(line)
    return stray


def terminal_bytes(output: str) -> list[str]:
    """Control characters (ESC, BEL, CR, ...) other than LF and TAB."""
    return sorted(set(TERMINAL.findall(output)))


def _actions_env(project: Project, github: FakeGitHub) -> dict[str, str]:
    env = project.env(github, project.event())
    env.pop("GITHUB_BASE_REF", None)
    return env


@pytest.fixture
def attacked(tmp_path: Path) -> Project:
    """A pull request adding an eval whose case glob watches `evals/globbed/`, and a file named
    `notes\\n::add-mask::Paris\\n::stop-commands::abc` in that directory."""
    project = Project(tmp_path)
    (project.repo / "evals" / "globbed").mkdir()
    project.commit(
        {
            "evals/globbed.eval.yaml": GLOB_EVAL,
            "evals/globbed/a.cases.yaml": FAILING_CASES,
            f"evals/globbed/{HOSTILE}": "not a case\n",
        }
    )
    return project


def test_a_hostile_file_name_is_printed_escaped_by_discover_and_run_changed(
    attacked: Project, github_server: FakeGitHub
) -> None:
    env = _actions_env(attacked, github_server)
    discover = run_cli("discover", "--base", "main", cwd=attacked.repo, env=env, timeout=120)
    assert discover.returncode == 0, discover.stdout + discover.stderr
    assert f"  - evals/globbed/{SHOWN} added (under evals/globbed/)" in discover.stdout.splitlines()
    as_json = run_cli("discover", "--base", "main", "--json", cwd=attacked.repo, env=env, timeout=120)
    document = "\n".join(line for line in as_json.stdout.splitlines() if line != f"::add-mask::{TOKEN}")
    reasons = json.loads(document)["selected"][0]["reasons"]
    assert f"evals/globbed/{HOSTILE} added (under evals/globbed/)" in reasons  # the data itself is kept

    out = attacked.root / "out"
    run = run_cli(
        "run", "evals", "--changed", "--base", "main", "-o", str(out), cwd=attacked.repo, env=env, timeout=120
    )
    assert run.returncode == 1, run.stdout + run.stderr  # the case fails: a real verdict
    assert f"evals/globbed/{SHOWN} added (under evals/globbed/)" in run.stderr
    for done in (discover, as_json, run):
        assert stray_commands(done.stdout + "\n" + done.stderr, secrets=(TOKEN,)) == []
        assert terminal_bytes(done.stdout + done.stderr) == []
        assert not any(line.lstrip().startswith("::add-mask::Paris") for line in done.stdout.splitlines())


def test_the_action_log_keeps_only_its_own_workflow_commands(
    attacked: Project, github_server: FakeGitHub
) -> None:
    env = _actions_env(attacked, github_server)
    done = run_action(env, attacked.root)

    assert done.returncode == 1, done.stdout + done.stderr
    selected = (
        "  evals/globbed.eval.yaml: eval file added; evals/globbed/a.cases.yaml added; "
        f"evals/globbed/{SHOWN} added (under evals/globbed/)"
    )
    assert selected in done.stdout.splitlines(), done.stdout
    log = done.stdout + "\n" + done.stderr
    assert stray_commands(log, secrets=(TOKEN,)) == []
    assert terminal_bytes(log) == []
    # Ours are there, and told apart: the token's mask and the failing case's annotation.
    assert f"::add-mask::{TOKEN}" in done.stdout.splitlines()
    annotation = "::error file=evals/globbed.eval.yaml,line=1,title=Eval failed%3A globbed/sum [default]::"
    assert any(line.startswith(annotation) for line in done.stdout.splitlines()), done.stdout
    # The step summary and the comment already held; they still do.
    summary = (attacked.root / "files" / "summary.md").read_text()
    assert stray_commands(summary) == []
    [comment] = github_server.comments_on(7)
    assert stray_commands(comment.body) == []


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# A test id and a YAML key carrying a window-title OSC, a bell, a screen clear, a bare CR and a
# workflow command; a targets.yaml key with an OSC 8 hyperlink.
NASTY_ID = r"t\e]0;owned\a\e[2J\r::warning::forged"
NASTY_KEY = r"colour\e[31m\a\r::error::forged-key"
NASTY_TARGET_KEY = r"temp\e]8;;https://evil.example\a\r::notice::x"


def _nasty_project(root: Path) -> Path:
    _write(
        root / ".agentv" / "targets.yaml",
        f'targets:\n  - name: default\n    provider: mock\n    response: ok\n    "{NASTY_TARGET_KEY}": 1\n',
    )
    _write(
        root / "nasty.eval.yaml",
        "tests:\n"
        f'  - id: "{NASTY_ID}"\n'
        "    input: hi\n"
        f'    "{NASTY_KEY}": 1\n'
        "    assertions: [{type: contains, value: nope}]\n",
    )
    return root


@pytest.mark.parametrize("github_actions", [True, False])
def test_escape_sequences_in_test_ids_and_yaml_keys_never_reach_the_console(
    tmp_path: Path, github_actions: bool
) -> None:
    root = _nasty_project(tmp_path / "p")
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("GITHUB_")}
    env["CI"] = "true"  # plain progress lines on stderr
    if github_actions:
        env["GITHUB_ACTIONS"] = "true"
    validate = run_cli("validate", ".", cwd=root, env=env, timeout=120)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    w101 = next(line for line in validate.stdout.splitlines() if "warning[W101]" in line)
    assert w101.endswith(r"unknown key `colour\x1b[31m\x07\r::error::forged-key` in a test")
    w108 = next(line for line in validate.stdout.splitlines() if "warning[W108]" in line)
    assert r"unknown key `temp\x1b]8;;https://evil.example\x07\r::notice::x`" in w108

    run = run_cli("run", ".", "-o", str(tmp_path / "out"), cwd=root, env=env, timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr
    progress = next(line for line in run.stderr.splitlines() if line.startswith("FAIL"))
    assert r"nasty/t\x1b]0;owned\x07\x1b[2J\r::warning::forged [default]" in progress
    assert r"unknown key `colour\x1b[31m\x07\r::error::forged-key`" in run.stderr  # the W101 warning
    for done in (validate, run):
        both = done.stdout + done.stderr
        assert terminal_bytes(both) == []
        assert stray_commands(both) == []  # one line each: the `::` never starts a line
    row = json.loads((tmp_path / "out" / "index.jsonl").read_text())
    assert row["test_id"] == "t\x1b]0;owned\x07\x1b[2J\r::warning::forged"  # the data is kept as is


def test_validate_github_format_prints_commands_through_the_one_printer(tmp_path: Path) -> None:
    root = _nasty_project(tmp_path / "p")
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("GITHUB_")}
    env["GITHUB_ACTIONS"] = "true"
    done = run_cli("validate", ".", "--format", "github", cwd=root, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    commands = [line for line in done.stdout.splitlines() if line.startswith("::")]
    assert len(commands) == 2 and all(OURS.match(line) for line in commands)
    assert stray_commands(done.stdout) == [] and terminal_bytes(done.stdout) == []
    assert (
        r"::warning file=nasty.eval.yaml,line=4,col=5,title=W101::unknown key `colour\x1b[31m" in done.stdout
    )


def test_git_sees_the_hostile_name_as_one_file(attacked: Project) -> None:
    """The attack is real: git lists the file under its name with the line feeds in it."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "evals/globbed"],
        cwd=attacked.repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    assert f"evals/globbed/{HOSTILE}" in listed


def test_in_a_terminal_only_the_progress_bar_moves_the_cursor(tmp_path: Path) -> None:
    """On a real terminal (a pty): the live bar redraws with its own CR; the test id's ESC, OSC, BEL
    and CR reach the screen as visible escapes."""
    import os
    import pty
    import sys

    root = _nasty_project(tmp_path / "p")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS")}
    env["TERM"] = "xterm"
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentv_ci", "run", ".", "-o", str(tmp_path / "out")],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(timeout=120) == 1
    screen = b"".join(chunks).decode("utf-8").replace("\r\n", "\n")  # the pty turns LF into CRLF
    assert "\r[##############################] 1/1 pass 0 fail 1 error 0" in screen  # our own CR
    assert r"FAIL  nasty/t\x1b]0;owned\x07\x1b[2J\r::warning::forged [default]" in screen
    assert "\x1b" not in screen and "\x07" not in screen
    assert screen.count("\r") == 1  # the bar's; no other carriage return
