"""The schema a grader checks against: inline, or a JSON file next to the eval file; compiled once.

`$ref`s to other files resolve next to the schema file (or the eval file, for an inline schema) and
never outside that directory; nothing is fetched over the network.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, SchemaError, validators
from jsonschema.protocols import Validator
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource
from referencing.jsonschema import DRAFT202012

from agentv_ci.api import ConfigError, SourceLocation


def _retriever(root: Path) -> Any:
    root = root.resolve()

    def retrieve(uri: str) -> Resource:
        if not uri.startswith("file://"):
            raise NoSuchResource(uri)  # never over the network
        path = Path(uri.removeprefix("file://")).resolve()
        if root not in path.parents:
            raise NoSuchResource(uri)  # outside the schema's directory
        contents = json.loads(path.read_text(encoding="utf-8"))
        return Resource.from_contents(contents, default_specification=DRAFT202012)

    return retrieve


def load_schema(value: Any, base_dir: Path, location: SourceLocation | None) -> tuple[Any, Path]:
    """(the schema, the directory its `$ref`s resolve in) from the `schema` key's value."""
    if not isinstance(value, str):
        return value, base_dir
    path = base_dir / value.removeprefix("file://")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"schema file not found: {value} ({exc.strerror})",
            location=location,
            hint=f"the path is relative to the eval file's directory, {base_dir}",
        ) from None
    try:
        schema = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"schema file {value} is not JSON: {exc}", location=location) from None
    if isinstance(schema, dict):
        schema.setdefault("$id", path.resolve().as_uri())  # relative `$ref`s resolve next to the file
    return schema, path.parent


def compile_schema(schema: Any, ref_root: Path, location: SourceLocation | None) -> Validator:
    """A validator for `schema` (its draft from `$schema`, 2020-12 by default), formats asserted."""
    validator_cls = validators.validator_for(schema, default=Draft202012Validator)
    try:
        validator_cls.check_schema(schema)
    except SchemaError as exc:
        where = f" at `{exc.json_path}`" if exc.absolute_path else ""
        raise ConfigError(
            f"the schema is not a valid JSON Schema: {exc.message}{where}", location=location
        ) from None
    registry: Registry[Any] = Registry(retrieve=_retriever(ref_root))  # type: ignore[call-arg]
    validator: Validator = validator_cls(
        schema, registry=registry, format_checker=validator_cls.FORMAT_CHECKER
    )
    return validator
