"""An expensive test artefact (the `agentv-ci:test` image, the fresh venv) built once per test session,
however many pytest-xdist workers and test files need it.

Under xdist every worker has its own basetemp, and their parent directory belongs to this session
alone: the first worker to take the artefact's lock there builds it, the others wait and reuse it
(the pattern of pytest-xdist's docs, "making session-scoped fixtures execute only once"). Without
xdist that parent holds earlier sessions too, so the artefact is simply built in this session's
basetemp. A build that fails leaves no `.done` marker: the next worker builds again and fails with
its own error, so no test reuses half an artefact.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path

import pytest


def once_per_session(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """The directory `build` filled for `name` in this session; `build` runs in one worker only."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        where = tmp_path_factory.mktemp(name, numbered=False)
        build(where)
        return where
    shared = tmp_path_factory.getbasetemp().parent
    where = shared / name
    done = shared / f"{name}.done"
    # flock, not a lock file's existence: the kernel drops it if the holder dies mid-build.
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            where.mkdir(exist_ok=True)
            build(where)
            done.touch()
    return where
