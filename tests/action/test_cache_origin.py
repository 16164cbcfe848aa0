"""The Action's cache directory and its origin stamp (action/cache_origin.py), on real directories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentv_ci.action.cache_origin import MARKER, CacheOrigin, origin_of, prepare_cache_dir
from agentv_ci.github.event import PullRequest, WorkflowRun

BASE = CacheOrigin("octo/demo", False, "a push run of octo/demo")
FORK = CacheOrigin("octo/demo", True, "a run of pull request #7 from evil/demo")
KEY = "ab" + "0" * 62


def _entry(cache: Path, key: str = KEY) -> Path:
    path = cache / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"text": "Lyon."}')
    return path


def _stamp(cache: Path, origin: CacheOrigin) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    (cache / MARKER).write_text(origin.as_json())


def _marker(cache: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((cache / MARKER).read_text())
    return data


def test_a_fork_run_stamps_the_directory_again_after_its_code_forged_the_stamp(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    prepared = prepare_cache_dir(cache, FORK, tmp_path, [])
    assert _marker(cache)["fork"] is True  # before anything runs
    _stamp(cache, BASE)  # the fork's agent rewrites it during the run
    _entry(cache)

    prepared.seal()

    assert _marker(cache) == {"repository": "octo/demo", "fork": True, "writer": FORK.writer}
    warnings: list[str] = []
    prepare_cache_dir(cache, BASE, tmp_path, warnings)
    assert not list(cache.glob("??/*.json")), "a base run read a fork's entry"
    assert len(warnings) == 1 and "written by a run of pull request #7 from evil/demo" in warnings[0]


@pytest.mark.parametrize(
    "stamp",
    [None, CacheOrigin("other/repo", False, "a push run of other/repo"), FORK],
    ids=["no-stamp", "another-repository", "fork"],
)
def test_a_base_run_removes_entries_it_cannot_trust_and_only_the_caches_files(
    tmp_path: Path, stamp: CacheOrigin | None
) -> None:
    cache = tmp_path / "cache"
    _entry(cache)
    (cache / "ab" / "leftover.tmp").write_text("x")
    (cache / "ab" / "notes.txt").write_text("mine")
    (cache / "README").write_text("mine")
    if stamp is not None:
        _stamp(cache, stamp)
    warnings: list[str] = []

    prepared = prepare_cache_dir(cache, BASE, tmp_path, warnings)

    assert prepared.settings() == (True, cache)
    assert sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*") if p.is_file()) == [
        "README",
        "ab/notes.txt",
        MARKER,
    ]
    assert _marker(cache)["fork"] is False
    assert len(warnings) == 1 and "its 1 entry was removed" in warnings[0], warnings


def test_a_base_run_keeps_what_base_runs_of_its_repository_wrote(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _stamp(cache, CacheOrigin("Octo/Demo", False, "a run of pull request #3 from octo/demo"))
    entry = _entry(cache)
    warnings: list[str] = []

    prepare_cache_dir(cache, BASE, tmp_path, warnings)

    assert entry.is_file() and warnings == []


def test_a_fork_run_reads_the_bases_entries(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _stamp(cache, BASE)
    entry = _entry(cache)

    prepare_cache_dir(cache, FORK, tmp_path, [])

    assert entry.is_file() and _marker(cache)["fork"] is True


def test_a_cache_directory_behind_a_symlink_is_not_used(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    _entry(elsewhere)
    workspace = tmp_path / "workspace"
    (workspace / ".agentv-ci").mkdir(parents=True)
    (workspace / ".agentv-ci" / "response-cache").symlink_to(elsewhere)
    warnings: list[str] = []

    prepared = prepare_cache_dir(workspace / ".agentv-ci" / "response-cache", BASE, workspace, warnings)

    assert prepared.settings() == (False, None)
    assert "goes through the symlink" in warnings[0]
    assert not (elsewhere / MARKER).exists()
    prepared.seal()
    assert not (elsewhere / MARKER).exists()


def _pr(head_repo: str) -> PullRequest:
    return PullRequest(7, "b" * 40, "main", "c" * 40, head_repo, "octo/demo")


@pytest.mark.parametrize(
    ("run", "trust", "fork"),
    [
        (WorkflowRun("pull_request", "octo/demo", pull_request=_pr("evil/demo")), False, True),
        (WorkflowRun("pull_request", "octo/demo", pull_request=_pr("(deleted fork)")), False, True),
        (WorkflowRun("pull_request", "octo/demo", pull_request=_pr("")), False, True),
        (WorkflowRun("pull_request", "octo/demo", pull_request=_pr("octo/demo")), False, False),
        (WorkflowRun("push", "octo/demo"), False, False),
        # On pull_request_target the Action only runs a checkout proven to be the base's code...
        (WorkflowRun("pull_request_target", "octo/demo", pull_request=_pr("evil/demo")), False, False),
        # ...unless trust_fork_code: then an unproven checkout (here: not even git) is a fork's.
        (WorkflowRun("pull_request_target", "octo/demo", pull_request=_pr("evil/demo")), True, True),
    ],
    ids=[
        "fork-pr",
        "deleted-fork",
        "unnamed-head",
        "same-repo-pr",
        "push",
        "target-proven",
        "target-trusted",
    ],
)
def test_which_runs_count_as_a_forks(tmp_path: Path, run: WorkflowRun, trust: bool, fork: bool) -> None:
    assert origin_of(run, tmp_path, trust_fork_code=trust, paths=[]).fork is fork
