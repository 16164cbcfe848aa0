from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.loading.discovery import find_eval_files
from agentv_ci.loading.suite_loader import load_suite
from tests.loading.corpus import INVALID, VALID, expected, invalid_cases, invalid_main

VALID_FILES = find_eval_files([VALID])


def test_corpus_has_one_valid_file_per_feature() -> None:
    assert len(VALID_FILES) >= 20


@pytest.mark.parametrize("path", VALID_FILES, ids=lambda p: str(p.relative_to(VALID)))
def test_valid_fixture_loads_without_errors(path: Path) -> None:
    result = load_suite(path, env={})
    errors = [d.render() for d in result.diagnostics if d.severity == "error"]
    assert errors == []
    assert result.suite is not None
    assert result.suite.tests, "every valid fixture defines at least one test"
    assert str(path) in result.suite.dependencies or path.suffix == ".jsonl"


@pytest.mark.parametrize("case", invalid_cases(), ids=lambda p: p.name)
def test_invalid_fixture_reports_exact_diagnostics(case: Path) -> None:
    result = load_suite(invalid_main(case), repo_root=case, env={})
    got = {(d.code, str(Path(d.file).relative_to(case)), d.line, d.col) for d in result.diagnostics}
    assert got == expected(case)


def test_every_check_has_an_invalid_fixture() -> None:
    codes = {code for case in invalid_cases() for code, *_ in expected(case)}
    required = set(
        [
            "E002",
            "E003",
            "E004",
            "E005",
            "E006",
            "E101",
            "E102",
            "E104",
            "E105",
            "E106",
            "E107",
            "E108",
            "E109",
            "E111",
            "E112",
            "E201",
            "E301",
            "E302",
            "E303",
            "E304",
            "E113",
            "W101",
            "W102",
            "W104",
            "W105",
            "W107",
        ]
    )
    assert required <= codes
    assert INVALID.is_dir()


def test_load_suites_discovers_and_collects_everything() -> None:
    from agentv_ci.loading.suite_loader import load_suites

    suites, diagnostics = load_suites([VALID, INVALID / "syntax-error"], env={})
    assert len(suites) == len(VALID_FILES)
    assert [d.code for d in diagnostics if d.severity == "error"] == ["E002"]
    names = {s.name for s in suites}
    assert {"code-review", "large-eval", "math-tests", "refunds", "v4-features"} <= names
