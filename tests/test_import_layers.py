"""No import cycle in src/agentv_ci, imports inside functions included (docs/architecture.md).

import-linter (`make lint`) checks that packages import down the layers; it cannot see a cycle
inside one layer or one package, and the issue that set the layers asks for none anywhere. So this
test builds the module graph from the source itself: every `import` and `from ... import`, at any
depth, except those under `if TYPE_CHECKING:` (annotations only: they never run).
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src"
PACKAGE = "agentv_ci"

# Cycles known today, each a set of modules, with why it is there and what would remove it.
# A ratchet: this may only shrink. The test fails on any other cycle, and on an entry here that no
# longer exists (delete it then, so the list stays true).
ALLOWED_CYCLES: frozenset[frozenset[str]] = frozenset()


def _modules(src: Path, package: str) -> dict[str, Path]:
    """Dotted name -> file, for every module of `package` under `src` (a package is its __init__)."""
    found: dict[str, Path] = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that runs, wherever it is; `if TYPE_CHECKING:` bodies are skipped."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]))
        else:
            yield from _imports(node)


def import_targets(node: ast.Import | ast.ImportFrom, here: list[str], modules: dict[str, Path]) -> set[str]:
    """The dotted modules one import statement loads (`here`: the importer's package, as parts);
    `from a import b` names the module `a.b` when there is one, else `a`."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    base = node.module or ""
    if node.level:
        anchor = here[: len(here) - node.level + 1]
        base = ".".join([*anchor, *([node.module] if node.module else [])])
    targets: set[str] = set()
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        targets.add(submodule if submodule in modules else base)
    return targets


def import_graph(src: Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of `package` it imports. Importing `a.b.c` also runs `a/__init__` and
    `a/b/__init__`, so those count too (except the importer's own parents, already running)."""
    modules = _modules(src, package)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        here = name.split(".") if is_package else name.split(".")[:-1]
        own_parents = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets |= import_targets(node, here, modules)
        edges: set[str] = set()
        for target in targets:
            parts = target.split(".")
            for i in range(2, len(parts) + 1):  # the root package's __init__ imports nothing
                prefix = ".".join(parts[:i])
                if prefix in modules and prefix not in own_parents:
                    edges.add(prefix)
        graph[name] = edges - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, ())))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component: set[str] = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.add(frozenset(component))
    return found


def _describe(cycle: frozenset[str], graph: dict[str, set[str]]) -> str:
    edges = [f"    {a} -> {b}" for a in sorted(cycle) for b in sorted(graph[a] & cycle)]
    return f"  {len(cycle)} modules:\n" + "\n".join(edges)


def test_no_import_cycle_outside_the_allowlist() -> None:
    graph = import_graph(SRC, PACKAGE)
    found = cycles(graph)
    new = found - ALLOWED_CYCLES
    assert not new, (
        "import cycles (a type lives on the wrong floor: move it down, see docs/architecture.md):\n"
        + "\n".join(_describe(c, graph) for c in sorted(new, key=sorted))
    )
    gone = ALLOWED_CYCLES - found
    assert not gone, "allowlisted cycles that no longer exist; delete them from ALLOWED_CYCLES: " + repr(
        [sorted(c) for c in gone]
    )


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_a_function_local_import_closes_a_cycle_and_a_type_checking_one_does_not(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low/__init__.py": "",
            "pkg/low/types.py": "def f():\n    from pkg.high import g  # hidden in a function\n",
            "pkg/low/hints.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.high import g\n"
                "else:\n    import json\n"
            ),
            "pkg/high.py": "from .low import types, hints\nfrom pkg.low.types import f\n",
        },
    )
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.low.hints"] == set()
    assert graph["pkg.high"] == {"pkg.low", "pkg.low.types", "pkg.low.hints"}
    assert cycles(graph) == {frozenset({"pkg.high", "pkg.low.types"})}


def test_importing_a_module_counts_its_package_init(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/store/__init__.py": "from pkg.store.rows import Row\n",
            "pkg/store/rows.py": "import pkg.view\n",
            "pkg/store/names.py": "",
            "pkg/store/keys.py": "from . import names\n",  # its own package is already running
            "pkg/view.py": "from pkg.store.keys import k\n",
        },
    )
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.store.keys"] == {"pkg.store.names"}
    assert graph["pkg.view"] == {"pkg.store", "pkg.store.keys"}
    assert cycles(graph) == {frozenset({"pkg.store", "pkg.store.rows", "pkg.view"})}


def _layers() -> list[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (layered,) = [c for c in contracts if c["type"] == "layers"]
    names: list[str] = []
    for layer in layered["layers"]:
        names.extend(part.strip() for part in layer.replace(":", "|").split("|"))
    return names


def test_every_package_and_top_level_module_has_a_layer() -> None:
    """import-linter leaves a module it is not told about unchecked: a new package must be placed."""
    top = {name for name in _modules(SRC, PACKAGE) if name.count(".") == 1}
    placed = set(_layers())
    assert sorted(top - placed) == [], "place these in [tool.importlinter] layers (docs/architecture.md)"
    assert sorted(placed - top) == []


def test_the_architecture_page_names_every_layered_package() -> None:
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [name for name in _layers() if f"`{name.removeprefix(PACKAGE + '.')}" not in text]
    assert missing == []
