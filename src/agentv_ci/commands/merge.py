"""`agentv-ci merge`: join shard result dirs into one run dir."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def merge_command(
    inputs: Annotated[
        list[Path], typer.Argument(help="Shard run dirs or index.jsonl files.", show_default=False)
    ],
    output: Annotated[Path, typer.Option("-o", "--output", help="Merged run dir.")],
) -> None:
    """Merge shard results: one row per suite + test + target (a later shard's row wins)."""
    from agentv_ci.running.merging import merge_runs

    merged = merge_runs(inputs, output)
    typer.echo(f"merged {merged.rows} result(s) from {len(inputs)} input(s) into {output / 'index.jsonl'}")
    if merged.duplicates:
        typer.echo(f"note: {merged.duplicates} duplicate row(s) replaced by a later input", err=True)
