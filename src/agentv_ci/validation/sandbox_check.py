"""W112: a test whose graders expect the agent to edit files, run by Codex under a read-only sandbox.

Codex with no `sandbox:` runs read-only (its own default): every file write is rejected, no
`file_change` event appears, and the test fails for a reason its output hides. A test expects edits
when a `tool-trajectory` grader (also as a member of a `composite`) expects an `Edit` or `Write` call
(also Codex's own `file_change`), or when a `code-grader` grades a test with a `workspace` (it reads
the files the agent was to change). The target counts as read-only when its `sandbox` is unset or
`read-only` and its `args` give no sandbox of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from agentv_ci.errors import ConfigError
from agentv_ci.model.diagnostics import Diagnostic
from agentv_ci.model.suite import GraderSpec, Suite, Test
from agentv_ci.targets.config import TargetsConfig
from agentv_ci.validation.diagnostics import at_test

CODEX_PROVIDERS = frozenset({"codex", "codex-cli"})
EDIT_TOOLS = frozenset({"Edit", "Write", "file_change"})
_SANDBOX_ARGS = ("--sandbox", "-s", "--full-auto", "--dangerously-bypass-approvals-and-sandbox")


def _read_only_codex(name: str, config: TargetsConfig) -> bool:
    try:
        definition = config.resolve(name)
    except ConfigError:
        return False  # reported by the targets checks
    if (definition.provider or "") not in CODEX_PROVIDERS:
        return False
    sandbox = definition.fields.get("sandbox")
    if sandbox not in (None, "", "read-only"):
        return False
    args = definition.fields.get("args", definition.fields.get("arguments")) or []
    words = [str(a) for a in args] if isinstance(args, list) else str(args).split()
    return not any(word == flag or word.startswith(f"{flag}=") for word in words for flag in _SANDBOX_ARGS)


def _trajectory_edits(config: dict[str, Any]) -> bool:
    expected = config.get("expected")
    items = expected if isinstance(expected, list) else []
    tools = {str(item.get("tool")) for item in items if isinstance(item, dict)}
    minimums = config.get("minimums")
    if isinstance(minimums, dict):
        tools |= {str(tool) for tool, count in minimums.items() if count}
    return bool(tools & EDIT_TOOLS)


def _nested(config: dict[str, Any]) -> Iterable[tuple[str, dict[str, Any]]]:
    """A composite's members: (type, config); a member is a grader spec (its settings under `config`)."""
    children = config.get("assertions")
    for child in children if isinstance(children, list) else []:
        if isinstance(child, dict):
            settings = child.get("config")
            yield str(child.get("type", "")), settings if isinstance(settings, dict) else child


def _expects_edits(kind: str, config: dict[str, Any], *, has_workspace: bool) -> str | None:
    """Why a grader of type `kind` expects edits (None: it does not)."""
    if kind == "tool-trajectory" and _trajectory_edits(config):
        return "a tool-trajectory grader expects an Edit/Write call"
    if kind == "code-grader" and has_workspace:
        return "a code-grader reads the workspace the agent was to change"
    for child_kind, child in _nested(config):
        reason = _expects_edits(child_kind, child, has_workspace=has_workspace)
        if reason is not None:
            return reason
    return None


def _reason(graders: Iterable[GraderSpec], *, has_workspace: bool) -> str | None:
    for grader in graders:
        reason = _expects_edits(grader.type, dict(grader.config), has_workspace=has_workspace)
        if reason is not None:
            return reason
    return None


class ReadOnlyCodex:
    """Whether a target of a targets file runs Codex read-only, resolved once per (file, name) for
    a `validate` call that asks it once per test. The files it is asked about must outlive it (the
    key is their identity): they are held by `validate`'s target checker."""

    def __init__(self) -> None:
        self._known: dict[tuple[int, str], bool] = {}
        self._without_codex: dict[int, bool] = {}

    def none_in(self, config: TargetsConfig) -> bool:
        """True when `config` declares no Codex target: no name can resolve to one (the common case,
        answered without looking at the test's targets)."""
        known = self._without_codex.get(id(config))
        if known is None:
            providers = {definition.provider or "" for definition in config.targets.values()}
            known = self._without_codex[id(config)] = not providers & CODEX_PROVIDERS
        return known

    def __call__(self, name: str, config: TargetsConfig) -> bool:
        key = (id(config), name)
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = _read_only_codex(name, config)
        return known


def read_only_edit_warnings(
    test: Test,
    suite: Suite,
    names: Iterable[str],
    config: TargetsConfig,
    read_only_codex: Callable[[str, TargetsConfig], bool] = _read_only_codex,
) -> list[Diagnostic]:
    """W112 for each read-only Codex target of `names` that runs `test`, when its graders expect edits."""
    read_only = [name for name in names if read_only_codex(name, config)]
    if not read_only:
        return []
    has_workspace = test.workspace is not None or suite.workspace is not None
    reason = _reason([*test.graders], has_workspace=has_workspace)
    if reason is None:
        return []
    return [
        at_test(
            "W112",
            f"test {test.id!r} expects file edits ({reason}), but target {name!r} runs Codex "
            "read-only (no `sandbox:`): its writes will be rejected",
            test,
            suite,
            "set `sandbox: workspace-write` on the target",
        )
        for name in read_only
    ]
