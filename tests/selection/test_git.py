"""Git plumbing: temporary work trees, safe.directory, one runner for every call."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentv_ci.selection import GitError, checkout_worktree, mark_safe_directory, resolve_commit
from agentv_ci.selection.git import run_git
from tests.git_repos import GitRepo


def test_checkout_worktree_is_a_detached_tree_at_the_ref_and_is_removed_after(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("a.txt", "old\n")
    old = repo.commit("old")
    repo.write("a.txt", "new\n")
    repo.commit("new")
    with checkout_worktree(repo.root, old) as tree:
        assert (tree / "a.txt").read_text() == "old\n"
        assert GitRepo(tree).git("rev-parse", "HEAD") == old
        assert GitRepo(tree).git("status", "--porcelain", "--branch").startswith("## HEAD (no branch)")
        (tree / "scratch.txt").write_text("left behind\n")
    assert not tree.exists()
    assert not tree.parent.exists()
    assert repo.git("worktree", "list").count("\n") == 0  # only the main work tree
    assert (repo.root / "a.txt").read_text() == "new\n"


def test_checkout_worktree_is_removed_when_the_body_raises(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("one")
    with pytest.raises(RuntimeError), checkout_worktree(repo.root, "HEAD") as tree:
        raise RuntimeError("boom")
    assert not tree.exists()
    assert repo.git("worktree", "list").count("\n") == 0


def test_mark_safe_directory_adds_the_path_once(tmp_path: Path, isolated_git: Path) -> None:
    mark_safe_directory(tmp_path / "work")
    mark_safe_directory(tmp_path / "work")
    mark_safe_directory(tmp_path / "other")
    assert isolated_git.read_text().count("directory = ") == 2
    listed = run_git("config", "--global", "--get-all", "safe.directory", cwd=None).stdout.decode()
    assert listed.split() == [str(tmp_path / "work"), str(tmp_path / "other")]


def test_mark_safe_directory_leaves_a_wildcard_alone(tmp_path: Path, isolated_git: Path) -> None:
    run_git("config", "--global", "--add", "safe.directory", "*", cwd=None)
    mark_safe_directory(tmp_path)
    assert isolated_git.read_text().count("directory = ") == 1


def test_resolve_commit_tries_the_name_then_origin(tmp_path: Path) -> None:
    upstream = GitRepo.init(tmp_path / "up")
    sha = upstream.commit("one")
    upstream.branch("release")
    release = upstream.commit("two")
    clone = upstream.clone(tmp_path / "clone", "--branch", "main")
    assert resolve_commit(clone.root, "main") == sha
    assert resolve_commit(clone.root, "release") == release  # only origin/release here
    assert resolve_commit(clone.root, "origin/release") == release
    with pytest.raises(GitError, match="unknown git revision '--help'"):
        resolve_commit(clone.root, "--help")


def test_run_git_times_out_with_a_clear_error(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    marker = f"sleep 9.{os.getpid()}"  # a command line no other process has
    repo.git("config", "alias.slow", f"!{marker}")
    with pytest.raises(GitError, match=r"`git slow` did not finish within 0 s"):
        run_git("slow", cwd=repo.root, timeout=0.3)
    assert not _sleeping(marker)  # the alias's shell and its sleep went with git


def test_run_git_failure_names_the_command_and_gits_message(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    with pytest.raises(GitError) as raised:
        run_git("cat-file", "-p", "HEAD:missing", cwd=repo.root)
    assert raised.value.message.startswith("`git cat-file -p HEAD:missing` failed: fatal:")


def _sleeping(marker: str) -> bool:
    import subprocess

    done = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True, check=False)
    return bool(done.stdout.strip())


def test_resolve_commit_fetches_a_commit_id_the_shallow_clone_lacks(tmp_path: Path) -> None:
    upstream = GitRepo.init(tmp_path / "up")
    before = upstream.commit("one")
    upstream.branch("feature")
    upstream.commit("two")
    clone = upstream.clone(tmp_path / "clone", "--depth", "1", "--branch", "feature")
    assert resolve_commit(clone.root, before) == before  # e.g. a push event's `before`
    with pytest.raises(GitError, match=r"unknown git revision '0{40}'"):
        resolve_commit(clone.root, "0" * 40)  # a new branch's push: nothing to compare with
