"""`BySpecs`: a value per scope and set of grader specs (by identity), made once; the last one asked
is answered again without its key (issue 31), never for another scope or other specs."""

from __future__ import annotations

from collections.abc import Callable

from agentv_ci.model.suite import GraderSpec
from agentv_ci.running.spec_memo import BySpecs


def test_a_value_is_made_once_per_scope_and_specs() -> None:
    memo: BySpecs[str] = BySpecs()
    made: list[str] = []

    def make(value: str) -> Callable[[], str]:
        def made_now() -> str:
            made.append(value)
            return value

        return made_now

    specs = [GraderSpec(type="contains", name="a")]
    assert memo.of(("suite-a",), specs, make("1")) == "1"
    assert memo.of(("suite-a",), specs, make("x")) == "1"  # the last one asked, again
    assert memo.of(("suite-b",), specs, make("2")) == "2"  # another scope right after
    assert memo.of(("suite-a",), list(specs), make("x")) == "1"  # the same specs in another list
    assert memo.of(("suite-a",), [GraderSpec(type="contains", name="a")], make("3")) == "3"  # equal, not same
    assert made == ["1", "2", "3"]
