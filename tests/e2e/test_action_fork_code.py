"""On `pull_request_target`, `workflow_run` and the other events that carry the base's secrets and
write token, the Action runs eval files only when the checkout is provably the base's code: a fork's
merge ref (a depth-1 clone, without the fork's commit), a head force-pushed after the event, fork
files beside or over the base checkout are refused (exit 2) before any grader runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.scaffold import TOKEN, Project, project, run_action
from tests.fakes.github_server import FakeGitHub
from tests.git_repos import git

__all__ = ["project"]  # the fixture, shared with test_action


def test_a_forks_checked_out_code_is_refused_on_pull_request_target(
    project: Project, github_server: FakeGitHub
) -> None:
    project.commit({"evals/geo.eval.yaml": "tests:\n  - id: x\n    input: hi\n    criteria: y\n"})
    event = project.event(head_repo="mallory/demo")
    env = project.env(github_server, event, name="pull_request_target")
    refused = run_action(env, project.root)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "refusing to run the eval files of mallory/demo's pull request #7" in refused.stderr
    assert "trust_fork_code" in refused.stderr
    assert not (project.repo / ".agentv-ci" / "results" / "index.jsonl").exists()

    trusted = run_action({**env, "INPUT_TRUST_FORK_CODE": "true"}, project.root)
    assert trusted.returncode == 0, trusted.stdout + trusted.stderr


def test_the_base_checkout_and_same_repository_prs_are_not_refused(
    project: Project, github_server: FakeGitHub
) -> None:
    project.commit({"README.md": "changed\n"})
    fork_event = project.event(head_repo="mallory/demo")
    same_repo = project.env(github_server, project.event(), name="pull_request_target")
    assert run_action(same_repo, project.root).returncode == 0
    git(project.repo, "checkout", "-q", "main")  # the default checkout of pull_request_target
    base = project.env(github_server, fork_event, name="pull_request_target")
    done = run_action(base, project.root)
    assert "refusing" not in done.stderr
    assert done.returncode == 0, done.stdout + done.stderr


# --- fork safety by proof: real repositories as GitHub serves them ---------------------------------

SECRET = "sk-base-repository-secret-0123456789"
GRADER_EVAL = """\
tests:
  - id: graded
    input: hi
    expected_output: hi
    assertions:
      - type: code-grader
        command: [{python}, grader.py]
"""
# Writes the canary, and what it finds of the runner's secret in its parent's environment.
GRADER = """\
import json, os, sys
json.load(sys.stdin)
try:
    parent = open(f"/proc/{{os.getppid()}}/environ", "rb").read().decode(errors="replace")
except OSError:
    parent = ""
with open({canary!r}, "a") as handle:
    handle.write("{who} ran; secret " + ("SEEN" if {secret!r} in parent else "not seen") + "\\n")
