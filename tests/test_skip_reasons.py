"""`make test` says why each test it skips was skipped: pytest prints skip reasons (`-rs` in
`addopts`), and every skip in the test tree gives one."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT


def test_pytest_prints_the_reason_of_each_skip(tmp_path: Path) -> None:
    (tmp_path / "test_skipping.py").write_text(
        "import pytest\n\n\ndef test_x() -> None:\n    pytest.skip('no frobnicator on this machine')\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(REPO_ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
         "-p", "no:cacheprovider", "-p", "no:randomly", str(tmp_path / "test_skipping.py")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SKIPPED [1] test_skipping.py:5: no frobnicator on this machine" in done.stdout, done.stdout


def _is_pytest_attr(node: ast.expr, *names: str) -> bool:
    """`pytest.<names...>` (`pytest.skip`, `pytest.mark.skipif`)."""
    for name in reversed(names):
        if not (isinstance(node, ast.Attribute) and node.attr == name):
            return False
        node = node.value
    return isinstance(node, ast.Name) and node.id == "pytest"


def _reasonless(node: ast.AST) -> bool:
    if isinstance(node, ast.Call):
        func = node.func
        given = [kw.value for kw in node.keywords if kw.arg in ("reason", "msg")]
        if _is_pytest_attr(func, "skip") or _is_pytest_attr(func, "mark", "skip"):
            given += node.args[:1]
        elif _is_pytest_attr(func, "mark", "skipif"):
            pass  # its positional arguments are conditions
        else:
            return False
        return not given or any(isinstance(v, ast.Constant) and not v.value for v in given)
    # A bare `@pytest.mark.skip` decorator, not called.
    return isinstance(node, ast.Attribute) and _is_pytest_attr(node, "mark", "skip")


def test_every_skip_in_the_tests_gives_a_reason() -> None:
    files = [*(REPO_ROOT / "tests").rglob("*.py"), *(REPO_ROOT / "plugins").glob("*/tests/**/*.py")]
    bare = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        if "skip" not in text:
            continue
        tree = ast.parse(text, str(path))
        parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
        for node in ast.walk(tree):
            # `pytest.mark.skip(...)` is checked as the call, not as the attribute it calls.
            parent = parents.get(node)
            if isinstance(parent, ast.Call) and parent.func is node:
                continue
            if _reasonless(node):
                bare.append(f"{path.relative_to(REPO_ROOT)}:{getattr(node, 'lineno', 0)}")
    assert bare == [], "skips without a reason (pass reason=... / a message): " + ", ".join(bare)
    assert len(files) > 100  # the tree was found
