"""The schema a grader checks against: inline, or a JSON file next to the eval file; compiled once.

`$ref`s to other files resolve next to the schema file (or the eval file, for an inline schema) and
never outside that directory; nothing is fetched over the network. Every file is read with
`read_confined_file`: inside the repository (symlinks followed), a regular file, at most 64 MiB.
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

from agentv_ci.api import ConfigError, ConfinedReadError, SourceLocation, read_confined_file


def _retriever(root: Path) -> Any:
    root = root.resolve()

    def retrieve(uri: str) -> Resource:
        if not uri.startswith("file://"):
            raise NoSuchResource(uri)  # never over the network
        path = Path(uri.removeprefix("file://")).resolve()
        if root not in path.parents:
            raise NoSuchResource(uri)  # outside the schema's directory
        try:
            contents = json.loads(read_confined_file(path, base_dir=root).decode("utf-8"))
        except (ConfigError, ValueError):
            raise NoSuchResource(uri) from None
        return Resource.from_contents(contents, default_specification=DRAFT202012)

    return retrieve


def load_schema(value: Any, base_dir: Path, location: SourceLocation | None) -> tuple[Any, Path]:
    """(the schema, the directory its `$ref`s resolve in) from the `schema` key's value."""
    if not isinstance(value, str):
        return value, base_dir
    path = base_dir / value.removeprefix("file://")
    try:  # confined to the repository, a regular file, size-capped
        data = read_confined_file(value, base_dir=base_dir, location=location)
    except ConfinedReadError as exc:
        raise ConfinedReadError(f"schema {exc.message}", location=location, hint=exc.hint) from None
    try:
        schema = json.loads(data.decode("utf-8"))
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
