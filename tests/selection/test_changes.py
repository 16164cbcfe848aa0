"""`changed_files`: three-dot diffs of real repositories, renames, the work tree, shallow clones."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.errors import ExitCode, UsageError
from agentv_ci.selection import ChangedFile, GitError, changed_files, find_merge_base
from agentv_ci.selection.changes import parse_name_status
from tests.git_repos import GitRepo


def _files(changes: object) -> list[tuple[str, str]]:
    return [(f.path, f.status) for f in changes.files]  # type: ignore[attr-defined]


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("keep.txt", "same\n")
    repo.write("edit.txt", "one\n")
    repo.write("gone.txt", "bye\n")
    repo.write("old-name.eval.yaml", "tests: []\n")
    repo.commit("base")
    return repo


def test_added_modified_deleted_and_renames_as_delete_plus_add(repo: GitRepo) -> None:
    repo.branch("feature")
    repo.write("edit.txt", "two\n")
    repo.write("new.txt", "hi\n")
    repo.delete("gone.txt")
    repo.git("mv", "old-name.eval.yaml", "new-name.eval.yaml")
    repo.commit("feature")
    changes = changed_files(repo.root, "main")
    assert _files(changes) == [
        ("edit.txt", "M"),
        ("gone.txt", "D"),
        ("new-name.eval.yaml", "A"),
        ("new.txt", "A"),
        ("old-name.eval.yaml", "D"),
    ]
    assert changes.merge_base == repo.git("rev-parse", "main")
    assert changes.head_sha == repo.git("rev-parse", "HEAD")
    assert (changes.base, changes.head) == ("main", "HEAD")


def test_three_dots_a_change_on_base_after_the_branch_point_is_not_a_branch_change(repo: GitRepo) -> None:
    branch_point = repo.git("rev-parse", "HEAD")
    repo.branch("feature")
    repo.write("edit.txt", "feature\n")
    repo.commit("feature")
    repo.checkout("main")
    repo.write("keep.txt", "moved on main\n")
    repo.commit("main moves on")
    repo.checkout("feature")
    changes = changed_files(repo.root, "main")
    assert _files(changes) == [("edit.txt", "M")]
    assert changes.merge_base == branch_point


def test_include_uncommitted_adds_modified_staged_and_untracked_files(repo: GitRepo) -> None:
    repo.branch("feature")
    repo.write("edit.txt", "committed\n")
    repo.commit("feature")
    repo.write("keep.txt", "edited, not committed\n")
    repo.write("staged.txt", "added\n")
    repo.git("add", "staged.txt")
    repo.write("untracked/new.eval.yaml", "tests: []\n")
    repo.write(".gitignore", "ignored.txt\n")
    repo.write("ignored.txt", "never\n")
    repo.delete("gone.txt")
    assert _files(changed_files(repo.root, "main")) == [("edit.txt", "M")]
    changes = changed_files(repo.root, "main", include_uncommitted=True)
    assert _files(changes) == [
        (".gitignore", "A"),
        ("edit.txt", "M"),
        ("gone.txt", "D"),
        ("keep.txt", "M"),
        ("staged.txt", "A"),
        ("untracked/new.eval.yaml", "A"),
    ]


def test_include_uncommitted_needs_head_to_be_checked_out(repo: GitRepo) -> None:
    repo.branch("feature")
    repo.commit("one")
    repo.commit("two")
    with pytest.raises(UsageError) as raised:
        changed_files(repo.root, "main", "HEAD~1", include_uncommitted=True)
    assert "not checked out" in raised.value.message


def test_odd_paths_survive_intact(repo: GitRepo) -> None:
    repo.branch("feature")
    odd = ["with space.txt", "tab\there.txt", "new\nline.txt", "ünïcödé.txt", '"quoted".txt']
    for name in odd:
        repo.write(f"odd/{name}", "x\n")
    repo.commit("odd")
    assert sorted(f.path for f in changed_files(repo.root, "main").files) == sorted(f"odd/{n}" for n in odd)


def test_parse_name_status_splits_a_rename_into_delete_and_add() -> None:
    output = b"R100\0old.yaml\0new.yaml\0C75\0a.txt\0copy.txt\0T\0link\0M\0x\0"
    assert parse_name_status(output) == [
        ChangedFile("old.yaml", "D"),
        ChangedFile("new.yaml", "A"),
        ChangedFile("copy.txt", "A"),
        ChangedFile("link", "M"),
        ChangedFile("x", "M"),
    ]


def test_a_base_branch_known_only_on_the_remote_resolves_as_origin(repo: GitRepo, tmp_path: Path) -> None:
    repo.branch("feature")
    repo.write("edit.txt", "feature\n")
    repo.commit("feature")
    clone = repo.clone(tmp_path / "clone", "--branch", "feature")
    assert "main" not in clone.git("branch", "--list", "main")  # only origin/main exists
    changes = changed_files(clone.root, "main")
    assert _files(changes) == [("edit.txt", "M")]
    assert changes.base_sha == repo.git("rev-parse", "main")


def test_an_unknown_base_is_a_clear_usage_error(repo: GitRepo) -> None:
    with pytest.raises(GitError) as raised:
        changed_files(repo.root, "no-such-branch")
    assert raised.value.exit_code == ExitCode.BAD_INPUT
    assert "unknown git revision 'no-such-branch'" in raised.value.render()
    assert "origin/no-such-branch" in raised.value.render()


def test_not_a_repository_is_a_clear_usage_error(tmp_path: Path) -> None:
    with pytest.raises(GitError) as raised:
        changed_files(tmp_path, "main")
    assert raised.value.exit_code == ExitCode.BAD_INPUT
    assert "is not inside a git repository" in raised.value.message


def test_git_not_installed_is_a_clear_usage_error(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(repo.root / "no-bin"))
    with pytest.raises(GitError) as raised:
        changed_files(repo.root, "main")
    assert raised.value.message == "git is not installed (or not on PATH)"


def _long_branch(repo: GitRepo, commits: int) -> None:
    repo.branch("feature")
    for i in range(commits):
        repo.write("edit.txt", f"step {i}\n")
        repo.commit(f"step {i}")


def test_a_shallow_clone_is_deepened_until_the_merge_base_is_there(repo: GitRepo, tmp_path: Path) -> None:
    branch_point = repo.git("rev-parse", "HEAD")
    _long_branch(repo, 5)
    repo.checkout("main")
    repo.write("keep.txt", "main moved\n")
    repo.commit("main moves")
    repo.checkout("feature")
    clone = repo.clone(tmp_path / "clone", "--depth", "1", "--branch", "feature")
    assert clone.git("rev-parse", "--is-shallow-repository") == "true"
    changes = changed_files(clone.root, "main")
    assert changes.merge_base == branch_point
    assert _files(changes) == [("edit.txt", "M")]
    assert int(clone.git("rev-list", "--count", "HEAD")) == 6  # 5 branch commits + the branch point


def test_a_merge_base_beyond_the_deepening_asks_for_fetch_depth_0(repo: GitRepo, tmp_path: Path) -> None:
    _long_branch(repo, 12)
    clone = repo.clone(tmp_path / "clone", "--depth", "1", "--no-single-branch")
    base, head = clone.git("rev-parse", "origin/main"), clone.git("rev-parse", "HEAD")
    with pytest.raises(GitError) as raised:
        find_merge_base(clone.root, base, head, names=("main", "HEAD"), first_deepen=1, max_steps=3)
    error = raised.value
    assert error.exit_code == ExitCode.BAD_INPUT
    assert "not in this shallow clone (deepened 3 time(s) from `origin`, 7 commits)" in error.message
    assert error.hint is not None and "fetch-depth: 0" in error.hint
    # The default steps reach it.
    assert find_merge_base(clone.root, base, head) == repo.git("rev-parse", "main")


def test_a_shallow_clone_without_origin_asks_for_fetch_depth_0(repo: GitRepo, tmp_path: Path) -> None:
    _long_branch(repo, 2)
    clone = repo.clone(tmp_path / "clone", "--depth", "1", "--no-single-branch")
    clone.git("remote", "remove", "origin")
    clone.git("branch", "main", repo.git("rev-parse", "main"))
    with pytest.raises(GitError) as raised:
        changed_files(clone.root, "main")
    assert "no `origin` remote" in raised.value.message
    assert "fetch-depth: 0" in (raised.value.hint or "")


def test_unrelated_histories_are_a_clear_error(repo: GitRepo) -> None:
    repo.git("checkout", "--quiet", "--orphan", "other")
    repo.commit("unrelated")
    with pytest.raises(GitError) as raised:
        changed_files(repo.root, "main")
    assert raised.value.message == "main and HEAD have no common ancestor"
