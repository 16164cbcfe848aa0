"""`json-schema`: the answer's JSON must validate against a JSON Schema.

Its config is itself declared as a JSON Schema (`config_schema`), so `agentv-ci validate` reports a
missing `schema`, a misspelt key or a wrong `max_errors` at file:line:col, and `agentv-ci schema`
offers the keys to editors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from agentv_ci.api import (
    AssertionResult,
    GraderResult,
    GraderSpec,
    GradingContext,
    answer_text,
    score_result,
)
from agentv_ci_jsonschema.extraction import extract_json
from agentv_ci_jsonschema.located_errors import locate, partial_score
from agentv_ci_jsonschema.schemas import compile_schema, load_schema

__all__ = ["CONFIG_SCHEMA", "JsonSchemaGrader"]

CONFIG_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "json-schema grader",
    "type": "object",
    "properties": {
        "schema": {
            "description": "The JSON Schema the answer must satisfy: inline, or the path of a JSON "
            "file relative to the eval file (`file://` optional). Its `$schema` picks the draft "
            "(default 2020-12).",
            "type": ["object", "boolean", "string"],
        },
        "extract": {
            "description": "`auto` (default): the whole answer, else its first fenced code block or "
            "embedded object/array that parses; `whole`: the whole answer only.",
            "enum": ["auto", "whole"],
        },
        "max_errors": {
            "description": "Errors listed as assertions (default 10); the score counts all of them.",
            "type": "integer",
            "minimum": 1,
        },
    },
    "required": ["schema"],
    "additionalProperties": False,
}


class JsonSchemaGrader:
    """Score = share of the answer's JSON values without a schema error (1.0 when it validates);
    one failed assertion per error, located by JSON path. The verdict is `pass` only when valid."""

    api_version: ClassVar[str] = "1.0"
    config_schema: ClassVar[dict[str, Any]] = CONFIG_SCHEMA

    def __init__(self, spec: GraderSpec, config: dict[str, Any], *, base_dir: Path) -> None:
        self.spec = spec
        self.extract = config.get("extract", "auto")
        self.max_errors: int = config.get("max_errors", 10)
        location = spec.config_locations.get("schema", spec.location)
        schema, ref_root = load_schema(config["schema"], base_dir, location)
        self.validator = compile_schema(schema, ref_root, location)

    async def grade(self, ctx: GradingContext) -> GraderResult:
        instance, problem = extract_json(answer_text(ctx.response), self.extract)
        if problem is not None:
            return score_result(self.spec, 0.0, [AssertionResult("the answer is JSON", False, problem)])
        errors = locate(self.validator.iter_errors(instance))
        details = {"errors": [{"path": e.path, "message": e.message, "keyword": e.keyword} for e in errors]}
        if not errors:
            return score_result(
                self.spec, 1.0, [AssertionResult("the answer matches the schema", True)], details=details
            )
        assertions = [AssertionResult(f"{e.path}: {e.message}", False) for e in errors[: self.max_errors]]
        if len(errors) > self.max_errors:
            assertions.append(
                AssertionResult(f"... and {len(errors) - self.max_errors} more error(s)", False)
            )
        return score_result(
            self.spec, partial_score(instance, errors), assertions, details=details, verdict="fail"
        )
