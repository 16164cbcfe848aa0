"""One limiter per target endpoint, shared by every worker, suite and grader call of a run.

Configured limits (targets.yaml, each optional): `max_rpm` paces requests evenly, `max_tpm` keeps a
token bucket (input estimated from the request body, output charged from the reported usage), and
`max_concurrency` caps the requests in flight.

With nothing configured the limiter learns the limit from the server:

- A 429 or 529 is a rate-limit signal, never a failure: the request waits what the server says
  (`retry-after`, `x-ratelimit-reset-*`, `anthropic-ratelimit-*-reset`; 1 s when it says nothing),
  then tries again, without spending one of `max_retries` (the test's own timeout still applies).
- The whole target slows down at once: its send rate is cut to 90 % of the answers it actually got
  (`_measured_at_limit`; when 429s were over a fifth of the answers; fewer cut the pace by 20 % at
  most, see `_cut_rate`; a cut never raises it), and its concurrency is halved, not below
  `WINDOW_FLOOR` x pace x round trip (at most once per `CUT_INTERVAL_S`: a burst of 429s is one
  signal; once the rate is measured a lone 429 is jitter: it takes two within `CUT_INTERVAL_S` or
  `SUSTAINED_SENDS` sends). The pace does not grow for one `CUT_INTERVAL_S`.
- The concurrency starts at `INITIAL_WINDOW` and grows by one per success until the first 429, then
  by `WINDOW_GROWTH`. The rate, once measured, grows by `PROBE_GROWTH_PER_S` until the next 429 (the
  first measure is a guess), at most to `PROBE_HEADROOM` times the answers of the last
  `CUT_INTERVAL_S`. After a cut it comes back at `REGROW_PER_S` to `REGROW_TO` of the pace that was
  limited, then grows by `UNCONFIRMED_GROWTH_PER_S` (a limit seen once) or `RATE_GROWTH_PER_S` (two
  episodes within `CONFIRM_SPREAD`), up to `RATE_HEADROOM` times what was answered. Between its own
  answers it may run `PACING_SLACK_S` ahead.
- A 429 before any answer came back holds new requests until those in flight are back (at most
  `CUT_INTERVAL_S`): their pace is the first measure of the limit, their number the server's burst.
- Near the run's end (`_near_end`) a 429 would leave its request waiting alone: no more probing,
  the pace held under `END_PACE` of the limited pace and of the answers; a lone 429 cuts.
- A header saying a limit is used up (`x-ratelimit-remaining-requests: 0` with its reset, or
  Anthropic's) holds every request to the target until the reset.

One limiter per run and endpoint, model and credentials (targets/limiter_registry.py). It reads
time only through its `clock` (the real one unless a test injects virtual time).
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from typing import Annotated

import msgspec

from agentv_ci.clock import SYSTEM_CLOCK, Clock

CUT_INTERVAL_S = 0.25  # at most one multiplicative cut per this long: a burst of 429s is one signal
RATE_WINDOW_S = 0.5  # the answers of the last half second measure what the server actually allows
RATE_CUT = 0.9  # the new rate, as a fraction of the measured one
GENTLE_CUT = 0.8  # after a few 429s only: the new rate as a fraction of the current pace
PROBE_GROWTH_PER_S = 10.0  # after the first measure, until the next 429: +1000 % a second
PROBE_HEADROOM = 2.0  # while probing: up to twice the answers of the last CUT_INTERVAL_S
RATE_HEADROOM = 1.5  # the rate grows to at most this many times the answers of the last window
RATE_GROWTH_PER_S = 0.12  # above REGROW_TO of a confirmed limit: +12 % a second (a slow probe)
UNCONFIRMED_GROWTH_PER_S = 1.0  # ... while the last two episodes disagree on the limit: +100 % a second
CONFIRM_SPREAD = 0.1  # two episodes' paces within 10 % of each other confirm the limit
REGROW_TO = 0.97  # after a cut, the rate comes back fast to this share of the pace that was limited
REGROW_PER_S = 2.0  # ... at +200 % a second (a 429 episode costs a dip, not a second at 90 %)
SUSTAINED_SENDS = 10  # two 429s within this many sends at the pace (or CUT_INTERVAL_S) are the limit
DEFAULT_RETRY_AFTER_S = 1.0  # a 429 that says nothing waits this long
END_PACE = 0.95  # at the end: at most this share of the limited pace and of what was answered
END_MARGIN_S = 0.1  # near the end: the requests left fit in one server wait plus this
MAX_HOLD_S = 600.0  # the longest a server-given wait is honoured (a longer one waits this long)
RATE_LIMIT_STATUSES = frozenset({429, 529})
PACING_SLACK_S = 0.01  # a learned pace may run this far ahead (a small burst, not one sleep per send)
WINDOW_GROWTH = 0.5  # requests in flight added per success after the first 429 (x1.5 a round trip)
WINDOW_FLOOR = 1.5  # the window leaves room for this many times the pace's requests in flight
INITIAL_WINDOW = 24.0  # requests in flight before the first answer (slow start: +1 per success)


# targets.yaml's `max_rpm`, `max_tpm` (numbers > 0) and `max_concurrency` (an integer >= 1)
PositiveRate = Annotated[float, msgspec.Meta(gt=0)]
PositiveCount = Annotated[int, msgspec.Meta(ge=1)]


@dataclass(frozen=True)
class LimitSettings:
    max_rpm: float | None = None
    max_tpm: float | None = None
    max_concurrency: int | None = None


@dataclass
class RunProgress:
    """What the scheduler says of its run: the jobs not started yet (None: not known)."""

    jobs_left: int | None = None


class TargetLimiter:
    """Admits requests to one target endpoint: `await acquire(tokens)` before, `release_*` after."""

    def __init__(
        self,
        name: str,
        settings: LimitSettings,
        run: RunProgress | None = None,
        *,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.name = name
        self._clock = clock
        self._now = clock.now  # bound once: read several times per request
        self._run = run or RunProgress()
        self.settings = settings
        self._gate = asyncio.Lock()  # FIFO: one waiter at a time is next to be admitted
        self._freed = asyncio.Event()
        self.in_flight = 0
        ceiling = settings.max_concurrency
        self._ceiling = float(ceiling) if ceiling else float("inf")
        self.window = min(self._ceiling, INITIAL_WINDOW)  # AIMD concurrency
        self._slow_start = True  # until the first 429: the window doubles every round trip
        self._probing = True  # until the first 429 after the rate is first measured
        self.rate: float | None = None  # learned requests/s (None until the first 429)
        self._rpm_interval = 60.0 / settings.max_rpm if settings.max_rpm else 0.0
        self._next_send = 0.0
        self._tokens = float(settings.max_tpm or 0.0)
        self._tokens_at = self._now()
        self.hold_until = 0.0  # nothing is sent before this (a used-up limit until its reset)
        self._no_growth_until = 0.0
        self._peak: float | None = None  # the pace at which the last 429 episode came
        self._last_cut = -1e9
        self._grown_at = 0.0
        self._await_answer = False  # a 429 before any answer: hold new sends until one arrives
        self._answers: deque[float] = deque()
        self._limited_at: deque[float] = deque()  # 429s of the last CUT_INTERVAL_S
        self._started = self._now()
        self._answering = self._started  # since the first answer (no answer can come before it)
        self.limited = 0
        self.waited_s = 0.0
        self.episodes = 0
        self._waiting = 0  # requests inside acquire(): still to be sent
        self._ending = False  # near the run's end: no probing, every 429 cuts
        self._end_measured = False  # the end's pace was set from what the server answered
        self._confirmed = False  # the last two 429 episodes came at about the same pace
        self._rtt: float | None = None  # the answers' round trip (a moving average)
        self._burst: int | None = None  # answers to the first burst that met a 429 (the server's bucket)
        self._server_wait = DEFAULT_RETRY_AFTER_S  # the last wait a 429 asked for

    def tighten(self, other: LimitSettings) -> None:
        """A second target on the same endpoint: the stricter of each configured limit holds."""
        mine = self.settings
        rpm = min((v for v in (mine.max_rpm, other.max_rpm) if v), default=None)
        tpm = min((v for v in (mine.max_tpm, other.max_tpm) if v), default=None)
        cap = min((v for v in (mine.max_concurrency, other.max_concurrency) if v), default=None)
        self.settings = LimitSettings(rpm, tpm, cap)
        self._rpm_interval = 60.0 / rpm if rpm else 0.0
        if tpm and not mine.max_tpm:
            self._tokens = float(tpm)
        if cap:
            self._ceiling = float(cap)
            self.window = min(self.window, self._ceiling)

    # ------------------------------------------------------------------ admission
    def _interval(self) -> float:
        learned = 1.0 / self.rate if self.rate else 0.0
        return max(learned, self._rpm_interval)

    def _slack(self) -> float:
        """How far ahead of its pace a request may leave: none under `max_rpm` (evenly spaced)."""
        return 0.0 if self._rpm_interval else PACING_SLACK_S

    def _refill(self, now: float) -> None:
        tpm = self.settings.max_tpm
        if tpm:
            self._tokens = min(tpm, self._tokens + (now - self._tokens_at) * tpm / 60.0)
            self._tokens_at = now

    def _wait(self, now: float, tokens: float) -> float:
        wait = max(self.hold_until - now, self._next_send - self._slack() - now, 0.0)
        tpm = self.settings.max_tpm
        if tpm:
            self._refill(now)
            need = min(tokens, tpm)  # one request larger than the bucket waits for a full one
            if self._tokens < need:
                wait = max(wait, (need - self._tokens) * 60.0 / tpm)
        return wait

    async def acquire(self, tokens: float = 0.0) -> None:
        """Wait until one more request may go to the target (cancellable: the test's deadline)."""
        self._waiting += 1
        try:
            await self._admit(tokens)
        finally:
            self._waiting -= 1

    async def _admit(self, tokens: float) -> None:
        async with self._gate:
            while True:
                now = self._now()
                wait = self._wait(now, tokens)
                if wait > 0:
                    await self._clock.sleep(wait)
                    continue
                if self._await_answer:
                    await self._settle()
                    continue
                if self.in_flight < self.window or not self.in_flight:
                    break
                self._freed.clear()
                await self._freed.wait()
            self.in_flight += 1
            interval = self._interval()
            if interval:
                self._next_send = max(now - self._slack(), self._next_send) + interval
            if self.settings.max_tpm:
                self._tokens -= tokens

    async def _settle(self) -> None:
        """After a 429 before any answer: let every request in flight come back (at most
        `CUT_INTERVAL_S`), then take the answers' pace as the first measure of the limit."""
        deadline = self._now() + CUT_INTERVAL_S
        while self.in_flight and (left := deadline - self._now()) > 0:
            self._freed.clear()
            await self._freed_within(left)
        self._await_answer = False
        self._burst = len(self._answers)  # what the server let through at once: its bucket
        measured = self._measured(self._now())
        if self.rate is None and measured is not None:
            self.rate = max(0.5, RATE_CUT * measured)
            self._grown_at = self._now()

    async def _freed_within(self, seconds: float) -> None:
        """Until a request comes back or `seconds` pass on the limiter's clock."""
        freed = asyncio.ensure_future(self._freed.wait())
        timer = asyncio.ensure_future(self._clock.sleep(seconds))
        try:
            await asyncio.wait((freed, timer), return_when=asyncio.FIRST_COMPLETED)
        finally:
            freed.cancel()
            timer.cancel()

    def _done(self) -> None:
        self.in_flight -= 1
        self._freed.set()

    def charge(self, tokens: float) -> None:
        """Tokens an answer used beyond what was charged before it was sent (its output)."""
        if self.settings.max_tpm and tokens > 0:
            self._tokens -= tokens

    def release_ok(self, elapsed_s: float | None = None) -> None:
        """An answer; `elapsed_s`: how long it took (the round trip that sizes the window's floor)."""
        self._done()
        now = self._now()
        if elapsed_s is not None and elapsed_s >= 0:
            self._rtt = elapsed_s if self._rtt is None else 0.8 * self._rtt + 0.2 * elapsed_s
        answers = self._answers
        if self._answering == self._started:  # the first answer: rates are measured from here on
            self._answering = now - (elapsed_s or 0.0) / 2
        answers.append(now)
        while answers and answers[0] < now - RATE_WINDOW_S:
            answers.popleft()
        if self.window < self._ceiling:
            step = 1.0 if self._slow_start else WINDOW_GROWTH
            self.window = min(self._ceiling, self.window + step)
        if self.rate is not None and self._peak is not None and self._near_end():
            # What is left fits in one server wait: a 429 now would leave its request alone at the
            # end of the run, waiting. No more probing: stay under the pace that was limited (its
            # measure sees the server's burst too), and (once) under what was answered lately.
            self._ending = True
            cap = END_PACE * self._peak
            if not self._end_measured and now - self._started >= RATE_WINDOW_S:
                self._end_measured = True  # once, from a full window of answers
                measured = self._measured(now)
                cap = min(cap, END_PACE * measured) if measured is not None else cap
            self.rate = min(self.rate, cap)
        elif self.rate is not None and (self._probing or now >= self._no_growth_until):
            since = self._grown_at if self._probing else max(self._grown_at, self._no_growth_until)
            elapsed = min(0.5, now - since)
            # The first measure is a guess: find the limit fast. Never far above what is actually
            # answered, though: a pace the run cannot reach proves nothing.
            ceiling = RATE_HEADROOM * len(answers) / max(0.05, min(RATE_WINDOW_S, now - self._answering))
            if self._probing:  # the answers of the last cut interval say faster what the pace allows
                recent = sum(1 for t in answers if t >= now - CUT_INTERVAL_S)
                span = max(0.05, min(CUT_INTERVAL_S, now - self._answering))
                ceiling = max(ceiling, PROBE_HEADROOM * recent / span)
                grown = self.rate * (1.0 + PROBE_GROWTH_PER_S * elapsed)
            elif self._peak is not None and self.rate < REGROW_TO * self._peak:
                # Back fast to just under the pace that was limited, then on slowly.
                grown = min(REGROW_TO * self._peak, self.rate * (1.0 + REGROW_PER_S * elapsed))
            else:  # a limit two episodes agree on is probed slowly; one not confirmed yet, fast
                growth = RATE_GROWTH_PER_S if self._confirmed else UNCONFIRMED_GROWTH_PER_S
                grown = self.rate * (1.0 + growth * elapsed)
            self.rate = max(self.rate, min(ceiling, grown))
            self._grown_at = now
        self._room_for_pace()

    def _room_for_pace(self) -> None:
        """The window never holds a learned pace back (a window the pace cannot use only sends bursts)."""
        if self._rtt is not None and self.rate is not None:
            self.window = min(self._ceiling, max(self.window, WINDOW_FLOOR * self.rate * self._rtt))

    def _near_end(self) -> bool:
        """The requests still to be sent (jobs not started, plus those waiting here) fit in one
        server wait and `END_MARGIN_S` at the current pace."""
        left = self._run.jobs_left
        if left is None or self.rate is None:
            return False
        return left + self._waiting < self.rate * (self._server_wait + END_MARGIN_S)

    def release_failed(self) -> None:
        """An answer that was not a rate-limit signal (an error, a timeout): no change to the limits."""
        self._done()

    def release_limited(self, wait_s: float | None) -> float:
        """A 429/529: slow the whole target down; returns how long this request waits before retrying."""
        in_flight = self.in_flight
        self._done()
        now = self._now()
        wait = min(MAX_HOLD_S, DEFAULT_RETRY_AFTER_S if wait_s is None else wait_s)
        self._server_wait = wait
        self.limited += 1
        # The rejected request waits the server's time; the pace waits one cut interval (the
        # server's bucket refills in much less than a Retry-After of seconds).
        self._no_growth_until = max(self._no_growth_until, now + min(wait, CUT_INTERVAL_S))
        recent = self._limited_at
        recent.append(now)
        # At a slow pace two 429s are further apart: they count together within SUSTAINED_SENDS sends.
        together = max(CUT_INTERVAL_S, SUSTAINED_SENDS / self.rate) if self.rate else CUT_INTERVAL_S
        while recent and recent[0] < now - together:
            recent.popleft()
        # One 429 alone, at a pace already measured, is a burst the server's bucket did not absorb
        # (jitter): the request waits, the pace stays. Two within CUT_INTERVAL_S are the limit.
        sustained = self.rate is None or len(recent) >= 2 or self._ending
        if sustained and now - self._last_cut >= CUT_INTERVAL_S:
            self._last_cut = now
            self.episodes += 1
            self._slow_start = False
            self.window = max(1.0, min(self.window, float(in_flight)) / 2)
            measured = self._measured_at_limit(now)
            if self.rate is not None:  # a 429 at a measured pace: the limit is near, probing ends
                self._probing = False
            if measured is not None:  # what the server let through while it was asked for more
                if self.rate is not None:
                    previous = self._peak
                    self._peak = self._limited_pace(now, measured, len(recent))
                    self._confirmed = previous is not None and abs(self._peak - previous) <= (
                        CONFIRM_SPREAD * previous
                    )
                cut = self._cut_rate(now, measured, len(recent))
                self.rate = max(0.5, cut if self.rate is None else min(self.rate, cut))  # never up
                self._grown_at = now
                self._room_for_pace()
            elif self.rate is None:  # nothing answered yet: send nothing new until something is
                self._await_answer = True
        return wait

    def _saturated(self, now: float, limited: int) -> bool:
        """Many 429s (over a fifth of the last answers): the server was asked for more than it allows."""
        answered = sum(1 for t in self._answers if t >= now - CUT_INTERVAL_S)
        return limited > 0.2 * (answered + limited)

    def _limited_pace(self, now: float, measured: float, limited: int) -> float:
        """The pace the rate regrows to after a cut: what was answered at the pace that was limited.
        Many 429s: the server's answers are its limit. A few: bursts its bucket did not absorb, so a
        dip in the answers (a stall of this machine) lowers the pace learned before by 3 % at most."""
        assert self.rate is not None
        if self._peak is None or self._saturated(now, limited):
            return min(self.rate, measured)
        return min(self.rate, max(measured, REGROW_TO * self._peak))

    def _cut_rate(self, now: float, measured: float, limited: int) -> float:
        """The new pace after a cut. Many 429s (over a fifth of the last answers): the server was
        saturated, so what it answered is its limit. A few: the pace was near it, or bursts were
        (a run that cannot reach its own pace answers less than it): a gentle cut of the pace."""
        cut = RATE_CUT * measured
        if self.rate is None or self._saturated(now, limited):
            return cut
        return max(cut, min(GENTLE_CUT * self.rate, RATE_HEADROOM * measured))

    def _measured(self, now: float) -> float | None:
        """Answers per second over the last `RATE_WINDOW_S` (None when there were none)."""
        elapsed = max(0.05, min(RATE_WINDOW_S, now - self._answering))
        answers = sum(1 for t in self._answers if t >= now - RATE_WINDOW_S)
        return answers / elapsed if answers else None

    def _measured_at_limit(self, now: float) -> float | None:
        """At a cut: the answers of the last `RATE_WINDOW_S`, or, when the server's bucket is known,
        those of the last `CUT_INTERVAL_S` less that bucket when they say more. A pace that grew
        within the longer window is then measured where it met the limit, not averaged with the
        slower start of the window."""
        measured = self._measured(now)
        if measured is None or self._burst is None or now - self._started < CUT_INTERVAL_S:
            return measured
        recent = sum(1 for t in self._answers if t >= now - CUT_INTERVAL_S)
        return max(measured, (recent - self._burst) / CUT_INTERVAL_S)

    def hold(self, seconds: float) -> None:
        """A limit is used up: nothing is sent to the target for `seconds` (bounded by `MAX_HOLD_S`)."""
        until = self._now() + min(MAX_HOLD_S, seconds)
        if until > self.hold_until:
            self.hold_until = until
            self._no_growth_until = max(self._no_growth_until, until)

    def holding_s(self) -> float:
        """How much longer the target is held back (a used-up limit, or no growth after a cut)."""
        return max(0.0, max(self.hold_until, self._no_growth_until) - self._now())

    async def wait_limited(self, seconds: float) -> None:
        """The rejected request's own wait (counted in `waited_s`)."""
        started = self._now()
        try:
            await self._clock.sleep(seconds)
        finally:
            self.waited_s += self._now() - started
