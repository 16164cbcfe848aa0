"""The in-repo Python modules a script imports: a bounded scan of its `import` statements (the
`ast`, never running it), resolved against the script's import roots and followed transitively.

Only files inside the repository count (the standard library and installed packages are not the
project's code); a module that cannot be found is skipped. Used through `command_paths`."""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

from agentv_ci.loading.paths import safe_resolve

__all__ = ["SKIPPED_PARTS", "module_files", "package_inits", "python_imports", "python_imports_of_source"]

SKIPPED_PARTS = frozenset({".git", "node_modules", ".venv", "venv", "site-packages", "__pycache__", ".tox"})
MAX_DEPTH = 8  # import chains
MAX_IMPORTED_FILES = 300
MAX_SCANNED_BYTES = 1_000_000  # a larger file is listed but not read
_Names = list[tuple[list[str], Path | None]]


def read_small(path: Path) -> str | None:
    """The text of a file of at most MAX_SCANNED_BYTES (None: larger or unreadable)."""
    try:
        if path.stat().st_size > MAX_SCANNED_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def package_inits(root: Path, parts: list[str]) -> list[Path]:
    """`a/__init__.py`, `a/b/__init__.py` for `a.b`: each runs when the module is imported."""
    return [root.joinpath(*parts[: i + 1], "__init__.py") for i in range(len(parts))]


def module_files(root: Path, parts: list[str]) -> list[Path]:
    """The files importing `parts` (a dotted name) from `root` runs, as far as they exist."""
    found = [p for p in package_inits(root, parts[:-1]) if p.is_file()]
    target = root.joinpath(*parts)
    for candidate in (target.with_suffix(".py"), target / "__init__.py"):
        if candidate.is_file():
            found.append(candidate)
            break
    return found


def _imported_names(tree: ast.AST, path: Path | None) -> list[tuple[list[str], Path | None]]:
    """(dotted parts, the package directory a relative import starts from) per imported module."""
    names: _Names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend((alias.name.split("."), None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base: Path | None = None
            if node.level:
                if path is None:
                    continue
                base = path.parent
                for _ in range(node.level - 1):
                    base = base.parent
            module = node.module.split(".") if node.module else []
            if module:
                names.append((module, base))
            for alias in node.names:
                if alias.name != "*":
                    names.append(([*module, alias.name], base))  # `from pkg import submodule`
    return names


_PARSED: dict[tuple[Path, int, int], _Names] = {}  # (file, mtime_ns, size) -> its imports
_PARSED_MAX = 4096


def _names_in(source: str, path: Path | None) -> _Names:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return _imported_names(tree, path)


def _names_in_file(path: Path) -> _Names:
    """The imports of one file, parsed once per version of it (selection loads thousands of evals
    sharing a few grader scripts)."""
    try:
        stat = path.stat()
    except OSError:
        return []
    key = (path, stat.st_mtime_ns, stat.st_size)
    cached = _PARSED.get(key)
    if cached is None:
        text = read_small(path)
        cached = _names_in(text, path) if text is not None else []
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[key] = cached
    return cached


def python_imports_of_source(
    source: str | None, path: Path | None, roots: tuple[Path, ...], repo_root: Path
) -> list[Path]:
    """The in-repo module files one piece of Python source (or the file `path`, when `source` is
    None) imports directly (not transitively)."""
    names = _names_in(source, path) if source is not None else _names_in_file(path) if path else []
    found: dict[Path, None] = {}
    for parts, base in names:
        if not parts or not all(p.isidentifier() for p in parts):
            continue
        search = (base,) if base is not None else roots
        for root in search:
            files = module_files(root, parts)
            if files:
                found.update((safe_resolve(f), None) for f in files)
                break
    root = safe_resolve(repo_root)
    return [f for f in found if f == root or root in f.parents]


def python_imports(
    entries: list[tuple[Path, tuple[Path, ...]]], repo_root: Path, budget: int = MAX_IMPORTED_FILES
) -> list[Path]:
    """Every in-repo module the entry scripts import, transitively (breadth first, at most
    `budget` files and MAX_DEPTH levels). Each entry is (script, its import roots)."""
    seen: dict[Path, None] = {}
    queue: deque[tuple[Path, tuple[Path, ...], int]] = deque((p, r, 0) for p, r in entries)
    scanned: set[Path] = set()
    root = safe_resolve(repo_root)
    while queue and len(seen) < budget:
        path, roots, depth = queue.popleft()
        if path in scanned or depth > MAX_DEPTH:
            continue
        scanned.add(path)
        for found in python_imports_of_source(None, path, roots, repo_root):
            if SKIPPED_PARTS.intersection(found.relative_to(root).parts):
                continue
            if found not in seen:
                seen[found] = None
                queue.append((found, roots, depth + 1))
    return list(seen)[:budget]
