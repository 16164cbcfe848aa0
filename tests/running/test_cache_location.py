"""Where the response cache lives, and that a directory git tracks is never used (real git repos)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.model.result import TargetResponse
from agentv_ci.running.cache import CACHE_DIR_ENV, default_cache_dir, open_cache
from tests.git_repos import git


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "README.md").write_text("demo\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    monkeypatch.chdir(root)
    return root


def test_the_default_location_is_the_users_cache_dir_outside_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CACHE_DIR_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "agentv-ci" / "responses"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "agentv-ci" / "responses"
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "chosen"))
    assert default_cache_dir() == tmp_path / "chosen"


def test_an_untracked_directory_inside_the_repo_is_used(repo: Path) -> None:
    warnings: list[str] = []
    cache = open_cache(repo / "my-cache", warnings)
    assert cache is not None and warnings == []
    cache.put("ab" * 32, TargetResponse(text="hi"))
    again = open_cache(repo / "my-cache", warnings)
    assert again is not None and again.get("ab" * 32) == TargetResponse(text="hi")


def test_a_directory_with_a_tracked_file_is_never_used_and_said_once(repo: Path) -> None:
    committed = repo / "committed-cache"
    (committed / "ab").mkdir(parents=True)
    (committed / "ab" / "entry.json").write_text('{"text": "poison"}')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "cache")
    (committed / "cd").mkdir()  # an untracked file beside it changes nothing
    warnings: list[str] = []
    assert open_cache(committed, warnings) is None
    assert open_cache(committed / "ab", warnings) is None  # a tracked file below: the same
    assert open_cache(committed, warnings) is None
    assert warnings == [
        f"the response cache directory {committed} holds files tracked by git; it is not used "
        "(nothing is read from it or written to it): point --cache-dir outside the repository",
        f"the response cache directory {committed / 'ab'} holds files tracked by git; it is not used "
        "(nothing is read from it or written to it): point --cache-dir outside the repository",
    ]


def test_files_committed_under_the_old_default_location_are_reported_once(repo: Path, tmp_path: Path) -> None:
    legacy = repo / ".agentv-ci" / "cache" / "ab"
    legacy.mkdir(parents=True)
    (legacy / "entry.json").write_text('{"text": "poison"}')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "cache")
    warnings: list[str] = []
    elsewhere = tmp_path / "elsewhere"
    assert open_cache(elsewhere, warnings) is not None
    assert open_cache(elsewhere, warnings) is not None
    assert warnings == [
        f".agentv-ci/cache/ holds files committed to the repository; they are never read "
        f"(the response cache is {elsewhere})"
    ]
