"""A change to an eval file's committed sidecar baseline (`<eval>.baseline.jsonl`) selects that eval
file, and only it: a re-baseline is run against the code it claims to describe."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.selection import changed_files, select_changed_evals
from tests.git_repos import GitRepo

INLINE = "tests:\n  - id: t\n    input: hi\n    criteria: greets\n"
ROW = (
    '{"test_id":"t","suite":"geo","target":"default","score":1.0,"execution_status":"ok","verdict":"pass"}\n'
)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    repo = GitRepo.init(tmp_path / "project")
    monkeypatch.chdir(repo.root)
    repo.write(".agentv/targets.yaml", "targets:\n  - name: default\n    provider: mock\n")
    repo.write("evals/geo.eval.yaml", INLINE)
    repo.write("evals/geo.eval.baseline.jsonl", ROW)
    repo.write("evals/EVAL.yaml", INLINE)
    repo.write("evals/other.eval.yaml", INLINE)
    repo.commit("base")
    repo.branch("feature")
    return repo


def _picked(repo: GitRepo) -> dict[str, list[str]]:
    repo.commit("feature change")
    selection = select_changed_evals(
        [Path("evals")], changed_files(repo.root, "main"), repo_root=repo.root, env={}
    )
    return {e.repo_path: e.reasons for e in selection.selected}


def test_a_modified_sidecar_selects_its_eval_file(repo: GitRepo) -> None:
    repo.write("evals/geo.eval.baseline.jsonl", ROW.replace("1.0", "0.5"))
    assert _picked(repo) == {"evals/geo.eval.yaml": ["evals/geo.eval.baseline.jsonl changed"]}


def test_an_added_sidecar_selects_its_eval_file_by_agentv_naming(repo: GitRepo) -> None:
    repo.write("evals/EVAL.baseline.jsonl", ROW)
    assert _picked(repo) == {"evals/EVAL.yaml": ["evals/EVAL.baseline.jsonl added"]}


def test_a_sidecar_is_never_an_eval_file_itself(repo: GitRepo) -> None:
    repo.delete("evals/geo.eval.baseline.jsonl")
    repo.commit("gone")
    selection = select_changed_evals(
        [Path("evals")], changed_files(repo.root, "main"), repo_root=repo.root, env={}
    )
    assert selection.removed == []
    assert {e.repo_path for e in selection.selected} == {"evals/geo.eval.yaml"}
    assert selection.total == 3
