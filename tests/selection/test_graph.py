"""The dependency graph's targets lookup agrees with `find_targets_file`, the runner's."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.selection.graph import RepoPaths, TargetsFiles
from agentv_ci.targets.config import find_targets_file
from tests.git_repos import GitRepo

TARGETS = "targets:\n  - name: default\n    provider: mock\n"


def _places(directory: str) -> list[str]:
    prefix = f"{directory}/" if directory else ""
    return [
        f"{prefix}{name}"
        for name in (".agentv/targets.yaml", ".agentv/targets.yml", "targets.yaml", "targets.yml")
    ]


@pytest.mark.parametrize(
    ("files", "eval_dir", "expected", "watched"),
    [
        (
            [".agentv/targets.yaml"],
            "a/b",
            ".agentv/targets.yaml",
            [*_places("a/b"), *_places("a"), ".agentv/targets.yaml"],
        ),
        (
            [".agentv/targets.yaml", "a/.agentv/targets.yml"],
            "a/b",
            "a/.agentv/targets.yml",
            [*_places("a/b"), "a/.agentv/targets.yaml", "a/.agentv/targets.yml"],
        ),
        ([".agentv/targets.yaml", "a/targets.yaml"], "a", "a/targets.yaml", _places("a")[:3]),
        (["a/targets.yml", "a/.agentv/targets.yaml"], "a", "a/.agentv/targets.yaml", _places("a")[:1]),
        ([], "a/b", None, [*_places("a/b"), *_places("a"), *_places("")]),
    ],
)
def test_the_targets_file_for_a_directory_is_the_one_the_runner_uses(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    files: list[str],
    eval_dir: str,
    expected: str | None,
    watched: list[str],
) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    monkeypatch.chdir(repo.root)
    for rel in files:
        repo.write(rel, TARGETS)
    directory = (repo.root / eval_dir).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    runner = find_targets_file(directory)
    assert (str(runner.relative_to(repo.root.resolve())) if runner else None) == expected
    # The file the runner uses, and every nearer place a new one would take over from it.
    assert list(TargetsFiles(RepoPaths(repo.root)).for_eval(directory / "x.eval.yaml")) == watched


def test_a_targets_file_found_in_the_cwd_outside_the_repo_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".agentv").mkdir(parents=True)
    (elsewhere / ".agentv" / "targets.yaml").write_text(TARGETS)
    monkeypatch.chdir(elsewhere)
    watched = TargetsFiles(RepoPaths(repo.root)).for_eval(repo.root / "x.eval.yaml")
    assert watched == (".agentv/targets.yaml", ".agentv/targets.yml", "targets.yaml", "targets.yml")


def test_without_worker_processes_the_files_load_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentv_ci.selection import graph

    repo = GitRepo.init(tmp_path / "repo")
    monkeypatch.chdir(repo.root)
    files = [
        repo.write(f"e{i}.eval.yaml", "tests:\n  - id: t\n    input: x\n    criteria: y\n") for i in range(3)
    ]

    def no_processes(*args: object, **kwargs: object) -> None:
        raise OSError(38, "Function not implemented")  # e.g. no POSIX semaphores in a sandbox

    monkeypatch.setattr(graph, "PARALLEL_FROM", 1)
    monkeypatch.setattr(graph, "ProcessPoolExecutor", no_processes)
    nodes = graph.eval_dependencies(files, repo_root=repo.root, env={}, workers=2)
    assert [n.path for n in nodes] == ["e0.eval.yaml", "e1.eval.yaml", "e2.eval.yaml"]
    assert "e1.eval.yaml" in nodes[1].dependencies
