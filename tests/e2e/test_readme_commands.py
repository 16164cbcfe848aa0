"""The README's "Using it" commands and examples/README's, run as written on a fresh copy of the
repository (its own git history, `main` checked out), with `pip install .` into a new virtualenv.
Each command must exit as its comment says (0 unless "exits N"), and nothing may be left behind
that git would show as untracked (a stray junit.xml in the root, say)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.conftest import REPO_ROOT, USER_CACHE_HOME

FENCE = re.compile(r"```sh\n(.*?)```", re.S)


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


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout


def _fresh_clone(tmp_path: Path) -> Path:
    files = _git(REPO_ROOT, "ls-files", "--cached", "--others", "--exclude-standard").splitlines()
    clone = tmp_path / "agentv-ci"
    for name in files:
        source = REPO_ROOT / name
        if source.is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    _git(clone, "init", "-q", "-b", "main")
    _git(clone, "add", "-A")
    _git(clone, "commit", "-qm", "clone")
    return clone


def _virtualenv(tmp_path: Path) -> Path:
    """A new virtualenv that sees this one's dependencies (not its agentv-ci): `pip install .` then
    installs only the package, without downloading every dependency again."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    site = next((venv / "lib").glob("python*/site-packages"))
    (site / "dev-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin"


def test_the_readme_and_examples_commands_run_as_written(tmp_path: Path) -> None:
    clone = _fresh_clone(tmp_path)
    bin_dir = _virtualenv(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "VIRTUAL_ENV"}
    env.update({"PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", "CI": "true"})
    env["PIP_CACHE_DIR"] = str(USER_CACHE_HOME / "pip")  # the build backend, once per machine
    env.update({"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"})
    readme = _block(clone / "README.md", "## Using it")
    examples = [line for line in _block(clone / "examples" / "README.md", None) if "needs " not in line]
    assert readme[0].startswith("pip install .") and any("--dry-run" in line for line in readme)
    for line in [*readme, *examples]:
        done = subprocess.run(
            ["bash", "-c", line], cwd=clone, env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == _expected_exit(line), f"{line}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        if line.startswith("pip install"):
            assert "deprecated" not in (done.stdout + done.stderr).lower()
            assert (bin_dir / "agentv-ci").is_file()
    assert (clone / ".agentv-ci" / "junit.xml").is_file() and (
        clone / ".agentv-ci" / "demo" / "junit.xml"
    ).is_file()
    leftovers = _git(clone, "status", "--porcelain", "--untracked-files=all")
    assert leftovers == "", f"the commands left files git would show:\n{leftovers}"
