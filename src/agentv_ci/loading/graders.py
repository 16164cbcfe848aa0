"""Grader (assertion) lists of every dialect -> `GraderSpec`s (see the normalisation contract in
docs/eval-format.md): canonical kebab-case types, common fields lifted, the rest kept as config."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci.errors import ConfigError
from agentv_ci.loading.context import LoadContext, Node, did_you_mean, type_name
from agentv_ci.loading.documents import read_document
from agentv_ci.loading.grader_checks import check_builtin, check_grader_builds, check_plugin_config
from agentv_ci.loading.grader_reuse import PURE_TYPES, CleanGrader, content_key, replay
from agentv_ci.loading.keys import GRADER_COMMON, LEGACY_GRADER_NAMES, canonical_grader_type
from agentv_ci.loading.rubrics import normalise_rubrics, read_min_score
from agentv_ci.loading.template_paths import include_candidates, include_roots, is_template_name
from agentv_ci.model.bounds import MAX_WEIGHT, within
from agentv_ci.model.suite import GraderSpec

MAX_INCLUDE_DEPTH = 3
MEMBER_ALIASES = ("assertions", "assert", "evaluators")


@lru_cache(maxsize=1)
def known_grader_types() -> frozenset[str]:
    # lazy: the plugin registry (entry points) loaded only when `known_grader_types` runs
    from agentv_ci.plugins import GRADERS_NAMESPACE, list_plugins

    return frozenset(p.name for p in list_plugins(GRADERS_NAMESPACE))


def _registered_directly(kind: str) -> bool:
    """A grader registered with `plugins.register_for_tests` (no entry point)."""
    # lazy: the plugin registry (entry points) loaded only when `_registered_directly` runs
    from agentv_ci.plugins import GRADERS_NAMESPACE, load_plugin_class

    try:
        return load_plugin_class(GRADERS_NAMESPACE, kind) is not None
    except ConfigError:
        return False


def _auto_name(kind: str, raw: dict[str, Any]) -> str:
    """AgentV v4.42.4 names: `<type>-<value>` (regex: first 30 chars), `<type>-<count>` for list values,
    `skill-trigger-<skill>`, else the type."""
    value = raw.get("value")
    if kind == "regex" and isinstance(value, str):
        return f"regex-{value[:30]}"
    if isinstance(value, str) and value:
        return f"{kind}-{value}"
    if isinstance(value, list) and value:
        return f"{kind}-{len(value)}"
    if kind == "skill-trigger" and isinstance(raw.get("skill"), str):
        return f"skill-trigger-{raw['skill']}"
    return kind


def _common_fields(raw: dict[str, Any], node: Node, ctx: LoadContext) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    weight = raw.get("weight", 1.0)
    if weight == 1.0 and type(weight) is float:  # the default, unwritten in most graders
        fields["weight"] = 1.0
    elif ctx.expect_type(weight, (int, float), "weight", node.child("weight"), "a number"):
        if not within(weight, 0, MAX_WEIGHT):
            ctx.error(
                "E107",
                f"weight must be a number from 0 to {MAX_WEIGHT:,.0f}, got {weight}",
                node.child("weight"),
            )
        fields["weight"] = float(weight)
    if "required" in raw:
        required = raw["required"]
        if isinstance(required, bool):
            fields["required"] = required
        elif isinstance(required, int | float):
            if not 0 < required <= 1:
                ctx.error(
                    "E108",
                    f"required must be true/false or a number in (0, 1], got {required}",
                    node.child("required"),
                )
            else:
                ctx.warn(
                    "W102",
                    "a numeric `required` is deprecated",
                    node.child("required"),
                    hint=f"use `required: true` with `min_score: {required}`",
                )
            fields["required"] = float(required)
        else:
            ctx.error(
                "E101",
                f"required must be a boolean or a number, got {type_name(required)}",
                node.child("required"),
            )
    if "min_score" in raw:
        min_score = read_min_score(raw["min_score"], node.child("min_score"), ctx)
        if min_score is not None:
            fields["min_score"] = min_score
    if "negate" in raw:
        negate = raw["negate"]
        if ctx.expect_type(negate, (bool,), "negate", node.child("negate"), "true or false"):
            fields["negate"] = negate
    return fields


def _resolve_type(raw: dict[str, Any], node: Node, ctx: LoadContext) -> tuple[str, str] | None:
    if "type" not in raw:
        ctx.error(
            "E102", "grader is missing `type`", node, hint="e.g. `type: contains` or `type: llm-grader`"
        )
        return None
    written = raw["type"]
    if not isinstance(written, str) or not written.strip():
        ctx.error("E101", f"grader type must be a string, got {type_name(written)}", node.child("type"))
        return None
    canonical = canonical_grader_type(written)
    known = known_grader_types()
    if canonical not in known and not _registered_directly(canonical):
        suggestion = did_you_mean(written, sorted(known | LEGACY_GRADER_NAMES))
        if suggestion:
            suggestion = canonical_grader_type(suggestion)
        hint = f"did you mean `{suggestion}`?" if suggestion else f"known types: {', '.join(sorted(known))}"
        script = _agentv_custom_assertion(canonical, node.base_dir, ctx.repo_root)
        if script is not None:
            ctx.error(
                "E201",
                f"grader type {written!r} is an AgentV custom assertion ({script.name}), "
                "a JavaScript/TypeScript plugin agentv-ci cannot run",
                node.child("type"),
                hint="port it to a `code-grader` script or a Python grader plugin (docs/graders.md)",
            )
            return None
        ctx.error("E201", f"unknown grader type {written!r}", node.child("type"), hint=hint)
        return None
    if written != canonical:
        ctx.warn("W102", f"grader type `{written}` is deprecated; use `{canonical}`", node.child("type"))
    return written, canonical


_TEMPLATE_KEYS = frozenset({"assertions", "name", "description", "version"})
_CUSTOM_ASSERTION_SUFFIXES = (".ts", ".js", ".mts", ".mjs", ".cts", ".cjs")


def _agentv_custom_assertion(kind: str, base_dir: Path, repo_root: Path) -> Path | None:
    """AgentV's `.agentv/assertions/<type>.ts` (nearest, from the eval file up to the repo root)."""
    directory = base_dir.resolve()
    root = repo_root.resolve()
    while True:
        folder = directory / ".agentv" / "assertions"
        if folder.is_dir():
            for suffix in _CUSTOM_ASSERTION_SUFFIXES:
                for name in (kind, kind.replace("-", "_")):
                    if (folder / f"{name}{suffix}").is_file():
                        return folder / f"{name}{suffix}"
        if directory == root or directory.parent == directory:
            return None
        directory = directory.parent


