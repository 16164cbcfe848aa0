"""End to end: a cli agent started through a command that names no file of the repository (`make`,
`npm run`, `python3 -c "...run_module(...)"`) is keyed and selected on the whole repository.

Its code lives in `src/`, which the command does not name. With the response cache on, a regressed
agent used to pass on the old answer (without the cache it fails), and `run --changed` selected
nothing for a change to `src/`. Now the cache misses after any change of code (and still hits when
only an ignored file or another eval file changed), and `--changed` runs the agent's evals.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.git_repos import GitRepo

AGENT = """\
import os, sys
with open(os.environ["CALLS_LOG"], "a") as log:
    log.write("call\\n")
with open(sys.argv[-1], "w") as out:
    out.write(ANSWER)
"""
GOOD = 'ANSWER = "Paris is the capital of France."\n' + AGENT
BROKEN = 'ANSWER = "Lyon is the capital of France."\n' + AGENT
EVAL = """\
execution:
  cache: true
tests:
  - id: capital
    input: What is the capital of France?
    assertions:
      - {type: contains, value: Paris}
"""
OTHER_EVAL = "tests:\n  - id: x\n    input: hi\n    assertions:\n      - {type: contains, value: France}\n"
RUN_MODULE = "import runpy, sys; sys.path.insert(0, 'src'); runpy.run_module('agent', run_name='__main__')"
COMMANDS = {
    "make": (
        "make -s --no-print-directory answer OUT={OUTPUT_FILE}",
        {"Makefile": "answer:\n\tpython3 src/agent.py $(OUT)\n"},
    ),
    "npm-run": (
        "npm run --silent answer -- {OUTPUT_FILE}",
        {"package.json": '{"name": "bot", "private": true, "scripts": {"answer": "python3 src/agent.py"}}\n'},
    ),
    "python-c": (f'python3 -c "{RUN_MODULE}" {{OUTPUT_FILE}}', {}),
}


def _project(root: Path, command: str, extra: dict[str, str]) -> GitRepo:
    repo = GitRepo.init(root)
    repo.git("config", "user.email", "t@example.com")
    repo.git("config", "user.name", "t")
    targets = (
        "targets:\n  - name: default\n    provider: cli\n"
        f"    command: {command}\n    cwd: ..\n    env:\n      CALLS_LOG: ${{{{ CALLS_LOG }}}}\n"
    )
    repo.write(".agentv/targets.yaml", targets)
    repo.write(".gitignore", "scratch/\n")
    repo.write("src/agent.py", GOOD)
    repo.write("evals/geo.eval.yaml", EVAL)
    repo.write("evals/other.eval.yaml", OTHER_EVAL)
    for name, text in extra.items():
        repo.write(name, text)
    repo.commit("the bot")
    return repo


def _run(repo: GitRepo, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env["CALLS_LOG"] = str(tmp / "calls.log")
    return run_cli("run", "evals/geo.eval.yaml", "-o", str(tmp / "out"), "-q", *args, cwd=repo.root, env=env)


def _calls(tmp: Path) -> int:
    log = tmp / "calls.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.mark.parametrize("how", sorted(COMMANDS))
def test_a_regression_in_code_the_command_does_not_name_misses_the_cache(tmp_path: Path, how: str) -> None:
    if how == "npm-run" and shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    command, extra = COMMANDS[how]
    repo = _project(tmp_path / "repo", command, extra)
    cache = ("--cache-dir", str(tmp_path / "cache"))
    first = _run(repo, tmp_path, *cache)
    assert first.returncode == 0, first.stdout + first.stderr
    assert _calls(tmp_path) == 1
    assert "names no file of the repository; its answers are keyed on the whole repository" in first.stderr
    # Unchanged code, an ignored file and another eval file: answered from the cache.
    repo.write("scratch/notes.txt", "anything")
    repo.write("evals/other.eval.yaml", OTHER_EVAL.replace("input: hi", "input: hello"))
    again = _run(repo, tmp_path, *cache)
    assert again.returncode == 0, again.stdout + again.stderr
    assert _calls(tmp_path) == 1

    repo.write("src/agent.py", BROKEN)  # not committed: the work tree is what runs
    broken = _run(repo, tmp_path, *cache)

    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert _calls(tmp_path) == 2
    assert "geo/capital" in broken.stdout


def test_run_changed_selects_the_evals_of_an_agent_the_command_does_not_name(tmp_path: Path) -> None:
    command, extra = COMMANDS["make"]
    repo = _project(tmp_path / "repo", command, extra)
    repo.branch("feature")
    repo.write("src/agent.py", BROKEN)
    repo.commit("the bot regresses")

    done = _run(repo, tmp_path, "--changed", "--base", "main")

    assert done.returncode == 1, done.stdout + done.stderr
    assert "evals/geo.eval.yaml: src/agent.py changed" in done.stderr
    assert _calls(tmp_path) == 1


def test_run_changed_skips_them_when_only_another_eval_file_changed(tmp_path: Path) -> None:
    command, extra = COMMANDS["make"]
    repo = _project(tmp_path / "repo", command, extra)
    repo.branch("feature")
    repo.write("evals/other.eval.yaml", OTHER_EVAL.replace("input: hi", "input: hello"))
    repo.commit("another eval")

    done = run_cli(
        "run", "evals", "--changed", "--base", "main", "-o", str(tmp_path / "out"), "-q",
        cwd=repo.root, env={**os.environ, "CALLS_LOG": str(tmp_path / "calls.log")},
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 of 2 eval(s) affected" in done.stderr
    assert "evals/other.eval.yaml: eval file changed" in done.stderr
    assert "evals/geo.eval.yaml" not in done.stderr
    assert _calls(tmp_path) == 1  # the other eval's test only


def test_validate_warns_w113_at_the_command_and_not_once_sources_are_declared(tmp_path: Path) -> None:
    command, extra = COMMANDS["make"]
    repo = _project(tmp_path / "repo", command, extra)
    result = run_cli("validate", "evals", cwd=repo.root)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout + result.stderr
    assert ".agentv/targets.yaml:4:5: warning[W113]: target 'default': its command names no file" in out
    assert "`sources:`" in out and out.count("W113") == 1  # once per target, not per eval file
    declared = (repo.root / ".agentv/targets.yaml").read_text() + "    sources: [src/]\n"
    (repo.root / ".agentv/targets.yaml").write_text(declared)
    quiet = run_cli("validate", "evals", cwd=repo.root)
    assert quiet.returncode == 0 and "W113" not in quiet.stdout + quiet.stderr
    # a command that names its script is not W113 either
    named = _project(tmp_path / "named", "python3 src/agent.py {OUTPUT_FILE}", {})
    assert "W113" not in (r := run_cli("validate", "evals", cwd=named.root)).stdout + r.stderr
