"""Load-time grader builds are cached by the spec's content: each test still gets its own diagnostic."""

from __future__ import annotations

from pathlib import Path

from tests.loading.helpers import load_text


def test_a_repeated_bad_grader_is_reported_at_every_test_that_writes_it(tmp_path: Path) -> None:
    result = load_text(
        tmp_path,
        """\
        tests:
          - id: a
            input: hi
            assertions:
              - {type: tool-trajectory, mode: any_ordr, expected: [{tool: search}]}
              - {type: field-accuracy, fields: [{path: a, match: exactt}]}
          - id: b
            input: hi
            assertions:
              - type: field-accuracy
                fields: [{path: a, match: exactt}]
              - type: tool-trajectory
                mode: any_ordr
                expected: [{tool: search}]
          - id: c
            input: hi
            assertions:
              - {type: tool-trajectory, name: named, mode: any_ordr, expected: [{tool: search}]}
        """,
    )
    got = [(d.code, d.line, d.col, d.message) for d in result.diagnostics]
    trajectory = "tool-trajectory grader 'tool-trajectory': unknown mode 'any_ordr'"
    fields = "field-accuracy grader 'field-accuracy': field 'a' has unknown match 'exactt'"
    assert got == [
        ("E202", 5, 9, trajectory),
        ("E202", 6, 40, fields),  # at this test's own `fields` value
        ("E202", 11, 17, fields),
        ("E202", 12, 9, trajectory),
        ("E202", 18, 9, "tool-trajectory grader 'named': unknown mode 'any_ordr'"),  # the name is keyed
    ]


def test_identical_graders_are_built_once_per_load_and_different_ones_each(tmp_path: Path) -> None:
    import msgspec

    from agentv_ci.plugins import GRADERS_NAMESPACE, register_for_tests

    built: list[object] = []

    class CountConfig(msgspec.Struct):
        limit: int = 1

    class CountingGrader:
        api_version = "1.0"
        Config = CountConfig

        def __init__(self, spec: object, config: CountConfig, *, base_dir: Path) -> None:
            built.append(config.limit)
            if config.limit < 0:
                raise ValueError("limit must be >= 0")

        async def grade(self, ctx: object) -> object:
            raise NotImplementedError

    register_for_tests(GRADERS_NAMESPACE, "counting-build-test", CountingGrader)
    tests = "".join(
        f"  - id: t{i}\n    input: hi\n    assertions:\n"
        f"      - {{type: counting-build-test, limit: {limit}}}\n"
        for i, limit in enumerate([3, 3, 3, -1, -1, 4])
    )
    (tmp_path / "suite.eval.yaml").write_text("tests:\n" + tests)
    from agentv_ci.loading.suite_loader import load_suite

    result = load_suite(tmp_path / "suite.eval.yaml", repo_root=tmp_path, env={})
    assert built == [3, -1, 4]
    assert [(d.code, d.line) for d in result.diagnostics] == [("E203", 17), ("E203", 21)]
    assert "limit must be >= 0" in result.diagnostics[1].message
    load_suite(tmp_path / "suite.eval.yaml", repo_root=tmp_path, env={})
    assert built == [3, -1, 4, 3, -1, 4]  # a new load builds again (files may have changed)
