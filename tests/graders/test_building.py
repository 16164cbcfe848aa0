"""Graders are built once per distinct content (plugins/building.py): the same pure grader written
in many tests is one instance, while every build error still names its own spec's location."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.errors import ConfigError
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import GraderSpec
from agentv_ci.plugins.building import build_grader


def _spec(kind: str, value: str, line: int, **extra: object) -> GraderSpec:
    where = SourceLocation("e.eval.yaml", line, 9)
    return GraderSpec(
        type=kind,
        name=f"{kind}-{value}",
        config={"value": value},
        location=SourceLocation("e.eval.yaml", line, 7),
        config_locations={"value": where},
        **extra,  # type: ignore[arg-type]
    )


def test_equal_pure_graders_written_in_many_tests_are_built_once(tmp_path: Path) -> None:
    first, second = _spec("contains", "answer", 3), _spec("contains", "answer", 12)
    assert build_grader(first, base_dir=tmp_path) is build_grader(second, base_dir=tmp_path)
    # any difference in what the grader is built from is another instance
    assert build_grader(_spec("contains", "other", 20), base_dir=tmp_path) is not build_grader(
        first, base_dir=tmp_path
    )
    assert build_grader(_spec("contains", "answer", 30, weight=2.0), base_dir=tmp_path) is not (
        build_grader(first, base_dir=tmp_path)
    )
    assert build_grader(first, base_dir=tmp_path / "sub") is not build_grader(first, base_dir=tmp_path)


def test_a_build_error_names_each_spec_where_it_was_written(tmp_path: Path) -> None:
    for line in (4, 40):
        with pytest.raises(ConfigError) as caught:
            build_grader(_spec("regex", "(unclosed", line), base_dir=tmp_path)
        assert caught.value.location == SourceLocation("e.eval.yaml", line, 9)
