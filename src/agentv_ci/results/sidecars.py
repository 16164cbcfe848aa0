"""Committed sidecar baselines: `<eval>.baseline.jsonl` next to each eval file (AgentV's convention).

AgentV names the sidecar of `dataset.eval.yaml` `dataset.eval.baseline.jsonl` (its
`scripts/check-eval-baselines.ts` replaces the `.yaml`/`.yml` suffix), so `EVAL.yaml` has
`EVAL.baseline.jsonl`. A JSONL dataset run as an eval file (`cases.jsonl`) has `cases.baseline.jsonl`.

When no other baseline is given, `run`, `report` and the Action compare each eval file's results
with its own sidecar: the rows of every sidecar found are read (ours and AgentV's, through the
tolerant results reader) and make one baseline, named as `committed sidecar FILE, ...`. A sidecar's
rows all belong to its eval file, so when both the sidecar and the run name a single suite for that
file, the sidecar's suite name is taken as the run's (AgentV wrote `dataset.eval` for older files
that agentv-ci and AgentV now call `dataset`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
from msgspec.structs import replace as with_fields

from agentv_ci.errors import LoadError
from agentv_ci.model.baseline import BaselineSource
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.results.results_file import (
    aggregate_attempts,
    decode_row,
    read_results,
    summary_from_results,
)
from agentv_ci.results.stored_results import StoredResults

__all__ = [
    "SIDECAR_SUFFIX",
    "SidecarBaseline",
    "eval_files_of",
    "existing_sidecars",
    "load_sidecar_baseline",
    "sidecar_path",
]

SIDECAR_SUFFIX = ".baseline.jsonl"
_EVAL_SUFFIXES = (".yaml", ".yml", ".jsonl")


def sidecar_path(eval_file: Path) -> Path:
    """The sidecar of `eval_file`: its name with `.yaml`/`.yml`/`.jsonl` replaced by `.baseline.jsonl`."""
    name = eval_file.name
    lower = name.lower()
    for suffix in _EVAL_SUFFIXES:
        if lower.endswith(suffix):
            return eval_file.with_name(name[: -len(suffix)] + SIDECAR_SUFFIX)
    return eval_file.with_name(name + SIDECAR_SUFFIX)


def existing_sidecars(eval_files: Iterable[Path]) -> list[Path]:
    """The sidecars of `eval_files` that exist, in the order given."""
    return [s for s in (sidecar_path(f) for f in eval_files) if s.is_file()]


class _Where(msgspec.Struct):
    suite: str = ""
    eval_path: str | None = None


_WHERE = msgspec.json.Decoder(_Where)


def _origins(results: Iterable[TestResult]) -> Iterator[tuple[str, str | None]]:
    """(suite, eval path) of each result (each pair at least once); a run's stored rows are read for
    these two fields only, unless their writer kept them."""
    if not isinstance(results, StoredResults):
        yield from ((r.suite, r.eval_path) for r in results)
        return
    seen = results.origins()
    if seen is not None:  # as the run's writer saw them: no row read
        yield from seen
        return
    with results.path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                where = _WHERE.decode(line)
            except (msgspec.ValidationError, msgspec.DecodeError):
                where = None
            if where is None or not where.suite:  # not our row's shape: the full reader
                row = decode_row(line, str(results.path), number)
                yield row.suite, row.eval_path
            else:
                yield where.suite, where.eval_path


def eval_files_of(results: Iterable[TestResult], root: Path) -> dict[Path, set[str]]:
    """Each eval file the results came from (`eval_path`, relative to `root` unless absolute) and the
    suites its rows name."""
    files: dict[str, set[str]] = {}
    for suite, eval_path in _origins(results):
        if eval_path:
            files.setdefault(eval_path, set()).add(suite)
    return {(Path(p) if Path(p).is_absolute() else root / p): suites for p, suites in files.items()}


@dataclass(frozen=True)
class SidecarBaseline:
    """The rows of the sidecars found (one baseline) and their provenance (`kind: sidecar`)."""

    summary: RunSummary
    source: BaselineSource
    paths: tuple[Path, ...]


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _one_suite(rows: Sequence[TestResult], suites: set[str]) -> list[TestResult]:
    """`rows` with their suite renamed to the run's, when each side names exactly one suite."""
    theirs = {r.suite for r in rows}
    if len(theirs) != 1 or len(suites) != 1 or theirs == suites:
        return list(rows)
    [ours] = suites
    return [with_fields(r, suite=ours) for r in rows]


def load_sidecar_baseline(results: Iterable[TestResult], root: Path) -> SidecarBaseline | None:
    """The baseline made of the sidecars of the eval files `results` came from, or None when none of
    them has one. A sidecar that is not a results file raises `LoadError` at its file:line."""
    rows: list[TestResult] = []
    found: list[Path] = []
    for eval_file, suites in sorted(eval_files_of(results, root).items()):
        sidecar = sidecar_path(eval_file)
        if not sidecar.is_file():
            continue
        found.append(sidecar)
        try:
            read = read_results(sidecar)
        except LoadError as exc:
            raise LoadError(
                f"baseline sidecar: {exc.message}",
                location=exc.location,
                hint="fix the line, or delete the sidecar and write it again with `run --update-baseline`",
            ) from None
        rows.extend(_one_suite(aggregate_attempts(read), suites))
    if not found:
        return None
    source = BaselineSource("sidecar", files=tuple(_shown(p, root) for p in found))
    return SidecarBaseline(summary_from_results(rows), source, tuple(found))
