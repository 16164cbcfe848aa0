"""Regex matching with a time budget that never blocks the run.

A match first runs where it is asked for, with a short slice of the budget: nearly every pattern
finishes in microseconds. One that needs longer (catastrophic backtracking such as `^(a|aa)+$` on
`aaaa…b`) moves to a daemon thread that releases the GIL (`concurrent=True`) for the rest of the
budget, so the event loop keeps serving other tests and SIGINT/SIGTERM stop the run at once; when the
budget runs out the match ends with `RegexTimeout` (a grader error). A cancelled match is abandoned to
its thread, which ends by itself within the budget and never delays the process exit.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import regex

__all__ = ["PENDING", "REGEX_BUDGET_S", "RegexTimeout", "finish", "search", "search_inline"]

REGEX_BUDGET_S = 2.0  # per match, for the whole answer
_INLINE_SLICE_S = 0.05  # the longest a match may hold the event loop


class RegexTimeout(Exception):
    """A match did not finish within its budget."""


def _run(pattern: regex.Pattern[str], text: str, sticky: bool, timeout: float, concurrent: bool) -> Any:
    # Positional (string, pos, endpos, concurrent, partial, timeout): the keywords cost ~1.5 µs a
    # match, more than most matches (tests/graders check that the budget still holds).
    if sticky:
        return pattern.match(text, None, None, concurrent, False, timeout)
    return pattern.search(text, None, None, concurrent, False, timeout)


def search_inline(pattern: regex.Pattern[str], text: str, *, sticky: bool = False) -> Any:
    """The first, inline slice of a match: the match (or None), or `PENDING` when it needs longer
    (then `await search(...)` finishes it off the loop). Lets callers skip a coroutine per match."""
    try:
        return _run(pattern, text, sticky, _INLINE_SLICE_S, False)
    except TimeoutError:
        return PENDING


PENDING: Any = object()


async def search(
    pattern: regex.Pattern[str], text: str, *, sticky: bool = False, budget_s: float = REGEX_BUDGET_S
) -> regex.Match[str] | None:
    """`pattern.search(text)` (`match` when `sticky`) within `budget_s` seconds; raises RegexTimeout."""
    slice_s = min(_INLINE_SLICE_S, budget_s)
    try:
        return _run(pattern, text, sticky, slice_s, False)  # type: ignore[no-any-return]
    except TimeoutError:
        if budget_s <= slice_s:
            raise RegexTimeout(f"no result within {budget_s:g}s") from None
    return await _in_thread(pattern, text, sticky, budget_s - slice_s, budget_s)


async def _in_thread(
    pattern: regex.Pattern[str], text: str, sticky: bool, remaining_s: float, budget_s: float
) -> regex.Match[str] | None:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[regex.Match[str] | None] = loop.create_future()

    def settle(outcome: Any, failed: bool) -> None:
        if future.done():  # cancelled meanwhile (Ctrl-C, a test timeout)
            return
        if failed:
            future.set_exception(outcome)
        else:
            future.set_result(outcome)

    def work() -> None:
        try:
            found = _run(pattern, text, sticky, remaining_s, True)
        except TimeoutError:
            outcome: Any = RegexTimeout(f"no result within {budget_s:g}s")
            failed = True
        except Exception as exc:  # the caller's error, not this thread's
            outcome, failed = exc, True
        else:
            outcome, failed = found, False
        try:
            loop.call_soon_threadsafe(settle, outcome, failed)
        except RuntimeError:  # the loop closed: nobody is waiting any more
            pass

    threading.Thread(target=work, name="agentv-ci-regex", daemon=True).start()
    return await future


async def finish(pattern: regex.Pattern[str], text: str, *, sticky: bool = False) -> regex.Match[str] | None:
    """The rest of a match `search_inline` left `PENDING`, off the loop; raises RegexTimeout."""
    return await _in_thread(pattern, text, sticky, REGEX_BUDGET_S - _INLINE_SLICE_S, REGEX_BUDGET_S)
