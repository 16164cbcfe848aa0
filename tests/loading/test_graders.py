"""The grader normalisation contract (docs/eval-format.md) that grader plugins rely on."""

from __future__ import annotations

from pathlib import Path

from tests.loading.helpers import codes, load_text


def test_canonical_types_auto_names_and_deprecation_warnings(tmp_path: Path) -> None:
    result = load_text(
        tmp_path,
        """
        tests:
          - id: t
            input: hi
            assertions:
              - {type: contains, value: hello}
              - {type: regex, value: "^a very long pattern that goes on and on$"}
              - {type: is_json}
              - {type: llm-judge, prompt: "Grade it"}
              - {type: code, command: "echo 1"}
              - {type: contains_any, value: [a, b], name: custom}
        """,
    )
    assert result.suite is not None
    graders = result.suite.tests[0].graders
    assert [(g.type, g.name) for g in graders] == [
        ("contains", "contains-hello"),
        ("regex", "regex-^a very long pattern that goes"),
        ("is-json", "is-json"),
        ("llm-grader", "llm-grader"),
        ("code-grader", "code-grader"),
        ("contains-any", "custom"),
    ]
    assert [g.written_type for g in graders] == [None, None, "is_json", "llm-judge", "code", "contains_any"]
    deprecations = [d for d in result.diagnostics if d.code == "W102"]
    assert [d.line for d in deprecations] == [8, 9, 10, 11]
    assert "use `llm-grader`" in deprecations[1].message


def test_common_fields_lifted_and_config_keeps_locations(tmp_path: Path) -> None:
    result = load_text(
        tmp_path,
        """
        tests:
          - id: t
            input: hi
            assertions:
              - type: regex
                value: "x"
                flags: i
                weight: 3
                required: 0.7
                min_score: 0.5
                negate: true
        """,
    )
    assert result.suite is not None
    spec = result.suite.tests[0].graders[0]
    assert (spec.weight, spec.required, spec.min_score, spec.negate) == (3.0, 0.7, 0.5, True)
    assert spec.config == {"value": "x", "flags": "i"}
    assert spec.config_locations["flags"].line == 8
    assert spec.location is not None and (spec.location.line, spec.location.col) == (6, 9)
    assert ("W102", 10, 19) in codes(result)  # numeric `required` is deprecated


def test_plain_strings_group_into_one_rubrics_grader(tmp_path: Path) -> None:
    result = load_text(
        tmp_path,
        """
        assertions:
          - type: contains
            value: a
          - First criterion
          - type: contains
            value: b
          - Second criterion
        tests:
          - id: t
            input: hi
            rubrics: [Inline rubric]
        """,
    )
    assert result.suite is not None
    graders = result.suite.tests[0].graders
    assert [g.type for g in graders] == ["rubrics", "contains", "rubrics", "contains"]
    grouped = graders[2]
    assert grouped.weight == 2.0
    assert grouped.config["criteria"] == [
        {"id": "rubric-1", "outcome": "First criterion", "weight": 1.0, "required": True},
        {"id": "rubric-2", "outcome": "Second criterion", "weight": 1.0, "required": True},
    ]
    assert graders[0].config["criteria"][0]["outcome"] == "Inline rubric"


def test_composite_members_normalised_recursively(tmp_path: Path) -> None:
    result = load_text(
        tmp_path,
        """
        tests:
          - id: t
            input: hi
            assertions:
              - name: outer
                type: composite
                assert:
                  - name: inner
                    type: composite
                    assertions: [{type: is_json}]
                    aggregator: {type: weighted_average}
                  - {type: code_judge, script: [echo, "1"]}
                aggregator: {type: code_grader, path: ./agg.py}
        """,
    )
    assert result.suite is not None
    outer = result.suite.tests[0].graders[0]
    inner, code = outer.config["assertions"]
    assert inner["config"]["assertions"][0]["type"] == "is-json"
    assert code["type"] == "code-grader" and code["config"]["command"] == ["echo", "1"]
    assert outer.config["aggregator"] == {"type": "code_grader", "path": "./agg.py"}


def test_unknown_grader_type_and_config_key_suggest_fixes(tmp_path: Path) -> None:
    result = load_text(
        tmp_path,
        """
        tests:
          - id: t
            input: hi
            assertions:
              - {type: llm_jduge, prompt: x}
              - {type: contains, value: x, flag: i}
        """,
    )
    by_code = {d.code: d for d in result.diagnostics}
    assert by_code["E201"].hint == "did you mean `llm-grader`?"
    assert (by_code["E201"].line, by_code["E201"].col) == (6, 16)
    assert by_code["W105"].hint == "did you mean `flags`?"


