"""Output tokens a previous run recorded per test (the `--baseline` results): what the cost estimate
expects each answer and each judge reply to cost, in place of `max_tokens` or the defaults."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agentv_ci.model.result import GraderResult, TestResult

__all__ = ["RecordedOutput", "RecordedUsage"]

JUDGE_TYPES = frozenset({"llm-grader", "rubrics"})


@dataclass(frozen=True, slots=True)
class RecordedOutput:
    """Output tokens per request: of the target's answer, and of one judge reply (None: not recorded)."""

    answer: float | None
    judge: float | None


class RecordedUsage:
    """(suite, test id, target) -> the output tokens its last run recorded, one figure per request."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str, str, str], RecordedOutput] = {}

    @classmethod
    def of(cls, results: Iterable[TestResult]) -> RecordedUsage:
        recorded = cls()
        for row in results:
            if row.execution_status == "not_run" or row.dry_run:
                continue
            attempts = row.trials or [row]
            answers = [a.token_usage.output for a in attempts if a.token_usage is not None]
            judges = [
                g.token_usage.output
                for attempt in attempts
                for g in _judges(attempt.scores)
                if g.token_usage is not None
            ]
            answer = sum(answers) / len(answers) if answers and any(answers) else None
            judge = sum(judges) / len(judges) if judges and any(judges) else None
            if answer is not None or judge is not None:
                recorded.by_key[(row.suite, row.test_id, row.target)] = RecordedOutput(answer, judge)
        return recorded

    def get(self, key: tuple[str, str, str]) -> RecordedOutput | None:
        return self.by_key.get(key)

    def __len__(self) -> int:
        return len(self.by_key)


def _judges(scores: list[GraderResult]) -> Iterable[GraderResult]:
    for grader in scores:
        if grader.type in JUDGE_TYPES:
            yield grader
        yield from _judges(grader.scores)
