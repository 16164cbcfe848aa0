"""Where tests come from: inline lists, external YAML/JSONL files, `file://` entries, globs,
directories of `case.yaml`, and `include:` entries (`type: tests` raw cases, `type: suite` suites)."""

from __future__ import annotations

import glob as globlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from itertools import chain, starmap
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci.loading.context import LoadContext, Node, type_name
from agentv_ci.loading.documents import read_document
from agentv_ci.loading.execution import merge_execution, parse_execution
from agentv_ci.loading.jsonl import read_jsonl_cases
from agentv_ci.loading.keys import INCLUDE_ENTRY_KEYS, TESTS_ALIASES
from agentv_ci.loading.paths import resolve_relative, safe_resolve, strip_file_scheme
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import ExecutionSpec, Test

_GLOB_CHARS = frozenset("*?[")


@dataclass(slots=True)
class RawCase:
    """A test as written, with where it was written (and the `run:` of the include that pulled it in)."""

    data: Any
    node: Node
    run: ExecutionSpec | None = None


@dataclass
class IncludedSuite:
    """Tests of another suite pulled in by `include: ... type: suite`, with the entry's overrides."""

    tests: list[tuple[Test, SourceLocation]]
    run: Any
    run_node: Node
    select: Any
    select_node: Node


CaseEntry = RawCase | IncludedSuite
SuiteLoader = Callable[[Path, SourceLocation], list[tuple[Test, SourceLocation]]]


class CaseExpander:
    def __init__(self, ctx: LoadContext, load_child_suite: SuiteLoader) -> None:
        self.ctx = ctx
        self.load_child_suite = load_child_suite
        self._active: list[Path] = []  # case files being expanded (a file reached again is a cycle)

    def expand(self, raw: Any, node: Node) -> Iterator[CaseEntry]:
        """The test entries of `raw`, as they are read: a JSONL dataset is read line by line as
        the entries are taken (`list()` them to read everything first)."""
        if isinstance(raw, str):
            return self._from_reference(raw, node)
        return self._expand_list(raw, node)

    def _expand_list(self, raw: Any, node: Node) -> Iterator[CaseEntry]:
        ctx = self.ctx
        if not isinstance(raw, list):
            ctx.error("E101", f"tests must be a list or a path, got {type_name(raw)}", node)
            return
        for i, item in enumerate(raw):
            child = node.child(i)
            if isinstance(item, str):
                yield from self._from_reference(item, child)
            elif isinstance(item, dict) and "include" in item and "id" not in item:
                yield from self._include(item, child)
            else:
                yield RawCase(item, child)

    def _paths(self, ref: str, node: Node) -> list[Path]:
        ref = strip_file_scheme(ref.strip())
        if _GLOB_CHARS & set(ref):
            pattern = str(resolve_relative(ref, node.base_dir, self.ctx.repo_root))
            # A new file matching the pattern adds tests: its fixed leading directory is watched.
            self.ctx.depend(glob_root(pattern))
            if not self.ctx.confined(glob_root(pattern), node, ref):
                return []  # never walk the filesystem outside the repository (`/**/*.yaml`)
            matches = sorted(Path(p) for p in globlib.glob(pattern, recursive=True))
            if not matches:
                self.ctx.warn("W104", f"pattern {ref!r} matched no files", node)
            return matches
        return [resolve_relative(ref, node.base_dir, self.ctx.repo_root)]

    def _from_reference(self, ref: str, node: Node) -> Iterator[CaseEntry]:
        # chained in C: a dataset's entries pass through no generator of ours on their way
        return chain.from_iterable(self._cases_of_each_path(ref, node))

    def _cases_of_each_path(self, ref: str, node: Node) -> Iterator[Iterable[CaseEntry]]:
        for path in self._paths(ref, node):
            yield self._cases_in(path, node, ref)

    def _cases_in(self, path: Path, node: Node, ref: str) -> Iterable[CaseEntry]:
        ctx = self.ctx
        if path.is_dir():
            if not ctx.confined(path, node, ref):
                return []
            return list(self._case_directory(path, node))
        if not path.exists():
            ctx.depend(path)
            ctx.error("E301", f"test file not found: {ref}", node, hint=f"resolved to {path}")
            return []
        suffix = path.suffix.lower()
        if suffix == ".jsonl":
            return starmap(RawCase, read_jsonl_cases(path, ctx, node.loc()))
        if suffix not in (".yaml", ".yml"):
            ctx.error("E006", f"unsupported tests file {path.name!r}", node, hint="use .yaml, .yml or .jsonl")
            return []
        resolved = safe_resolve(path)
        if resolved in self._active:
            chain = " -> ".join(p.name for p in (*self._active, resolved))
            ctx.error("E302", f"include cycle: {chain}", node)
            return []
        self._active.append(resolved)
        try:
            return self._yaml_cases(path, node)
        finally:
            self._active.pop()

    def _yaml_cases(self, path: Path, node: Node) -> list[CaseEntry]:
        ctx = self.ctx
        doc = read_document(path, ctx, node.loc())
        if doc is None:
            return []
        root = Node(doc)
        data = doc.data
        if isinstance(data, dict):
            key = next((k for k in TESTS_ALIASES if k in data), None)
            if key is None:
                ctx.error("E101", "a tests file must contain a list of tests", root)
                return []
            data, root = data[key], root.child(key)
            if not isinstance(data, list):
                return list(self.expand(data, root))  # read while this file is on the cycle stack
        if not isinstance(data, list):
            ctx.error("E101", f"a tests file must contain a list of tests, got {type_name(data)}", root)
            return []
        return list(self.expand(data, root))

    def _case_directory(self, directory: Path, node: Node) -> list[CaseEntry]:
        ctx = self.ctx
        ctx.depend(directory)
        out: list[CaseEntry] = []
        for sub in sorted(p for p in directory.iterdir() if p.is_dir()):
            case_file = next((sub / n for n in ("case.yaml", "case.yml") if (sub / n).is_file()), None)
            if case_file is None:
                if not (sub.name.startswith(".") or sub.name in ("__pycache__", "node_modules")):
                    ctx.warn(
                        "W103",
                        f"{sub.name}/ has no case.yaml; skipped",
                        node,
                        hint=f"each subdirectory of {directory.name}/ is one test: add {sub.name}/case.yaml",
                    )
                continue
            doc = read_document(case_file, ctx, node.loc())
            if doc is None:
                continue
            if not isinstance(doc.data, dict):
                ctx.error(
                    "E101", f"case.yaml must contain one test mapping, got {type_name(doc.data)}", Node(doc)
                )
                continue
            data = dict(doc.data)
            data.setdefault("id", sub.name)
            if (sub / "workspace").is_dir() and "workspace" not in data:
                data["workspace"] = {"template": str(sub / "workspace")}
            out.append(RawCase(data, Node(doc)))
        return out

    def _include(self, raw: dict[str, Any], node: Node) -> Iterable[CaseEntry]:
        ctx = self.ctx
        ctx.check_keys(raw, node, INCLUDE_ENTRY_KEYS, "a tests include")
        ref = raw["include"]
        kind = raw.get("type", "tests")
        if not isinstance(ref, str) or not ref:
            ctx.error("E101", "include must be a path or a glob", node.child("include"))
            return []
        if kind not in ("tests", "suite"):
            ctx.error("E103", f"include type must be `suite` or `tests`, got {kind!r}", node.child("type"))
            return []
        if kind == "tests":
            select = check_select(raw.get("select"), node.child("select"), ctx)
            # Checked once, where it is written; the builder layers it under each case's own settings.
            run = parse_execution(raw["run"], node.child("run"), ctx) if "run" in raw else None
            return _included_tests(self._from_reference(ref, node.child("include")), select, run)
        out: list[CaseEntry] = []
        for path in self._paths(ref, node.child("include")):
            if not path.is_file():
                ctx.depend(path)
                ctx.error(
                    "E301", f"suite not found: {ref}", node.child("include"), hint=f"resolved to {path}"
                )
                continue
            tests = self.load_child_suite(path, node.child("include").loc())
            out.append(
                IncludedSuite(
                    tests, raw.get("run"), node.child("run"), raw.get("select"), node.child("select")
                )
            )
        return out


