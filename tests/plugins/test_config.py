"""Plugin config declared as a msgspec Struct or a JSON Schema: keys, every issue, runtime conversion."""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec
import pytest

from agentv_ci.errors import ConfigError
from agentv_ci.model.source import SourceLocation
from agentv_ci.plugins.config import (
    ConfigIssue,
    config_issues,
    config_json_schema,
    config_keys,
    config_style,
    convert_plugin_config,
)


class StructConfig(msgspec.Struct, forbid_unknown_fields=True):
    limit: int
    label: str = "x"


class WithStruct:
    Config = StructConfig


class WithSchema:
    config_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "limit": {"type": "integer", "minimum": 1},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["limit"],
    }


class OpenSchema:
    config_schema: ClassVar[dict[str, Any]] = {"type": "object"}


def test_style_and_keys() -> None:
    assert (config_style(WithStruct), config_style(WithSchema), config_style(object)) == (
        "msgspec",
        "json-schema",
        None,
    )
    assert config_keys(WithStruct).names == ("limit", "label") and config_keys(WithStruct).closed
    schema_keys = config_keys(WithSchema)
    assert schema_keys.names == ("limit", "tags") and not schema_keys.closed and not schema_keys.open
    assert config_keys(OpenSchema).open


def test_a_json_schema_reports_every_issue_with_its_key() -> None:
    issues = config_issues(WithSchema, {"limit": 0, "tags": ["a", 3]})
    assert issues == [
        ConfigIssue("0 is less than the minimum of 1 - at `$.limit`", "limit"),
        ConfigIssue("3 is not of type 'string' - at `$.tags[1]`", "tags"),
    ]
    assert config_issues(WithSchema, {}) == [ConfigIssue("'limit' is a required property", None)]


def test_msgspec_reports_its_first_issue() -> None:
    assert config_issues(WithStruct, {"limit": "many"}) == [
        ConfigIssue("Expected `int`, got `str` - at `$.limit`", "limit", "limit")
    ]


def test_runtime_conversion_locates_the_first_issue_at_its_key() -> None:
    where = {"limit": SourceLocation("e.yaml", 7, 9), "tags": SourceLocation("e.yaml", 8, 9)}
    with pytest.raises(ConfigError) as caught:
        convert_plugin_config(
            WithSchema, {"limit": 0, "tags": [3]}, what="g", location=None, key_locations=where
        )
    assert caught.value.message == (
        "invalid g: 0 is less than the minimum of 1 - at `$.limit` "
        "(and 1 more problem(s); `agentv-ci validate` lists them)"
    )
    assert caught.value.location == where["limit"]
    assert convert_plugin_config(WithSchema, {"limit": 2}, what="g", location=None) == {"limit": 2}
    assert convert_plugin_config(WithStruct, {"limit": 2}, what="g", location=None) == StructConfig(2)


def test_json_schema_of_each_style() -> None:
    assert config_json_schema(WithSchema) == WithSchema.config_schema
    assert config_json_schema(WithSchema) is not WithSchema.config_schema  # a copy
    struct_schema = config_json_schema(WithStruct)
    assert struct_schema is not None and struct_schema["$defs"]["StructConfig"]["required"] == ["limit"]
