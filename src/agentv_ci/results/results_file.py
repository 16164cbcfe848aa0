"""The results file (`index.jsonl`): tolerant reading, `summary.json` (the crash-safe writer is
`reporting.results_writer`, exported here too).

Reading accepts our rows and rows written by AgentV (snake_case, older camelCase aliases such as
`testId`/`costUsd`, rows without `verdict`, flat rows with top-level `assertions`). A row without a
verdict gets one from `execution_status`, else from `score >= threshold` (threshold default 0.8).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci.errors import LoadError
from agentv_ci.json_limits import MAX_JSON_DEPTH, too_deep
from agentv_ci.model.provenance import Provenance
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.model.score_range import (
    ROW_NUMBER_HINT,
    RowNumberError,
    as_float,
    checked_row,
    non_finite_literal,
)
from agentv_ci.model.source import SourceLocation
from agentv_ci.results.attempts import aggregate_attempts, merge_attempts
from agentv_ci.results.gc_pause import paused_gc
from agentv_ci.results.results_writer import ResultsWriter
from agentv_ci.security.redaction import redact_bytes

__all__ = [
    "ResultsWriter",
    "aggregate_attempts",
    "decode_own_row",
    "decode_row",
    "load_run",
    "merge_attempts",
    "normalise_row",
    "read_results",
    "summary_from_results",
    "write_summary_json",
]

INDEX_NAME = "index.jsonl"
SUMMARY_NAME = "summary.json"
DEFAULT_THRESHOLD = 0.8

_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder()
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")
# Keys whose values are user data: never rename keys below them.
_OPAQUE = frozenset({"metadata", "details", "raw", "raw_request", "input", "output"})


def _snake(key: str) -> str:
    return _CAMEL.sub(r"_\1", key).lower()


def _snake_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            _snake(str(k)): (v if _snake(str(k)) in _OPAQUE else _snake_keys(v)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_snake_keys(v) for v in value]
    return value


def _normalise_usage(usage: Any) -> Any:
    if not isinstance(usage, dict):
        return None
    out = dict(usage)
    for long, short in (("input_tokens", "input"), ("output_tokens", "output"), ("cached_tokens", "cached")):
        if long in out and short not in out:
            out[short] = out.pop(long)
    for key in ("input", "output", "cached", "reasoning"):
        if key in out and isinstance(out[key], float):
            out[key] = int(out[key])
    return {k: v for k, v in out.items() if k in ("input", "output", "cached", "reasoning")}


def _normalise_grader(item: dict[str, Any]) -> dict[str, Any]:
    item = dict(item)
    item.setdefault("name", item.get("type") or "grader")
    item.setdefault("type", item.get("name") or "unknown")
    score = item.get("score")
    item["score"] = (
        as_float(score, f"grader {item['name']!r} score") if isinstance(score, int | float) else 0.0
    )
    if item.get("verdict") not in ("pass", "fail", "skip"):
        item["verdict"] = "pass" if item["score"] >= DEFAULT_THRESHOLD else "fail"
    if "token_usage" in item:
        item["token_usage"] = _normalise_usage(item["token_usage"])
    if isinstance(item.get("required"), int | float) and not isinstance(item.get("required"), bool):
        item["required"] = True  # deprecated numeric `required`
    item["scores"] = [_normalise_grader(s) for s in item.get("scores") or [] if isinstance(s, dict)]
    return item


def _is_provenance(value: Any) -> bool:
    try:
        msgspec.convert(value, Provenance)
    except msgspec.ValidationError:
        return False
    return True


def normalise_row(row: dict[str, Any], *, parent: dict[str, Any] | None = None) -> dict[str, Any]:
    """Map an AgentV (or older) row onto our `TestResult` field names and fill derived fields."""
    row = _snake_keys(row)
    if parent is not None:
        for key in ("test_id", "suite", "target", "threshold", "eval_path", "line"):
            if key not in row and key in parent:
                row[key] = parent[key]
    row.setdefault("test_id", row.pop("id", None) or row.get("eval_id") or "unknown")
    if not row.get("suite"):
        eval_path = row.get("eval_path")
        row["suite"] = Path(str(eval_path)).name.split(".")[0] if eval_path else "default"
    row.setdefault("target", "default")
    threshold = row.get("threshold")
    threshold = as_float(threshold, "threshold") if isinstance(threshold, int | float) else DEFAULT_THRESHOLD
    row["threshold"] = threshold
    score = row.get("score")
    if not isinstance(score, int | float) or isinstance(score, bool):
        raise ValueError(f"`score` must be a number, got {score!r}")
    row["score"] = as_float(score, "score")
    if "token_usage" in row:
        row["token_usage"] = _normalise_usage(row["token_usage"])
    for key in ("input", "output"):  # AgentV may write messages here: kept as their JSON text
        if row.get(key) is not None and not isinstance(row[key], str):
            row[key] = _ENCODER.encode(row[key]).decode()
    scores = [_normalise_grader(s) for s in row.get("scores") or [] if isinstance(s, dict)]
    flat = row.pop("assertions", None)
    if not scores and isinstance(flat, list) and flat:
        passed = all(bool(a.get("passed")) for a in flat if isinstance(a, dict))
        scores = [
            {
                "name": "assertions",
                "type": "assertions",
                "score": row["score"],
                "verdict": "pass" if passed else "fail",
                "assertions": [a for a in flat if isinstance(a, dict) and "text" in a],
            }
        ]
    row["scores"] = scores
    status = row.get("execution_status")
    if status not in ("ok", "quality_failure", "execution_error", "not_run"):
        if row.get("error"):
            status = "execution_error"
        else:
            status = "ok" if row["score"] >= threshold else "quality_failure"
        row["execution_status"] = status
    if row.get("verdict") not in ("pass", "fail", "skip"):
        row["verdict"] = {"ok": "pass", "not_run": "skip"}.get(status, "fail")
    if not isinstance(row.get("fingerprint", ""), str):  # not ours (another tool's field of that name)
        del row["fingerprint"]
    if "provenance" in row and not _is_provenance(row["provenance"]):
        del row["provenance"]  # not ours either: the row compares as one that records none
    notes = row.get("notes", [])
    if not (isinstance(notes, list) and all(isinstance(n, str) for n in notes)):
        del row["notes"]  # not ours either
    trials = row.get("trials")
    if isinstance(trials, list):
        row["trials"] = [normalise_row(t, parent=row) for t in trials if isinstance(t, dict)]
    return row


_TYPED_DECODER = msgspec.json.Decoder(TestResult)
_IMPLIED_VERDICT: dict[str, Any] = {"ok": "pass", "not_run": "skip"}


def _typed_row(raw: bytes) -> TestResult | None:
    """Fast path for complete snake_case rows (ours, and most of AgentV's); None -> normalise.

    Our writer omits defaults, so an absent `verdict` decodes as "fail": rows whose status
    implies another verdict (AgentV rows carry none) get it from `execution_status`.
    """
    try:
        row = _TYPED_DECODER.decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    if not row.scores and b'"assertions"' in raw:
        return None  # a flat legacy row: its top-level assertions need normalising
    return _imply_verdicts(row)


def _imply_verdicts(row: TestResult) -> TestResult:
    """`row` itself when nothing is implied (the common case: no copy), else a copy that says it."""
    if not row.trials:  # the common case, without the generator below (read once per row of a report)
        implied = _IMPLIED_VERDICT.get(row.execution_status)
        if implied is None or row.verdict != "fail":
            return row
        return msgspec.structs.replace(row, verdict=implied)
    trials = [_imply_verdicts(trial) for trial in row.trials] if row.trials else row.trials
    implied = _IMPLIED_VERDICT.get(row.execution_status)
    verdict = implied if implied is not None and row.verdict == "fail" else row.verdict
    if verdict == row.verdict and all(new is old for new, old in zip(trials, row.trials, strict=True)):
        return row
    return msgspec.structs.replace(row, verdict=verdict, trials=trials)


def _decode_row(raw: bytes, where: SourceLocation) -> TestResult:
    deep = too_deep(raw)
    if deep is not None:  # refused before decoding: a deep value would exhaust the stack
        raise LoadError(
            f"a results row nested more than {MAX_JSON_DEPTH} levels deep",
            location=SourceLocation(where.file, where.line, deep + 1 if where.line else 0),
            hint="this is not a results row agentv-ci or AgentV writes",
        )
    fast = _typed_row(raw)
    if fast is not None:
        return checked_row(fast, where.file, where.line)
    try:
        data = _DECODER.decode(raw)
    except msgspec.DecodeError as exc:
        if (literal := non_finite_literal(raw)) is not None:
            raise LoadError(literal, location=where, hint=ROW_NUMBER_HINT) from None
        raise LoadError(
            f"not valid JSON: {exc}", location=where, hint="each line must be one JSON object"
        ) from None
    if not isinstance(data, dict):
        raise LoadError("a results row must be a JSON object", location=where)
    try:
        row = msgspec.convert(normalise_row(data), TestResult, strict=False)
    except RowNumberError as exc:
        raise LoadError(str(exc), location=where, hint=ROW_NUMBER_HINT) from None
    except (msgspec.ValidationError, ValueError, OverflowError, TypeError) as exc:
        raise LoadError(f"not a results row: {exc}", location=where) from None
    return checked_row(row, where.file, where.line)


def decode_row(raw: bytes, file: str, line: int = 0) -> TestResult:
    """One row of a results file (ours, AgentV's or older); a bad row raises `LoadError` at file:line."""
    return _decode_row(raw, SourceLocation(file, line, 1 if line else 0))


def decode_own_row(raw: bytes, file: str, line: int = 0) -> TestResult:
    """A row of this run's own `index.jsonl`: written by its `ResultsWriter` from rows the graders
    checked, or read back strictly by `decode_row` before a resume appended to it. The checks that
    guard files from elsewhere (nesting depth, numbers in range) are skipped; a row not in our
    shape still takes the full reader."""
    fast = _typed_row(raw)
    return fast if fast is not None else decode_row(raw, file, line)


def _index_path(path: Path) -> Path:
    if path.is_dir():
        candidate = path / INDEX_NAME
        if not candidate.is_file():
            raise LoadError(f"no {INDEX_NAME} in directory", location=SourceLocation(str(path)))
        return candidate
    if not path.is_file():
        raise LoadError("results file not found", location=SourceLocation(str(path)))
    return path


def read_results(path: Path, *, torn_tail: bool = False) -> list[TestResult]:
    """Rows of a results file (or of `<run dir>/index.jsonl`); a bad line raises `LoadError` at file:line.
    `torn_tail`: a last line without its newline that is not a row (cut by a kill mid-write) is left
    out instead (its test then counts as not run against the plan)."""
    index = _index_path(path)
    results: list[TestResult] = []
    with paused_gc(), index.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                try:
                    results.append(_decode_row(raw, SourceLocation(str(index), number, 1)))
                except LoadError:
                    if torn_tail and not raw.endswith(b"\n"):
                        continue
                    raise
    return results


def summary_from_results(results: Iterable[TestResult], **facts: Any) -> RunSummary:
    """A `RunSummary` from results plus run facts (`started_at`, `selection`, `budget_exhausted`, ...).
    `not_run` defaults to the number of results whose status is `not_run`; any dry-run row makes the
    summary a dry run (an index.jsonl without its summary.json keeps the marking)."""
    rows = list(results)
    facts["dry_run"] = bool(facts.get("dry_run")) or any(r.dry_run for r in rows)
    facts.setdefault("not_run", sum(1 for r in rows if r.execution_status == "not_run"))
    return RunSummary(results=rows, **facts)


def write_summary_json(path: Path, summary: RunSummary) -> None:
    """Run facts and totals (not the rows: those live in index.jsonl) as `summary.json`."""
    # lazy: `results.tally` loaded only when `write_summary_json` runs
    from agentv_ci.results.tally import tally_of

    facts = msgspec.to_builtins(msgspec.structs.replace(summary, results=[]))
    facts.pop("results", None)
    tally = tally_of(summary.results)
    if summary.planned is not None:  # planned jobs, those with a finished row, those without
        facts["not_run"] = summary.not_run
        facts["finished"] = max(0, summary.planned - summary.not_run)
    document = {
        **facts,
        "totals": msgspec.to_builtins(tally.overall()),
        "suites": [msgspec.to_builtins(t) for t in tally.by_suite()],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(redact_bytes(msgspec.json.format(_ENCODER.encode(document), indent=2) + b"\n"))


def load_run(path: Path) -> RunSummary:
    """A `RunSummary` from a results file or run dir; run facts come from a sibling `summary.json`,
    and the rows are counted against a sibling `plan.jsonl` (reporting.plan_check)."""
    # lazy: `results.plan_check`, `results.plan_file` loaded only when `load_run` runs
    from agentv_ci.results.plan_check import apply_plan
    from agentv_ci.results.plan_file import PLAN_NAME

    index = _index_path(path)
    # a killed run (a plan, no summary.json) may have a last row cut mid-write
    killed = (index.parent / PLAN_NAME).is_file() and not (index.parent / SUMMARY_NAME).is_file()
    with paused_gc():
        results = aggregate_attempts(read_results(index, torn_tail=killed))
    summary_file = index.parent / SUMMARY_NAME
    facts = summary_facts(index.parent)
    base = msgspec.convert({"results": [], **facts}, RunSummary, strict=False)
    dry_run = base.dry_run or any(r.dry_run for r in results)  # rows keep the marking without summary.json
    summary = msgspec.structs.replace(base, results=results, dry_run=dry_run)
    return apply_plan(summary, index.parent, has_summary=summary_file.is_file())


def summary_facts(directory: Path) -> dict[str, Any]:
    """The run facts of `directory`'s summary.json (none without one); `LoadError` for a hostile one."""
    summary_file = directory / SUMMARY_NAME
    if not summary_file.is_file():
        return {}
    data = summary_file.read_bytes()
    if too_deep(data) is not None:
        raise LoadError(
            f"nested more than {MAX_JSON_DEPTH} levels deep",
            location=SourceLocation(str(summary_file)),
            hint="this is not a summary.json agentv-ci writes; delete it to read index.jsonl alone",
        )
    try:
        raw = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise LoadError(f"not valid JSON: {exc}", location=SourceLocation(str(summary_file))) from None
    if not isinstance(raw, dict):
        return {}
    known = set(RunSummary.__struct_fields__) - {"results"}
    return {k: v for k, v in raw.items() if k in known and _fits(k, v)}


def iter_results(index: Path, *, torn_tail: bool = False) -> Iterator[TestResult]:
    """`read_results` one row at a time (of an index file, not a directory)."""
    with index.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                try:
                    yield _decode_row(raw, SourceLocation(str(index), number, 1))
                except LoadError:
                    if torn_tail and not raw.endswith(b"\n"):
                        continue
                    raise


def index_path(path: Path) -> Path:
    """The `index.jsonl` of a run directory, or `path` itself; `LoadError` when there is none."""
    return _index_path(path)


def _fits(key: str, value: Any) -> bool:
    """Whether a run fact converts (AgentV's own summary.json shares some names, not all shapes)."""
    try:
        msgspec.convert({"results": [], key: value}, RunSummary, strict=False)
    except msgspec.ValidationError:
        return False
    return True
