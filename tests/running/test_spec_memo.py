"""`BySpecs`: a value per scope and set of grader specs (by identity), made once; the last one asked
is answered again without its key (issue 31), never for another scope or other specs."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import GraderSpec
from agentv_ci.running.spec_memo import BySpecs, content_key


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


def test_content_key_leaves_out_where_a_spec_was_written_and_nothing_else() -> None:
    here, there = SourceLocation("a.yaml", 1, 1), SourceLocation("b.yaml", 9, 3)
    spec = GraderSpec(type="contains", name="c", config={"value": "x"}, location=here)
    moved = msgspec.structs.replace(spec, location=there, config_locations={"value": there})
    assert content_key([spec]) == content_key([moved]) is not None
    others = [
        msgspec.structs.replace(spec, type="icontains"),
        msgspec.structs.replace(spec, name="d"),
        msgspec.structs.replace(spec, weight=2.0),
        msgspec.structs.replace(spec, required=True),
        msgspec.structs.replace(spec, required=1.0),
        msgspec.structs.replace(spec, min_score=0.5),
        msgspec.structs.replace(spec, negate=True),
        msgspec.structs.replace(spec, written_type="contains_text"),
        msgspec.structs.replace(spec, config={"value": 1}),
        msgspec.structs.replace(spec, config={"value": 1.0}),
        msgspec.structs.replace(spec, config={"value": True}),
        msgspec.structs.replace(spec, config={"value": "x", "flags": "i"}),
    ]
    keys = [content_key([s]) for s in others] + [content_key([spec, spec]), content_key([])]
    assert content_key([spec]) not in keys and len(set(keys)) == len(keys)
    assert content_key([msgspec.structs.replace(spec, config={"value": object()})]) is None
