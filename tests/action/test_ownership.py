"""Files the Action writes as root belong to the workspace's owner, so later steps can remove them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentv_ci.action.ownership import hand_over

needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="changing file owners needs root"
)
RUNNER_UID, RUNNER_GID = 1001, 127  # the hosted runner's user


@needs_root
def test_outputs_are_handed_to_the_workspace_owner(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    os.chown(workspace, RUNNER_UID, RUNNER_GID)
    results = workspace / ".agentv-ci" / "results"
    results.mkdir(parents=True)
    (results / "index.jsonl").write_text("{}\n")
    (results / "nested").mkdir()
    (results / "nested" / "x.json").write_text("{}")
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours")

    hand_over([results, outside, workspace / "missing"], workspace)

    for path in (workspace / ".agentv-ci", results, results / "index.jsonl", results / "nested" / "x.json"):
        assert (path.stat().st_uid, path.stat().st_gid) == (RUNNER_UID, RUNNER_GID), path
    assert outside.stat().st_uid == 0  # never anything outside the workspace


@needs_root
def test_a_root_owned_workspace_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    hand_over([tmp_path / "out"], tmp_path)
    assert (tmp_path / "out").stat().st_uid == 0


@needs_root
def test_symlinks_are_not_followed(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    (workspace / "out").mkdir(parents=True)
    os.chown(workspace, RUNNER_UID, RUNNER_GID)
    secret = tmp_path / "secret"
    secret.write_text("root's")
    (workspace / "out" / "link").symlink_to(secret)

    hand_over([workspace / "out"], workspace)

    assert secret.stat().st_uid == 0
    assert (workspace / "out").stat().st_uid == RUNNER_UID
