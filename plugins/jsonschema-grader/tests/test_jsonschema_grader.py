"""The json-schema grader through agentv_ci.api's test helpers (the runner's contract check and
config validation), on real schemas and answers."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from agentv_ci.api import GRADERS_NAMESPACE, ConfigError, check_plugin, grade_answer, make_grader
from agentv_ci_jsonschema import JsonSchemaGrader

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "born": {"type": "integer", "minimum": 1000},
        "email": {"type": "string", "format": "email"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "born"],
    "additionalProperties": False,
}


def test_meets_the_plugin_contract_and_is_registered() -> None:
    check_plugin("grader", JsonSchemaGrader)
    entry_points = tomllib.loads(PYPROJECT.read_text())["project"]["entry-points"]
    assert entry_points[GRADERS_NAMESPACE]["json-schema"] == "agentv_ci_jsonschema:JsonSchemaGrader"


def test_a_valid_answer_scores_1() -> None:
    result = grade_answer(
        JsonSchemaGrader, '{"name": "Ada", "born": 1815, "tags": ["math"]}', {"schema": PERSON}
    )
    assert (result.score, result.verdict) == (1.0, "pass")
    assert [a.text for a in result.assertions] == ["the answer matches the schema"]


def test_errors_are_located_by_json_path_and_the_score_is_partial() -> None:
    answer = '{"name": "Ada", "born": "1815", "email": "nope", "tags": ["math", 7], "age": 36}'
    result = grade_answer(JsonSchemaGrader, answer, {"schema": PERSON})
    assert result.verdict == "fail"
    assert [a.text for a in result.assertions] == [
        "$.age: is not an allowed property",
        "$.born: '1815' is not of type 'integer'",
        "$.email: 'nope' is not a 'email'",
        "$.tags[1]: 7 is not of type 'string'",
    ]
    # 8 values (root, 5 members, 2 items), 4 with an error
    assert result.score == pytest.approx(1 - 4 / 8)
    assert result.details is not None and result.details["errors"][1]["keyword"] == "type"


def test_a_missing_required_property_is_located_at_the_property() -> None:
    result = grade_answer(JsonSchemaGrader, '{"name": "Ada"}', {"schema": PERSON})
    assert [a.text for a in result.assertions] == ["$.born: 'born' is a required property"]
    assert result.score == pytest.approx(1 - 1 / 3)  # root + name + the missing born


def test_a_wrong_root_type_scores_0() -> None:
    result = grade_answer(JsonSchemaGrader, "[1, 2]", {"schema": PERSON})
    assert result.score == 0.0 and result.assertions[0].text == "$: [1, 2] is not of type 'object'"


def test_json_in_a_fenced_block_or_embedded_in_text_is_found() -> None:
    fenced = 'Here you go:\n```json\n{"name": "Ada", "born": 1815}\n```\nAnything else?'
    assert grade_answer(JsonSchemaGrader, fenced, {"schema": PERSON}).score == 1.0
    embedded = 'The record is {"name": "Ada", "born": 1815}.'
    assert grade_answer(JsonSchemaGrader, embedded, {"schema": PERSON}).score == 1.0
    strict = grade_answer(JsonSchemaGrader, embedded, {"schema": PERSON, "extract": "whole"})
    assert strict.score == 0.0 and strict.assertions[0].evidence is not None
    assert strict.assertions[0].evidence.startswith("the answer is not JSON: Expecting value")


def test_not_json_at_all_scores_0() -> None:
    result = grade_answer(JsonSchemaGrader, "I cannot answer that.", {"schema": PERSON})
    assert result.score == 0.0 and result.assertions[0].text == "the answer is JSON"


def test_max_errors_caps_the_assertions_not_the_score() -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    result = grade_answer(JsonSchemaGrader, '["a", "b", "c", 4]', {"schema": schema, "max_errors": 2})
    assert [a.text for a in result.assertions][-1] == "... and 1 more error(s)"
    assert result.score == pytest.approx(1 - 3 / 5)


def test_a_schema_file_with_refs_next_to_it(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "address.json").write_text(
        json.dumps({"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}})
    )
    (tmp_path / "schemas" / "person.json").write_text(
        json.dumps({"type": "object", "properties": {"address": {"$ref": "address.json"}}})
    )
    result = grade_answer(
        JsonSchemaGrader,
        '{"address": {"town": "Paris"}}',
        {"schema": "schemas/person.json"},
        base_dir=tmp_path,
    )
    assert [a.text for a in result.assertions] == ["$.address.city: 'city' is a required property"]


def test_a_ref_outside_the_schema_directory_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "secret.json").write_text("{}")
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "s.json").write_text(json.dumps({"$ref": "../secret.json"}))
    grader = make_grader(JsonSchemaGrader, {"schema": "schemas/s.json"}, base_dir=tmp_path)
    with pytest.raises(Exception, match=r"secret\.json"):
        list(grader.validator.iter_errors({}))


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({}, "invalid under-test grader: 'schema' is a required property"),
        (
            {"schema": 5},
            "invalid under-test grader: 5 is not of type 'object', 'boolean', 'string' - at `$.schema`",
        ),
        ({"schema": {}, "max_errors": 0}, "0 is less than the minimum of 1 - at `$.max_errors`"),
        (
            {"schema": {}, "extrakt": "whole"},
            "Additional properties are not allowed ('extrakt' was unexpected)",
        ),
        (
            {"schema": {"type": "strin"}},
            "the schema is not a valid JSON Schema: 'strin' is not valid under any",
        ),
        ({"schema": "missing.json"}, "schema file not found: missing.json"),
    ],
)
def test_bad_config_is_a_config_error(config: dict[str, object], message: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        make_grader(JsonSchemaGrader, config, base_dir=tmp_path)
    assert message in caught.value.message
