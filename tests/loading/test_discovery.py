from __future__ import annotations

from pathlib import Path

from agentv_ci.loading.discovery import find_eval_files


def _touch(path: Path, text: str = "tests: []\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_directory_expands_to_eval_names_and_jsonl_with_sidecar(tmp_path: Path) -> None:
    expected = [
        _touch(tmp_path / "a" / "one.eval.yaml"),
        _touch(tmp_path / "a" / "two.EVAL.yml"),
        _touch(tmp_path / "b" / "eval.yaml"),
        _touch(tmp_path / "c" / "EVAL.yaml"),
        _touch(tmp_path / "d" / "data.jsonl", "{}\n"),
    ]
    _touch(tmp_path / "d" / "data.yaml", "name: data\n")
    _touch(tmp_path / "e" / "cases.yaml")  # a raw case file: not a suite
    _touch(tmp_path / "e" / "orphan.jsonl", "{}\n")  # no sidecar
    for skipped in (".git", "node_modules", ".venv", ".agentv"):
        _touch(tmp_path / skipped / "x.eval.yaml")
    found = find_eval_files([tmp_path])
    assert found == sorted(p.resolve() for p in expected)


def test_jsonl_with_eval_sidecar_is_run_through_the_sidecar_only(tmp_path: Path) -> None:
    sidecar = _touch(tmp_path / "dataset.eval.yaml", "description: d\n")
    _touch(tmp_path / "dataset.jsonl", "{}\n")
    assert find_eval_files([tmp_path]) == [sidecar.resolve()]


def test_files_are_used_as_is_and_results_deduplicated(tmp_path: Path) -> None:
    odd = _touch(tmp_path / "odd-name.yaml")
    suite = _touch(tmp_path / "s.eval.yaml")
    found = find_eval_files([odd, tmp_path, suite, tmp_path / "missing.eval.yaml"])
    assert found == sorted([odd.resolve(), suite.resolve(), (tmp_path / "missing.eval.yaml").absolute()])


def test_jsonl_referenced_by_an_eval_file_is_not_run_twice(tmp_path: Path) -> None:
    suite = _touch(tmp_path / "suite.eval.yaml", "tests: ./data.jsonl\n")
    _touch(tmp_path / "data.jsonl", "{}\n")
    _touch(tmp_path / "data.yaml", "name: data\n")
    listed = _touch(tmp_path / "list.eval.yaml", "tests:\n  - file://other.jsonl\n")
    _touch(tmp_path / "other.jsonl", "{}\n")
    _touch(tmp_path / "other.yaml", "name: other\n")
    assert find_eval_files([tmp_path]) == sorted([suite.resolve(), listed.resolve()])


def test_a_quoted_glob_is_expanded_like_agentv(tmp_path: Path) -> None:
    (tmp_path / "evals" / "a").mkdir(parents=True)
    (tmp_path / "evals" / "a" / "x.eval.yaml").write_text("tests: []\n")
    (tmp_path / "evals" / "y.eval.yaml").write_text("tests: []\n")
    (tmp_path / "evals" / "notes.yaml").write_text("x: 1\n")
    found = find_eval_files([Path(f"{tmp_path}/evals/**/*.eval.yaml")])
    assert found == [tmp_path / "evals" / "a" / "x.eval.yaml", tmp_path / "evals" / "y.eval.yaml"]
    missing = Path(f"{tmp_path}/nothing/*.eval.yaml")
    assert find_eval_files([missing]) == [missing]
