"""Load-time checks of grader config: built-in value rules, files, and the plugin's own Config struct."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import msgspec

from agentv_ci.errors import AgentvCiError, ConfigError
from agentv_ci.loading.context import LoadContext, Node, did_you_mean, type_name
from agentv_ci.loading.keys import GRADER_COMMON
from agentv_ci.loading.paths import resolve_reference, safe_resolve
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import GraderSpec
from agentv_ci.security.redaction import excerpt

VALUE_TYPES = frozenset({"contains", "icontains", "starts-with", "ends-with", "regex", "equals"})
LIST_VALUE_TYPES = frozenset({"contains-any", "contains-all", "icontains-any", "icontains-all"})
_JS_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "g": 0, "y": 0, "u": 0, "d": 0}


def _check_value(spec: GraderSpec, raw: dict[str, Any], node: Node, ctx: LoadContext) -> None:
    value = raw.get("value")
    if spec.type in VALUE_TYPES:
        if "value" not in raw:
            ctx.error("E102", f"`{spec.type}` needs a `value`", node)
        elif not isinstance(value, str) or not value:
            # AgentV accepts "", but the text graders refuse it: report it here, at the value.
            ctx.error(
                "E101",
                f"`{spec.type}` value must be a non-empty string, got {type_name(value)}",
                node.child("value"),
            )
        elif spec.type == "regex":
            flags = raw.get("flags", "")
            bad = [c for c in str(flags) if c not in _JS_FLAGS]
            if bad:
                ctx.error(
                    "E103", f"unknown regex flag(s) {''.join(bad)!r}", node.child("flags"), hint="use i, m, s"
                )
            if not bad:
                # lazy: the JS regex translator loaded only when `_check_value` runs
                from agentv_ci.js_semantics.js_regex import compile_js_regex

                try:  # with the grader's JavaScript semantics: (?<name>...), [^] are valid there
                    compile_js_regex(value, str(flags) if flags else None)
                except (ValueError, re.error) as exc:
                    ctx.error("E106", f"invalid regex {excerpt(value, 200)!r}: {exc}", node.child("value"))
    elif spec.type in LIST_VALUE_TYPES:
        if "value" not in raw:
            ctx.error("E102", f"`{spec.type}` needs a `value` list", node)
        elif not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            ctx.error("E101", f"`{spec.type}` value must be a non-empty list of strings", node.child("value"))


LEGACY_JUDGE_TYPES = frozenset({"llm_judge", "llm-judge"})


def check_prompt(prompt: Any, node: Node, ctx: LoadContext, *, legacy: bool = False) -> None:
    """An llm-grader's `prompt`: `file://` must exist; a bare path is a file only for the legacy
    `llm_judge` dialect (the AgentEvals seeds: "prompt path or inline"); v4 `llm-grader` reads it as
    the prompt text itself, as AgentV >= 4.6 does."""
    if isinstance(prompt, str):
        if prompt.startswith("file://"):
            path = resolve_reference(prompt, node.base_dir, ctx.repo_root)
            ctx.depend(path)
            if not ctx.confined(path, node, prompt):
                return
            if not path.is_file():
                ctx.error("E301", f"prompt file not found: {prompt}", node)
        elif "\n" not in prompt and prompt.strip().endswith((".md", ".txt")) and " " not in prompt.strip():
            path = node.base_dir / prompt.strip()
            if legacy and path.is_file():
                ctx.depend(path)
                if not ctx.confined(path, node, prompt):
                    return
                ctx.warn(
                    "W102",
                    f"prompt {prompt!r} is read as a file (legacy `llm_judge` bare path)",
                    node,
                    hint=f"write `prompt: file://{prompt.strip()}`: AgentV >= 4.6 reads a bare path as text",
                )
            elif path.is_file():
                ctx.depend(path)
                ctx.warn(
                    "W106",
                    f"prompt {prompt!r} names a file, but an llm-grader reads a bare string as the prompt "
                    "text itself (AgentV 4.x)",
                    node,
                    hint=f"write `prompt: file://{prompt.strip()}` to use the file",
                )
            else:
                ctx.warn(
                    "W106",
                    f"prompt {prompt!r} looks like a file path, but no such file exists: "
                    "it is used as the prompt text itself",
                    node,
                    hint=f"create {path}, or write `prompt: file://...` so a missing file is an error",
                )
    elif isinstance(prompt, dict):
        if "command" in prompt:
            from agentv_ci.loading.script_checks import check_command_files  # scripts only (~2 ms)

            check_command_files(prompt["command"], node.child("command"), ctx)
    elif prompt is not None:
        ctx.error("E101", f"prompt must be a string or a mapping, got {type_name(prompt)}", node)


@lru_cache(maxsize=256)
def _third_party(type_name_: str) -> bool:
    """A grader type registered by another distribution than agentv-ci (known without importing it)."""
    # lazy: the plugin registry (entry points) loaded only when `_third_party` runs
    from agentv_ci.plugins import GRADERS_NAMESPACE, list_plugins

    infos = [p for p in list_plugins(GRADERS_NAMESPACE) if p.name == type_name_]
    return bool(infos) and not all(p.entry_point.startswith("agentv_ci.") for p in infos)


def depend_on_named_files(spec: GraderSpec, node: Node, ctx: LoadContext) -> None:
    """A third-party grader's config values that name files next to the eval file (a schema file, a
    word list) are dependencies: editing one selects the eval, as the fingerprints hash them."""
    if not _third_party(spec.type):
        return
    for value in spec.config.values():
        for item in value if isinstance(value, list) else (value,):
            if isinstance(item, str) and 0 < len(item) <= 300 and "\n" not in item and "{" not in item:
                path = safe_resolve(node.base_dir / item.removeprefix("file://"))
                if path.is_file():
                    ctx.depend(path)


def check_builtin(spec: GraderSpec, raw: dict[str, Any], node: Node, ctx: LoadContext) -> None:
    depend_on_named_files(spec, node, ctx)
    _check_value(spec, raw, node, ctx)
    if spec.type == "code-grader":
        if "command" not in spec.config:
            ctx.error(
                "E102", "code-grader needs a `command`", node, hint='e.g. command: ["python", "check.py"]'
            )
        else:
            from agentv_ci.loading.script_checks import check_command_files  # scripts only (~2 ms)

            key = "script" if "script" in raw and "command" not in raw else "command"
            check_command_files(spec.config["command"], node.child(key), ctx, spec.config.get("cwd"))
    elif spec.type == "llm-grader":
        legacy = spec.written_type in LEGACY_JUDGE_TYPES
        check_prompt(spec.config.get("prompt"), node.child("prompt"), ctx, legacy=legacy)
        if "preprocessors" in raw:
            # lazy: `loading.preprocessors` loaded only when `check_builtin` runs
            from agentv_ci.loading.preprocessors import parse_preprocessors

            parse_preprocessors(raw["preprocessors"], node.child("preprocessors"), ctx)
    elif spec.type == "rubrics" and not spec.config.get("criteria"):
        ctx.error("E102", "rubrics grader needs a non-empty `criteria` list", node)


@lru_cache(maxsize=256)
def _plugin_config(type_name_: str) -> tuple[Any, Any, ConfigError | None]:
    """(plugin class, its ConfigKeys, problem) for a grader type; a problem only for third-party
    plugins (a built-in that cannot be imported yet is skipped)."""
    # lazy: the plugin registry and jsonschema, only when a plugin grader's config is checked
    from agentv_ci.plugins import GRADERS_NAMESPACE, list_plugins, load_plugin_class
    from agentv_ci.plugins.config import config_keys

    try:
        cls = load_plugin_class(GRADERS_NAMESPACE, type_name_)
    except ConfigError as exc:
        infos = [p for p in list_plugins(GRADERS_NAMESPACE) if p.name == type_name_]
        if len(infos) == 1 and infos[0].entry_point.startswith("agentv_ci."):
            return None, None, None  # built-in not importable yet: skip the check
        return None, None, exc
    if cls is None:
        return None, None, None
    return cls, config_keys(cls), None


def check_plugin_config(spec: GraderSpec, node: Node, ctx: LoadContext) -> None:
    """Unknown keys (W105 with a did-you-mean; E202 when the plugin's config is closed) and every
    problem the plugin's `Config` struct or `config_schema` finds (E202, at the key)."""
    # lazy: plugin config checks (jsonschema) loaded only when `check_plugin_config` runs
    from agentv_ci.plugins.config import config_issues

    cls, keys, problem = _plugin_config(spec.type)
    if problem:
        ctx.error("E203", problem.message, node.child("type"), hint=problem.hint)
        return
    if cls is None:
        return
    names = keys.names
    # A grader whose Config has a `config` field takes extra keys as script/prompt config (AgentV).
    open_config = "config" in names or keys.open
    known: dict[str, Any] = {}
    misspelt: dict[str, str] = {}  # an unknown key -> the known key it is probably meant to be
    for key, value in spec.config.items():
        if key in names:
            known[key] = value
            continue
        # The common fields (weight, required, ...) live on GraderSpec, not in the plugin Config, but a
        # misspelt one lands here and must be suggested too.
        candidates = (*names, *(c for c in GRADER_COMMON if c not in names))
        common = did_you_mean(key, GRADER_COMMON, cutoff=0.8)
        if open_config and common is None:
            known[key] = value
            continue  # extra keys of code-/llm-graders are script/prompt config
        suggestion = common or did_you_mean(key, candidates)
        if suggestion:
            misspelt[key] = suggestion
        hint = (
            f"did you mean `{suggestion}`?" if suggestion else f"known keys: {', '.join(sorted(candidates))}"
        )
        code = "E202" if keys.closed and common is None else "W105"
        ctx.report(
            code, f"unknown key `{key}` for grader type `{spec.type}`", node.child(key).loc(key=True), hint
        )
    what = f"{spec.type} grader {spec.name!r}"
    for issue in config_issues(cls, known, unknown_keys=False):
        loc = spec.config_locations.get(issue.key, node.loc()) if issue.key else node.loc()
        ctx.report(
            "E202",
            f"invalid {what}: {issue.message}",
            loc,
            _missing_field_hint(issue.message, misspelt, spec),
        )


_MISSING = re.compile(r"missing required field `([^`]+)`|'([^']+)' is a required property")


def _missing_field_hint(message: str, misspelt: dict[str, str], spec: GraderSpec) -> str | None:
    """For a missing field that an unknown key nearly spells: name that key and where it is."""
    match = _MISSING.search(message)
    if match is None:
        return None
    missing = match.group(1) or match.group(2)
    for key, meant in misspelt.items():
        if meant == missing:
            where = spec.config_locations.get(key)
            at = f" on line {where.line}" if where is not None and where.line > 0 else ""
            return f"`{key}`{at} looks like a misspelling of `{missing}`"
    return None


@lru_cache(maxsize=16)
def _unkeyed_fields(spec_type: type[Any]) -> tuple[int, int]:
    """Indexes of `location` and `config_locations` among a spec class's fields."""
    fields: tuple[str, ...] = spec_type.__struct_fields__
    return fields.index("location"), fields.index("config_locations")


def _build_key(spec: GraderSpec, base_dir: Any) -> bytes | None:
    """Everything a build can depend on except where the spec was written (its locations), as
    msgpack bytes (which keep 1, 1.0, True, "1" and b"1" apart), or None when not encodable."""

    values = list(msgspec.structs.astuple(spec))
    location, config_locations = _unkeyed_fields(type(spec))
    values[location] = None
    values[config_locations] = list(spec.config_locations)  # which keys have a location
    try:
        return msgspec.msgpack.encode([str(base_dir), *values])
    except (TypeError, ValueError, OverflowError):
        return None


# A build outcome: () when the grader builds, else (code, message, hint, where), where `where` is
# None for the grader's own location or a config key whose location to report.
_Outcome = tuple[()] | tuple[str, str, str | None, str | None]


def _build_outcome(spec: GraderSpec, node: Node) -> tuple[_Outcome, SourceLocation | None]:
    """Build the grader; the outcome plus the location to report it at for this spec."""
    # lazy: the plugin registry (entry points) loaded only when `_build_outcome` runs
    from agentv_ci.plugins import build_grader

    try:
        build_grader(spec, base_dir=node.base_dir)
    except AgentvCiError as exc:
        return _relocatable("E202", exc.message, exc.hint, exc.location, spec, node)
    except Exception as exc:  # a third-party plugin's constructor must not crash validation
        return ("E203", f"grader {spec.type!r} failed to initialise: {exc!r}", None, None), None
    return (), None


def _relocatable(
    code: str, message: str, hint: str | None, location: SourceLocation | None, spec: GraderSpec, node: Node
) -> tuple[_Outcome, SourceLocation | None]:
    """Express an error's location relative to the spec (its own location or one config key's), so
    the outcome can be replayed for another test; a location that is neither stays as it is, and so
    does a message that quotes one of the spec's positions."""
    written = [spec.location, *spec.config_locations.values()]
    if any(f"{loc.file}:{loc.line}" in message for loc in written if loc is not None):
        return (code, message, hint, None), location or node.loc()
    if location is None:
        return (code, message, hint, None), None
    keys = [k for k, loc in spec.config_locations.items() if loc == location]
    own = location == spec.location
    if own and not keys:
        return (code, message, hint, None), None
    if len(keys) == 1 and not own:
        return (code, message, hint, keys[0]), None
    return (code, message, hint, None), location  # not relative to the spec: not cacheable


def check_grader_builds(spec: GraderSpec, node: Node, ctx: LoadContext) -> None:
    """Build the grader as the runner will: its own checks (a tool-trajectory `mode`, a field-accuracy
    `match`, a composite aggregator...) become E202 now instead of a grader skipped at run time.

    The outcome is cached per load by the spec's content, so a grader repeated in every test is built
    once; each test still gets its own diagnostic, at its own location."""
    key = _build_key(spec, node.base_dir)
    outcome: _Outcome | None = ctx.build_outcomes.get(key) if key is not None else None
    if outcome is None:
        outcome, fixed = _build_outcome(spec, node)
        if fixed is not None and outcome:  # not replayable for another spec: reported, not cached
            ctx.report(outcome[0], outcome[1], fixed, outcome[2])
            return
        if key is not None:
            ctx.build_outcomes[key] = outcome
    if not outcome:
        return
    code, message, hint, where = outcome
    loc = spec.config_locations.get(where, node.loc()) if where is not None else node.loc()
    ctx.report(code, message, loc, hint)
