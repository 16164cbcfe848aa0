"""A text grader written identically in many tests is normalised once per load: every test still gets
its own spec locations, and every warning is still reported where it is written."""

from __future__ import annotations

from pathlib import Path

from tests.loading.helpers import load_text


def test_repeated_text_graders_keep_each_tests_locations_and_warnings(tmp_path: Path) -> None:
    result = load_text(
        tmp_path,
        """\
        tests:
          - id: a
            input: hi
            assertions:
              - {type: contains, value: x}
              - {type: starts_with, value: y}
          - id: b
            input: hi
            assertions:
              - type: contains
                value: x
              - {type: starts_with, value: y}
              - {type: contains, value: x, weight: 2}
        """,
    )
    assert [(d.code, d.line) for d in result.diagnostics] == [("W102", 6), ("W102", 12)]
    assert result.suite is not None
    first, second = (t.graders for t in result.suite.tests)
    assert [(g.type, g.name, g.weight) for g in second] == [
        ("contains", "contains-x", 1.0),
        ("starts-with", "starts-with-y", 1.0),
        ("contains", "contains-x", 2.0),
    ]
    assert (first[0].location.line, first[0].location.col) == (5, 9)  # type: ignore[union-attr]
    assert (second[0].location.line, second[0].location.col) == (10, 9)  # type: ignore[union-attr]
    assert second[0].config == first[0].config == {"value": "x"}
    assert second[0].config is not first[0].config  # each spec owns its config
    value_locations = [g.config_locations["value"] for g in (first[0], second[0])]
    assert [(loc.line, loc.col) for loc in value_locations] == [(5, 33), (11, 16)]
    assert second[1].written_type == "starts_with"
