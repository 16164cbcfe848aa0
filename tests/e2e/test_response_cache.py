"""The response cache cannot lie: end to end through `agentv-ci action` (fake GitHub API, a real git
repository with a base and a PR commit) and `agentv-ci run`, with a real subprocess cli agent.

- A PR that breaks the agent's code, run with the cache on and `baseline_ref: merge-base`: the base
  re-run gets the base agent's answers, never the ones the PR's run just cached, so the drop is
  caught (before, the base re-run read the PR's answers back and reported `+0.000`).
- A PR that commits `.agentv-ci/cache/` entries (answers that would make a broken agent pass): they
  are never read; the agent runs, the gate fails, and the run says so once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.scaffold import Project, run_action
from tests.fakes.github_server import FakeGitHub
from tests.git_repos import git

TARGETS = """\
targets:
  - name: default
    provider: cli
    command: python3 agent/support_bot.py {PROMPT_FILE} {OUTPUT_FILE}
    cwd: ..
    env:
      CALLS_LOG: ${{ CALLS_LOG }}
"""
# The bot answers from its knowledge module; it logs each call (and where it ran) to $CALLS_LOG.
BOT = """\
import json, os, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from knowledge import answer
prompt = open(sys.argv[1]).read()
with open(os.environ["CALLS_LOG"], "a") as log:
    log.write(os.getcwd() + "\\n")
json.dump({"text": answer(prompt)}, open(sys.argv[2], "w"))
"""
KNOWLEDGE = """\
def answer(prompt):
    return "{capital} is the capital of France."
"""
# One test, two assertions: the broken bot scores 0.5, which the threshold (0.5) lets through; only
# the regression gate can catch the drop from 1.0.
EVAL = """\
execution:
  cache: true
tests:
  - id: capital
    input: What is the capital of France?
    assertions:
      - type: contains
        value: Paris
      - type: contains
        value: France
"""
BOT_BROKEN = BOT.replace("answer(prompt)}", "answer(prompt).replace('Paris', 'Lyon')}")


def _agent_project(root: Path) -> Project:
    """main: an agent that answers both tests (score 1.0); the PR branch starts from it."""
    project = Project(root)
    (project.repo / "agent").mkdir()
    project.commit(
        {
            ".agentv/targets.yaml": TARGETS,
            ".gitignore": ".agentv-ci/results/\n",
            "agent/support_bot.py": BOT,
            "agent/knowledge.py": KNOWLEDGE.format(capital="Paris"),
            "evals/geo.eval.yaml": EVAL,
        },
        "the support bot",
    )
    (project.repo / "evals" / "math.eval.yaml").unlink()
    git(project.repo, "add", "-A")
    git(project.repo, "commit", "-qm", "one eval")
    git(project.repo, "checkout", "-q", "main")
    git(project.repo, "merge", "-q", "--ff-only", "feature")
    project.base = git(project.repo, "rev-parse", "HEAD")
    git(project.repo, "checkout", "-q", "feature")
    return project


def _calls(project: Project) -> list[str]:
    """Where the bot ran, once per call: the checkout, or the merge-base's worktree."""
    log = project.root / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def _env(project: Project, github: FakeGitHub, **inputs: str) -> dict[str, str]:
    return {
        **project.env(github, project.event(), paths="evals", select_all_on="agent/*", **inputs),
        "CALLS_LOG": str(project.root / "calls.log"),
    }


