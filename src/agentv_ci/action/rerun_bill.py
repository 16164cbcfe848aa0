"""One bill for a pull request's run and its baseline re-run (`baseline_ref`).

The re-run spends money like the run does, so it goes on the same bill: it gets what is left of the
run's budget (`budget_usd`, else the suites' `execution.budget_usd`), its estimate is printed before
it starts under its own heading, and what it spent is added to the run's `spent_usd` (so to the
comment, the `cost_usd` output, `max_cost_usd` and the budget). A re-run the budget stopped, held
back, or left no room to start makes the run "budget reached" (inconclusive, exit 3), as a run that
stops at its own budget does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import msgspec
from msgspec.structs import replace as with_fields

from agentv_ci.model.estimate import CostEstimate, merged_estimates
from agentv_ci.model.estimate_text import budget_amount, estimate_table, usd
from agentv_ci.model.result import RunSummary
from agentv_ci.running.session import RunRequest
from agentv_ci.security.redaction import redact_bytes
from agentv_ci.text_safety import neutralise_workflow_commands, printable

__all__ = ["RerunBill"]


class RerunBill:
    """The re-run's share of the bill of `run` (the pull request's summary). `echo` prints to the log."""

    def __init__(self, run: RunSummary, ref: str, echo: Callable[[str], None]) -> None:
        self.ref = ref
        self.echo = echo
        self.limit_usd = None if run.dry_run else run.budget_usd
        spent = run.spent_usd or 0.0
        self.left_usd = None if self.limit_usd is None else round(self.limit_usd - spent, 6)
        self.spent_before = spent
        self.stopped_before = run.budget_exhausted  # the run itself reached the budget
        self.estimate: CostEstimate | None = None

    def why_not_rerun(self) -> str | None:
        """Why the re-run must not start (the run left nothing of the budget), or None."""
        if self.left_usd is None or (self.left_usd > 0 and not self.stopped_before):
            return None
        assert self.limit_usd is not None
        return (
            f"not re-run: the pull request's run spent {usd(self.spent_before)} of budget_usd "
            f"{budget_amount(self.limit_usd)}, so nothing is left for it"
        )

    @property
    def refused(self) -> bool:
        """Whether the budget kept the re-run from starting (nothing left, or even the low end of its
        estimate over what was left)."""
        if self.left_usd is None:
            return False
        if self.why_not_rerun() is not None:
            return True
        return self.estimate is not None and self.estimate.cost_usd.low > self.left_usd

    def request(self, request: RunRequest, commit: str | None) -> RunRequest:
        """`request` for the re-run: the budget left, and its estimate printed under its own heading."""
        at = f"{commit} ({self.ref})" if commit and commit != self.ref else self.ref
        heading = f"cost estimate of the baseline re-run at {printable(at)}, before it starts"
        if self.left_usd is not None and self.limit_usd is not None:
            heading += f"; {usd(self.left_usd)} of budget_usd {budget_amount(self.limit_usd)} left"

        def announce(estimate: CostEstimate) -> None:
            self.estimate = estimate
            lines = estimate_table(estimate, heading=neutralise_workflow_commands(heading) + ":")
            self.echo("\n".join(lines))

        return replace(request, budget_usd=self.left_usd, on_estimate=announce)

    def charge(self, run: RunSummary, rerun: RunSummary | None) -> RunSummary:
        """`run` with the re-run's spend added (`rerun`: its summary, None when it did not run or
        was refused). Without a budget or a priced model nothing changes but the spend."""
        if run.dry_run:
            return run
        spent = rerun.spent_usd if rerun is not None and rerun.spent_usd is not None else 0.0
        unpriced = rerun.unpriced if rerun is not None else 0
        total = round((run.spent_usd or 0.0) + spent, 6)
        over = self.limit_usd is not None and total > self.limit_usd
        # stopped by the budget, or never started: nothing left, or its estimate over what was left
        held_back = rerun.budget_exhausted if rerun is not None else self.refused
        estimates = [e for e in (run.estimate, rerun.estimate if rerun is not None else None) if e]
        if spent:
            self.echo(
                f"the baseline re-run at {printable(self.ref)} spent {usd(spent)}; the run's spend "
                f"(spent_usd, the comment, the cost_usd output, the budget) counts it: {usd(total)} in all"
            )
        return with_fields(
            run,
            spent_usd=total,
            unpriced=run.unpriced + unpriced,
            budget_exhausted=run.budget_exhausted or held_back or over,
            estimate=merged_estimates(estimates),
        )

    def record(self, run_dir: Path, run: RunSummary, rerun: RunSummary | None) -> None:
        """The charged figures in `run_dir/summary.json` (the rest of the file is kept as written),
        with `baseline_spent_usd`: the re-run's part of `spent_usd`."""
        path = run_dir / "summary.json"
        if run.dry_run or not path.is_file():
            return
        try:
            document = msgspec.json.decode(path.read_bytes())
        except msgspec.DecodeError:
            return  # not ours to repair: `report` says what is wrong with it
        if not isinstance(document, dict):
            return
        document["spent_usd"] = run.spent_usd
        document["unpriced"] = run.unpriced
        document["budget_exhausted"] = run.budget_exhausted
        document["baseline_spent_usd"] = rerun.spent_usd if rerun is not None else 0.0
        if run.estimate is not None:
            document["estimate"] = msgspec.to_builtins(run.estimate)
        encoded = msgspec.json.format(msgspec.json.encode(document), indent=2) + b"\n"
        path.write_bytes(redact_bytes(encoded))
