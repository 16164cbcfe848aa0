from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from agentv_ci.cli import app
from agentv_ci.loading.discovery import find_eval_files, jsonl_sidecar
from agentv_ci.validation.schema_file import load_schema
from tests.loading.corpus import VALID, invalid_main

VALIDATOR = jsonschema.Draft7Validator(load_schema())
INVALID = VALID.parent / "invalid"
# Invalid fixtures whose problem is a shape the schema can state (type, required, enum, pattern, range).
SCHEMA_EXPRESSIBLE = [
    "wrong-type", "missing-id", "unknown-key", "bad-name", "negative-weight", "threshold-range",
    "timeout-range", "bad-role", "top-level-list", "conversation-fields",
]  # fmt: skip


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def test_schema_command_prints_the_draft_07_schema() -> None:
    result = CliRunner().invoke(app, ["schema", "--no-plugins"])
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema == load_schema()


def _grader_errors(validator: jsonschema.Draft7Validator, grader: dict[str, Any]) -> list[str]:
    return sorted(e.message for e in validator.iter_errors(grader))


def test_schema_includes_the_config_schemas_of_installed_plugins() -> None:
    """The in-repo plugins are installed by `make setup`: their keys are completed and checked."""
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.output)
    jsonschema.Draft7Validator.check_schema(schema)
    assert {"json-schema", "text-stats"} <= set(
        schema["definitions"]["grader"]["properties"]["type"]["anyOf"][0]["enum"]
    )
    validator = jsonschema.Draft7Validator(
        {"$ref": "#/definitions/grader", "definitions": schema["definitions"]}
    )
    assert _grader_errors(validator, {"type": "text-stats", "max_words": 10, "weight": 2}) == []
    assert _grader_errors(validator, {"type": "text-stats", "max_words": "ten"}) == [
        "'ten' is not valid under any of the given schemas"
    ]
    assert (
        _grader_errors(validator, {"type": "json-schema", "schema": {"type": "object"}, "name": "shape"})
        == []
    )
    assert _grader_errors(validator, {"type": "json-schema", "shema": {}}) == [
        "'schema' is a required property",
        "Additional properties are not allowed ('shema' was unexpected)",
    ]
    assert _grader_errors(validator, {"type": "contains", "value": "x"}) == []  # built-ins unchanged


def _valid_documents() -> list[Path]:
    docs = []
    for path in find_eval_files([VALID]):
        if path.suffix == ".jsonl":
            sidecar = jsonl_sidecar(path)
            assert sidecar is not None
            docs.append(sidecar)
        else:
            docs.append(path)
    return docs


@pytest.mark.parametrize("path", _valid_documents(), ids=lambda p: str(p.relative_to(VALID)))
def test_schema_accepts_every_valid_fixture(path: Path) -> None:
    errors = [e.message for e in VALIDATOR.iter_errors(_yaml(path))]
    assert errors == []


def test_schema_accepts_valid_jsonl_lines_as_tests() -> None:
    test_schema = {**load_schema(), "$ref": "#/definitions/test"}
    validator = jsonschema.Draft7Validator(test_schema)
    for path in VALID.rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            if line.strip():
                assert list(validator.iter_errors(json.loads(line))) == [], (path, line)


@pytest.mark.parametrize("name", SCHEMA_EXPRESSIBLE)
def test_schema_rejects_invalid_fixtures_it_can_express(name: str) -> None:
    data = _yaml(invalid_main(INVALID / name))
    assert not VALIDATOR.is_valid(data)


def _properties(node: Any, path: str = "") -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    if isinstance(node, dict):
        for key, value in (node.get("properties") or {}).items():
            found.append((f"{path}/{key}", value))
        for key, value in node.items():
            found += _properties(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _properties(value, f"{path}[{index}]")
    return found


def test_every_property_has_a_description_for_editor_hovers() -> None:
    schema = load_schema()
    assert schema["$id"].startswith("https://")
    undocumented = [path for path, prop in _properties(schema) if not prop.get("description")]
    assert undocumented == []
