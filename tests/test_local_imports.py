"""An import inside a function stays only where it saves start-up time, and says so (issue 30).

A function-local import is *redundant* when the module's own top-level imports already load its
target (directly or through the modules they import), or when the target is a standard-library
module that `agentv-ci` loads at start-up anyway: then it saves nothing and belongs at the top.
Every other one keeps something from loading; outside `commands/` and `cli.py` (whose blanket rule
docs/architecture.md states) it needs a comment on its line or just above it saying what it keeps
from loading and on which path. `if TYPE_CHECKING:` imports never run and are exempt.
"""

from __future__ import annotations

import ast
import functools
import io
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.test_import_layers import PACKAGE, SRC, _is_type_checking, _modules, _write, import_targets

# Modules whose function-local imports need no reason comment: the commands import their work
# inside the command functions on purpose (docs/architecture.md), so `--help` stays light.
EXEMPT_FROM_REASONS = ("agentv_ci.cli", "agentv_ci.commands")

# Files mid-edit when this test landed; to be emptied.
IN_FLUX: frozenset[str] = frozenset()


@dataclass(frozen=True)
class LocalImport:
    module: str
    path: Path
    line: int
    end_line: int
    targets: frozenset[str]


def _walk(node: ast.AST, in_function: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import that runs, with whether it sits inside a function; `if TYPE_CHECKING:` bodies are
    skipped (their `else:` runs)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, in_function
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from _walk(child, True)
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield from _walk(ast.Module(body=[other], type_ignores=[]), in_function)
        else:
            yield from _walk(child, in_function)


@dataclass(frozen=True)
class ImportTable:
    modules: dict[str, Path]
    top: dict[str, set[str]]
    local: list[LocalImport]


def import_table(src: Path, package: str) -> ImportTable:
    modules = _modules(src, package)
    top: dict[str, set[str]] = {}
    local: list[LocalImport] = []
    for name, path in modules.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        top[name] = set()
        for node, in_function in _walk(ast.parse(path.read_text(encoding="utf-8"), str(path)), False):
            targets = import_targets(node, here, modules)
            if in_function:
                end = node.end_lineno or node.lineno
                local.append(LocalImport(name, path, node.lineno, end, frozenset(targets)))
            else:
                top[name] |= targets
    return ImportTable(modules, top, local)


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def loaded_by(module: str, table: ImportTable) -> set[str]:
    """What importing `module` has loaded once its top-level imports have run: its own top-level
    imports, their parent packages, and theirs in turn. `module`'s own parent packages are still
    running when it is imported, so what they import is not counted."""
    own_parents = set(_with_parents(module))
    seen: set[str] = set()
    stack = list(table.top[module])
    while stack:
        for name in _with_parents(stack.pop()):
            if name in seen:
                continue
            seen.add(name)
            if name in table.top and name not in own_parents:
                stack.extend(table.top[name])
    return seen


def redundant(table: ImportTable, startup: frozenset[str]) -> list[LocalImport]:
    found: list[LocalImport] = []
    for item in table.local:
        loaded = loaded_by(item.module, table)
        if all(
            target in loaded or (target not in table.modules and target in startup and _is_stdlib(target))
            for target in item.targets
        ):
            found.append(item)
    return found


def _is_stdlib(name: str) -> bool:
    return name.split(".")[0] in sys.stdlib_module_names


def _comment_lines(text: str) -> set[int]:
    """Lines carrying a comment that could be a reason (not a `type: ignore` or `noqa` pragma)."""
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type != tokenize.COMMENT:
            continue
        body = token.string.lstrip("#").strip()
        if body and not body.startswith(("type:", "noqa", "pragma")):
            lines.add(token.start[0])
    return lines


def unexplained(table: ImportTable, exempt: tuple[str, ...]) -> list[LocalImport]:
    """Function-local imports with no reason comment on their lines or on the comment lines just
    above them (a run of consecutive imports may share one comment above the run)."""
    by_path: dict[Path, list[LocalImport]] = {}
    for item in table.local:
        if not any(item.module == e or item.module.startswith(e + ".") for e in exempt):
            by_path.setdefault(item.path, []).append(item)
    found: list[LocalImport] = []
    for path, items in by_path.items():
        text = path.read_text(encoding="utf-8")
        source = text.splitlines()
        comments = _comment_lines(text)
        import_lines = {
            n for item in table.local if item.path == path for n in range(item.line, item.end_line + 1)
        }
        for item in items:
            if comments & set(range(item.line, item.end_line + 1)):
                continue
            line = item.line - 1
            while line >= 1 and line in import_lines and line not in comments:
                line -= 1
            if not (line >= 1 and line in comments and source[line - 1].lstrip().startswith("#")):
                found.append(item)
    return found


@functools.cache
def _startup_modules() -> frozenset[str]:
    """Every module `agentv-ci --help` has loaded: those cost nothing to import again anywhere."""
    out = subprocess.run(
        [sys.executable, "-c", "import sys, agentv_ci.cli; print('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return frozenset(out.split())


def _relative(item: LocalImport) -> str:
    return item.path.relative_to(SRC).as_posix()


def test_no_function_local_import_loads_what_the_module_has_already_loaded() -> None:
    table = import_table(SRC, PACKAGE)
    found = [i for i in redundant(table, _startup_modules()) if _relative(i) not in IN_FLUX]
    assert [f"{_relative(i)}:{i.line} {sorted(i.targets)}" for i in found] == [], (
        "these imports inside functions save nothing (the module's top-level imports, or the CLI's "
        "start-up, load them already): move them to the top of the file"
    )


def test_every_function_local_import_outside_the_commands_says_why() -> None:
    table = import_table(SRC, PACKAGE)
    found = [i for i in unexplained(table, EXEMPT_FROM_REASONS) if _relative(i) not in IN_FLUX]
    assert [f"{_relative(i)}:{i.line} {sorted(i.targets)}" for i in found] == [], (
        "an import inside a function needs a comment saying what it keeps from loading and on which "
        "path (e.g. `# lazy: Docker's client only on the docker path`), or belongs at the top"
    )


def test_the_architecture_page_states_the_commands_blanket_rule() -> None:
    text = (SRC.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert "`commands/` and `cli.py` import their work inside the command functions" in " ".join(text.split())


def test_in_flux_names_only_files_that_exist() -> None:
    assert sorted(f for f in IN_FLUX if not (SRC / f).is_file()) == []


def test_the_checks_on_a_synthetic_package(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/heavy.py": "import json\n",
            "pkg/light.py": "",
            "pkg/mid.py": "import pkg.light\n",
            "pkg/sub/__init__.py": "from pkg.sub import inner\n",
            "pkg/sub/inner.py": "import pkg.mid\n",
            "pkg/user.py": (
                "from typing import TYPE_CHECKING\n"
                "import pkg.mid\n"
                "if TYPE_CHECKING:\n"
                "    from pkg import heavy\n"  # never runs: not counted anywhere
                "def a():\n"
                "    from pkg import light\n"  # 6: redundant, through pkg.mid
                "def b():\n"
                "    import pkg.heavy\n"  # 8: lazy, no reason
                "def c():\n"
                "    # lazy: heavy only when c runs\n"
                "    from pkg.heavy import x\n"  # 11: lazy, explained above
                "    from pkg.heavy import y\n"  # 12: shares the comment above the run
                "def d():\n"
                "    import pkg.heavy  # lazy: json only on d's path\n"  # 14: explained inline
                "def e():\n"
                "    value = 1\n"
                "    import pkg.heavy  # type: ignore[import]\n"  # 17: a pragma is no reason
                "def f():\n"
                "    import textwrap\n"  # 19: stdlib, loaded at start-up: redundant
                "    import json\n"  # 20: stdlib, not loaded at start-up: lazy, no reason
                "def g():\n"
                "    # a comment\n"
                "    value = 1\n"
                "    import pkg.heavy\n"  # 24: the comment is not just above it
            ),
            "pkg/sub/inner2.py": (
                "import pkg.mid\n"
                "def h():\n"
                "    from pkg.sub import inner  # x\n"  # own parent's import: still running, lazy
                "def i():\n"
                "    import pkg.light  # x\n"  # redundant through pkg.mid
            ),
            "pkg/cmd/__init__.py": "",
            "pkg/cmd/run.py": "def run():\n    import pkg.heavy\n",  # exempt from reasons
        },
    )
    table = import_table(tmp_path, "pkg")
    assert table.top["pkg.user"] == {"typing", "pkg.mid"}
    assert loaded_by("pkg.user", table) == {"typing", "pkg", "pkg.mid", "pkg.light"}
    assert loaded_by("pkg.sub.inner2", table) == {"pkg", "pkg.mid", "pkg.light"}

    found = redundant(table, frozenset({"textwrap"}))
    assert sorted((i.module, i.line) for i in found) == [
        ("pkg.sub.inner2", 5),
        ("pkg.user", 6),
        ("pkg.user", 19),
    ]
    missing = unexplained(table, ("pkg.cmd",))
    assert sorted((i.module, i.line) for i in missing) == [
        ("pkg.user", 6),
        ("pkg.user", 8),
        ("pkg.user", 17),
        ("pkg.user", 19),
        ("pkg.user", 20),
        ("pkg.user", 24),
    ]
    assert ("pkg.cmd.run", 2) in [(i.module, i.line) for i in unexplained(table, ())]
