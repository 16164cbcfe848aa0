"""The published eval-file JSON Schema, shipped inside the package."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def schema_text() -> str:
    return (resources.files("agentv_ci") / "validation" / "schema" / "eval.schema.json").read_text(
        encoding="utf-8"
    )


def load_schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(schema_text())
    return data
