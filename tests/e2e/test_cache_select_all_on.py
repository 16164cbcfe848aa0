"""Files an agent reads outside its sources key the response cache when `select_all_on` names them:
end to end through `agentv-ci action` (fake GitHub API, a real git repository with a base and a PR
commit, a real subprocess cli agent).

The agent answers from `prompts/answer.txt`, beside its own directory: not part of its sources, so
before, with the cache on, the PR's run and the merge-base re-run had the same key; the base re-run
read the PR's answer back and a 1.0 -> 0.0 drop passed the regression gate. `select_all_on:
prompts/**` selects every eval when that file changes, and now keys every cached answer too.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.scaffold import Project, run_action
from tests.fakes.github_server import FakeGitHub
from tests.git_repos import git

TARGETS = """\
targets:
  - name: default
    provider: cli
    command: python3 agent/bot.py {PROMPT_FILE} {OUTPUT_FILE}
    cwd: ..
    env:
      CALLS_LOG: ${{ CALLS_LOG }}
"""
# The bot answers with the repository's prompts/answer.txt, read at run time; it logs where it ran.
BOT = """\
import json, os, sys
from pathlib import Path
answer = (Path.cwd() / "prompts" / "answer.txt").read_text()
with open(os.environ["CALLS_LOG"], "a") as log:
    log.write(os.getcwd() + "\\n")
json.dump({"text": answer}, open(sys.argv[2], "w"))
"""
EVAL = """\
execution:
  cache: true
tests:
  - id: capital
    input: What is the capital of France?
    assertions:
      - type: contains
        value: Paris
"""


def _project(root: Path) -> Project:
    """main: the bot answers Paris (score 1.0); the `feature` branch starts from it."""
    project = Project(root)
    (project.repo / "agent").mkdir()
    (project.repo / "prompts").mkdir()
    project.commit(
        {
            ".agentv/targets.yaml": TARGETS,
            ".gitignore": ".agentv-ci/\n",
            "agent/bot.py": BOT,
            "prompts/answer.txt": "Paris is the capital of France.\n",
            "evals/geo.eval.yaml": EVAL,
        },
        "the bot",
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
    log = project.root / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def test_a_prompt_file_named_by_select_all_on_keys_the_cache_so_the_merge_base_rerun_catches_the_drop(
    tmp_path: Path,
) -> None:
    with FakeGitHub() as github:
        project = _project(tmp_path)
        project.commit({"prompts/answer.txt": "Lyon is the capital of France.\n"}, "a new prompt")
        env = {
            **project.env(
                github,
                project.event(),
                paths="evals",
                select_all_on="prompts/**",
                baseline_ref="merge-base",
                max_regression="0.1",
                threshold="0",  # the test passes at any score: only the regression gate can fail it
            ),
            "CALLS_LOG": str(project.root / "calls.log"),
        }

        done = run_action(env, project.root)

        output = done.stdout + done.stderr
        assert done.returncode == 1, output
        assert "regressed vs baseline (1.000 -> 0.000)" in output, output
        # The PR's bot ran in the checkout, then the base bot in the merge-base's worktree: the base
        # re-run did not read back the answer the PR's run had just cached.
        calls = _calls(project)
        assert len(calls) == 2 and calls[0] == str(project.repo) and calls[1] != calls[0], calls
        [row] = (project.repo / ".agentv-ci/results/index.jsonl").read_text().splitlines()
        assert "Lyon" in json.loads(row)["output"]
        [comment] = github.comments_on(7)
        assert "| regressed | geo/capital \\[default\\] | 1.000 | 0.000 | -1.000 |" in comment.body, (
            comment.body
        )
        assert project.outputs()["verdict"] == "failed"

        # Keys stay stable for unchanged files: the same PR again is answered from the cache, twice.
        again = run_action(env, project.root)
        assert again.returncode == 1, again.stdout + again.stderr
        assert "regressed vs baseline (1.000 -> 0.000)" in again.stdout
        assert len(_calls(project)) == 2