@pytest.mark.parametrize(
    "change",
    [
        {"agent/support_bot.py": BOT_BROKEN},  # the script the command names
        {"agent/knowledge.py": KNOWLEDGE.format(capital="Lyon")},  # a module in its directory
    ],
    ids=["script", "module-beside-it"],
)
def test_a_regression_in_the_agent_code_is_caught_at_the_merge_base_with_the_cache_on(
    tmp_path: Path, change: dict[str, str]
) -> None:
    with FakeGitHub() as github:
        project = _agent_project(tmp_path)
        project.commit(change, "the bot regresses")
        env = _env(project, github, baseline_ref="merge-base", max_regression="0.1", threshold="0.5")

        done = run_action(env, project.root)

        output = done.stdout + done.stderr
        assert done.returncode == 1, output
        # The PR's bot ran in the checkout, then the base bot in the merge-base's worktree: the
        # base re-run took nothing from the answer the PR's run had just cached.
        calls = _calls(project)
        assert len(calls) == 2 and calls[0] == str(project.repo) and calls[1] != calls[0], calls
        assert "regressed vs baseline (1.000 -> 0.500)" in output, output
        [row] = (project.repo / ".agentv-ci/results/index.jsonl").read_text().splitlines()
        assert json.loads(row)["score"] == pytest.approx(0.5)
        [comment] = github.comments_on(7)
        assert "| regressed | geo/capital \\[default\\] | 1.000 | 0.500 | -0.500 |" in comment.body, (
            comment.body
        )
        assert "No test changed beyond noise" not in comment.body

        # Unchanged code is answered from the cache: the same PR again calls nothing.
        again = run_action(env, project.root)
        assert again.returncode == 1, again.stdout + again.stderr
        assert "regressed vs baseline (1.000 -> 0.500)" in again.stdout
        [comment] = github.comments_on(7)
        assert "| regressed | geo/capital \\[default\\] | 1.000 | 0.500 | -0.500 |" in comment.body
        assert len(_calls(project)) == 2
        assert not (project.repo / ".agentv-ci" / "cache").exists(), "the cache lives outside the checkout"


def _cli(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentv_ci", "run", "evals", "-o", str(project.root / "out"), *args],
        cwd=project.repo,
        env={**os.environ, "CALLS_LOG": str(project.root / "calls.log")},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _poisoned_cache(project: Project) -> Path:
    """`.agentv-ci/cache/` entries for the PR's broken bot that answer `Paris`: written by a real
    run into that directory, then edited. Returns the directory."""
    cache = project.repo / ".agentv-ci" / "cache"
    run = _cli(project, "--cache", "--cache-dir", str(cache))
    assert run.returncode == 1, run.stdout + run.stderr  # the broken bot fails `capital`
    [entry] = list(cache.rglob("*.json"))
    data = json.loads(entry.read_text())
    data["text"] = data["text"].replace("Lyon", "Paris")
    data["messages"] = [{"role": "assistant", "content": data["text"]}]
    entry.write_text(json.dumps(data))
    return cache


def test_committed_cache_entries_are_never_read(tmp_path: Path) -> None:
    with FakeGitHub() as github:
        project = _agent_project(tmp_path)
        project.commit({"agent/support_bot.py": BOT_BROKEN}, "the bot regresses")
        cache = _poisoned_cache(project)
        # The poison is real: read from an untracked directory, it turns the broken bot green.
        assert len(_calls(project)) == 1
        poisoned = _cli(project, "--cache", "--cache-dir", str(cache))
        assert poisoned.returncode == 0, poisoned.stdout + poisoned.stderr
        assert len(_calls(project)) == 1
        # The PR commits it.
        git(project.repo, "add", "-f", ".agentv-ci/cache")
        git(project.repo, "commit", "-qm", "cache")

        # `run` pointed at it: not read, the bot runs, the gate fails; said once.
        direct = _cli(project, "--cache", "--cache-dir", str(cache))
        assert direct.returncode == 1, direct.stdout + direct.stderr
        assert len(_calls(project)) == 2
        assert direct.stderr.count(f"the response cache directory {cache} holds files tracked by git") == 1

        # The Action (cache on from the eval file, the default location, a merge-base re-run too):
        # the committed entries are not read either; the run says so once.
        done = run_action(_env(project, github, baseline_ref="merge-base"), project.root)
        output = done.stdout + done.stderr
        assert done.returncode == 1, output
        assert len(_calls(project)) == 4  # the PR's bot and the base bot
        assert output.count(".agentv-ci/cache/ holds files committed to the repository") == 1, output
        [row] = (project.repo / ".agentv-ci/results/index.jsonl").read_text().splitlines()
        assert "Lyon" in json.loads(row)["output"]
