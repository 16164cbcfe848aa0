"""`execution:` / `experiment:` / per-test `run:` blocks -> `ExecutionSpec` (with range checks)."""

from __future__ import annotations

from typing import Any

import msgspec

from agentv_ci.loading.context import LoadContext, Node, type_name
from agentv_ci.loading.keys import EXECUTION_DEPRECATED, EXECUTION_KEYS, REPEAT_KEYS, REPEAT_STRATEGIES
from agentv_ci.loading.matrix_targets import parse_targets
from agentv_ci.model.bounds import MAX_ATTEMPTS, MAX_USD, within
from agentv_ci.model.suite import ExecutionSpec, RepeatSpec

_NUMBER = (int, float)
_UNSET_SPEC = ExecutionSpec()


def _repeat(written: Any, node: Node, ctx: LoadContext, key: str) -> RepeatSpec | None:
    raw = written
    if isinstance(raw, int) and not isinstance(raw, bool):
        raw = {"count": raw}  # `repeat: 3`: located at the number itself
    if not isinstance(raw, dict):
        ctx.error("E101", f"repeat must be a mapping or an integer, got {type_name(raw)}", node)
        return None
    ctx.check_keys(raw, node, REPEAT_KEYS, "repeat/trials")
    spec = RepeatSpec()
    count = raw.get("count", 1)
    where, what = (node.child("count"), "count") if raw is written else (node, key)
    if ctx.expect_type(count, (int,), what, where, f"an integer from 1 to {MAX_ATTEMPTS}"):
        if count > MAX_ATTEMPTS:
            ctx.error(
                "E115",
                f"{what} must be at most {MAX_ATTEMPTS} (the bound on attempts per test), got {count}",
                where,
                hint="each attempt is a full run of the test; ask for fewer",
            )
        else:
            if count < 1:
                ctx.error("E110", f"{what} must be >= 1, got {count}", where)
            spec.count = count
    strategy = raw.get("strategy", "pass_at_k")
    if strategy not in REPEAT_STRATEGIES:
        ctx.error(
            "E103",
            f"unknown repeat strategy {strategy!r}",
            node.child("strategy"),
            hint=f"one of: {', '.join(REPEAT_STRATEGIES)}",
        )
    else:
        spec.strategy = "pass_at_k" if strategy == "pass_any" else strategy
    if "cost_limit_usd" in raw:
        limit = raw["cost_limit_usd"]
        if ctx.expect_type(limit, _NUMBER, "cost_limit_usd", node.child("cost_limit_usd"), "a number"):
            if not within(limit, 0, MAX_USD):
                ctx.error(
                    "E110",
                    f"cost_limit_usd must be a number of USD from 0 to {MAX_USD:,.0f}, got {limit}",
                    node.child("cost_limit_usd"),
                )
            spec.cost_limit_usd = float(limit)
    return spec


SANDBOXES = ("auto", "docker", "vercel")


