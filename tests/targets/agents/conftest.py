"""Fixtures for the agent targets: fake agent executables first on PATH, a workspace with a bug."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentv_ci.model.result import TargetResponse
from agentv_ci.plugins import TargetPlugin, TargetRequest
from tests.fakes.agents import install_fake_agents, path_with

BUGGY = "def add(a, b):\n    return a - b\n"


@pytest.fixture
def agent_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fake agents on PATH; what each fake start saw is appended to the returned file."""
    bin_dir = install_fake_agents(tmp_path / "bin")
    monkeypatch.setenv("PATH", path_with(bin_dir))
    log = tmp_path / "agent-log.jsonl"
    monkeypatch.setenv("FAKE_AGENT_LOG", str(log))
    # Agents get a scrubbed environment: the fake's own controls are handed through by name.
    monkeypatch.setenv("AGENTV_CI_PASS_ENV", "FAKE_AGENT_LOG,FAKE_AGENT_ENV,FAKE_AGENT_STREAM")
    return log


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "workspace"
    path.mkdir()
    (path / "calc.py").write_text(BUGGY)
    yield path


def starts(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def invoke(target: TargetPlugin, request: TargetRequest) -> TargetResponse:
    async def go() -> TargetResponse:
        try:
            return await target.invoke(request)
        finally:
            await target.aclose()

    return asyncio.run(go())


def stream_file(tmp_path: Path, lines: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> Path:
    """A recorded stream for this test only (FAKE_AGENT_STREAM)."""
    path = tmp_path / "stream.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    monkeypatch.setenv("FAKE_AGENT_STREAM", str(path))
    return path
