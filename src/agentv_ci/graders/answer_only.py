"""Built-in graders that read nothing but the answer's text, graded at once: no coroutine and no
`GradingContext` per answer (the run's lane for answers it has at once: running/scheduler.py)."""

from __future__ import annotations

from typing import Protocol

from agentv_ci.model.result import AssertionResult

__all__ = ["AnswerGrader", "answer_grader"]

# Only classes of these modules: a plugin (or a plugin's subclass of ours) is always awaited.
_BUILT_IN_MODULES = frozenset({"agentv_ci.graders.text"})


class AnswerGrader(Protocol):
    def answer_assertion(self, output: str) -> AssertionResult | None:
        """The one assertion of `grade`'s result (score 1 when it passed, else 0) for an answer whose
        text is `output`, at once; None when it needs `grade` after all."""
        ...


_KNOWN: dict[type, bool] = {}  # a class, once seen, stays what it is for the process


def answer_grader(grader: object) -> AnswerGrader | None:
    """`grader` when it is a built-in that grades the answer's text alone (declares `answer_only`)."""
    cls = type(grader)
    known = _KNOWN.get(cls)
    if known is None:
        known = _KNOWN[cls] = (
            cls.__module__ in _BUILT_IN_MODULES and getattr(cls, "answer_only", False) is True
        )
    return grader if known else None  # type: ignore[return-value]
