"""The suite-level keys of an eval file: its name, `execution:`/`experiment:`, suite graders, shared
`input`/`input_files`, metadata, preprocessors, workspace, tags and `requires`, and the `Suite` they
make with its tests."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agentv_ci.loading.context import LoadContext, Node, type_name
from agentv_ci.loading.docker_workspace import writes_docker
from agentv_ci.loading.execution import parse_execution
from agentv_ci.loading.graders import GraderNormaliser
from agentv_ci.loading.input_files import resolve_input_files
from agentv_ci.loading.keys import SUITE_DEPRECATED, SUITE_KEYS
from agentv_ci.loading.messages import normalise_input
from agentv_ci.loading.preprocessors import parse_preprocessors
from agentv_ci.loading.suite_defaults import SuiteDefaults
from agentv_ci.loading.workspace import merge_workspace, parse_workspace
from agentv_ci.loading.workspace_resets import check_worktree_reset
from agentv_ci.model.suite import GraderSpec, Suite, Test

NAME_PATTERN = re.compile(r"^[a-z0-9-]+$")
_EMPTY: dict[str, Any] = {}
_GRADER_KEYS = ("assertions", "assert", "evaluators", "evaluator")


def default_suite_name(path: Path) -> str:
    name = path.name
    for suffix in (".eval.yaml", ".eval.yml", ".yaml", ".yml", ".jsonl"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def read_suite_settings(
    path: Path, data: dict[str, Any], root: Node, ctx: LoadContext
) -> tuple[SuiteDefaults, GraderNormaliser]:
    """What the suite contributes to each of its tests (its name, execution and metadata among
    them), and the grader normaliser its tests share."""
    ctx.check_keys(data, root, SUITE_KEYS, "an eval file", SUITE_DEPRECATED)
    name = _name(data, root, path, ctx)
    if "execution" in data and "experiment" in data:
        ctx.error(
            "E113",
            "use either `execution:` or `experiment:`, not both",
            root.child("experiment"),
            key=True,
        )
    execution = parse_execution(data.get("execution"), root.child("execution"), ctx, suite_level=True)
    experiment = data.get("experiment")
    if isinstance(experiment, dict) and "name" in experiment and not isinstance(experiment["name"], str):
        ctx.error("E101", "experiment name must be a string", root.child("experiment").child("name"))
    execution = parse_execution(experiment, root.child("experiment"), ctx, execution, suite_level=True)
    if "target" in data and execution.target is None and isinstance(data["target"], str):
        execution.target = data["target"]

    graders_norm = GraderNormaliser(ctx, path.parent)
    ctx.graders_in_container = writes_docker(data.get("workspace"))
    graders: list[GraderSpec] = []
    for key in _GRADER_KEYS:
        if key in data:
            graders += graders_norm.normalise_list(data[key], root.child(key))
    exec_raw = data.get("execution")
    if isinstance(exec_raw, dict):
        for key in ("evaluators", "assertions"):
            if key in exec_raw:
                graders += graders_norm.normalise_list(exec_raw[key], root.child("execution").child(key))

    defaults = SuiteDefaults(name=name, graders=graders, execution=execution)
    defaults.graders_written = any(k in data for k in _GRADER_KEYS) or (
        isinstance(exec_raw, dict) and any(k in exec_raw for k in ("evaluators", "assertions"))
    )
    if "input" in data:
        defaults.input_raw = data["input"]
        defaults.input_node = root.child("input")
        defaults.input_messages = normalise_input(data["input"], root.child("input"), ctx)
    if "input_files" in data:
        defaults.input_files = resolve_input_files(data["input_files"], root.child("input_files"), ctx)
    metadata = _mapping(data, "metadata", root, ctx)
    if "governance" in data:
        metadata = {**metadata, "governance": _mapping(data, "governance", root, ctx)}
    defaults.metadata = metadata
    if "preprocessors" in data:
        defaults.preprocessors = parse_preprocessors(data["preprocessors"], root.child("preprocessors"), ctx)
    ctx.not_run(data, root, {"vars": "put `vars` on each test"}, "an eval file")
    defaults.workspace = parse_workspace(data.get("workspace"), root.child("workspace"), ctx)
    check_worktree_reset(defaults.workspace, None, root.child("workspace"), ctx)
    prompt_md = path.parent / "PROMPT.md"
    ctx.depend(prompt_md)  # read for tests without input; adding one gives them an input
    defaults.prompt_md = prompt_md if prompt_md.is_file() else None
    return defaults, graders_norm


def make_suite(
    path: Path, data: dict[str, Any], root: Node, defaults: SuiteDefaults, tests: list[Test], ctx: LoadContext
) -> Suite:
    """The suite of the eval file `path` with `tests`; its `tags` and `requires` checked."""
    tags = data.get("tags")
    if tags is not None and not (
        (isinstance(tags, list) and all(isinstance(t, str) for t in tags)) or isinstance(tags, dict)
    ):
        ctx.error("E101", "tags must be a list of strings", root.child("tags"))
    requires = data.get("requires")
    if requires is not None and not (
        isinstance(requires, dict) and all(isinstance(v, str) for v in requires.values())
    ):
        ctx.error(
            "E101",
            "requires must map tool names to version ranges",
            root.child("requires"),
            hint='e.g. requires: {agentv: ">=0.30.0"}',
        )
    return Suite(
        name=defaults.name,
        path=str(path),
        tests=tests,
        description=data.get("description") if isinstance(data.get("description"), str) else None,
        version=str(data["version"]) if data.get("version") is not None else None,
        metadata=defaults.metadata,
        tags=suite_tags(data),
        execution=defaults.execution,
        workspace=merge_workspace(defaults.workspace, None),
        preprocessors=defaults.preprocessors,
        dependencies=list(ctx.dependencies),
        location=root.loc(),
    )


def suite_tags(data: dict[str, Any]) -> list[str]:
    tags = data.get("tags")
    return [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []


def check_wrapper_workspace(data: dict[str, Any], root: Node, ctx: LoadContext) -> None:
    """A wrapper importing suites (`type: suite`) must not define a workspace (seed 004)."""
    places = [root.child("workspace")] if "workspace" in data else []
    for block in ("experiment", "execution"):
        if isinstance(data.get(block), dict) and "workspace" in data[block]:
            places.append(root.child(block).child("workspace"))
    for node in places:
        ctx.error(
            "E113",
            "a wrapper that imports suites (`type: suite`) must not define a workspace",
            node,
            key=True,
            hint="imported suites own their task environment; move the workspace into them",
        )


def _name(data: dict[str, Any], root: Node, path: Path, ctx: LoadContext) -> str:
    for key in ("name", "suite"):
        if key in data:
            value = data[key]
            if not isinstance(value, str):
                ctx.error("E101", f"{key} must be a string, got {type_name(value)}", root.child(key))
                continue
            if key == "name" and (not NAME_PATTERN.match(value) or len(value) > 64):
                ctx.error(
                    "E104",
                    f"invalid suite name {value!r}",
                    root.child(key),
                    hint="use 1-64 lowercase letters, digits and hyphens, e.g. `code-review`",
                )
            return value
    return default_suite_name(path)


def _mapping(data: dict[str, Any], key: str, root: Node, ctx: LoadContext) -> dict[str, Any]:
    value = data.get(key)
    if value is None:
        return _EMPTY.copy()
    if not isinstance(value, dict):
        ctx.error("E101", f"{key} must be a mapping, got {type_name(value)}", root.child(key))
        return _EMPTY.copy()
    return value
