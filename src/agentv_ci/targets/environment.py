"""`${{ VAR }}` interpolation and `.env` loading, as AgentV does for targets.yaml.

Only values are substituted, never keys. A missing variable becomes the empty string; when a whole
string is one placeholder its value is coerced (`true`/`false` -> bool, plain numbers -> number).
The names of missing variables are recorded per key so a missing API key can be named in the error.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ENV_PATTERN = re.compile(r"\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


def find_repo_root(start: Path) -> Path | None:
    """The nearest ancestor of `start` holding a `.git` entry."""
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def parse_dotenv(text: str) -> dict[str, str]:
    """`KEY=value` lines; `export`, comments, blank lines and single/double quotes handled."""
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        if line.startswith("export "):
            line = line[len("export ") :].strip()
        key, _, value = line.partition("=")
        key = key.strip()
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        if key:
            values[key] = value
    return values


def dotenv_files(start_dir: Path, repo_root: Path | None, cwd: Path) -> list[Path]:
    """Every `.env` from `start_dir` up to the repo root, then the repo root and cwd, nearest first."""
    found: list[Path] = []
    stop = repo_root or start_dir
    for directory in (start_dir, *start_dir.parents):
        found.append(directory / ".env")
        if directory == stop:
            break
    if repo_root is not None:
        found.append(repo_root / ".env")
    found.append(cwd / ".env")
    unique: list[Path] = []
    for path in found:
        if path not in unique and path.is_file():
            unique.append(path)
    return unique


def build_environment(
    start_dir: Path, *, env: Mapping[str, str] | None = None, repo_root: Path | None = None
) -> dict[str, str]:
    """Process env (or `env`) wins, then the nearest `.env`, then its parents (override: false)."""
    merged: dict[str, str] = {}
    root = repo_root if repo_root is not None else find_repo_root(start_dir)
    for path in reversed(dotenv_files(start_dir, root, Path.cwd())):
        try:
            merged.update(parse_dotenv(path.read_text(encoding="utf-8")))
        except OSError:
            continue
    merged.update(os.environ if env is None else env)
    return merged


def _coerce(text: str) -> Any:
    if text == "true":
        return True
    if text == "false":
        return False
    if _NUMBER.match(text):
        return float(text) if "." in text else int(text)
    return text


def interpolate(value: Any, env: Mapping[str, str], missing: list[str]) -> Any:
    """Substitute `${{ VAR }}` in every string of a JSON-like tree; names not in `env` go to `missing`."""
    if isinstance(value, str):
        if "${{" not in value:
            return value
        whole = ENV_PATTERN.fullmatch(value.strip())

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env or env[name] == "":
                missing.append(name)
            return env.get(name, "")

        text = ENV_PATTERN.sub(replace, value)
        return _coerce(text) if whole else text
    if isinstance(value, dict):
        return {key: interpolate(item, env, missing) for key, item in value.items()}
    if isinstance(value, list):
        return [interpolate(item, env, missing) for item in value]
    return value
