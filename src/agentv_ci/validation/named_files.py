"""Files named on `validate`'s command line that are not eval files.

A targets file (`targets.yaml`, `.agentv/targets.yaml`) is checked as the eval files that read it use
it: those eval files (found under the directory it serves) are checked with it, so a renamed or broken
target shows at the eval file that names it. A targets file no eval file reads is checked whole.

With `--skip-non-eval-files` (the pre-commit hook, which passes every staged file its pattern
matches), a named file is kept only when a directory scan would pick it up: eval-file names, JSONL
datasets with a YAML sidecar (the sidecar when it is an eval file), the eval files in its directory
that pull a JSONL file in as cases, and a dataset's YAML sidecar stands for its dataset. The rest (a
recording, a results file, a `.baseline.jsonl` sidecar) is no eval file and is skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentv_ci.loading.discovery import case_references, find_eval_files, is_eval_file_name, jsonl_sidecar
from agentv_ci.loading.paths import safe_resolve

__all__ = ["TARGETS_FILE_NAMES", "eval_files_reading", "split_named_paths"]

TARGETS_FILE_NAMES = frozenset({"targets.yaml", "targets.yml"})


def is_targets_file(path: Path) -> bool:
    """A file named `targets.yaml` / `targets.yml` (the names `run` looks for)."""
    return path.name.lower() in TARGETS_FILE_NAMES and path.is_file()


def split_named_paths(paths: Sequence[Path], *, skip_non_eval: bool) -> tuple[list[Path], list[Path]]:
    """(the paths to scan for eval files, the targets files named)."""
    evals: list[Path] = []
    targets: list[Path] = []
    for path in paths:
        if is_targets_file(path):
            targets.append(path)
        elif skip_non_eval and path.is_file() and not is_eval_file_name(path.name):
            evals.extend(_eval_files_for(path))
        else:
            evals.append(path)
    return evals, targets


def _eval_files_for(path: Path) -> list[Path]:
    if path.name.endswith(".jsonl"):
        sidecar = jsonl_sidecar(path)
        if sidecar is not None:
            return [sidecar] if is_eval_file_name(sidecar.name) else [path]
        resolved = safe_resolve(path)
        siblings = sorted(p for p in path.parent.iterdir() if p.is_file() and is_eval_file_name(p.name))
        return [p for p in siblings if resolved in case_references(p)]
    if path.suffix.lower() in (".yaml", ".yml"):
        dataset = path.with_name(path.name.rsplit(".", 1)[0] + ".jsonl")
        if dataset.is_file() and jsonl_sidecar(dataset) == path:
            return [dataset]
    return []


def eval_files_reading(targets_file: Path) -> list[Path]:
    """The eval files under the directory `targets_file` serves (the parent of `.agentv/`, or its own
    directory) that read it, as `run` finds a targets file for each."""
    # lazy: `targets.config` loaded only when `eval_files_reading` runs
    from agentv_ci.targets.config import find_targets_file

    directory = targets_file.parent
    scope = directory.parent if directory.name == ".agentv" else directory
    wanted = safe_resolve(targets_file)
    readers: list[Path] = []
    for eval_file in find_eval_files([scope]):
        found = find_targets_file(eval_file)
        if found is not None and safe_resolve(found) == wanted:
            readers.append(eval_file)
    return readers
