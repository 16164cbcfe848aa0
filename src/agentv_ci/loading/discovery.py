"""Finding eval files under the paths given on the command line."""

from __future__ import annotations

import glob as globlib
import os
from collections.abc import Sequence
from pathlib import Path

from agentv_ci.errors import LoadError, UsageError
from agentv_ci.loading.paths import safe_resolve

SKIPPED_DIRS = frozenset({".git", "node_modules", ".venv", "venv", ".agentv", "__pycache__", ".tox"})


def is_eval_file_name(name: str) -> bool:
    """`*.eval.yaml`, `*.eval.yml`, `eval.yaml`, `eval.yml`, `EVAL.yaml` (any case)."""
    lower = name.lower()
    return lower.endswith((".eval.yaml", ".eval.yml")) or lower in ("eval.yaml", "eval.yml")


def jsonl_sidecar(path: Path) -> Path | None:
    """The YAML sidecar of a JSONL dataset (`<base>.yaml`, `<base>.yml`, `<base>.eval.yaml`), if any."""
    base = path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.stem
    for suffix in (".eval.yaml", ".eval.yml", ".yaml", ".yml"):
        candidate = path.with_name(base + suffix)
        if candidate.is_file():
            return candidate
    return None


def _walk(directory: Path) -> list[Path]:
    found: list[Path] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        root_path = Path(root)
        for name in files:
            path = root_path / name
            if is_eval_file_name(name) or (name.endswith(".jsonl") and jsonl_sidecar(path) is not None):
                found.append(path)
    return found


def case_references(eval_file: Path) -> set[Path]:
    """JSONL files an eval file pulls in as raw cases (`tests: x.jsonl`, list strings, `type: tests`)."""
    # lazy: `loading.yaml_source` loaded only when `case_references` runs
    from agentv_ci.loading.yaml_source import parse_yaml

    try:
        data = parse_yaml(eval_file.read_text(encoding="utf-8"), str(eval_file)).data
    except (OSError, UnicodeDecodeError, LoadError):
        return set()
    if not isinstance(data, dict):
        return set()
    raw = next((data[k] for k in ("tests", "evalcases", "eval_cases", "cases") if k in data), None)
    refs: list[str] = []
    if isinstance(raw, str):
        refs.append(raw)
    elif isinstance(raw, list):
        for item in raw:
            if isinstance(item, str):
                refs.append(item)
            elif (
                isinstance(item, dict)
                and item.get("type", "tests") == "tests"
                and isinstance(item.get("include"), str)
            ):
                refs.append(item["include"])
    found: set[Path] = set()
    for ref in refs:
        ref = ref[len("file://") :] if ref.startswith("file://") else ref
        if ref.endswith(".jsonl") and not any(ch in ref for ch in "*?["):
            found.add(safe_resolve(eval_file.parent / ref))
    return found


def _referenced_by_others(files: list[Path]) -> set[Path]:
    """JSONL datasets that another discovered eval file already runs: through its sidecar being an eval
    file, or because an eval file's `tests` points at it."""
    present = set(files)
    jsonl = [p for p in files if p.suffix == ".jsonl"]
    if not jsonl:
        return set()
    referenced: set[Path] = set()
    for path in jsonl:
        sidecar = jsonl_sidecar(path)
        if sidecar is not None and safe_resolve(sidecar) in present:
            referenced.add(path)
    for path in files:
        if path.suffix != ".jsonl":
            referenced |= case_references(path) & set(jsonl)
    return referenced


def find_eval_files(paths: Sequence[Path]) -> list[Path]:
    """Eval files to load: a file is used as-is; a directory expands recursively to eval-file names
    and JSONL datasets with a sidecar. Sorted, deduplicated, absolute.

    A JSONL dataset whose sidecar is an eval file also found here is not listed separately (the
    sidecar's `tests:` normally points at it), so it is never run twice.
    """
    explicit: list[Path] = []
    discovered: list[Path] = []
    for raw in _expand_globs(paths):
        path = Path(raw)
        if path.is_dir():
            discovered.extend(safe_resolve(p) if p.exists() else p.absolute() for p in _walk(path))
        else:
            explicit.append(safe_resolve(path) if path.exists() else path.absolute())
    skip = _referenced_by_others(discovered)
    result = {p for p in discovered if p not in skip}
    result.update(explicit)
    return sorted(result)


def _expand_globs(paths: Sequence[Path]) -> list[Path]:
    """A quoted glob the shell did not expand (`'evals/**/*.eval.yaml'`, common in CI configs) is
    expanded here, as AgentV does; a pattern matching nothing stays as written (reported missing)."""
    out: list[Path] = []
    for raw in paths:
        text = str(raw)
        if not Path(text).exists() and any(ch in text for ch in "*?["):
            matches = sorted(globlib.glob(text, recursive=True))
            if matches:
                out.extend(Path(m) for m in matches)
                continue
        out.append(Path(raw))
    return out


def check_paths_exist(paths: Sequence[Path]) -> None:
    """`UsageError` for the first command-line path that does not exist (a quoted glob that matches
    files counts as existing). `validate` and `run` both call it, so they word a typo the same way."""

    for raw in paths:
        text = str(raw)
        pattern = any(ch in text for ch in "*?[")
        if Path(text).exists() or (pattern and globlib.glob(text, recursive=True)):
            continue
        raise UsageError(
            f"no files match {text}" if pattern else f"path {text} does not exist",
            hint="pass eval files (*.eval.yaml, EVAL.yaml, a JSONL dataset with its sidecar) "
            "or directories holding them",
        )
