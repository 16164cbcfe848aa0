"""Retry loops live in retrying/ only (issue 30): a guard over the source, so a new HTTP client
cannot grow a loop of its own beside the one policy.

- No function outside retrying/ sleeps inside a loop in a module that speaks HTTP (imports httpx,
  httpcore, http.client or urllib.request): that is a hand-written retry loop.
- Every module that speaks HTTP is known here: a client (its retries are run through the table of
  test_every_client.py) or a part of one, with why. A new one fails until it is placed.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "agentv_ci"
HTTP_LIBRARIES = ("httpx", "httpcore", "http.client", "urllib.request")

HTTP_MODULES = {
    "github/api.py": "client: the GitHub REST client (test_every_client.py: github)",
    "platforms/gitlab/client.py": "client: the GitLab REST client (test_every_client.py: gitlab)",
    "targets/http.py": "client: the model-API client (test_every_client.py: model-api)",
    "github/wall_clock.py": "part of the forge clients: the wall-clock deadline of one request",
    "targets/asyncio_backend.py": "part of the model-API client: its network backend",
    "target_client.py": "the grader side of the local target proxy (127.0.0.1), asked once: the "
    "proxy's own calls go through the model-API client",
}


def _speaks_http(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        names = (
            [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
        if any(name == lib or name.startswith(lib + ".") for name in names for lib in HTTP_LIBRARIES):
            return True
    return False


def _sleeps(node: ast.AST) -> bool:
    """A call to anything named `sleep` (time.sleep, asyncio.sleep, self._sleep, clock.sleep ...)."""
    for child in ast.walk(node):
        if isinstance(child, ast.Call):
            func = child.func
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else ""
            )
            if "sleep" in name.lower():
                return True
    return False


def _loops_that_sleep(tree: ast.AST) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.For | ast.AsyncFor | ast.While) and _sleeps(node)
    ]


def _http_modules() -> dict[str, ast.AST]:
    found: dict[str, ast.AST] = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        if _speaks_http(tree):
            found[path.relative_to(SRC).as_posix()] = tree
    return found


def test_no_module_but_the_policy_sleeps_in_a_loop_around_http() -> None:
    loops = {
        f"{name}:{line}"
        for name, tree in _http_modules().items()
        if not name.startswith("retrying/")
        for line in _loops_that_sleep(tree)
    }
    assert not loops, f"retry loops outside retrying/ (use retrying.call_with_retries): {sorted(loops)}"


def test_every_module_that_speaks_http_is_placed() -> None:
    assert set(_http_modules()) == set(HTTP_MODULES)


def test_the_guard_sees_a_hand_written_retry_loop() -> None:
    source = (
        "import time, httpx\n"
        "def get(url):\n"
        "    for _ in range(3):\n"
        "        try:\n"
        "            return httpx.get(url)\n"
        "        except httpx.HTTPError:\n"
        "            time.sleep(1)\n"
    )
    tree = ast.parse(source)
    assert _speaks_http(tree) and _loops_that_sleep(tree) == [3]