def _included_tests(
    entries: Iterable[CaseEntry], select: dict[str, Any] | None, run: ExecutionSpec | None
) -> Iterator[CaseEntry]:
    """The entries of a `type: tests` include: those its `select` keeps, with its `run` settings."""
    for entry in entries:
        if isinstance(entry, RawCase):
            if select is not None and not _raw_selected(entry.data, select):
                continue
            if run is not None:
                entry.run = run
        yield entry


def apply_include(
    entry: IncludedSuite, wrapper: ExecutionSpec, ctx: LoadContext
) -> list[tuple[Test, SourceLocation]]:
    """The tests of a `type: suite` include that its `select` keeps, each run with the wrapper's
    execution over its own, over the entry's `run`."""
    run = parse_execution(entry.run, entry.run_node, ctx) if entry.run is not None else ExecutionSpec()
    tests = entry.tests
    checked = check_select(entry.select, entry.select_node, ctx)
    if checked is not None:
        tests = [(t, loc) for t, loc in tests if is_selected(t.id, t.tags, t.metadata, checked)]
    out: list[tuple[Test, SourceLocation]] = []
    for test, loc in tests:
        execution = merge_execution(wrapper, merge_execution(test.execution, run))
        out.append((msgspec.structs.replace(test, execution=execution), loc))
    return out


def glob_root(pattern: str) -> Path:
    """The directory part of `pattern` before its first magic component (`cases/**/*.yaml` -> `cases`)."""
    parts = Path(pattern).parts
    fixed = next((i for i, part in enumerate(parts) if _GLOB_CHARS & set(part)), len(parts))
    return Path(*parts[:fixed]) if fixed else Path(".")


SELECT_KEYS = ("test_ids", "tags", "metadata")


def check_select(select: Any, node: Node, ctx: LoadContext) -> dict[str, Any] | None:
    """An include's `select:` mapping (unknown keys warn), or None when absent or unusable."""
    if select is None:
        return None
    if not isinstance(select, dict):
        ctx.error("E101", f"select must be a mapping, got {type_name(select)}", node)
        return None
    ctx.check_keys(select, node, SELECT_KEYS, "select")
    return select


def is_selected(test_id: str, tags: list[str], metadata: dict[str, Any], select: dict[str, Any]) -> bool:
    """`test_ids` are globs (any matches), `tags` any-of, `metadata` all key/values equal."""
    ids = select.get("test_ids")
    if ids is not None and not any(
        fnmatchcase(test_id, str(p)) for p in (ids if isinstance(ids, list) else [ids])
    ):
        return False
    wanted = select.get("tags")
    if wanted is not None and not set(wanted if isinstance(wanted, list) else [wanted]) & set(tags):
        return False
    meta = select.get("metadata")
    return not (isinstance(meta, dict) and any(metadata.get(k) != v for k, v in meta.items()))


def _raw_selected(data: Any, select: dict[str, Any]) -> bool:
    if not isinstance(data, dict):
        return True  # reported by the builder
    tags = data.get("tags")
    metadata = data.get("metadata")
    return is_selected(
        str(data.get("id", "")),
        [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else [],
        metadata if isinstance(metadata, dict) else {},
        select,
    )
