"""The end of an Action step stopped by SIGINT or SIGTERM (a cancelled job, `timeout-minutes`).

As `agentv-ci run` does, it leaves a complete picture of a partial run: the planned tests that did
not finish are `not_run` rows (written by the run), JUnit (as skipped testcases), the Markdown
summary, summary.json, the step summary and the outputs all say "incomplete: N of M tests did not
run", and the PR comment says so too if it can be updated in a few seconds. The step exits 130.
"""

from __future__ import annotations

from dataclasses import replace

from agentv_ci.action.baseline import Baseline
from agentv_ci.action.interrupts import TimeUp, held_back, within
from agentv_ci.action.publish import Publisher
from agentv_ci.errors import ExitCode
from agentv_ci.gating import GateDecision, GateOptions, decide
from agentv_ci.model.result import RunSummary

__all__ = ["COMMENT_SECONDS", "finish_interrupted", "interrupted_verdict"]

COMMENT_SECONDS = 5.0  # GitHub's runner follows SIGINT with SIGTERM, then kills, within ~10 s


def interrupted_verdict(decision: GateDecision, stopped: str) -> GateDecision:
    """`decision`, never a pass: an interrupted step whose results look complete (the signal came
    after the last test, or while the baseline ran) is inconclusive, not green."""
    if decision.exit_code != ExitCode.OK:
        return decision
    reason = f"interrupted: {stopped} did not finish"
    return replace(
        decision, passed=False, exit_code=ExitCode.INCONCLUSIVE, reasons=[*decision.reasons, reason]
    )


def finish_interrupted(
    publisher: Publisher, summary: RunSummary, baseline: Baseline, options: GateOptions, stopped: str
) -> int:
    """Reports, step summary, outputs, then the comment within `COMMENT_SECONDS`; returns 130."""
    from agentv_ci.github.step_summary import append_step_summary
    from agentv_ci.reporting import write_reports
    from agentv_ci.reporting.console import render_console

    log, paths = publisher.log, publisher.paths
    log.warn(f"interrupted: {stopped} did not finish; writing the reports of what did")
    with held_back() as again:  # the files are written whole, whatever comes meanwhile
        decision = interrupted_verdict(decide(summary, options, baseline.summary), stopped)
        write_reports(
            summary,
            junit=paths.junit,
            sarif=paths.sarif,
            markdown=paths.markdown,
            repo_root=paths.workspace,
            baseline=baseline.summary,
            decision=decision,
            sarif_category=publisher.inputs.sarif_category,
            reports=publisher.extra_reports(),
        )
        append_step_summary(summary, decision, baseline=baseline.summary, repo_root=paths.workspace)
        log.echo(render_console(summary, decision))
        publisher.annotate(summary, decision)
        publisher.outputs(summary, decision, "")
    if again:
        log.notice("PR comment not updated: the step was signalled again")
        return int(ExitCode.INTERRUPTED)
    try:
        with within(COMMENT_SECONDS):
            url = publisher.comment(summary, decision, baseline)
    except TimeUp as why:
        log.notice(f"PR comment not updated: {why} ({COMMENT_SECONDS:g} s at most after an interruption)")
        return int(ExitCode.INTERRUPTED)
    if url:
        publisher.set_outputs({"comment_url": url})
    return int(ExitCode.INTERRUPTED)
