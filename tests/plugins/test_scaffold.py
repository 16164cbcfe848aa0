"""`agentv-ci plugins new`: what it writes and what it refuses (the scaffold passing its own tests
after a real install is tests/e2e/test_plugin_wheels.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_ci.cli import app
from agentv_ci.errors import UsageError
from agentv_ci.plugins.scaffold import scaffold_plugin


def test_a_grader_package_has_the_entry_point_class_readme_and_test(tmp_path: Path) -> None:
    written = scaffold_plugin("grader", "word-floor", tmp_path / "pkg")
    assert sorted(str(p.relative_to(tmp_path / "pkg")) for p in written) == [
        "README.md",
        "pyproject.toml",
        "src/agentv_ci_word_floor/__init__.py",
        "src/agentv_ci_word_floor/py.typed",
        "tests/test_agentv_ci_word_floor.py",
    ]
    project = tomllib.loads((tmp_path / "pkg" / "pyproject.toml").read_text())
    assert project["project"]["name"] == "agentv-ci-word-floor"
    assert project["project"]["entry-points"]["agentv_ci.graders"] == {
        "word-floor": "agentv_ci_word_floor:WordFloorGrader"
    }
    source = (tmp_path / "pkg" / "src" / "agentv_ci_word_floor" / "__init__.py").read_text()
    assert 'api_version: ClassVar[str] = "1.1"' in source and "from agentv_ci.api import" in source
    compile(source, "__init__.py", "exec")


def test_the_class_name_does_not_repeat_the_kind(tmp_path: Path) -> None:
    scaffold_plugin("reporter", "csv-reporter", tmp_path / "r")
    project = tomllib.loads((tmp_path / "r" / "pyproject.toml").read_text())
    assert project["project"]["entry-points"]["agentv_ci.reporters"] == {
        "csv-reporter": "agentv_ci_csv_reporter:CsvReporter"
    }


@pytest.mark.parametrize("name", ["WordCount", "word_count", "-x", "word--count", "1st", ""])
def test_a_name_that_is_not_kebab_case_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(UsageError, match="is not kebab-case"):
        scaffold_plugin("grader", name, tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_a_non_empty_directory_is_refused_and_left_alone(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="already exists and is not an empty directory"):
        scaffold_plugin("grader", "shout", tmp_path / "taken")
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["notes.txt"]


def test_the_command_reports_bad_input_with_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["plugins", "new", "judge", "shout"])
    assert result.exit_code != 0 and isinstance(result.exception, UsageError)
    assert result.exception.message == "unknown plugin kind 'judge'"
    ok = CliRunner().invoke(app, ["plugins", "new", "grader", "shout"])
    assert ok.exit_code == 0, ok.output
    assert ok.output.splitlines()[0] == "created agentv-ci-shout/ (5 files)"
    assert (tmp_path / "agentv-ci-shout" / "pyproject.toml").is_file()
