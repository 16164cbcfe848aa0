"""`--resume`: what a resumed run keeps from the run directory it continues, and the check that a
run's rows have unique keys."""

from __future__ import annotations

from pathlib import Path

import msgspec

from agentv_ci.errors import LoadError
from agentv_ci.model.result import TestResult
from agentv_ci.security.atomic_write import write_atomically


def previous_results(output_dir: Path) -> list[TestResult]:
    # lazy: the results store (msgspec) loaded only when `previous_results` runs
    from agentv_ci.results.results_file import read_results

    index = output_dir / "index.jsonl"
    if not index.is_file():
        return []
    return [r for r in read_results(index) if r.execution_status != "not_run"]


def finished_keys(output_dir: Path | None) -> set[tuple[str, str, str]]:
    """`--resume`: the (suite, test id, target) of the rows a resumed run keeps, read before the
    suites are loaded (so only the remaining tests are counted and prepared), without changing the
    file and skipping what cannot be read (`previous_results` reports it afterwards)."""

    # lazy: the results store (msgspec) loaded only when `finished_keys` runs
    from agentv_ci.results.results_file import decode_row

    index = output_dir / "index.jsonl" if output_dir is not None else None
    if index is None or not index.is_file():
        return set()
    keys: set[tuple[str, str, str]] = set()
    with index.open("rb") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                row = decode_row(line, str(index))
            except (LoadError, msgspec.MsgspecError):
                continue
            if row.execution_status != "not_run":
                keys.add((row.suite, row.test_id, row.target))
    return keys


def prepare_index_for_resume(index: Path) -> None:
    """Before resuming, drop `not_run` rows (those tests run now and get a real row) and a row torn by
    a kill mid-write (not JSON: that test runs again), so the file reads cleanly and appends cleanly."""

    if not index.is_file():
        return
    kept = []
    for line in index.read_bytes().splitlines():
        if not line.strip():
            continue
        try:
            row = msgspec.json.decode(line)
        except (msgspec.DecodeError, RecursionError):  # torn, or too deep to be a row: runs again
            continue
        if isinstance(row, dict) and row.get("execution_status") == "not_run":
            continue
        kept.append(line)
    # atomic: a kill now leaves the old file or the new one, never half of it
    write_atomically(index, b"".join(line + b"\n" for line in kept))


class KeyCheck:
    """Whether a run's rows have unique (suite, test id, target) keys, in constant memory.

    Within one eval file they always have (a duplicate test id is E105; targets are de-duplicated;
    attempts are merged by the runner), so keys can repeat only when two eval files share a suite
    name: that is what is checked (suite name -> the eval path of its first row). When they may
    repeat, reports merge the rows of one key as attempts (by sorting, still in bounded memory)."""

    def __init__(self) -> None:
        self._paths: dict[str, str | None] = {}
        self.unique = True

    def add(self, result: TestResult) -> None:
        first = self._paths.setdefault(result.suite, result.eval_path)
        if first != result.eval_path:
            self.unique = False


def previous_spend(output_dir: Path, rows: int) -> tuple[float, int]:
    """`--resume`: (what the run being continued already paid, how many of its answers came with no
    known cost), from its summary.json. A run killed before writing one paid an unknown amount: its
    `rows` finished answers then count as unpriced, so a `max_cost_usd` gate cannot pass on a floor."""

    if rows == 0:
        return 0.0, 0
    try:
        facts = msgspec.json.decode((output_dir / "summary.json").read_bytes())
    except (OSError, msgspec.DecodeError):
        return 0.0, rows
    spent = facts.get("spent_usd") if isinstance(facts, dict) else None
    if not isinstance(spent, int | float) or isinstance(spent, bool) or not spent >= 0:
        return 0.0, rows
    unpriced = facts.get("unpriced", 0)
    return float(spent), unpriced if isinstance(unpriced, int) and not isinstance(unpriced, bool) else rows