class GraderNormaliser:
    """Normalises assertion lists, following `{include: ...}` templates."""

    def __init__(self, ctx: LoadContext, eval_dir: Path | None = None) -> None:
        self.ctx = ctx
        # The directory of the eval file being loaded: where includes are looked for from (AgentV's
        # search roots), also for rows of the case files it references.
        self.eval_dir = eval_dir
        # A pure grader mapping that normalised without any diagnostic, by its content:
        # (written type, type, name, common fields). The same mapping in another test reuses it.
        self._clean: dict[bytes, CleanGrader] = {}

    def normalise_list(self, raw: Any, node: Node, stack: tuple[Path, ...] = ()) -> list[GraderSpec]:
        ctx = self.ctx
        if raw is None:
            return []
        if isinstance(raw, dict | str):
            raw = [raw]
        if not isinstance(raw, list):
            ctx.error("E101", f"assertions must be a list, got {type_name(raw)}", node)
            return []
        out: list[GraderSpec | None] = []
        strings: list[tuple[str, Node]] = []
        string_slot = -1
        for i, item in enumerate(raw):
            child = node.child(i)
            if isinstance(item, str):
                if not item.strip():
                    ctx.warn("W106", "an empty assertion string is ignored", child)
                    continue
                if string_slot < 0:
                    string_slot = len(out)
                    out.append(None)
                strings.append((item, child))
            elif isinstance(item, dict) and "include" in item and "type" not in item:
                out.extend(self._include(item, child, stack))
            elif isinstance(item, dict):
                spec = self.normalise_one(item, child, stack)
                if spec is not None:
                    out.append(spec)
            else:
                ctx.error("E101", f"an assertion must be a mapping or a string, got {type_name(item)}", child)
        if strings:
            items = [
                {"id": f"rubric-{n + 1}", "outcome": text, "weight": 1.0, "required": True}
                for n, (text, _) in enumerate(strings)
            ]
            first = strings[0][1]
            out[string_slot] = GraderSpec(
                type="rubrics",
                name="rubrics",
                weight=float(len(strings)),
                config={"criteria": items},
                location=first.loc(),
            )
        return [spec for spec in out if spec is not None]

    def normalise_one(
        self, raw: dict[str, Any], node: Node, stack: tuple[Path, ...] = ()
    ) -> GraderSpec | None:
        ctx = self.ctx
        reuse_key = content_key(raw, node)
        clean = self._clean.get(reuse_key) if reuse_key is not None else None
        if clean is not None:
            return replay(clean, raw, node)
        diagnostics_before = len(ctx.diagnostics)
        resolved = _resolve_type(raw, node, ctx)
        if resolved is None:
            return None
        written, kind = resolved
        common = _common_fields(raw, node, ctx)
        name = raw.get("name")
        if name is not None and not isinstance(name, str):
            ctx.error("E101", f"grader name must be a string, got {type_name(name)}", node.child("name"))
            name = None
        config: dict[str, Any] = {}
        locations = {}
        for key, value in raw.items():
            if key in GRADER_COMMON:
                continue
            config[key] = value
            locations[key] = node.doc.locate((*node.path, key))  # node.child(key).loc(), without a Node
        if kind == "code-grader" and "script" in config:
            ctx.warn(
                "W102",
                "`script` is deprecated for code-grader; use `command`",
                node.child("script"),
                key=True,
            )
            script = config.pop("script")
            config.setdefault("command", script)
            locations.setdefault("command", locations.pop("script"))
        if kind in ("rubrics", "llm-grader"):
            self._rubric_config(kind, config, node)
        members_missing = kind == "composite" and not self._composite_config(config, locations, node, stack)
        spec = GraderSpec(
            type=kind,
            name=name or _auto_name(kind, raw),
            config=config,
            location=node.loc(),
            written_type=written if written != kind else None,
            config_locations=locations,
            **common,
        )
        checked_from = len(ctx.diagnostics)
        check_builtin(spec, raw, node, ctx)  # records the files the grader reads: always run
        if ctx.build_graders:
            check_plugin_config(spec, node, ctx)
            errors = any(d.severity == "error" for d in ctx.diagnostics[checked_from:])
            if not members_missing and not errors:
                check_grader_builds(spec, node, ctx)
        if reuse_key is not None and kind in PURE_TYPES and len(ctx.diagnostics) == diagnostics_before:
            self._clean[reuse_key] = (written, kind, spec.name, common)
        return spec

    def _rubric_config(self, kind: str, config: dict[str, Any], node: Node) -> None:
        if kind == "rubrics":
            if "criteria" in config:
                config["criteria"] = normalise_rubrics(config["criteria"], node.child("criteria"), self.ctx)
            elif "rubrics" in config:
                config["criteria"] = normalise_rubrics(config.pop("rubrics"), node.child("rubrics"), self.ctx)
        elif "rubrics" in config:
            config["rubrics"] = normalise_rubrics(config["rubrics"], node.child("rubrics"), self.ctx)

    def _composite_config(
        self, config: dict[str, Any], locations: dict[str, Any], node: Node, stack: tuple[Path, ...]
    ) -> bool:
        """Normalise the members; False when there are none (E102 reported; no second build error)."""
        member_key = next((k for k in MEMBER_ALIASES if k in config), None)
        if member_key is None:
            self.ctx.error("E102", "composite needs member `assertions`", node)
            members: list[GraderSpec] = []
        else:
            if member_key != "assertions":
                self.ctx.warn(
                    "W102",
                    f"composite `{member_key}` is deprecated; use `assertions`",
                    node.child(member_key),
                    key=True,
                )
                locations["assertions"] = locations.pop(member_key)
            members = self.normalise_list(config.pop(member_key), node.child(member_key), stack)
        config["assertions"] = [msgspec.to_builtins(m) for m in members]
        if "aggregator" not in config:
            self.ctx.warn(
                "W106",
                "composite has no `aggregator`; using weighted_average",
                node,
                hint="AgentV skips a composite without an aggregator; write one explicitly",
            )
            config["aggregator"] = {"type": "weighted_average"}
        elif not isinstance(config["aggregator"], dict) or "type" not in config["aggregator"]:
            self.ctx.error("E101", "aggregator must be a mapping with a `type`", node.child("aggregator"))
        return member_key is not None

    def _include(self, raw: dict[str, Any], node: Node, stack: tuple[Path, ...]) -> list[GraderSpec]:
        ctx = self.ctx
        name = raw["include"]
        if not isinstance(name, str) or not name:
            ctx.error("E101", "include must be a template name or a path", node.child("include"))
            return []
        for key in sorted(set(raw) - {"include"}):
            ctx.warn(
                "W101",
                f"unknown key `{key}` in an assertion include",
                node.child(key),
                key=True,
                hint="an include takes only `include: <template>`; set weights and other fields in the "
                "template, or write `type:` to define a grader here",
            )
        roots = include_roots(self.eval_dir or node.base_dir, ctx.repo_root, stack[-1] if stack else None)
        candidates = include_candidates(name, roots)
        path = next((c for c in candidates if c.is_file()), None)
        # The template read, and every nearer place one could be added to shadow it.
        for candidate in candidates[: candidates.index(path) + 1] if path is not None else candidates:
            ctx.depend(candidate)
        if path is None:
            what = "assertion template" if is_template_name(name) else "assertion include"
            ctx.error(
                "E301",
                f"{what} {name!r} not found",
                node.child("include"),
                hint=f"looked in {_shown_candidates(candidates)}",
            )
            return []
        if path in stack:
            chain = " -> ".join(p.name for p in (*stack, path))
            ctx.error("E302", f"include cycle: {chain}", node.child("include"))
            return []
        if len(stack) >= MAX_INCLUDE_DEPTH:
            ctx.error(
                "E303", f"assertion includes nested deeper than {MAX_INCLUDE_DEPTH}", node.child("include")
            )
            return []
        doc = read_document(path, ctx, node.child("include").loc())
        if doc is None:
            return []
        root = Node(doc)
        data = doc.data
        if isinstance(data, list):
            return self.normalise_list(data, root, (*stack, path))
        if not isinstance(data, dict) or "assertions" not in data:
            close = (
                next((k for k in data if did_you_mean(str(k), ("assertions",))), None)
                if isinstance(data, dict)
                else None
            )
            ctx.error(
                "E304",
                "an assertion template needs a top-level `assertions` list",
                root.child(close) if close else root,
                key=close is not None,
                hint=f"did you mean `assertions` instead of `{close}`?" if close else None,
            )
            return []
        ctx.check_keys(data, root, _TEMPLATE_KEYS, "an assertion template")
        return self.normalise_list(data["assertions"], root.child("assertions"), (*stack, path))


def _shown_candidates(candidates: list[Path], limit: int = 4) -> str:
    shown = ", ".join(str(c) for c in candidates[:limit])
    more = len(candidates) - limit
    return shown + (f" and {more} more place(s)" if more > 0 else "")
