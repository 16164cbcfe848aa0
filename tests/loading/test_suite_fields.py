from __future__ import annotations

from pathlib import Path

from tests.loading.helpers import codes, load_text


def test_metadata_fields_are_type_checked(tmp_path: Path) -> None:
    result = load_text(
        tmp_path,
        """
        name: ok-name
        tags: smoke
        requires: ">=1"
        tests:
          - {id: t, input: hi, criteria: x}
        """,
    )
    assert codes(result) == [("E101", 3, 7), ("E101", 4, 11)]


def test_execution_and_experiment_conflict_and_ranges(tmp_path: Path) -> None:
    result = load_text(
        tmp_path,
        """
        execution:
          workers: 99
          budget_usd: 0
        experiment:
          repeat: {count: 0, strategy: best}
          trials: 2
        tests:
          - {id: t, input: hi, criteria: x}
        """,
    )
    assert codes(result) == [
        ("E110", 3, 12),
        ("E110", 4, 15),
        ("E113", 5, 1),
        ("E113", 6, 3),
        ("E110", 6, 19),
        ("E103", 6, 32),
    ]


def test_workspace_and_case_directory_problems(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    (cases / "good").mkdir(parents=True)
    (cases / "good" / "case.yaml").write_text("criteria: x\ninput: hi\n")
    (cases / "empty").mkdir()
    result = load_text(
        tmp_path,
        """
        workspace:
          isolation: global
          repos:
            - {repo: acme/app}
          hooks:
            before_all: {timeout_ms: 10}
        tests: ./cases/
        """,
    )
    assert codes(result) == [
        ("E103", 3, 14),
        ("E102", 5, 7),
        ("E102", 7, 17),
        ("W103", 8, 8),
    ]
    assert result.suite is not None and [t.id for t in result.suite.tests] == ["good"]
