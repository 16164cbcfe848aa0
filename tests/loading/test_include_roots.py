"""Assertion includes are looked for as AgentV 4.42.4 looks for them: from the eval file's directory
upwards to the repository root (then the root and the working directory), also for rows of a case
file it references; an include inside a template first from the template's directory.

The layout below was loaded by AgentV 4.42.4's own `loadTests` (node, its built core bundle): it gave
["X", "NESTED"] for suite.eval.yaml and for a/b/deep.eval.yaml, and ["JSONL-DIR"] for the JSONL file
loaded as an eval file itself; these tests expect the same.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentv_ci.loading.suite_loader import LoadResult, load_suite


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    evals = root / "evals"
    write(
        evals / "shared/x.yaml",
        "assertions:\n  - {type: contains, value: X}\n  - include: ./nested.yaml\n",
    )
    write(evals / "shared/nested.yaml", "assertions:\n  - {type: contains, value: NESTED}\n")
    # decoys: the nested include is not read from the eval dir, the row's include not from the JSONL dir
    write(evals / "nested.yaml", "assertions:\n  - {type: contains, value: NESTED-AT-ROOT}\n")
    write(evals / "data/shared/x.yaml", "assertions:\n  - {type: contains, value: JSONL-DIR}\n")
    write(evals / "suite.eval.yaml", "tests: ./data/cases.jsonl\n")
    write(
        evals / "data/cases.jsonl",
        '{"id":"a","input":"hi","criteria":"c","assertions":[{"include":"./shared/x.yaml"}]}\n',
    )
    write(
        evals / "a/b/deep.eval.yaml",
        "tests:\n  - id: deep\n    input: hi\n    assertions:\n      - include: ./shared/x.yaml\n",
    )
    return root


def load(path: Path, root: Path) -> LoadResult:
    return load_suite(path, repo_root=root, env={})


def values(result: LoadResult) -> list[list[str]]:
    assert result.suite is not None, result.diagnostics
    assert not [d for d in result.diagnostics if d.severity == "error"], result.diagnostics
    return [[g.config.get("value") for g in t.graders] for t in result.suite.tests]


def test_jsonl_row_include_resolves_from_the_eval_file(repo: Path) -> None:
    assert values(load(repo / "evals/suite.eval.yaml", repo)) == [["X", "NESTED"]]


def test_include_found_two_directories_up(repo: Path) -> None:
    result = load(repo / "evals/a/b/deep.eval.yaml", repo)
    assert values(result) == [["X", "NESTED"]]
    found = {str(Path(p).relative_to(repo)) for p in result.dependencies if Path(p).is_file()}
    assert {"evals/shared/x.yaml", "evals/shared/nested.yaml"} <= found
    # the nearer places one could be added to shadow it are watched too
    assert str(repo / "evals/a/b/shared/x.yaml") in result.dependencies


def test_jsonl_loaded_as_the_eval_file_resolves_from_its_own_directory(repo: Path) -> None:
    assert values(load(repo / "evals/data/cases.jsonl", repo)) == [["JSONL-DIR"]]


def test_included_suite_resolves_from_its_own_directory(repo: Path) -> None:
    parent = write(
        repo / "evals/parent.eval.yaml", "tests:\n  - {include: ./a/b/deep.eval.yaml, type: suite}\n"
    )
    assert values(load(parent, repo)) == [["X", "NESTED"]]


def test_template_name_is_looked_for_upwards_from_the_eval_file(repo: Path) -> None:
    write(repo / ".agentv/templates/base.yaml", "assertions:\n  - {type: contains, value: BASE}\n")
    write(repo / "evals/data/more.jsonl", '{"id":"b","input":"hi","assertions":[{"include":"base"}]}\n')
    suite = write(repo / "evals/b.eval.yaml", "tests: ./data/more.jsonl\n")
    assert values(load(suite, repo)) == [["BASE"]]


def test_missing_include_is_a_located_e301(repo: Path) -> None:
    write(
        repo / "evals/data/missing.jsonl",
        '{"id":"m","input":"hi","assertions":[{"include":"./shared/gone.yaml"}]}\n',
    )
    suite = write(repo / "evals/m.eval.yaml", "tests: ./data/missing.jsonl\n")
    result = load(suite, repo)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert [(d.code, Path(d.file).name, d.line) for d in errors] == [("E301", "missing.jsonl", 1)]
    assert errors[0].col == 1 + '{"id":"m","input":"hi","assertions":[{"include":'.index('"include"') + len(
        '"include":'
    )
    assert "./shared/gone.yaml" in errors[0].message
    assert str(repo / "evals/shared/gone.yaml") in (errors[0].hint or "")


def test_include_outside_the_repository_is_refused(tmp_path: Path, repo: Path) -> None:
    write(tmp_path / "outside.yaml", "assertions:\n  - {type: contains, value: OUT}\n")
    suite = write(
        repo / "evals/out.eval.yaml",
        "tests:\n  - id: o\n    input: hi\n    assertions:\n      - include: ../../outside.yaml\n",
    )
    result = load(suite, repo)
    assert [d.code for d in result.diagnostics if d.severity == "error"] == ["E305"]
