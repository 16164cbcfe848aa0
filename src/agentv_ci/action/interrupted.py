"""The end of an Action step stopped by SIGINT or SIGTERM (a cancelled job, `timeout-minutes`).

As `agentv-ci run` does, it leaves a complete picture of a partial run: the planned tests that did
not finish are `not_run` rows (written by the run), JUnit (as skipped testcases), the Markdown
summary, summary.json, the step summary and the outputs all say "incomplete: N of M tests did not
run", and the PR comment says so too if it can be updated in a few seconds. The step exits 130.
"""

from __future__ import annotations

from agentv_ci.action.baseline import Baseline
from agentv_ci.action.interrupts import TimeUp, held_back, within
from agentv_ci.action.publish import Publisher
from agentv_ci.errors import ExitCode
from agentv_ci.finishing import PostRun, PostRunRequest

__all__ = ["COMMENT_SECONDS", "finish_interrupted"]

COMMENT_SECONDS = 5.0  # GitHub's runner follows SIGINT with SIGTERM, then kills, within ~10 s


def finish_interrupted(
    publisher: Publisher, finishing: PostRun, request: PostRunRequest, baseline: Baseline
) -> int:
    """Reports, step summary, outputs, then the comment within `COMMENT_SECONDS`; returns 130.
    `request.interrupted` says what did not finish: the verdict is never a pass (finishing/gate.py)."""
    log = publisher.log
    log.warn(f"interrupted: {request.interrupted} did not finish; writing the reports of what did")
    with held_back() as again:  # the files are written whole, whatever comes meanwhile
        finished = finishing.finish(request)
        summary, decision = finished.summary, finished.decision
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
