"""The committed-sidecar steps of `agentv-ci run`: the flags `--update-baseline` refuses, whether
`--max-regression` has sidecars to gate against, and writing the sidecars after the gates."""

from __future__ import annotations

from pathlib import Path

import typer

from agentv_ci.errors import UsageError
from agentv_ci.gating import GateDecision, regression_reasons
from agentv_ci.model.result import RunSummary
from agentv_ci.text_safety import printable

__all__ = ["check_update_flags", "sidecars_exist", "update_sidecars"]


def check_update_flags(
    dry_run: bool, shard: str | None, test_id: list[str] | None, tag: list[str] | None
) -> None:
    """`--update-baseline` writes whole sidecars: a dry run or a part of an eval file cannot."""

    if dry_run:
        raise UsageError(
            "--update-baseline cannot be used with --dry-run: a dry run's answers are placeholders",
            hint="run without --dry-run to write the sidecars",
        )
    partial = [flag for flag, value in (("--shard", shard), ("--test-id", test_id), ("--tag", tag)) if value]
    if partial:
        raise UsageError(
            f"--update-baseline cannot be used with {', '.join(partial)}: a sidecar holds every test "
            "of its eval file",
            hint="run the whole eval file (select files with PATH or --changed instead)",
        )


def sidecars_exist(paths: list[Path]) -> bool:
    """Whether any eval file under `paths` has a committed sidecar (so --max-regression has a baseline)."""
    from agentv_ci.loading.discovery import find_eval_files
    from agentv_ci.results.sidecars import existing_sidecars

    return bool(existing_sidecars(find_eval_files(paths)))


def update_sidecars(summary: RunSummary, decision: GateDecision, max_regression: float | None) -> bool:
    """Write the sidecars of a complete run (prints the files), or say why not; False when refused."""
    from agentv_ci.results.sidecar_writer import update_refusal, write_sidecars

    regressed = bool(
        max_regression is not None
        and decision.comparison is not None
        and regression_reasons(decision.comparison, max_regression)[0]
    )
    refusal = update_refusal(summary, regressed=regressed)
    if refusal is not None:
        typer.echo(f"error: --update-baseline: no sidecar written: {refusal}", err=True)
        return False
    written = write_sidecars(summary.results, Path.cwd())
    typer.echo(f"wrote {len(written)} baseline sidecar(s):")
    for path in written:
        typer.echo(f"  {printable(_shown(path))}")
    return True


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)
