"""Progress: a live bar on a terminal; in CI (`CI=true`) or when piped, a line every 10% or 30 s.

Both say done/total, elapsed time, tests per second, the time left and the spend so far. Failed and
errored tests are printed as they finish with their failed checks (reporting/failure_lines.py);
passing tests only with -v, so a CI log grows with the failures, not with the run. A dry run's
answers are placeholders: they are counted as such, never printed as FAIL.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

from agentv_ci.model.result import TestResult
from agentv_ci.reporting.console import first_line_excerpt, format_cost
from agentv_ci.reporting.failure_lines import CONSOLE, CONSOLE_VERBOSE, failure_lines
from agentv_ci.running.budget import Budget
from agentv_ci.targets.limiter_registry import ThrottleState, throttle_states
from agentv_ci.text_safety import printable

_LABELS = {"ok": "PASS", "quality_failure": "FAIL", "execution_error": "ERROR", "not_run": "NOT RUN"}


def plain_mode(stream: TextIO) -> bool:
    """True in CI (`CI=true`) or when `stream` is not a terminal."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        return True
    return not (hasattr(stream, "isatty") and stream.isatty())


_TENTHS = 10  # a plain progress line at each tenth of the run...
_PLAIN_EVERY_S = 30.0  # ...or after this long without one


def result_line(result: TestResult) -> str:
    if result.dry_run and result.execution_status in ("ok", "quality_failure"):
        name = printable(f"{result.suite}/{result.test_id} [{result.target}]")
        return f"DRY RUN {name}: placeholder answer, score not gated"
    label = _LABELS.get(result.execution_status, result.execution_status.upper())
    if result.execution_status == "ok" and result.verdict == "skip":
        label = "SKIP"
    duration = f" {result.duration_ms:.0f}ms" if result.duration_ms is not None else ""
    name = printable(f"{result.suite}/{result.test_id} [{result.target}]")  # ids are data: one line
    line = f"{label:7} {name} score={result.score:.2f}{duration}"
    if result.error and result.execution_status != "quality_failure":
        line += f" - {printable(first_line_excerpt(result.error))}"
    return line


def throttle_line(state: ThrottleState) -> str:
    """One target slowed down by its server's rate limit: how often, for how long, at what pace."""
    name = printable(state.name)
    line = f"THROTTLE {name}: rate limited ({state.limited} x 429/529 so far)"
    if state.hold_s > 0:
        line += f", holding back {state.hold_s:.1f}s"
    if state.rate is not None:
        line += f", pacing {state.rate:.1f} req/s"
    if state.concurrency is not None:
        line += f", concurrency {state.concurrency}"
    return line + f"; requests waited {state.waited_s:.1f}s in all"


