"""`TargetProxyClient` (what a Python code grader calls the proxy with) ends each call by the wall
clock: against a real server on 127.0.0.1 that drips its answer one byte every 0.2 s (in the headers
or in the body), `timeout_s=1` gives up at about 1 s with a `TargetProxyError` naming the timeout.
A read timeout alone would have waited for the whole answer (over a minute)."""

from __future__ import annotations

import json
import time

import pytest

from agentv_ci.api import TargetProxyClient, TargetProxyError
from tests.fakes.drip_server import DripServer


@pytest.mark.parametrize("where", ["headers", "body"])
def test_a_dripping_proxy_answer_ends_at_the_deadline(where: str) -> None:
    with DripServer(interval_s=0.2, where=where) as drip:
        client = TargetProxyClient(drip.url, "token", timeout_s=1)
        started = time.monotonic()
        with pytest.raises(TargetProxyError, match=r"timed out after 1s \(wall clock\)"):
            client.invoke("Is Paris right?")
        elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 3, elapsed
    assert len(drip.answer()) * 0.2 > 30  # what waiting for the whole answer would have taken


def test_a_prompt_answer_still_arrives_whole() -> None:
    answer = {"output": [{"role": "assistant", "content": "yes"}], "rawText": "yes"}
    with DripServer(interval_s=0.0005, where="body", body=json.dumps(answer).encode()) as drip:
        result = TargetProxyClient(drip.url, "token", timeout_s=20).invoke("Is Paris right?")
    assert result.raw_text == "yes" and result.output == answer["output"]
