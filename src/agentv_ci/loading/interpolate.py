"""`${{ VAR }}` environment interpolation (with `.env` files) and per-test `{{vars}}` substitution."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentv_ci.loading.context import LoadContext

ENV_PATTERN = re.compile(r"\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
VAR_PATTERN = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")
_NUMBER = re.compile(r"^-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")


def parse_dotenv(text: str) -> dict[str, str]:
    """KEY=value lines; `export ` prefix, quotes and trailing comments on unquoted values handled."""
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", key):
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            quote, value = value[0], value[1:-1]
            if quote == '"':
                value = value.replace("\\n", "\n").replace('\\"', '"')
        else:
            value = value.split(" #", 1)[0].rstrip()
        values[key] = value
    return values


def dotenv_candidates(eval_dir: Path, repo_root: Path) -> list[Path]:
    """Where `.env` files are looked for, nearest first, whether they exist or not: the eval dir up to
    the repo root, then the repo root and the cwd. (A new `.env` at one of them changes the eval's
    environment, so selection watches them all.)"""
    eval_dir = eval_dir.resolve()
    repo_root = repo_root.resolve()
    dirs = [eval_dir]
    if repo_root in eval_dir.parents:
        for parent in eval_dir.parents:
            dirs.append(parent)
            if parent == repo_root:
                break
    dirs += [repo_root, Path(os.getcwd()).resolve()]
    return list(dict.fromkeys(directory / ".env" for directory in dirs))


def dotenv_files(eval_dir: Path, repo_root: Path) -> list[Path]:
    """The `.env` files that exist among `dotenv_candidates`, nearest first."""
    return [candidate for candidate in dotenv_candidates(eval_dir, repo_root) if candidate.is_file()]


def merge_env(files: list[Path], process_env: Mapping[str, str]) -> dict[str, str]:
    """Process env wins, then the first (nearest) of `files`, then the others."""
    merged: dict[str, str] = {}
    for path in reversed(files):
        try:
            merged.update(parse_dotenv(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    merged.update(process_env)
    return merged


def dotenv_environment(eval_dir: Path, ctx: LoadContext) -> dict[str, str]:
    """The process env over the `.env` chain of `eval_dir`; every place a `.env` could be is a
    dependency (a new one changes the environment)."""
    candidates = dotenv_candidates(eval_dir, ctx.repo_root)
    for candidate in candidates:
        ctx.depend(candidate)
    return merge_env([c for c in candidates if c.is_file()], ctx.process_env)


def build_env(
    eval_dir: Path, repo_root: Path, process_env: Mapping[str, str]
) -> tuple[dict[str, str], list[Path]]:
    """Process env wins, then the nearest `.env`, then its parents."""
    files = dotenv_files(eval_dir, repo_root)
    return merge_env(files, process_env), files


def _coerce(text: str) -> Any:
    if text == "true":
        return True
    if text == "false":
        return False
    if _NUMBER.match(text):
        return float(text) if any(c in text for c in ".eE") else int(text)
    return text


def interpolate_env(value: Any, env: Mapping[str, str]) -> Any:
    """Substitute `${{ VAR }}` in every string value (never keys). Missing -> empty string.
    A string that is exactly one placeholder is coerced (`true`/`false`/numbers)."""
    if isinstance(value, str):
        if "${{" not in value:
            return value
        whole = ENV_PATTERN.fullmatch(value.strip())
        if whole:
            return _coerce(env.get(whole.group(1), ""))
        return ENV_PATTERN.sub(lambda m: env.get(m.group(1), ""), value)
    if isinstance(value, dict):
        return {k: interpolate_env(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate_env(v, env) for v in value]
    return value


_MISSING = object()


def _lookup(variables: Mapping[str, Any], dotted: str) -> Any:
    current: Any = variables
    for part in dotted.split("."):
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        else:
            return _MISSING
    return current


def substitute_vars(value: Any, variables: Mapping[str, Any]) -> Any:
    """Replace `{{name}}` / `{{ a.b }}` with test vars. A whole-string placeholder keeps the var's JSON
    type; unknown names are left as written."""
    if not variables:
        return value
    if isinstance(value, str):
        if "{{" not in value:
            return value
        whole = VAR_PATTERN.fullmatch(value.strip())
        if whole:
            found = _lookup(variables, whole.group(1))
            return value if found is _MISSING else found

        def replace(match: re.Match[str]) -> str:
            found = _lookup(variables, match.group(1))
            if found is _MISSING:
                return match.group(0)
            if isinstance(found, str):
                return found

            return json.dumps(found, ensure_ascii=False)

        return VAR_PATTERN.sub(replace, value)
    if isinstance(value, dict):
        return {k: substitute_vars(v, variables) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute_vars(v, variables) for v in value]
    return value