print(json.dumps({{"score": 1.0}}))
"""


class Hosted:
    """`octo/demo` as GitHub serves it: a bare repository with `main`, a fork's PR #7 under
    `refs/pull/7/head` and GitHub's test merge under `refs/pull/7/merge`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.canary = root / "canary.txt"
        self.bare = root / "github" / "octo" / "demo.git"
        work = root / "author"
        (work / "evals").mkdir(parents=True)
        (work / ".agentv").mkdir()
        (work / ".agentv" / "targets.yaml").write_text(
            "targets:\n  - name: default\n    provider: mock\n", encoding="utf-8"
        )
        (work / "evals" / "graded.eval.yaml").write_text(
            GRADER_EVAL.format(python=sys.executable), encoding="utf-8"
        )
        self._grader(work, "base")
        git(work, "init", "-q", "-b", "main")
        git(work, "add", "-A")
        git(work, "commit", "-qm", "base one")
        self.first = git(work, "rev-parse", "HEAD")
        (work / "README.md").write_text("docs\n", encoding="utf-8")
        git(work, "add", "-A")
        git(work, "commit", "-qm", "base two")
        self.main = git(work, "rev-parse", "HEAD")
        # The fork's PR: its own grader, which would see the base's secret.
        git(work, "checkout", "-qb", "fork")
        self._grader(work, "fork")
        git(work, "commit", "-qam", "fork: my grader")
        self.fork_head = git(work, "rev-parse", "HEAD")
        git(work, "checkout", "-q", "--detach", "main")
        git(work, "merge", "-q", "--no-ff", "-m", "Merge fork into main", "fork")
        self.merge = git(work, "rev-parse", "HEAD")
        self.work = work
        self.bare.parent.mkdir(parents=True)
        git(root, "clone", "-q", "--bare", str(work), str(self.bare))
        git(self.bare, "update-ref", "refs/pull/7/head", self.fork_head)
        git(self.bare, "update-ref", "refs/pull/7/merge", self.merge)

    def _grader(self, work: Path, who: str) -> None:
        text = GRADER.format(canary=str(self.canary), who=who, secret=SECRET)
        (work / "evals" / "grader.py").write_text(text, encoding="utf-8")

    def force_push_fork(self) -> str:
        """The fork rewrites its branch after the event: the event's head is no longer served."""
        git(self.work, "checkout", "-q", "fork")
        (self.work / "evals" / "grader.py").write_text(
            (self.work / "evals" / "grader.py").read_text() + "# amended\n", encoding="utf-8"
        )
        git(self.work, "commit", "-q", "--amend", "-am", "fork: my grader, amended")
        head = git(self.work, "rev-parse", "HEAD")
        git(self.bare, "fetch", "-q", str(self.work), f"+{head}:refs/pull/7/head")
        git(self.bare, "update-ref", "refs/pull/7/head", head)
        return head

    def checkout(self, name: str, ref: str, *, depth: int | None = 1) -> Path:
        """What `actions/checkout` does: init, `origin` = this repository, fetch `ref` (depth 1 by
        default) into a remote-tracking ref, check it out detached."""
        repo = self.root / name
        repo.mkdir()
        git(repo, "init", "-q")
        git(repo, "remote", "add", "origin", str(self.bare))
        local = ref.replace("refs/heads/", "refs/remotes/origin/").replace("refs/pull/", "refs/remotes/pull/")
        fetch = ["fetch", "-q", *(["--depth", str(depth)] if depth else []), "origin", f"+{ref}:{local}"]
        if ref.startswith("refs/heads/"):
            fetch.append("+refs/heads/*:refs/remotes/origin/*")
        git(repo, *fetch)
        git(repo, "-c", "advice.detachedHead=false", "checkout", "-q", "--detach", local)
        git(repo, "remote", "set-url", "origin", "https://github.example/octo/demo")
        return repo

    def event(self, head_sha: str, *, name: str = "pull_request_target") -> Path:
        repository = {"full_name": "octo/demo", "default_branch": "main"}
        payload: dict[str, object] = {
            "action": "synchronize",
            "number": 7,
            "pull_request": {
                "number": 7,
                "base": {"sha": self.first, "ref": "main", "repo": {"full_name": "octo/demo"}},
                "head": {"sha": head_sha, "ref": "feature", "repo": {"full_name": "mallory/demo"}},
            },
            "repository": repository,
        }
        if name == "workflow_run":
            payload = {
                "action": "completed",
                "workflow_run": {
                    "id": 5,
                    "event": "pull_request",
                    "head_sha": head_sha,
                    "head_repository": {"full_name": "mallory/demo"},
                    "pull_requests": [],
                },
                "repository": repository,
            }
        path = self.root / "event.json"
        path.write_text(json.dumps(payload), encoding="utf-8")
        return path

    def env(
        self, github: FakeGitHub, workspace: Path, event: Path, name: str, **inputs: str
    ) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
        files = self.root / "files"
        files.mkdir(exist_ok=True)
        return {
            **base,
            "HOME": str(self.root / "home"),
            "GIT_CONFIG_GLOBAL": str(self.root / "gitconfig"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_EVENT_NAME": name,
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_SHA": self.main,  # pull_request_target / workflow_run: the base branch's head
            "GITHUB_OUTPUT": str(files / "output"),
            "GITHUB_API_URL": github.base_url,
            "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_REPOSITORY": "octo/demo",
            "OPENAI_API_KEY": SECRET,
            "INPUT_GITHUB_TOKEN": TOKEN,
            "INPUT_COMMENT": "false",
            "INPUT_CHANGED_ONLY": "false",
            **{f"INPUT_{k.upper()}": v for k, v in inputs.items()},
        }


@pytest.fixture
def hosted(tmp_path: Path) -> Hosted:
    return Hosted(tmp_path)


def _has_commit(repo: Path, sha: str) -> bool:
    return subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{sha}^{{commit}}"]).returncode == 0


def _assert_refused(done: subprocess.CompletedProcess[str], hosted: Hosted, workspace: Path) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "refusing to run the eval files" in done.stderr
    assert "examples/workflows/evals-fork-comment.yml" in done.stderr
    assert "trust_fork_code" in done.stderr
    assert not hosted.canary.exists(), hosted.canary.read_text()  # no grader ran, with or without the key
    assert not (workspace / ".agentv-ci" / "results" / "index.jsonl").exists()


def test_the_refusal_names_workflows_that_exist() -> None:
    root = Path(__file__).resolve().parents[2]
    for name in ("evals-pr.yml", "evals-fork-comment.yml"):
        assert (root / "examples" / "workflows" / name).is_file()
    text = (root / "examples" / "workflows" / "evals-fork-comment.yml").read_text(encoding="utf-8")
    assert "results: pr-results" in text and "actions/checkout" not in text  # runs no PR code


def test_a_depth_one_checkout_of_the_merge_ref_is_refused(hosted: Hosted, github_server: FakeGitHub) -> None:
    workspace = hosted.checkout("merge", "refs/pull/7/merge")
    # The fork's head is not in this checkout: the old check ("is the fork's commit present?") passed.
    assert not _has_commit(workspace, hosted.fork_head)
    env = hosted.env(github_server, workspace, hosted.event(hosted.fork_head), "pull_request_target")

    done = run_action(env, hosted.root)

    _assert_refused(done, hosted, workspace)
    assert (
        f"mallory/demo's pull request #7 on pull_request_target: the checkout's HEAD {hosted.merge[:12]}"
        in (done.stderr)
    )


def test_a_head_force_pushed_after_the_event_is_refused(hosted: Hosted, github_server: FakeGitHub) -> None:
    new_head = hosted.force_push_fork()
    workspace = hosted.checkout("head", "refs/pull/7/head")
    assert git(workspace, "rev-parse", "HEAD") == new_head != hosted.fork_head
    assert not _has_commit(workspace, hosted.fork_head)
    env = hosted.env(github_server, workspace, hosted.event(hosted.fork_head), "pull_request_target")

    _assert_refused(run_action(env, hosted.root), hosted, workspace)


def test_a_workflow_run_that_checks_out_the_forks_head_is_refused(
    hosted: Hosted, github_server: FakeGitHub
) -> None:
    workspace = hosted.checkout("head", "refs/pull/7/head", depth=None)
    env = hosted.env(
        github_server, workspace, hosted.event(hosted.fork_head, name="workflow_run"), "workflow_run"
    )

    _assert_refused(run_action(env, hosted.root), hosted, workspace)


def test_fork_files_beside_the_base_checkout_or_edited_into_it_are_refused(
    hosted: Hosted, github_server: FakeGitHub
) -> None:
    workspace = hosted.checkout("base", "refs/heads/main")
    git(hosted.root, "clone", "-q", str(hosted.bare), str(workspace / "pr"))
    git(workspace / "pr", "checkout", "-q", "--detach", hosted.fork_head)
    env = hosted.env(github_server, workspace, hosted.event(hosted.fork_head), "pull_request_target")

    # HEAD is GITHUB_SHA, but the eval files come from the fork's clone in `pr/` (named, or found
    # by walking the workspace).
    for paths in ("pr/evals", "."):
        nested = run_action({**env, "INPUT_PATHS": paths}, hosted.root)
        _assert_refused(nested, hosted, workspace)
        assert (
            f"{workspace / 'pr' / 'evals' / 'graded.eval.yaml'} is not a file of the checkout"
            in nested.stderr
        )
    shutil.rmtree(workspace / "pr")

    # HEAD is GITHUB_SHA, but an untracked eval file was dropped next to the base's.
    (workspace / "evals" / "dropped.eval.yaml").write_text(GRADER_EVAL.format(python=sys.executable))
    dropped = run_action({**env, "INPUT_PATHS": "evals"}, hosted.root)
    _assert_refused(dropped, hosted, workspace)
    assert "dropped.eval.yaml is not a file of the checkout" in dropped.stderr
    (workspace / "evals" / "dropped.eval.yaml").unlink()

    # HEAD is GITHUB_SHA, but the fork's grader was copied over the tracked one.
    fork_grader = GRADER.format(canary=str(hosted.canary), who="fork", secret=SECRET)
    (workspace / "evals" / "grader.py").write_text(fork_grader)
    edited = run_action({**env, "INPUT_PATHS": "evals"}, hosted.root)
    _assert_refused(edited, hosted, workspace)
    assert "tracked files differ from HEAD" in edited.stderr


@pytest.mark.parametrize("event_name", ["pull_request_target", "workflow_run"])
def test_the_base_branch_head_runs_with_the_secret(
    hosted: Hosted, github_server: FakeGitHub, event_name: str
) -> None:
    workspace = hosted.checkout("base", "refs/heads/main")
    assert git(workspace, "rev-parse", "HEAD") == hosted.main  # GITHUB_SHA
    env = hosted.env(github_server, workspace, hosted.event(hosted.fork_head, name=event_name), event_name)

    done = run_action(env, hosted.root)

    assert done.returncode == 0, done.stdout + done.stderr
    assert hosted.canary.read_text().startswith("base ran")


def test_an_older_commit_of_the_default_branch_runs_only_when_origin_is_this_repository(
    hosted: Hosted, github_server: FakeGitHub
) -> None:
    workspace = hosted.checkout("older", "refs/heads/main", depth=None)
    git(workspace, "-c", "advice.detachedHead=false", "checkout", "-q", "--detach", hosted.first + "~0")
    env = hosted.env(github_server, workspace, hosted.event(hosted.fork_head), "pull_request_target")
    env["GITHUB_SHA"] = hosted.merge  # neither GITHUB_SHA nor the event's base: only main proves it
    event = json.loads(Path(env["GITHUB_EVENT_PATH"]).read_text())
    event["pull_request"]["base"]["sha"] = hosted.main
    Path(env["GITHUB_EVENT_PATH"]).write_text(json.dumps(event))

    done = run_action(env, hosted.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert hosted.canary.read_text().startswith("base ran")

    hosted.canary.unlink()
    shutil.rmtree(workspace / ".agentv-ci")
    git(workspace, "remote", "set-url", "origin", "https://github.example/mallory/demo")
    _assert_refused(run_action(env, hosted.root), hosted, workspace)
