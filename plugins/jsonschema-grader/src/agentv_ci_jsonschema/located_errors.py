"""Validation errors located by JSON path, and the partial score they leave.

Each error of `iter_errors` is narrowed to its most relevant cause (`best_match` descends into
`anyOf`/`oneOf`). A missing required property is located at the property itself (`$.address.zip`,
not `$.address`), and so is a member `additionalProperties: false` forbids. The score is the share of
the answer's values that have no error: every value counts once (the root, each member, each array
item) and so does each missing required property. One bad field among four scores 0.8, a wrong root
type 0.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from jsonschema.exceptions import ValidationError, best_match

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class LocatedError:
    """One problem at one place in the answer."""

    path: str  # JSON path, e.g. `$.items[2].price`
    message: str
    keyword: str  # the schema keyword that failed (`type`, `required`, `minimum`, ...)


def member_path(path: str, name: str) -> str:
    """`$.a` + `b` -> `$.a.b`; names that are not identifiers are quoted: `$.a['b c']`."""
    if _IDENTIFIER.fullmatch(name):
        return f"{path}.{name}"
    return f"{path}[{name!r}]"


def _missing_property(error: ValidationError) -> str | None:
    """The property a `required` error is about (its message is `'name' is a required property`)."""
    required = error.validator_value
    if (
        error.validator != "required"
        or not isinstance(error.instance, dict)
        or not isinstance(required, list)
    ):
        return None
    for name in required:
        if isinstance(name, str) and name not in error.instance and error.message.startswith(repr(name)):
            return name
    return None


def _unexpected_properties(error: ValidationError) -> list[str]:
    """The members an `additionalProperties: false` error is about."""
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
        return []
    schema = error.schema if isinstance(error.schema, dict) else {}
    known = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    return [
        name
        for name in error.instance
        if name not in known and not any(re.search(pattern, name) for pattern in patterns)
    ]


def locate(errors: Iterable[ValidationError]) -> list[LocatedError]:
    """Every error, narrowed and located, in path order; one entry per (path, message)."""
    located: dict[tuple[str, str], LocatedError] = {}
    for error in errors:
        cause = best_match([error]) or error
        keyword = str(cause.validator)
        found = [(cause.json_path, cause.message)]
        missing = _missing_property(cause)
        if missing is not None:
            found = [(member_path(cause.json_path, missing), cause.message)]
        unexpected = _unexpected_properties(cause)
        if unexpected:
            found = [(member_path(cause.json_path, n), "is not an allowed property") for n in unexpected]
        for path, message in found:
            located.setdefault((path, message), LocatedError(path, message, keyword))
    return sorted(located.values(), key=lambda e: (e.path, e.message))


def count_values(instance: Any) -> int:
    """The root, every object member and every array item, at any depth."""
    if isinstance(instance, dict):
        return 1 + sum(count_values(v) for v in instance.values())
    if isinstance(instance, list):
        return 1 + sum(count_values(v) for v in instance)
    return 1


def partial_score(instance: Any, errors: list[LocatedError]) -> float:
    """Share of the answer's values (plus missing required properties) without an error."""
    if not errors:
        return 1.0
    missing = sum(1 for e in errors if e.keyword == "required")
    failing = len({e.path for e in errors})
    if any(e.path == "$" for e in errors):
        return 0.0  # the value as a whole is wrong (its type, an enum, ...)
    return max(0.0, 1.0 - failing / (count_values(instance) + missing))
