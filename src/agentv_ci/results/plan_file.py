"""A run's plan (`plan.jsonl`): every job the run will run, recorded before anything is spent.

Layout, one JSON value a line:

- a header object: `{"agentv_ci_plan": 1, "version": ..., "shard": [i, n] or null, "dry_run": ...}`;
- one array per job: `[suite, test id, target, attempts, eval path or null, line or null]`;
- an end object: `{"end": true, "jobs": M, "shard_jobs": [...], "missing": K, "missing_shards": [...]}`.
  `shard_jobs`: when the run is one shard of n, how many jobs each shard of the same selection has
  (so `merge` knows what a shard that uploaded nothing would have run). `missing`: jobs planned by
  shards that are absent from a merged run (`missing_shards` names them), not listed above.
  `nothing_selected: true`: change-based selection chose no eval, so the run planned nothing; such a
  plan has no `shard_jobs` (it cannot vouch for the other shards: one without a record is missing).

The plan is written to a temporary file as the tests are read (nothing held in memory), flushed and
fsynced, then renamed into place: a `plan.jsonl` exists only complete, and survives SIGKILL.

Counting a run's rows against its plan (`count_against_plan`) sorts both sides' keys in bounded
memory (`key_sort`) and walks them together: a planned job with no row did not run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci import __version__
from agentv_ci.errors import LoadError
from agentv_ci.model.result import TestResult
from agentv_ci.model.source import SourceLocation
from agentv_ci.results.key_sort import external_sorted
from agentv_ci.security.atomic_write import PendingFile
from agentv_ci.security.redaction import redact_bytes

__all__ = [
    "PLAN_NAME",
    "JobFields",
    "Plan",
    "PlanCount",
    "PlanWriter",
    "PlannedJob",
    "count_against_plan",
    "not_run_row",
    "read_plan",
]

PLAN_NAME = "plan.jsonl"
PLAN_FORMAT = 1
Key = tuple[str, str, str]

INTERRUPTED = "not run: the run was interrupted before this test finished"
STOPPED = "not run: the run stopped before this test finished (no summary.json: killed or timed out?)"


class PlannedJob(msgspec.Struct, array_like=True):
    suite: str
    test_id: str
    target: str
    attempts: int = 1
    eval_path: str | None = None
    line: int | None = None

    @property
    def key(self) -> Key:
        return (self.suite, self.test_id, self.target)


# A `PlannedJob`'s fields, in order.
JobFields = tuple[str, str, str, int, str | None, int | None]


class PlanEnd(msgspec.Struct, omit_defaults=True):
    end: bool
    jobs: int
    shard_jobs: list[int] = []
    missing: int = 0
    missing_shards: list[str] = []
    nothing_selected: bool = False


_JOB = msgspec.json.Decoder(PlannedJob)
_END = msgspec.json.Decoder(PlanEnd)
_ENCODER = msgspec.json.Encoder()


@dataclass
class Plan:
    """A plan read from disk: its header facts and end counts; `jobs()` streams the listed jobs."""

    path: Path
    shard: tuple[int, int] | None
    dry_run: bool
    end: PlanEnd

    @property
    def listed(self) -> int:
        return self.end.jobs

    def jobs(self) -> Iterator[tuple[PlannedJob, bytes]]:
        """Each listed job, with its line as written."""
        with self.path.open("rb") as handle:
            next(handle, None)  # the header
            for number, line in enumerate(handle, start=2):
                if line.startswith(b"["):
                    try:
                        yield _JOB.decode(line), line.rstrip(b"\n")
                    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
                        where = SourceLocation(str(self.path), number, 1)
                        raise LoadError(f"not a planned job: {exc}", location=where) from None


class PlanWriter:
    """Streams a plan to a new temporary file in `<dir>`; `commit()` makes it `<dir>/plan.jsonl`.

    Nothing touches the disk before the first job (a run that stops on bad input leaves no file, and
    no directory it created). `abort()` removes what was written."""

    def __init__(self, directory: Path, *, shard: tuple[int, int] | None, dry_run: bool) -> None:
        # lazy: asyncio (through clock) loaded only when `PlanWriter.__init__` runs
        from agentv_ci.clock import now_seconds

        self.directory = directory
        self.shard = shard
        self.dry_run = dry_run
        self.path = directory / PLAN_NAME
        self._header = {
            "agentv_ci_plan": PLAN_FORMAT,
            "version": __version__,
            "created_at": now_seconds(),
            "shard": list(shard) if shard else None,
            "dry_run": dry_run,
        }
        self.jobs = 0
        self.shard_jobs: list[int] = [0] * shard[1] if shard else []
        self._pending: PendingFile | None = None  # created exclusively, never through a symlink
        self._buffer = bytearray()
        self._created: Path | None = None

    def _open(self) -> PendingFile:
        if self._pending is None:
            if not self.directory.exists():
                top = self.directory
                while not top.parent.exists():
                    top = top.parent
                self._created = top
                self.directory.mkdir(parents=True, exist_ok=True)
            self._pending = PendingFile(self.path)
            self._buffer.extend(_ENCODER.encode(self._header) + b"\n")
        return self._pending

    def add(self, job: PlannedJob) -> None:
        """A job of this run (of its shard)."""
        self.add_fields((job.suite, job.test_id, job.target, job.attempts, job.eval_path, job.line))

    def add_fields(self, fields: JobFields) -> None:
        """`add` of the `PlannedJob` of `fields`, without building it: the tuple is written as the
        array the `PlannedJob` is."""
        if self._pending is None:
            self._open()
        self.jobs += 1
        buffer = self._buffer
        _ENCODER.encode_into(fields, buffer, len(buffer))
        buffer.extend(b"\n")
        if len(buffer) > 1 << 20:
            self._open().handle.write(redact_bytes(bytes(buffer)))  # as index.jsonl: no secret on disk
            buffer.clear()

    def add_many(self, jobs: list[JobFields]) -> None:
        """`add_fields` of each of `jobs`, in order, in one call."""
        if self._pending is None:
            self._open()
        self.jobs += len(jobs)
        buffer = self._buffer
        buffer += _ENCODER.encode_lines(jobs)
        if len(buffer) > 1 << 20:
            self._open().handle.write(redact_bytes(bytes(buffer)))  # as index.jsonl: no secret on disk
            buffer.clear()

    def add_to_shard(self, shard: int) -> None:
        """A job of the same selection in shard `shard` (1-based; this run's own included)."""
        self.shard_jobs[shard - 1] += 1

    def keep_unlisted(self, previous: Plan) -> None:
        """Add the jobs of `previous` (the plan of the run a `--resume` continues) that this plan does
        not list: they are still the run's to do, whatever the resumed run selects."""
        pending = self._open()
        pending.handle.write(redact_bytes(bytes(self._buffer)))
        self._buffer.clear()
        pending.handle.flush()
        so_far = Plan(pending.path, self.shard, self.dry_run, PlanEnd(end=True, jobs=self.jobs))
        count_against_plan(previous, (job.key for job, _line in so_far.jobs()), self.add)

    def commit(
        self, *, missing: int = 0, missing_shards: Iterable[str] = (), nothing_selected: bool = False
    ) -> Plan:
        """Write the end, flush, fsync and rename into place (then fsync the directory). `missing`:
        jobs of absent shards, not listed (a merged run's plan); `nothing_selected`: no eval was
        selected (no job may have been added)."""
        pending = self._open()
        end = PlanEnd(
            end=True,
            jobs=self.jobs,
            shard_jobs=[] if nothing_selected else self.shard_jobs,
            missing=missing,
            missing_shards=list(missing_shards),
            nothing_selected=nothing_selected and self.jobs == 0,
        )
        self._buffer.extend(_ENCODER.encode(end) + b"\n")
        pending.handle.write(redact_bytes(bytes(self._buffer)))  # as index.jsonl: no secret on disk
        self._buffer.clear()
        pending.commit(durable=True)
        self._pending = None
        self._created = None
        _fsync_directory(self.directory)
        return Plan(self.path, self.shard, self.dry_run, end)

    def abort(self) -> None:
        if self._pending is not None:
            self._pending.discard()
            self._pending = None
        created, self._created = self._created, None
        if created is not None:  # directories this writer made, when nothing else was put in them
            for directory in [self.directory, *self.directory.parents]:
                try:
                    directory.rmdir()
                except OSError:
                    break
                if directory == created:
                    break


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_plan(directory: Path) -> Plan | None:
    """The plan in `directory`, or None when there is none (AgentV's results, older runs')."""
    path = directory / PLAN_NAME
    if not path.is_file():
        return None
    with path.open("rb") as handle:
        first = handle.readline()
        header = _object(first, path, 1)
        if header.get("agentv_ci_plan") != PLAN_FORMAT:
            raise LoadError(
                f"not an agentv-ci plan (format {header.get('agentv_ci_plan')!r})",
                location=SourceLocation(str(path), 1, 1),
            )
        size = path.stat().st_size
        handle.seek(max(0, size - 65536))
        tail = handle.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    try:
        end = _END.decode(tail)
    except (msgspec.ValidationError, msgspec.DecodeError):
        raise LoadError(
            "the plan has no end record (cut short?)",
            location=SourceLocation(str(path)),
            hint="a plan is renamed into place only complete: this file was edited or truncated",
        ) from None
    shard = header.get("shard")
    pair = None
    if isinstance(shard, list) and len(shard) == 2 and all(isinstance(x, int) for x in shard):
        pair = (int(shard[0]), int(shard[1]))
    return Plan(path, pair, bool(header.get("dry_run")), end)


def _object(line: bytes, path: Path, number: int) -> dict[str, Any]:
    try:
        value = msgspec.json.decode(line)
    except msgspec.DecodeError as exc:
        raise LoadError(f"not valid JSON: {exc}", location=SourceLocation(str(path), number, 1)) from None
    if not isinstance(value, dict):
        raise LoadError("a plan starts with a header object", location=SourceLocation(str(path), number, 1))
    return value


@dataclass
class PlanCount:
    """Rows counted against a plan: `planned` jobs (distinct keys, plus jobs of missing shards), of
    which `missing` have no row at all (those listed, then `unlisted`: the missing shards')."""

    planned: int = 0
    missing: int = 0
    unlisted: int = 0
    missing_shards: list[str] = field(default_factory=list)

    @property
    def not_run(self) -> int:
        return self.missing + self.unlisted


def count_against_plan(
    plan: Plan, row_keys: Iterable[Key], on_missing: Callable[[PlannedJob], None] | None = None
) -> PlanCount:
    """Walk the plan's jobs and the rows' keys, both sorted in bounded memory; `on_missing` gets each
    planned job without a row (in key order). All row keys are read before `on_missing` is first
    called (the rows' file may be appended to from it)."""
    rows = external_sorted(row_keys)
    row = next(rows, None)
    planned = (
        (job.suite, job.test_id, job.target, raw.decode()) for job, raw in plan.jobs()
    )  # sorted by key, its line kept to rebuild the job
    count = PlanCount(unlisted=plan.end.missing, missing_shards=list(plan.end.missing_shards))
    previous: tuple[str, ...] | None = None
    for item in external_sorted(planned):
        key = item[:3]
        if key == previous:
            continue  # the same key twice (two eval files sharing a suite name): one test x target
        previous = key
        count.planned += 1
        while row is not None and row < key:
            row = next(rows, None)
        if row == key:
            continue
        count.missing += 1
        if on_missing is not None:
            on_missing(_JOB.decode(item[3]))
    rows.close()  # removes the sort's spill directory
    count.planned += count.unlisted
    return count


def not_run_row(job: PlannedJob, reason: str, *, code: str, dry_run: bool) -> TestResult:
    """The row of a planned job that did not run."""
    return TestResult(
        test_id=job.test_id,
        suite=job.suite,
        target=job.target,
        score=0.0,
        execution_status="not_run",
        verdict="skip",
        error=reason,
        failure_reason_code=code,
        eval_path=job.eval_path,
        line=job.line,
        dry_run=dry_run,
    )
