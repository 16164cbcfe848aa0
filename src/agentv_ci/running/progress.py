"""Progress: a live bar on a terminal, one plain line per test in CI (`CI=true`) or when piped."""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

from agentv_ci.model.result import TestResult
from agentv_ci.reporting.console import first_line_excerpt
from agentv_ci.targets.limiter_registry import ThrottleState, throttle_states
from agentv_ci.text_safety import printable

_LABELS = {"ok": "PASS", "quality_failure": "FAIL", "execution_error": "ERROR", "not_run": "NOT RUN"}


def plain_mode(stream: TextIO) -> bool:
    """True in CI (`CI=true`) or when `stream` is not a terminal."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        return True
    return not (hasattr(stream, "isatty") and stream.isatty())


def result_line(result: TestResult) -> str:
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


class Progress:
    """Counts results; renders a bar (TTY) or plain lines. `quiet` prints nothing."""

    def __init__(self, total: int, *, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.plain = plain_mode(self.stream)
        self.done = 0
        self.counts = {"ok": 0, "quality_failure": 0, "execution_error": 0, "not_run": 0}
        self._last_draw = 0.0
        self._throttles: dict[str, tuple[int, float]] = {}  # target -> (429s, when last shown)
        self._last_states: dict[str, ThrottleState] = {}

    def update(self, result: TestResult) -> None:
        self.done += 1
        self.counts[result.execution_status] = self.counts.get(result.execution_status, 0) + 1
        if self.quiet:
            return
        if self.plain:
            self.stream.write(result_line(result) + "\n")
            for line in self._new_throttles():
                self.stream.write(line + "\n")
            self.stream.flush()
            return
        now = time.monotonic()
        if now - self._last_draw >= 0.1 or self.done == self.total:
            self._last_draw = now
            self._draw()

    def _draw(self) -> None:
        width = 30
        filled = int(width * self.done / self.total) if self.total else width
        bar = "#" * filled + "-" * (width - filled)
        counts = self.counts
        text = (
            f"[{bar}] {self.done}/{self.total} pass {counts['ok']} fail {counts['quality_failure']} "
            f"error {counts['execution_error']}"
        )
        states = throttle_states()
        self._last_states.update((state.name, state) for state in states)
        held = [state for state in states if state.hold_s > 0]
        if held:
            text += " | throttled " + ", ".join(f"{printable(s.name)} {s.hold_s:.1f}s" for s in held)
        redraw = getattr(self.stream, "redraw", None)  # the console's own CR (security.streams)
        if callable(redraw):
            redraw(text)
        else:
            self.stream.write("\r" + text)
        self.stream.flush()

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
        if not self.plain and self.total:
            self.stream.write("\n")
        for state in self._last_states.values():
            pace = f"; ended pacing {state.rate:.1f} req/s" if state.rate is not None else ""
            self.stream.write(
                f"rate limits: {printable(state.name)} answered 429/529 {state.limited} time(s); requests "
                f"waited {state.waited_s:.1f}s in all{pace} (see docs/targets.md#rate-limits)\n"
            )
        self.stream.flush()
