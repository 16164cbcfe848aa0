"""The order test files go to pytest-xdist's workers in: the longest first (tests/conftest.py).

With `--dist loadfile` a file is one unit of work, handed to the next free worker in collection order.
pytest-xdist's own order (`--loadscope-reorder`, its default) puts the files with the most tests first,
which left the one-test files that take longest (a fresh clone, an act run, a pre-commit install) to
the end, where one worker ran on alone. The Makefile turns that off (`--no-loadscope-reorder`) and this
order is used instead: the files with a `slow` test first, then the others by their number of tests.
A file's tests keep their order, and the order is the same in every worker, as xdist requires.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest


def longest_files_first(items: Sequence[pytest.Item]) -> list[pytest.Item]:
    per_file: dict[str, list[pytest.Item]] = {}
    for item in items:
        per_file.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    slow = {path for path, its in per_file.items() if any(it.get_closest_marker("slow") for it in its)}
    ordered = sorted(per_file, key=lambda path: (path not in slow, -len(per_file[path])))
    return [item for path in ordered for item in per_file[path]]
