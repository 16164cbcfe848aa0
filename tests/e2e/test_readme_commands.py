"""The README's "Using it" commands and examples/README's, run as written on a fresh `git clone` of
this repository (as it stands, committed on `main`): in one shell, as a user types them, starting
with the README's own virtualenv line and `pip install`. Each command must exit as its comment says
(0 unless "exits N"); the steps must not overwrite each other's files (the report keeps its Δ column);
the `discover` demo must select what its change affects and leave the clone as it was; and nothing may
be left behind that git would show."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import USER_CACHE_HOME
from tests.fresh_venv import wheelhouse
from tests.git_repos import GIT_ENV, git, snapshot_repository

FENCE = re.compile(r"```sh\n(.*?)```", re.S)
MARK = "@@agentv-ci-readme-exit"


def _block(markdown: Path, heading: str | None) -> list[str]:
    text = markdown.read_text(encoding="utf-8")
    if heading is not None:
        text = text[text.index(heading) :]
    match = FENCE.search(text)
    assert match, f"no sh block in {markdown}"
    return [line for line in match.group(1).splitlines() if line.strip()]


def _expected_exit(line: str) -> int:
    comment = line.partition("  #")[2]
    found = re.search(r"exits (\d)", comment)
    return int(found.group(1)) if found else 0


def _run_in_one_shell(lines: list[str], cwd: Path, env: dict[str, str]) -> list[tuple[str, int, str]]:
    """Each line in one bash session, in order; (line, exit code, what it printed) for each."""
    script = "".join(f'{line}\necho "{MARK} $?"\n' for line in lines)
    done = subprocess.run(
        ["bash", "-c", script], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL, text=True, timeout=1800,
    )  # fmt: skip
    parts = re.split(rf"^{MARK} (\d+)\n", done.stdout, flags=re.M)
    outputs, codes = parts[0::2], [int(code) for code in parts[1::2]]
    assert len(codes) == len(lines), f"the shell stopped after {len(codes)} commands:\n{done.stdout[-3000:]}"
    return list(zip(lines, codes, outputs, strict=False))


@pytest.mark.slow
def test_the_readme_and_examples_commands_run_as_written_on_a_fresh_clone(tmp_path: Path) -> None:
    origin = snapshot_repository(tmp_path / "origin")
    git(tmp_path, "clone", "-q", str(origin), "agentv-ci")
    clone = tmp_path / "agentv-ci"
    readme = _block(clone / "README.md", "## Using it")
    examples = [line for line in _block(clone / "examples" / "README.md", None) if "needs " not in line]
    assert readme[0].startswith("python3 -m venv .venv && . .venv/bin/activate")
    assert readme[1].startswith("pip install .")

    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "VIRTUAL_ENV"}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if not (Path(p) / "activate").is_file()]
    env.update({"PATH": os.pathsep.join(path), "CI": "true", **GIT_ENV})  # no other venv on PATH
    env["PIP_CACHE_DIR"] = str(USER_CACHE_HOME / "pip")  # downloads once per machine
    # Dependencies (and the build's setuptools) from the tests' wheelhouse, not the index: the
    # README's own `pip install .` still builds and installs the clone.
    house = wheelhouse(USER_CACHE_HOME / "agentv-ci-tests")
    env.update({"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(house), "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    ran = _run_in_one_shell([*readme, *examples], clone, env)
    for line, code, output in ran:
        assert code == _expected_exit(line), f"{line}\nexited {code}:\n{output[-3000:]}"
        if line.startswith("pip install"):
            assert "deprecated" not in output.lower(), output
    assert (clone / ".venv" / "bin" / "agentv-ci").is_file()  # installed where the README said

    # Each step's files are its own: the run's Markdown and the report's both diff against the baseline.
    agent = re.compile(r"^\| basic \| 5 \|.*\| [+-]\d\.\d{3} ", re.M)
    for markdown in (clone / ".agentv-ci" / "head" / "summary.md", clone / ".agentv-ci" / "report.md"):
        assert agent.search(markdown.read_text()), markdown.read_text()
    assert (clone / ".agentv-ci" / "head" / "junit.xml").is_file()
    assert (clone / ".agentv-ci" / "demo" / "junit.xml").is_file()
    assert (clone / ".agentv-ci" / "demo-html" / "report.html").is_file()

    # discover: nothing on the fresh clone; the scratch branch's change selects its eval, and the run
    # after it runs only what was selected.
    outputs = {line: output for line, _, output in ran}
    nothing, changed = (next(outputs[x] for x in readme if x.startswith(p)) for p in DISCOVER_LINES)
    assert nothing.lower().startswith("no eval is affected") and "0 changed files" in nothing, nothing
    assert "examples/basic/basic.eval.yaml\n  - eval file changed" in changed, changed
    assert "agent-trajectory" not in changed
    rows = (clone / ".agentv-ci" / "changed" / "index.jsonl").read_text().splitlines()
    suites = {json.loads(row)["suite"] for row in rows}
    assert "basic" in suites and "agent-trajectory" not in suites

    assert git(clone, "branch", "--show-current").strip() == "main"
    assert git(clone, "branch", "--list", "demo") == ""
    leftovers = git(clone, "status", "--porcelain", "--untracked-files=all")
    assert leftovers == "", f"the commands left files git would show:\n{leftovers}"


DISCOVER_LINES = (
    "agentv-ci discover examples/ --base main  ",
    "agentv-ci discover examples/ --base main --include-uncommitted",
)
