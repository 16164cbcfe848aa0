"""`run --update-baseline`: write each eval file's committed sidecar (`<eval>.baseline.jsonl`).

Only a complete run is written: no dry run, no test errored or left unrun, not interrupted, and (with
`--max-regression`) no regression beyond it; otherwise `update_refusal` says why and nothing is
written. Failing tests are kept: a baseline records where the evals stand, red ones included, so a
later drop in them is caught too.

Rows are trimmed as AgentV's `trimBaselineResult` trims them (no answer text, token usage, cost,
duration, start/end times; no grader `input`/`raw_request`), and further for git: no `timestamp`,
`eval_path`, `line` (the sidecar sits next to its eval file; an edit above a test must not churn its
row) or rendered `input`, no grader durations or token usage. Floats are written to 9 decimals (so
summation-order noise never churns a file); rows are sorted by suite, test id and target, attempts by
number; dict keys are sorted; one JSON object per line with a trailing newline. Two identical runs
write identical bytes. The rows keep the definition fingerprint, so a test edited since the sidecar
was written is `changed`, not a regression.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.results.sidecars import sidecar_path
from agentv_ci.results.stored_results import aggregated_in_key_order
from agentv_ci.results.tally import tally_of
from agentv_ci.security.atomic_write import refuse_symlink, write_atomically
from agentv_ci.security.redaction import SECRETS

__all__ = ["encode_sidecar_row", "update_refusal", "write_sidecars"]

# AgentV's STRIPPED_TOP_LEVEL_FIELDS as they appear in our rows, plus what churns under git.
_DROPPED = frozenset(
    {"output", "token_usage", "cost_usd", "duration_ms", "start_time", "end_time",
     "timestamp", "eval_path", "line", "input", "attempt"}
)  # fmt: skip
_DROPPED_GRADER = frozenset({"token_usage", "duration_ms"})
_DROPPED_DETAILS = frozenset({"input", "raw_request"})  # AgentV's STRIPPED_EVALUATOR_FIELDS
_OPAQUE = frozenset({"metadata"})  # user data: kept exactly as written
_DIGITS = 9
_ENCODER = msgspec.json.Encoder()


def update_refusal(summary: RunSummary, *, regressed: bool) -> str | None:
    """Why the sidecars of this run must not be written, or None when they may be."""
    if summary.dry_run:
        return "a dry run's answers are placeholders"
    if summary.interrupted:
        return "the run was interrupted"
    totals = tally_of(summary.results).overall()
    not_run = max(summary.not_run, totals.not_run)
    problems = [
        f"{n} test(s) {what}" for n, what in ((totals.errors, "errored"), (not_run, "did not run")) if n
    ]
    if summary.budget_exhausted:
        problems.append("the budget ran out")
    if problems:
        return "the run is not complete: " + ", ".join(problems)
    if regressed:
        return "tests regressed beyond --max-regression against the current baseline"
    if totals.tests == 0:
        return "no test ran"
    return None


def _rounded(value: Any, key: str = "") -> Any:
    if key in _OPAQUE:
        return value
    if isinstance(value, float):
        return round(value, _DIGITS) + 0.0  # + 0.0: no "-0.0"
    if isinstance(value, dict):
        return {k: _rounded(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def _trim_grader(grader: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in grader.items() if k not in _DROPPED_GRADER}
    details = out.get("details")
    if isinstance(details, dict):
        out["details"] = {k: v for k, v in details.items() if k not in _DROPPED_DETAILS}
    if isinstance(out.get("scores"), list):
        out["scores"] = [_trim_grader(g) for g in out["scores"] if isinstance(g, dict)]
    return out


def _trim_row(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if k not in _DROPPED}
    if isinstance(out.get("scores"), list):
        out["scores"] = [_trim_grader(g) for g in out["scores"] if isinstance(g, dict)]
    if isinstance(out.get("trials"), list):
        out["trials"] = [_trim_row(t) for t in out["trials"] if isinstance(t, dict)]
    return out


def encode_sidecar_row(result: TestResult) -> bytes:
    """One sidecar line (with its newline) for an aggregated result."""
    if result.trials:
        ordered = sorted(result.trials, key=lambda t: (t.attempt is None, t.attempt or 0))
        result = msgspec.structs.replace(result, trials=ordered)
    row = msgspec.to_builtins(result, order="deterministic")
    if SECRETS:  # each string masked whole, so a piece of a secret at a cut is found (as index.jsonl)
        row = SECRETS.redact_tree(row)
    return _ENCODER.encode(_rounded(_trim_row(row))) + b"\n"


def _eval_file(result: TestResult, root: Path) -> Path | None:
    if not result.eval_path:
        return None
    path = Path(result.eval_path)
    return path if path.is_absolute() else root / path


def write_sidecars(results: Iterable[TestResult], root: Path) -> list[Path]:
    """Write the sidecar of every eval file `results` came from (`eval_path` relative to `root`),
    replacing any there; returns the files written, sorted. Each file is written whole, then renamed
    into place (an interrupted write leaves the old sidecar); a sidecar that is a symlink is refused
    (E007) before any is written."""
    lines: dict[Path, bytearray] = {}
    for result in aggregated_in_key_order(results):
        eval_file = _eval_file(result, root)
        if eval_file is None or result.execution_status == "not_run":
            continue
        lines.setdefault(sidecar_path(eval_file), bytearray()).extend(encode_sidecar_row(result))
    for path in lines:  # all refused before any is written
        refuse_symlink(path)
    for path, data in lines.items():
        write_atomically(path, bytes(data))
    return sorted(lines)
