"""Small builders for target tests (real objects, no mocks)."""

from __future__ import annotations

from pathlib import Path

from agentv_ci.model.suite import Message, Test
from agentv_ci.plugins import TargetRequest
from agentv_ci.prompting import render_input


def make_request(
    text: str = "hello", *, test_id: str = "t1", attempt: int = 0, **kwargs: object
) -> TargetRequest:
    messages = [Message(role="user", content=text)]
    test = Test(id=test_id, input=messages, suite="suite")
    return TargetRequest(
        test=test,
        messages=messages,
        prompt=render_input(messages),
        eval_path=Path("/tmp/x.eval.yaml"),
        attempt=attempt,
        **kwargs,  # type: ignore[arg-type]
    )
