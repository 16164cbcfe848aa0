"""File-reference resolution with AgentV's search roots."""

from __future__ import annotations

import os
from pathlib import Path


def safe_resolve(path: Path) -> Path:
    """`path.resolve()`, except that a symlink loop (or another OS error) gives the absolute path, so
    the read that follows reports it as a diagnostic instead of crashing."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        return path.absolute()


def display_path(file: str, base: Path | None = None) -> str:
    """`file` relative to `base` (default: the working directory) when it lies under it."""
    base = base or Path(os.getcwd())
    try:
        return str(Path(file).relative_to(base))
    except ValueError:
        return file


def search_roots(base_dir: Path, repo_root: Path) -> list[Path]:
    """Eval file dir, each parent up to the repo root, the repo root, then the working directory."""
    base_dir = base_dir.resolve()
    repo_root = repo_root.resolve()
    roots: list[Path] = [base_dir]
    if base_dir == repo_root or repo_root in base_dir.parents:
        for parent in base_dir.parents:
            roots.append(parent)
            if parent == repo_root:
                break
    roots.append(repo_root)
    roots.append(Path(os.getcwd()))
    seen: set[Path] = set()
    unique: list[Path] = []
    for root in roots:
        if root not in seen:
            seen.add(root)
            unique.append(root)
    return unique


def strip_file_scheme(ref: str) -> str:
    return ref[len("file://") :] if ref.startswith("file://") else ref


def resolve_reference(ref: str, base_dir: Path, repo_root: Path) -> Path:
    """Resolve a file reference written in an eval file.

    A leading `/` means repo-root relative (unless the absolute path exists as written); otherwise the
    search roots are tried in order. Returns the first existing candidate, else `base_dir / ref`.
    """
    ref = strip_file_scheme(ref)
    if ref.startswith("/"):
        as_written = Path(ref)
        if as_written.exists() and not (repo_root / ref.lstrip("/")).exists():
            return as_written
        stripped = ref.lstrip("/")
        candidate = repo_root.resolve() / stripped
        if candidate.exists():
            return candidate
        for root in search_roots(base_dir, repo_root):
            if (root / stripped).exists():
                return safe_resolve(root / stripped)
        return candidate
    if ref.startswith("~"):
        return Path(ref).expanduser()
    for root in search_roots(base_dir, repo_root):
        candidate = root / ref
        if candidate.exists():
            return safe_resolve(candidate)
    return safe_resolve(base_dir / ref)


def resolve_relative(ref: str, base_dir: Path, repo_root: Path) -> Path:
    """Resolve a path that is relative to the eval file only (cases, includes): no parent search."""
    ref = strip_file_scheme(ref)
    if ref.startswith("/"):
        as_written = Path(ref)
        if as_written.exists():
            return as_written
        return repo_root.resolve() / ref.lstrip("/")
    return safe_resolve(base_dir / ref)
