"""`input_files:` resolved to files in the repository, and PROMPT.md read as a test's input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentv_ci.loading.context import LoadContext, Node, type_name
from agentv_ci.loading.documents import read_text
from agentv_ci.loading.paths import resolve_reference


def resolve_input_files(raw: Any, node: Node, ctx: LoadContext) -> list[tuple[str, Path]]:
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        ctx.error("E101", f"input_files must be a list of paths, got {type_name(raw)}", node)
        return []
    out: list[tuple[str, Path]] = []
    for i, ref in enumerate(raw):
        if not isinstance(ref, str):
            ctx.error("E101", f"an input file must be a path string, got {type_name(ref)}", node.child(i))
            continue
        path = resolve_reference(ref, node.base_dir, ctx.repo_root)
        ctx.depend(path)
        if not ctx.confined(path, node.child(i), ref):
            continue
        if path.is_dir():
            ctx.error(
                "E101",
                f"input file {ref!r} is a directory",
                node.child(i),
                hint="list the files themselves (globs are not expanded in input_files)",
            )
        elif not path.is_file():
            ctx.error(
                "E301",
                f"input file not found: {ref}",
                node.child(i),
                hint=f"resolved relative to {node.base_dir} (leading `/` = repo root)"
                + ("; globs are not expanded in input_files" if any(c in ref for c in "*?[") else ""),
            )
        out.append((ref, path))
    return out


def read_prompt(path: Path, ctx: LoadContext) -> str:
    text = read_text(path, ctx)  # unreadable or not UTF-8 -> E001 at the prompt file
    return "" if text is None else text.replace("\r\n", "\n")
