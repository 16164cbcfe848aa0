from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentv_ci.loading.paths import resolve_reference
from agentv_ci.security.confinement import find_repo_root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "evals" / "deep").mkdir(parents=True)
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "prompt.md").write_text("root")
    (tmp_path / "evals" / "common.md").write_text("parent")
    (tmp_path / "evals" / "deep" / "local.md").write_text("local")
    return tmp_path


def test_find_repo_root_walks_up_to_git(repo: Path) -> None:
    assert find_repo_root(repo / "evals" / "deep") == repo.resolve()
    assert find_repo_root(repo / "evals" / "deep" / "local.md") == repo.resolve()


def test_find_repo_root_without_git_is_start(tmp_path: Path) -> None:
    assert find_repo_root(tmp_path) == tmp_path.resolve()


def test_search_roots_eval_dir_then_parents_then_root(repo: Path) -> None:
    base = repo / "evals" / "deep"
    assert resolve_reference("local.md", base, repo).read_text() == "local"
    assert resolve_reference("common.md", base, repo).read_text() == "parent"
    assert resolve_reference("shared/prompt.md", base, repo).read_text() == "root"
    assert resolve_reference("file://common.md", base, repo).read_text() == "parent"


def test_leading_slash_is_repo_root_relative(repo: Path) -> None:
    found = resolve_reference("/shared/prompt.md", repo / "evals" / "deep", repo)
    assert found == (repo / "shared" / "prompt.md").resolve()


def test_cwd_is_the_last_root_and_missing_falls_back_to_base_dir(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("cwd")
    (elsewhere / "only-in-cwd.md").write_text("cwd")
    old = os.getcwd()
    os.chdir(elsewhere)
    try:
        assert resolve_reference("only-in-cwd.md", repo / "evals", repo).read_text() == "cwd"
    finally:
        os.chdir(old)
    assert resolve_reference("nope.md", repo / "evals", repo) == (repo / "evals" / "nope.md").resolve()
