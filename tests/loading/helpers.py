"""Write an eval file into a temporary directory and load it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from agentv_ci.loading.suite_loader import LoadResult, load_suite


def load_text(tmp_path: Path, text: str, name: str = "suite.eval.yaml") -> LoadResult:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return load_suite(path, repo_root=tmp_path, env={})


def codes(result: LoadResult) -> list[tuple[str, int, int]]:
    return [(d.code, d.line, d.col) for d in result.diagnostics]
