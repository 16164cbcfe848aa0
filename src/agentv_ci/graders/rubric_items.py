"""Rubric items as graders receive them (already normalised by the loader; checked again here so a
plugin-built spec can't slip through) and the two ways an llm-grader scores them."""

from __future__ import annotations

from typing import Any

from agentv_ci.errors import ConfigError
from agentv_ci.model.result import AssertionResult
from agentv_ci.model.source import SourceLocation
from agentv_ci.scoring import js_sum

PASS_TENTHS = 7  # a score-range item "passes" at 7/10 or more


def _ranges(raw: Any, rubric_id: str, where: SourceLocation | None) -> list[dict[str, Any]] | None:
    if raw is None:
        return None
    if isinstance(raw, dict):  # shorthand {0: "...", 5: "..."}: each key a lower bound
        lows = sorted((int(str(k)), v) for k, v in raw.items())
        raw = [
            {"score_range": [low, lows[i + 1][0] - 1 if i + 1 < len(lows) else 10], "outcome": text}
            for i, (low, text) in enumerate(lows)
        ]
    if not isinstance(raw, list):
        raise ConfigError(f"rubric {rubric_id!r}: score_ranges must be a list or a mapping", location=where)
    covered: list[int] = []
    for band in raw:
        bounds = band.get("score_range") if isinstance(band, dict) else None
        if not (isinstance(bounds, list) and len(bounds) == 2 and all(isinstance(b, int) for b in bounds)):
            raise ConfigError(
                f"rubric {rubric_id!r}: each score range needs `score_range: [min, max]`", location=where
            )
        covered.extend(range(bounds[0], bounds[1] + 1))
    if sorted(covered) != list(range(11)):
        raise ConfigError(
            f"rubric {rubric_id!r}: score_ranges must cover every integer 0..10 exactly once",
            location=where,
            hint="e.g. [0,3], [4,6], [7,10]",
        )
    return list(raw)


def normalise_rubrics(raw: list[Any] | None, where: SourceLocation | None) -> list[dict[str, Any]]:
    """`{id, outcome, weight, required, min_score?, operator?, score_ranges?}` dicts (strings accepted)."""
    items: list[dict[str, Any]] = []
    for index, entry in enumerate(raw or []):
        if isinstance(entry, str):
            entry = {"outcome": entry}
        if not isinstance(entry, dict):
            raise ConfigError(f"rubric {index + 1} must be a string or a mapping", location=where)
        rubric_id = str(entry.get("id") or f"rubric-{index + 1}")
        outcome = entry.get("outcome", entry.get("criteria"))
        ranges = _ranges(entry.get("score_ranges"), rubric_id, where)
        if not outcome and not ranges:
            raise ConfigError(f"rubric {rubric_id!r} has no `outcome`", location=where)
        min_score = entry.get("min_score")
        if min_score is None and isinstance(entry.get("required_min_score"), int | float):
            min_score = float(entry["required_min_score"]) / 10
        item: dict[str, Any] = {
            "id": rubric_id,
            "outcome": outcome or "",
            "weight": float(entry.get("weight", 1.0)),
            "required": bool(entry.get("required", True)),
        }
        if min_score is not None:
            item["min_score"] = float(min_score)
        if entry.get("operator"):
            item["operator"] = entry["operator"]
        if ranges:
            item["score_ranges"] = ranges
        items.append(item)
    return items


def score_checklist(
    rubrics: list[dict[str, Any]], checks: list[dict[str, Any]]
) -> tuple[float, bool, list[AssertionResult], dict[str, Any]]:
    """Score = weight of satisfied items / weight of checked items (unknown ids ignored).
    Returns (score, any_required_failed, assertions, details). Raises ValueError if nothing matched."""
    by_id = {c["id"]: c for c in checks}
    checked = [r for r in rubrics if r["id"] in by_id]
    if not checked:
        raise ValueError(f"no check matched a rubric id (expected {[r['id'] for r in rubrics]})")
    total = js_sum(r["weight"] for r in checked)
    earned = js_sum(r["weight"] for r in checked if by_id[r["id"]]["satisfied"])
    required_failed = any(r["required"] and not by_id[r["id"]]["satisfied"] for r in checked)
    assertions = [
        AssertionResult(
            text=f"[{r['id']}] {r['outcome']}",
            passed=by_id[r["id"]]["satisfied"],
            evidence=by_id[r["id"]]["reasoning"] or None,
        )
        for r in checked
    ]
    details = {"checks": checks, "unchecked": [r["id"] for r in rubrics if r["id"] not in by_id]}
    return (earned / total if total > 0 else 0.0), required_failed, assertions, details


def score_ranges(
    rubrics: list[dict[str, Any]], checks: list[dict[str, Any]]
) -> tuple[float, bool, list[AssertionResult], dict[str, Any]]:
    """Each item scores its 0..10 integer / 10; score = weighted mean. An item fails the verdict when
    below its `min_score`, or when `required` without a `min_score` and not 10/10."""
    by_id = {c["id"]: c for c in checks}
    checked = [r for r in rubrics if r["id"] in by_id]
    if not checked:
        raise ValueError(f"no check matched a rubric id (expected {[r['id'] for r in rubrics]})")
    total = js_sum(r["weight"] for r in checked)
    earned = 0.0
    gate_failed = False
    assertions: list[AssertionResult] = []
    for rubric in checked:
        tenths = by_id[rubric["id"]]["score"]
        normalised = tenths / 10
        earned += rubric["weight"] * normalised
        min_score = rubric.get("min_score")
        below = normalised < min_score if min_score is not None else rubric["required"] and tenths < 10
        gate_failed = gate_failed or below
        passed = tenths >= PASS_TENTHS and (min_score is None or normalised >= min_score)
        label = rubric["outcome"] or rubric["id"]
        band = next(
            (
                b
                for b in rubric.get("score_ranges") or []
                if b["score_range"][0] <= tenths <= b["score_range"][1]
            ),
            None,
        )
        described = (band or {}).get("outcome") or ""
        assertions.append(
            AssertionResult(
                text=f"[{rubric['id']}] {label} - Score: {tenths}/10 ({described})",
                passed=passed,
                evidence=by_id[rubric["id"]]["reasoning"] or None,
            )
        )
    details = {"raw_scores": {r["id"]: by_id[r["id"]]["score"] for r in checked}, "checks": checks}
    return (earned / total if total > 0 else 0.0), gate_failed, assertions, details
