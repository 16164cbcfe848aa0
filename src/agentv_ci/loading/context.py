"""Shared state of one load: where each value came from, and the diagnostics collected so far."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from agentv_ci.json_limits import MAX_INT, MIN_INT, describe_int
from agentv_ci.loading.yaml_source import JsonPath
from agentv_ci.model.codes import severity_of
from agentv_ci.model.diagnostics import Diagnostic
from agentv_ci.model.source import SourceLocation
from agentv_ci.security.confinement import Confinement, outside_hint


class Locator(Protocol):
    """Maps a json-path inside one parsed document to file:line:col."""

    file: str

    def locate(self, path: JsonPath, *, key: bool = False) -> SourceLocation: ...


class LineLocator:
    """A JSONL line: every path maps to that line; columns point at the key when it can be found.
    The line's text is decoded when a position in it is asked for (hardly ever: for a diagnostic)."""

    __slots__ = ("_text", "data", "file", "line")

    def __init__(self, file: str, line: int, data: bytes) -> None:
        self.file = file
        self.line = line
        self.data = data
        self._text: str | None = None

    @property
    def text(self) -> str:
        text = self._text
        if text is None:  # decoded once, when first asked
            text = self._text = self.data.decode("utf-8", errors="replace")
        return text

    def locate(self, path: JsonPath, *, key: bool = False) -> SourceLocation:
        if not path:
            return SourceLocation(self.file, self.line, 1)
        col = 1
        text = self.text
        for part in reversed(path):
            if isinstance(part, str):
                found = text.find(f'"{part}"')
                if found >= 0:
                    col = found + 1
                    if not key:
                        colon = text.find(":", found + len(part) + 2)
                        if colon >= 0:
                            rest = text[colon + 1 :]
                            col = colon + 2 + (len(rest) - len(rest.lstrip()))
                break
        return SourceLocation(self.file, self.line, col)


class FileLocator:
    """A whole file that has no finer positions (e.g. a Markdown prompt)."""

    def __init__(self, file: str) -> None:
        self.file = file

    def locate(self, path: JsonPath, *, key: bool = False) -> SourceLocation:
        return SourceLocation(self.file, 1, 1)


class Node:
    """A value's position: the document it lives in and its json-path there."""

    __slots__ = ("doc", "path")

    def __init__(self, doc: Locator, path: JsonPath = ()) -> None:
        self.doc = doc
        self.path = path

    def child(self, key: str | int) -> Node:
        return Node(self.doc, (*self.path, key))

    def loc(self, *, key: bool = False) -> SourceLocation:
        return self.doc.locate(self.path, key=key)

    @property
    def base_dir(self) -> Path:
        return _parent_dir(self.doc.file)


@lru_cache(maxsize=1024)
def _parent_dir(file: str) -> Path:
    # Cached: asked for every grader of every test, and building a Path is not free.
    return Path(file).parent


def did_you_mean(word: str, candidates: Iterable[str], cutoff: float = 0.6) -> str | None:
    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=cutoff)
    return matches[0] if matches else None


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    return type(value).__name__


_YAML11_BOOLS = frozenset({"yes", "no", "on", "off", "y", "n"})


