"""Rubric items: strings and objects (any dialect) -> `{id, outcome, weight, required, ...}` dicts."""

from __future__ import annotations

from typing import Any

from agentv_ci.loading.context import LoadContext, Node, type_name
from agentv_ci.loading.keys import RUBRIC_KEYS
from agentv_ci.model.bounds import MAX_WEIGHT, within

OPERATORS = ("correctness", "contradiction")


def _score_ranges(raw: Any, node: Node, ctx: LoadContext) -> list[dict[str, Any]] | None:
    if isinstance(raw, list):
        out: list[dict[str, Any]] = []
        for i, item in enumerate(raw):
            rng = item.get("score_range") if isinstance(item, dict) else None
            if (
                not isinstance(rng, list)
                or len(rng) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 10 for v in rng)
                or rng[0] > rng[1]
            ):
                ctx.error(
                    "E103",
                    "score_ranges items need `score_range: [min, max]` with integers 0..10",
                    node.child(i),
                )
                continue
            out.append(
                {"score_range": list(rng), "outcome": item.get("outcome", item.get("expected_outcome"))}
            )
        return out
    if isinstance(raw, dict):
        bounds: list[tuple[int, Any]] = []
        for key, text in raw.items():
            try:
                low = int(str(key))
            except ValueError:
                ctx.error(
                    "E103",
                    f"score_ranges key {key!r} is not an integer 0..10",
                    node.child(str(key)),
                    key=True,
                )
                continue
            if not 0 <= low <= 10:
                ctx.error("E110", f"score_ranges key {low} is outside 0..10", node.child(str(key)), key=True)
                continue
            bounds.append((low, text))
        bounds.sort(key=lambda b: b[0])
        if bounds and bounds[0][0] != 0:
            ctx.error("E103", "score_ranges must start at 0", node)
        out = []
        for index, (low, text) in enumerate(bounds):
            high = bounds[index + 1][0] - 1 if index + 1 < len(bounds) else 10
            out.append({"score_range": [low, high], "outcome": text})
        return out
    ctx.error("E101", f"score_ranges must be a mapping or a list, got {type_name(raw)}", node)
    return None


def normalise_rubric(raw: Any, index: int, node: Node, ctx: LoadContext) -> dict[str, Any] | None:
    """One rubric item. `index` is 0-based (ids default to `rubric-<index+1>`)."""
    if isinstance(raw, str):
        return {"id": f"rubric-{index + 1}", "outcome": raw, "weight": 1.0, "required": True}
    if not isinstance(raw, dict):
        ctx.error("E101", f"a rubric must be a string or a mapping, got {type_name(raw)}", node)
        return None
    ctx.check_keys(
        raw,
        node,
        RUBRIC_KEYS - {"expected_outcome", "required_min_score"},
        "a rubric",
        {"expected_outcome": "`outcome`", "required_min_score": "`min_score` (0..1)"},
    )
    outcome = raw.get("outcome", raw.get("criteria", raw.get("expected_outcome")))
    item: dict[str, Any] = {
        "id": str(raw.get("id", f"rubric-{index + 1}")),
        "outcome": outcome,
        "weight": 1.0,
        "required": True,
    }
    weight = raw.get("weight", 1.0)
    if ctx.expect_type(weight, (int, float), "rubric weight", node.child("weight"), "a number"):
        if not within(weight, 0, MAX_WEIGHT):
            ctx.error(
                "E107",
                f"rubric weight must be a number from 0 to {MAX_WEIGHT:,.0f}, got {weight}",
                node.child("weight"),
            )
        item["weight"] = float(weight)
    required = raw.get("required", True)
    if ctx.expect_type(required, (bool,), "rubric required", node.child("required"), "true or false"):
        item["required"] = required
    if "min_score" in raw:
        min_score = read_min_score(raw["min_score"], node.child("min_score"), ctx)
        if min_score is not None:
            item["min_score"] = min_score
    elif "required_min_score" in raw:
        score = raw["required_min_score"]
        if ctx.expect_type(
            score, (int,), "required_min_score", node.child("required_min_score"), "an integer"
        ):
            item["min_score"] = score / 10
    if "operator" in raw:
        if raw["operator"] not in OPERATORS:
            ctx.error(
                "E103", f"rubric operator must be one of {', '.join(OPERATORS)}", node.child("operator")
            )
        item["operator"] = raw["operator"]
    if "score_ranges" in raw:
        ranges = _score_ranges(raw["score_ranges"], node.child("score_ranges"), ctx)
        if ranges is not None:
            item["score_ranges"] = ranges
    if outcome is None and "score_ranges" not in item:
        ctx.error(
            "E102", "rubric is missing `outcome`", node, hint="write the checklist item under `outcome:`"
        )
    return item


def read_min_score(score: Any, node: Node, ctx: LoadContext) -> float | None:
    """A grader's or a rubric's `min_score`: a number in (0, 1] (E108 outside, kept all the same);
    None when it is not a number."""
    if not ctx.expect_type(score, (int, float), "min_score", node, "a number"):
        return None
    if not 0 < score <= 1:
        ctx.error("E108", f"min_score must be in (0, 1], got {score}", node)
    return float(score)


def normalise_rubrics(raw: Any, node: Node, ctx: LoadContext) -> list[dict[str, Any]]:
    if isinstance(raw, str | dict):
        raw = [raw]
    if not isinstance(raw, list):
        ctx.error("E101", f"rubrics must be a list, got {type_name(raw)}", node)
        return []
    items = [normalise_rubric(r, i, node.child(i), ctx) for i, r in enumerate(raw)]
    return [item for item in items if item is not None]
