"""Finding the JSON value in an answer: the whole answer, else (with `extract: auto`) the first
fenced code block that parses, else the first JSON object or array embedded in the text."""

from __future__ import annotations

import json
import re
from typing import Any, Literal

ExtractMode = Literal["auto", "whole"]

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")  # NaN / Infinity, as JSON.parse


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_constant)


def extract_json(answer: str, mode: ExtractMode = "auto") -> tuple[Any, str | None]:
    """(value, None), or (None, why no JSON value was found)."""
    try:
        return _loads(answer.strip()), None
    except ValueError as exc:
        whole_error = str(exc)
    if mode == "whole":
        return None, f"the answer is not JSON: {whole_error}"
    for block in _FENCE.findall(answer):
        try:
            return _loads(block.strip()), None
        except ValueError:
            continue
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    for match in re.finditer(r"[{\[]", answer):
        try:
            value, _ = decoder.raw_decode(answer, match.start())
        except ValueError:
            continue
        return value, None
    return None, f"the answer holds no JSON value: {whole_error}"