class LoadContext:
    """Diagnostics, dependencies and environment for loading one suite."""

    def __init__(
        self,
        repo_root: Path,
        env: Mapping[str, str],
        process_env: Mapping[str, str] | None = None,
        *,
        build_graders: bool = True,
        confinement: Confinement | None = None,
    ) -> None:
        self.repo_root = repo_root
        # Where referenced files may live (security.confinement): the repo root unless widened.
        self.confinement = confinement if confinement is not None else Confinement.at(repo_root)
        self.env = env  # process env merged over the `.env` chain of the file being loaded
        self.process_env = env if process_env is None else process_env
        self.diagnostics: list[Diagnostic] = []
        # Every file (or directory: case dirs, glob roots, script dirs) read or looked for, absolute.
        self.dependencies: dict[str, None] = {}
        # False: skip building graders and checking plugin configs (they add diagnostics, never
        # dependencies); selection loads thousands of files this way.
        self.build_graders = build_graders
        # Outcomes of load-time grader builds, by the spec's content (see grader_checks): identical
        # graders repeated across the tests of a suite are built once per load.
        self.build_outcomes: dict[Any, Any] = {}
        # True while reading the graders of a test with a docker workspace: a code-grader's script
        # may be one only the image holds (loading/docker_workspace.py), so it is not looked for.
        self.graders_in_container = False

    def depend(self, path: Path) -> None:
        self.dependencies[str(path)] = None

    def confined(self, path: Path, where: Node | SourceLocation, ref: str | Path) -> bool:
        """True when the file `ref` resolved to (`path`) may be read; else E305 at `where`."""
        if self.confinement.permits(path):
            return True
        loc = where.loc() if isinstance(where, Node) else where
        shown = f"{ref} resolves to {path}, " if str(ref) != str(path) else f"{path} is "
        self.report("E305", f"{shown}outside the repository", loc, outside_hint(self.confinement))
        return False

    def report(self, code: str, message: str, loc: SourceLocation, hint: str | None = None) -> None:
        self.diagnostics.append(
            Diagnostic(severity_of(code), code, message, loc.file, loc.line, loc.col, hint)
        )

    def error(
        self, code: str, message: str, node: Node, *, key: bool = False, hint: str | None = None
    ) -> None:
        self.report(code, message, node.loc(key=key), hint)

    def warn(
        self, code: str, message: str, node: Node, *, key: bool = False, hint: str | None = None
    ) -> None:
        self.report(code, message, node.loc(key=key), hint)

    def not_run(self, mapping: Mapping[str, Any], node: Node, keys: Mapping[str, str], what: str) -> None:
        """W110 for each of `keys` (key -> hint) present in `mapping`: accepted, but not run."""
        for key, hint in keys.items():
            if key in mapping:
                message = f"`{key}` in {what} is not run by agentv-ci; it is ignored"
                self.warn("W110", message, node.child(key), key=True, hint=hint)

    def expect_type(self, value: Any, types: tuple[type, ...], what: str, node: Node, expected: str) -> bool:
        """True when `value` has one of `types` (bool is never a number); else records E101."""
        ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
        if ok and type(value) is int and not MIN_INT <= value <= MAX_INT:  # a float() of it would crash
            self.error(
                "E101",
                f"{what} must be {expected}, got {describe_int(value)}",
                node,
                hint="no setting needs a number this large",
            )
            return False
        if not ok:
            hint = None
            if bool in types and isinstance(value, str) and value.lower() in _YAML11_BOOLS:
                hint = "YAML 1.2 reads `yes`/`no`/`on`/`off` as strings; write true or false"
            self.error("E101", f"{what} must be {expected}, got {type_name(value)}", node, hint=hint)
        return ok

    def check_keys(
        self,
        mapping: Mapping[str, Any],
        node: Node,
        known: Iterable[str],
        what: str,
        deprecated: Mapping[str, str] | None = None,
    ) -> None:
        """Unknown keys -> W101 with a suggestion; deprecated keys -> W102 naming the modern form."""
        known_set = known if isinstance(known, frozenset) else frozenset(known)
        deprecated = deprecated or {}
        for key in mapping:
            if key in known_set:
                continue
            if key in deprecated:
                self.warn(
                    "W102",
                    f"`{key}` is deprecated in {what}; use {deprecated[key]}",
                    node.child(key),
                    key=True,
                )
            else:
                suggestion = did_you_mean(str(key), known_set | set(deprecated))
                hint = (
                    f"did you mean `{suggestion}`?"
                    if suggestion
                    else f"known keys: {', '.join(sorted(known_set))}"
                )
                self.warn("W101", f"unknown key `{key}` in {what}", node.child(str(key)), key=True, hint=hint)
