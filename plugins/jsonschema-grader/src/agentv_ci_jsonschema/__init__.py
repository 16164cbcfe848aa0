"""agentv-ci-jsonschema: the `json-schema` grader (see README.md)."""

from __future__ import annotations

from agentv_ci_jsonschema.grader import CONFIG_SCHEMA, JsonSchemaGrader

__all__ = ["CONFIG_SCHEMA", "JsonSchemaGrader"]