def parse_execution(
    raw: Any, node: Node, ctx: LoadContext, spec: ExecutionSpec | None = None, *, suite_level: bool = False
) -> ExecutionSpec:
    """Read one runtime block into `spec` (a fresh one when None); unknown keys warn. `suite_level`:
    an eval file's own block, whose matrix entries' `hooks` / `use_target` are run."""
    spec = spec if spec is not None else ExecutionSpec()
    if raw is None:
        return spec
    if not isinstance(raw, dict):
        ctx.error("E101", f"execution must be a mapping, got {type_name(raw)}", node)
        return spec
    ctx.check_keys(raw, node, EXECUTION_KEYS - EXECUTION_DEPRECATED.keys(), "execution", EXECUTION_DEPRECATED)
    if "target" in raw and ctx.expect_type(raw["target"], (str,), "target", node.child("target"), "a string"):
        spec.target = raw["target"]
        spec.target_location = node.child("target").loc()
    if "targets" in raw:
        spec.targets, extras = parse_targets(
            raw["targets"], node.child("targets"), ctx, suite_level=suite_level
        )
        spec.target_hooks = extras or None
        spec.target_location = node.child("targets").loc()
    if "threshold" in raw:
        value = raw["threshold"]
        if ctx.expect_type(value, _NUMBER, "threshold", node.child("threshold"), "a number"):
            if not 0 <= value <= 1:
                ctx.error("E108", f"threshold must be between 0 and 1, got {value}", node.child("threshold"))
            spec.threshold = float(value)
    if "timeout_seconds" in raw:
        value = raw["timeout_seconds"]
        if ctx.expect_type(value, _NUMBER, "timeout_seconds", node.child("timeout_seconds"), "a number"):
            if not 1 <= value <= 3600:
                ctx.error(
                    "E109",
                    f"timeout_seconds must be between 1 and 3600, got {value}",
                    node.child("timeout_seconds"),
                )
            spec.timeout_seconds = float(value)
    if "workers" in raw:
        value = raw["workers"]
        if ctx.expect_type(value, (int,), "workers", node.child("workers"), "an integer"):
            if not 1 <= value <= 50:
                ctx.error("E110", f"workers must be between 1 and 50, got {value}", node.child("workers"))
            spec.workers = value
    if "repeat" in raw and ("trials" in raw or "runs" in raw):
        ctx.error(
            "E113", "use one of `repeat`, `trials` or `runs`, not several", node.child("repeat"), key=True
        )
    for key in ("trials", "runs", "repeat"):
        if key in raw:
            spec.repeat = _repeat(raw[key], node.child(key), ctx, key) or spec.repeat
    if "budget_usd" in raw:
        value = raw["budget_usd"]
        if ctx.expect_type(value, _NUMBER, "budget_usd", node.child("budget_usd"), "a number"):
            if not within(value, 0, MAX_USD, above=True):
                ctx.error(
                    "E110",
                    f"budget_usd must be a number of USD over 0, at most {MAX_USD:,.0f}, got {value}",
                    node.child("budget_usd"),
                )
            spec.budget_usd = float(value)
    if "sandbox" in raw and raw["sandbox"] not in SANDBOXES:
        ctx.error(
            "E103",
            f"sandbox must be one of {', '.join(SANDBOXES)}, got {raw['sandbox']!r}",
            node.child("sandbox"),
        )
    if "early_exit" in raw:  # validated, and reported below: repeats are not cut short yet
        ctx.expect_type(raw["early_exit"], (bool,), "early_exit", node.child("early_exit"), "true or false")
    ctx.not_run(
        raw,
        node,
        {
            "early_exit": "repeats run their full count (pass_at_k stops at the first pass)",
            "cache_path": "the response cache lives where --cache-dir says",
            "agent": "name the agent as a target in targets.yaml",
            "model": "set `model` on the target in targets.yaml",
            "agent_options": "set the options on the target in targets.yaml",
            "sandbox": "agentv-ci runs agents on the host",
            "name": "name the experiment with --experiment",
            "workspace": "put the workspace at the top level or on the tests",
        },
        "execution",
    )
    for key in ("cache", "fail_on_error", "skip_defaults"):
        if key in raw and ctx.expect_type(raw[key], (bool,), key, node.child(key), "true or false"):
            setattr(spec, key, raw[key])
    return spec


def merge_execution(suite: ExecutionSpec, test: ExecutionSpec | None) -> ExecutionSpec:
    """Test values override suite values; `skip_defaults` is the test's own. `test` None: a test with
    no execution settings (a plain dataset line), without building an empty spec to compare."""
    if test is None or test == _UNSET_SPEC:
        return msgspec.structs.replace(suite, skip_defaults=False)
    merged = ExecutionSpec(skip_defaults=test.skip_defaults)
    for field in (
        "target",
        "targets",
        "threshold",
        "timeout_seconds",
        "workers",
        "repeat",
        "budget_usd",
        "cache",
        "fail_on_error",
        "target_location",
    ):
        value = getattr(test, field)
        setattr(merged, field, value if value is not None else getattr(suite, field))
    if suite.target_hooks or test.target_hooks:  # by name: a test naming a target keeps its hooks
        merged.target_hooks = {**(suite.target_hooks or {}), **(test.target_hooks or {})}
    return merged
