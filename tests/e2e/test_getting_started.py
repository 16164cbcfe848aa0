"""docs/getting-started.md, run as written: every command of its `sh` blocks, in order, in one shell,
in a new git repository, starting with its virtualenv and `pip install` lines. The commands are parsed
from the page, so the page and the test cannot drift.

Skipped, and listed on the test's output: the lines the page marks `# needs network` (a push, a
`git ls-remote` or `docker build` of GitHub) or `# needs OPENAI_API_KEY`. One substitution: the
install line's `https://github.com/agentevals/action` becomes a git repository served over HTTP on
127.0.0.1 (git's "dumb" protocol: a bare clone of this checkout, with the release tag the page names,
as static files), so `pip install "agentv-ci @ git+...@vX.Y.Z"` runs as written, with the pip a new
virtualenv comes with, against the code under test (its dependencies come from the tests' wheelhouse,
not the index: tests/fresh_venv.py)."""

from __future__ import annotations

import functools
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agentv_ci import __version__
from tests.conftest import USER_CACHE_HOME
from tests.e2e.test_readme_commands import _expected_exit, _run_in_one_shell
from tests.fresh_venv import wheelhouse
from tests.git_repos import GIT_ENV, git, snapshot_repository

PAGE = Path(__file__).resolve().parents[2] / "docs" / "getting-started.md"
FENCE = re.compile(r"```sh\n(.*?)```", re.S)
SKIP = re.compile(r"  # needs (network|OPENAI_API_KEY)\b")
REPOSITORY_URL = "https://github.com/agentevals/action"


@contextmanager
def served_git_repository(origin: Path, root: Path) -> Iterator[str]:
    """`origin` as a bare repository served read-only over HTTP on 127.0.0.1; yields its URL."""
    bare = root / "action.git"
    git(root, "clone", "-q", "--bare", str(origin), str(bare))
    git(bare, "update-server-info")  # the index files git's dumb HTTP protocol reads

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/action.git"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def page_commands() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    return [line for block in FENCE.findall(text) for line in block.splitlines() if line.strip()]


def test_the_page_names_this_release_and_marks_what_needs_a_network() -> None:
    """Fast half: the page pins the version this checkout is, and every command that reaches GitHub
    or a model is marked, so the slow test below can skip exactly those."""
    text = PAGE.read_text(encoding="utf-8")
    assert set(re.findall(r"\bv\d+\.\d+\.\d+\b", text)) == {f"v{__version__}"}
    assert f"agentv-ci @ git+{REPOSITORY_URL}@v{__version__}" in text
    for line in page_commands():
        reaches_out = line.startswith(("git push", "git ls-remote", "docker "))
        keyed = "--target openai" in line and "--dry-run" not in line
        if reaches_out or keyed:
            assert SKIP.search(line), f"not marked as needing a network or a key: {line}"
        assert not re.match(r"pip install agentv-ci\b", line), "no index has the package"


@pytest.mark.slow
def test_getting_started_runs_as_written_in_a_new_repository(tmp_path: Path) -> None:
    origin = snapshot_repository(tmp_path / "origin")
    git(origin, "tag", f"v{__version__}")
    project = tmp_path / "my-project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    (project / "README.md").write_text("# my project\n")
    git(project, "add", "README.md")
    git(project, "commit", "-qm", "initial")

    lines = page_commands()
    skipped = [line for line in lines if SKIP.search(line)]
    print("skipped (need a network or a key):", *skipped, sep="\n  ")

    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "VIRTUAL_ENV"}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if not (Path(p) / "activate").is_file()]
    identity = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    identity.update({"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})
    env.update({"PATH": os.pathsep.join(path), "CI": "true", **GIT_ENV, **identity})
    env["PIP_CACHE_DIR"] = str(USER_CACHE_HOME / "pip")
    # Dependencies (and the builds' setuptools) from the tests' wheelhouse, not the index: the page's
    # own `pip install` lines still install agentv-ci and the plugin from the served repository.
    house = wheelhouse(USER_CACHE_HOME / "agentv-ci-tests")
    env.update({"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(house), "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    (tmp_path / "served").mkdir()
    with served_git_repository(origin, tmp_path / "served") as url:
        runnable = [line.replace(REPOSITORY_URL, url) for line in lines if not SKIP.search(line)]
        assert any(line.startswith("pip install") and f"git+{url}@v" in line for line in runnable)
        ran = _run_in_one_shell(runnable, project, env)
    for line, code, output in ran:
        assert code == _expected_exit(line), f"{line}\nexited {code}:\n{output[-3000:]}"
    outputs = {line: output for line, _, output in ran}

    assert (project / ".venv" / "bin" / "agentv-ci").is_file()  # installed where the page said
    assert f"agentv-ci {__version__}" in outputs["agentv-ci --version"]
    assert "<html" in (project / ".agentv-ci" / "report.html").read_text().lower()  # the plugin installed
    init = outputs["agentv-ci init"]
    for name in (".agentv/targets.yaml", "agent/hello_agent.py", "evals/hello.eval.yaml"):
        assert f"wrote {name}" in init, init
    red = next(output for line, code, output in ran if code == 1)
    assert "0/2 tests passed" in red, red
    assert "Hello, {name}!" in (project / "agent" / "hello_agent.py").read_text()  # green again
    log = git(project, "log", "--format=%s").splitlines()
    assert log[:3] == ['Revert "Say goodbye instead"', "Say goodbye instead", "Add agentv-ci evals"]
    leftovers = git(project, "status", "--porcelain", "--untracked-files=all")
    assert leftovers == "", f"the commands left files git would show:\n{leftovers}"
