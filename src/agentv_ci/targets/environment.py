"""`${{ VAR }}` interpolation and `.env` loading for targets.yaml, on top of `agentv_ci.loading.interpolate`.

The parsing, `.env` discovery and substitution rules are the eval loader's (one implementation for eval
files and targets.yaml, as AgentV). What targets add: the names of missing variables are recorded per key
so a missing API key can be named in the error, and the repo root is optional (`find_repo_root` gives None
outside a git checkout).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentv_ci.loading.interpolate import ENV_PATTERN, build_env, interpolate_env

__all__ = ["build_environment", "find_repo_root", "interpolate", "unset_names"]


def find_repo_root(start: Path) -> Path | None:
    """The nearest ancestor of `start` holding a `.git` entry."""
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def build_environment(
    start_dir: Path, *, env: Mapping[str, str] | None = None, repo_root: Path | None = None
) -> dict[str, str]:
    """Process env (or `env`) wins, then the nearest `.env`, then its parents (override: false).
    `.env` files are read from `start_dir` up to the repo root (just `start_dir` outside a checkout),
    the repo root and the working directory."""
    root = repo_root if repo_root is not None else find_repo_root(start_dir)
    merged, _files = build_env(start_dir, root or start_dir, os.environ if env is None else env)
    return merged


def unset_names(value: Any, env: Mapping[str, str]) -> list[str]:
    """The `${{ VAR }}` names in the strings of a JSON-like tree that `env` lacks or holds empty, in order."""
    if isinstance(value, str):
        if "${{" not in value:
            return []
        return [name for name in ENV_PATTERN.findall(value) if not env.get(name)]
    if isinstance(value, dict):
        return [name for item in value.values() for name in unset_names(item, env)]
    if isinstance(value, list):
        return [name for item in value for name in unset_names(item, env)]
    return []


def interpolate(value: Any, env: Mapping[str, str], missing: list[str]) -> Any:
    """Substitute `${{ VAR }}` in every string of a JSON-like tree; names not in `env` go to `missing`."""
    missing.extend(unset_names(value, env))
    return interpolate_env(value, env)
