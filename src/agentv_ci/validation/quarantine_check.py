"""`validate` checks the quarantine file (`.agentv/quarantine.yaml`) of the validated paths' repository."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentv_ci.loading.quarantine import QUARANTINE_PATH, read_quarantine_file
from agentv_ci.model.diagnostics import Diagnostic
from agentv_ci.security.confinement import find_repo_root

__all__ = ["check_quarantine_files", "is_quarantine_file"]


def is_quarantine_file(path: Path) -> bool:
    """`path` names a quarantine file (`.agentv/quarantine.yaml`), e.g. staged for the pre-commit hook."""
    return path.name == "quarantine.yaml" and path.parent.name == ".agentv"


def check_quarantine_files(
    paths: Sequence[Path], repo_root: Path | None
) -> tuple[list[Path], list[Diagnostic]]:
    """(the quarantine files found, their diagnostics): the one of `repo_root`, else of each path's
    repository (a named quarantine file counts for its own)."""
    roots = {repo_root.absolute()} if repo_root is not None else {find_repo_root(p) for p in paths}
    for path in paths:
        if is_quarantine_file(path):
            roots.add(path.absolute().parent.parent)
    files: list[Path] = []
    diagnostics: list[Diagnostic] = []
    for root in sorted(roots):
        path = root / QUARANTINE_PATH
        found = read_quarantine_file(path, str(path))
        if found is not None:
            files.append(path)
            diagnostics.extend(found.diagnostics)
    return files, diagnostics