def format_clock(seconds: float) -> str:
    """`m:ss`, or `h:mm:ss` from an hour."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Counts results and shows where the run is: a bar (TTY) or plain lines. `quiet` prints
    nothing; `verbose` adds a line per passing test and more of each failure. `budget` (None in a
    dry run, which spends nothing) gives the spend so far; `clock` is injectable for tests."""

    def __init__(
        self,
        total: int,
        *,
        stream: TextIO | None = None,
        quiet: bool = False,
        verbose: bool = False,
        budget: Budget | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.verbose = verbose
        self.budget = budget
        self.clock = clock
        self.plain = plain_mode(self.stream)
        self.done = 0
        self.counts = {"ok": 0, "quality_failure": 0, "execution_error": 0, "not_run": 0}
        self.placeholders = 0  # a dry run's answers: neither passes nor failures
        self._started = clock()
        self._last_draw = 0.0
        self._drawn = -1  # `done` when the bar was last drawn
        self._bar_width = 0  # characters of the bar on screen, cleared before a line is printed above it
        self._next_tenth = 1
        self._last_line_at = self._started
        self._last_line_done = 0
        self._throttles: dict[str, tuple[int, float]] = {}  # target -> (429s, when last shown)
        self._last_states: dict[str, ThrottleState] = {}

    def update(self, result: TestResult) -> None:
        self.done += 1
        status = result.execution_status
        self.counts[status] = self.counts.get(status, 0) + 1
        placeholder = result.dry_run and status != "execution_error" and status != "not_run"
        if placeholder:
            self.placeholders += 1
        if self.quiet:
            return
        # Only a real failure or error is formatted unless -v: passing tests cost a count here.
        failed = status == "execution_error" or (status == "quality_failure" and not placeholder)
        printed = failed or self.verbose
        if printed:
            lines = [result_line(result)]
            if failed:
                lines += failure_lines(result, CONSOLE_VERBOSE if self.verbose else CONSOLE)
            self._print_lines(lines)
        if self.plain:
            throttles = self._new_throttles()
            if throttles:
                self._print_lines(throttles)
            total = self.total
            if (total and self.done * _TENTHS >= self._next_tenth * total) or (
                self.clock() - self._last_line_at >= _PLAIN_EVERY_S
            ):
                self._plain_line()
            return
        if not printed and (self.clock() - self._last_draw >= 0.1 or self.done == self.total):
            self._draw()

    def _print_lines(self, lines: list[str]) -> None:
        """Whole lines: in CI as they come; on a terminal above the bar, which is drawn again."""
        text = "".join(line + "\n" for line in lines)
        if not self.plain and self._bar_width:  # the first line overwrites the bar (one CR, ours)
            self._redraw(lines[0].ljust(self._bar_width))
            text = text[len(lines[0]) :]
            self._bar_width = 0
        self.stream.write(text)
        if not self.plain:
            self._draw()
        self.stream.flush()

    def _counts_text(self) -> str:
        counts = self.counts
        if self.placeholders:
            return f"placeholder {self.placeholders} error {counts['execution_error']}"
        return f"pass {counts['ok']} fail {counts['quality_failure']} error {counts['execution_error']}"

    def _pace_text(self) -> str:
        """`elapsed 0:42, 24.7 tests/s, ETA 0:39, spent $0.0123`."""
        elapsed = max(self.clock() - self._started, 0.0)
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = self.total - self.done
        eta = format_clock(left / rate) if rate > 0 and left > 0 else ("0:00" if left <= 0 else "-")
        text = f"elapsed {format_clock(elapsed)}, {rate:.1f} tests/s, ETA {eta}"
        budget = self.budget
        if budget is not None:
            text += f", spent {format_cost(budget.total_usd)}"
            if budget.unpriced:  # answers with no known price: the spend is a floor
                text += f" ({budget.unpriced} answer(s) unpriced)"
        return text

    def _plain_line(self) -> None:
        total = self.total
        share = f" ({min(self.done * 100 // total, 100)}%)" if total else ""
        line = f"progress: {self.done}/{total}{share} {self._counts_text()}; {self._pace_text()}"
        self.stream.write(printable(line) + "\n")
        self.stream.flush()
        while total and self._next_tenth <= _TENTHS and self.done * _TENTHS >= self._next_tenth * total:
            self._next_tenth += 1
        self._last_line_at = self.clock()
        self._last_line_done = self.done

    def _draw(self) -> None:
        width = 30
        filled = min(int(width * self.done / self.total), width) if self.total else width
        bar = "#" * filled + "-" * (width - filled)
        text = f"[{bar}] {self.done}/{self.total} {self._counts_text()} | {self._pace_text()}"
        states = throttle_states()
        self._last_states.update((state.name, state) for state in states)
        held = [state for state in states if state.hold_s > 0]
        if held:
            text += " | throttled " + ", ".join(f"{printable(s.name)} {s.hold_s:.1f}s" for s in held)
        self._redraw(text.ljust(self._bar_width))  # padded: a shorter bar leaves nothing behind
        self._bar_width = len(text)
        self._last_draw, self._drawn = self.clock(), self.done
        self.stream.flush()

    def _redraw(self, text: str) -> None:
        redraw = getattr(self.stream, "redraw", None)  # the console's own CR (security.streams)
        if callable(redraw):
            redraw(text)
        else:
            self.stream.write("\r" + text)

    def _new_throttles(self) -> list[str]:
        """A line per target newly rate limited, at most one a second per target."""
        lines: list[str] = []
        now = time.monotonic()
        for state in throttle_states():
            self._last_states[state.name] = state
            seen = self._throttles.get(state.name)
            if seen is not None and (state.limited == seen[0] or now - seen[1] < 1.0):
                continue
            self._throttles[state.name] = (state.limited, now)
            lines.append(throttle_line(state))
        return lines

    def finish(self) -> None:
        if self.quiet:
            return
        if self.plain:
            if self.done != self._last_line_done:  # stopped early (or more rows than planned)
                self._plain_line()
        elif self.total:
            if self._drawn != self.done:
                self._draw()
            self.stream.write("\n")
        for state in self._last_states.values():
            pace = f"; ended pacing {state.rate:.1f} req/s" if state.rate is not None else ""
            self.stream.write(
                f"rate limits: {printable(state.name)} answered 429/529 {state.limited} time(s); requests "
                f"waited {state.waited_s:.1f}s in all{pace} (see docs/targets.md#rate-limits)\n"
            )
        self.stream.flush()
