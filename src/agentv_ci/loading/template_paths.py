"""Where an assertion `include:` is looked for, as AgentV v4.42.4 looks (`buildSearchRoots`,
`resolveAssertionTemplateReference`, `loadAssertionTemplateEntries` in its yaml-parser):

- the search roots are the eval file's directory and each parent up to the repository root, the
  repository root, then the working directory; an include written in a template is looked for in the
  template's directory first, then in those roots. Rows of a JSONL or YAML case file referenced from
  an eval file use the eval file's roots (not the case file's directory), as AgentV does;
- a name that does not start with `.` and has no `/` or `\\` is a template: `.agentv/templates/<name>.yaml`
  in every root, then `.agentv/templates/<name>.yml` in every root;
- anything else is a path: as written when absolute, then relative to every root (leading separators
  dropped).

The first candidate that is a file is read; the confinement check (E305) applies to it when it is read.
One addition: a bare name ending in `.yaml` / `.yml` that is no template (AgentV would look for
`.agentv/templates/<name>.yaml.yaml` only) is then looked for as a path in the same roots.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentv_ci.loading.paths import search_roots


def include_roots(eval_dir: Path, repo_root: Path, template: Path | None) -> list[Path]:
    """The directories an include is looked for in, in order."""
    roots = search_roots(eval_dir, repo_root)
    if template is None:
        return roots
    first = template.parent.resolve()
    return [first, *(r for r in roots if r != first)]


def is_template_name(name: str) -> bool:
    return not name.startswith(".") and "/" not in name and "\\" not in name


def include_candidates(name: str, roots: list[Path]) -> list[Path]:
    """Every path `include: name` may resolve to, in the order they are tried (no duplicates)."""
    candidates: list[Path] = []
    if is_template_name(name):
        for suffix in (".yaml", ".yml"):
            candidates += [root / ".agentv" / "templates" / f"{name}{suffix}" for root in roots]
        if name.endswith((".yaml", ".yml")):
            candidates += [root / name for root in roots]
    else:
        if Path(name).is_absolute():
            candidates.append(Path(name))
        relative = name.lstrip("/\\") or name
        candidates += [root / relative for root in roots]
    seen: set[Path] = set()
    unique: list[Path] = []
    for candidate in candidates:
        absolute = Path(_normalise(candidate))
        if absolute not in seen:
            seen.add(absolute)
            unique.append(absolute)
    return unique


def _normalise(path: Path) -> str:
    return os.path.normpath(os.path.abspath(path))
