"""Resets never destroy (issue 19), through the CLI in real git repositories: a static workspace in the
user's own checkout keeps its uncommitted changes, staged changes and ignored files (`.env`,
`.venv/`) through strict resets, gets no commit, and is reset only with `allow_reset_of_worktree`;
static paths and hook `cwd`s outside the repository are refused, located, exit 2."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli
from tests.git_repos import git

PY = sys.executable

# The agent (a cli target, run inside the workspace): reports what it sees, then leaves traces:
# edits a tracked file, deletes the user's untracked draft, writes a new file, an ignored log and a
# file inside the user's ignored .venv/.
AGENT = textwrap.dedent(
    """\
    import json, os, sys
    def seen(path):
        return "yes" if os.path.exists(path) else "no"
    report = (f"notes={open('notes.txt').read().strip()} draft={seen('draft.txt')} "
              f"left={seen('left.txt')} log={seen('build.log')} env={seen('.env')}")
    open("notes.txt", "w").write("scribbled by the agent\\n")
    os.remove("draft.txt")
    open("left.txt", "w").write("x\\n")
    open("build.log", "w").write("x\\n")
    os.makedirs(".venv/lib", exist_ok=True)
    open(".venv/lib/agent.py", "w").write("x\\n")
    json.dump({"text": report}, open(sys.argv[1], "w"))
    """
)


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTV_CI_"))}
    return {
        **env,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "GIT_CONFIG_GLOBAL": str(tmp_path / "gitconfig"),
    }


def _workspace(path: str, *, allow: bool, reset: str = "strict") -> str:
    extra = "\n  allow_reset_of_worktree: true" if allow else ""
    hooks = f"  hooks:\n    after_each:\n      reset: {reset}\n"
    return f"workspace:\n  mode: static\n  path: {path}{extra}\n{hooks}"


def _project(tmp_path: Path, workspace: str) -> Path:
    """The user's checkout: one commit, then work in progress (a modified tracked file, a staged
    change, an untracked draft) and ignored files (.env, .venv/)."""
    repo = tmp_path / "project"
    (repo / "evals").mkdir(parents=True)
    (repo / "scripts").mkdir()
    (repo / ".agentv").mkdir()
    (repo / "scripts" / "agent.py").write_text(AGENT)
    (repo / ".agentv" / "targets.yaml").write_text(
        f"targets:\n  - name: agent\n    provider: cli\n    command: {PY} scripts/agent.py {{OUTPUT_FILE}}\n"
    )
    (repo / ".gitignore").write_text(".env\n.venv/\n*.log\n")  # results not ignored
    (repo / "notes.txt").write_text("committed\n")
    (repo / "staged.txt").write_text("committed\n")
    (repo / "evals" / "ws.eval.yaml").write_text(
        "execution:\n  target: agent\n  workers: 1\n"
        + workspace
        + textwrap.dedent(
            """\
            tests:
              - id: t1
                input: look
                assertions: [{type: contains, value: "notes=my uncommitted work draft=yes left=no"}]
              - id: t2
                input: look again
                assertions: [{type: contains, value: "notes=my uncommitted work draft=yes left=no"}]
            """
        )
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "project")
    (repo / "notes.txt").write_text("my uncommitted work\n")
    (repo / "staged.txt").write_text("staged work\n")
    git(repo, "add", "staged.txt")
    (repo / "draft.txt").write_text("my draft\n")
    (repo / ".env").write_text("OPENAI_API_KEY=sk-local\n")
    (repo / ".venv" / "lib").mkdir(parents=True)
    (repo / ".venv" / "lib" / "site.py").write_text("installed\n")
    return repo


def _state(repo: Path) -> dict[str, Any]:
    """What the user would lose: history, index, status (ignored files too) and file contents."""
    files = {
        name: (repo / name).read_text() if (repo / name).exists() else None
        for name in ("notes.txt", "staged.txt", "draft.txt", ".env", ".venv/lib/site.py")
    }
    status = [
        line
        for line in git(repo, "status", "--porcelain", "--ignored").splitlines()
        if ".agentv-ci" not in line
    ]
    return {
        "head": git(repo, "rev-parse", "HEAD"),
        "commits": git(repo, "rev-list", "--all", "--count"),
        "staged": git(repo, "diff", "--cached"),
        "status": status,
        "files": files,
    }


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    return {r["test_id"]: r for r in map(json.loads, (out / "index.jsonl").read_text().splitlines())}


def test_a_strict_reset_of_the_allowed_work_tree_keeps_the_users_work_and_commits_nothing(
    tmp_path: Path,
) -> None:
    repo = _project(tmp_path, _workspace("..", allow=True))
    before = _state(repo)

    # Run from the checkout, so the results are written inside the workspace that is being reset.
    done = run_cli(
        "run", "evals/ws.eval.yaml", "-o", ".agentv-ci/runs/r1", cwd=repo, env=_env(tmp_path), timeout=120
    )

    assert done.returncode == 0, done.stdout + done.stderr
    rows = _rows(repo / ".agentv-ci" / "runs" / "r1")
    assert set(rows) == {"t1", "t2"}  # the results (not ignored, inside the workspace) were never reset
    # t2 saw the user's work put back and the agent's traces of t1 gone.
    assert rows["t2"]["output"] == "notes=my uncommitted work draft=yes left=no log=no env=yes"
    after = _state(repo)
    assert after == before  # no commit, same index, same status, same contents
    assert "agentv-ci baseline" not in git(repo, "log", "--all", "--format=%s")
    assert not (repo / "left.txt").exists() and not (repo / "build.log").exists()  # the run's own files
    assert not (repo / ".git" / "agentv-ci").exists()


def test_a_fast_reset_keeps_ignored_files_the_run_made_and_everything_the_user_had(tmp_path: Path) -> None:
    repo = _project(tmp_path, _workspace("..", allow=True, reset="fast"))
    before = _state(repo)
    out = tmp_path / "out"

    done = run_cli("run", "evals/ws.eval.yaml", "-o", str(out), cwd=repo, env=_env(tmp_path), timeout=120)

    assert done.returncode == 0, done.stdout + done.stderr
    assert _rows(out)["t2"]["output"] == "notes=my uncommitted work draft=yes left=no log=yes env=yes"
    assert _state(repo)["files"] == before["files"]
    assert _state(repo)["commits"] == before["commits"]


def test_resetting_the_work_tree_without_the_opt_in_is_refused_located(tmp_path: Path) -> None:
    repo = _project(tmp_path, _workspace("..", allow=False))
    before = _state(repo)
    env = _env(tmp_path)

    checked = run_cli("validate", "evals/ws.eval.yaml", cwd=repo, env=env, timeout=60)
    ran = run_cli("run", "evals/ws.eval.yaml", "-o", str(tmp_path / "out"), cwd=repo, env=env, timeout=60)

    for done in (checked, ran):
        assert done.returncode == 2, done.stdout + done.stderr
        text = done.stdout + done.stderr
        assert "ws.eval.yaml:6:9: error[E306]" in text, text
        assert f"would rewrite the git work tree {repo.resolve()}" in text
        assert "allow_reset_of_worktree: true" in text
    assert not (tmp_path / "out" / "index.jsonl").exists()
    assert _state(repo) == before


def test_a_static_path_outside_the_repository_is_refused_unless_allowed(tmp_path: Path) -> None:
    outside = tmp_path / "scratch-ws"
    repo = _project(tmp_path, _workspace(str(outside), allow=False))
    env = _env(tmp_path)

    refused = run_cli("validate", "evals/ws.eval.yaml", cwd=repo, env=env, timeout=60)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "ws.eval.yaml:6:9: error[E305]" in refused.stdout and "outside the repository" in refused.stdout

    # Allowed from the command line, outside any work tree: it runs, and its resets work there.
    (outside / "scripts").mkdir(parents=True)
    (outside / "scripts" / "agent.py").write_text(AGENT)
    (outside / "notes.txt").write_text("my uncommitted work\n")
    (outside / "draft.txt").write_text("my draft\n")
    out = tmp_path / "out"
    done = run_cli(
        "run", "evals/ws.eval.yaml", "-o", str(out), "--allow-outside-repo", str(outside),
        cwd=repo, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert _rows(out)["t2"]["output"] == "notes=my uncommitted work draft=yes left=no log=no env=no"
    assert not (outside / ".git").exists()  # no git repository made in it either
    assert (outside / "draft.txt").read_text() == "my draft\n"


@pytest.mark.parametrize("cwd", ["/etc", "../../.."])
def test_a_hook_cwd_outside_the_repository_is_refused_located(tmp_path: Path, cwd: str) -> None:
    canary = tmp_path / "hook-ran"
    workspace = textwrap.dedent(
        f"""\
        workspace:
          hooks:
            before_all:
              command: [{PY}, -c, "open({str(canary)!r}, 'w').write('ran')"]
              cwd: {cwd}
        """
    )
    repo = _project(tmp_path, workspace)
    env = _env(tmp_path)

    for command in (["validate"], ["run", "-o", str(tmp_path / "out")]):
        done = run_cli(*command, "evals/ws.eval.yaml", cwd=repo, env=env, timeout=60)
        assert done.returncode == 2, done.stdout + done.stderr
        text = done.stdout + done.stderr
        assert "ws.eval.yaml:8:12: error[E305]" in text, text
        assert "outside the repository" in text
    assert not canary.exists()