def test_grader_value_rules(tmp_path: Path) -> None:
    result = load_text(
        tmp_path,
        """
        tests:
          - id: t
            input: hi
            assertions:
              - {type: contains}
              - {type: contains-all, value: []}
              - {type: regex, value: "a", flags: gq}
              - {type: contains, value: x, required: 2}
              - {type: composite, assertions: [{type: contains, value: x}]}
              - {type: rubrics}
        """,
    )
    assert codes(result) == [
        ("E102", 6, 9),
        ("E101", 7, 37),
        ("E103", 8, 42),
        ("E108", 9, 46),
        ("W106", 10, 9),
        ("E102", 11, 9),
    ]


def test_template_relative_path_and_yml_template(tmp_path: Path) -> None:
    (tmp_path / ".agentv" / "templates").mkdir(parents=True)
    (tmp_path / ".agentv" / "templates" / "base.yml").write_text("assertions:\n  - type: is-json\n")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "list.yaml").write_text("- type: equals\n  value: ok\n")
    result = load_text(
        tmp_path,
        """
        assertions:
          - include: base
          - include: ./shared/list.yaml
        tests:
          - {id: t, input: hi}
        """,
    )
    assert result.suite is not None
    assert [g.type for g in result.suite.tests[0].graders] == ["is-json", "equals"]
    assert {Path(p).name for p in result.suite.dependencies} >= {"base.yml", "list.yaml"}


def test_directly_registered_grader_plugin_is_known_and_its_config_checked(tmp_path: Path) -> None:
    import msgspec

    from agentv_ci.plugins import GRADERS_NAMESPACE, register_for_tests

    class WordCountConfig(msgspec.Struct):
        max_words: int = 100

    class WordCount:
        api_version = "1.0"
        Config = WordCountConfig

        def __init__(self, spec: object, config: object, *, base_dir: Path) -> None:
            self.config = config

        async def grade(self, ctx: object) -> object:
            raise NotImplementedError

    register_for_tests(GRADERS_NAMESPACE, "word-count-test", WordCount)
    result = load_text(
        tmp_path,
        """
        tests:
          - id: t
            input: hi
            assertions:
              - {type: word_count_test, max_words: many}
              - {type: word-count-test, max_word: 3}
        """,
    )
    assert [(d.code, d.line) for d in result.diagnostics] == [("W102", 6), ("E202", 6), ("W105", 7)]
    assert "Expected `int`" in result.diagnostics[1].message


def test_auto_names_follow_agentv_4_42_4(tmp_path: Path) -> None:
    result = load_text(
        tmp_path,
        """
        tests:
          - id: t
            input: hi
            assertions:
              - {type: icontains-any, value: [alice, bob]}
              - {type: starts-with, value: "  Hello"}
              - {type: equals, value: nope}
              - {type: skill-trigger, skill: pdf-tools}
              - {type: latency, threshold: 100}
        """,
    )
    assert result.suite is not None
    assert [g.name for g in result.suite.tests[0].graders] == [
        "icontains-any-2",
        "starts-with-  Hello",
        "equals-nope",
        "skill-trigger-pdf-tools",
        "latency",
    ]


def test_composite_without_members_is_reported_once(tmp_path: Path) -> None:
    result = load_text(
        tmp_path,
        """\
        tests:
          - id: a
            input: hi
            assertions:
              - type: composite
                aggregator: {type: weighted_average}
        """,
    )
    assert codes(result) == [("E102", 5, 9)]
    assert result.diagnostics[0].message == "composite needs member `assertions`"


def test_files_a_third_party_grader_config_names_are_dependencies(tmp_path: Path) -> None:
    """json-schema comes from agentv-ci-jsonschema (installed by `make setup`): its schema file is read
    by the plugin, so editing it must select the eval."""
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "person.json").write_text('{"type": "object"}')
    (tmp_path / "notes.txt").write_text("not named by a plugin grader")
    result = load_text(
        tmp_path,
        """
        tests:
          - id: t
            input: hi
            assertions:
              - {type: json-schema, schema: schemas/person.json}
              - {type: contains, value: notes.txt}
        """,
    )
    assert result.diagnostics == []
    names = {Path(p).name for p in result.suite.dependencies} if result.suite else set()
    assert "person.json" in names and "notes.txt" not in names
