from pathlib import Path

import pytest

from agentv_ci.targets.environment import build_environment, interpolate


def test_interpolate_records_unset_and_empty_names_in_order() -> None:
    missing: list[str] = []
    tree = {"a": "${{ KEY }}", "b": ["x-${{ EMPTY }}-${{ SET }}", {"c": "${{ GONE }}"}], "d": 3}
    out = interpolate(tree, {"SET": "s", "EMPTY": ""}, missing)
    assert out == {"a": "", "b": ["x--s", {"c": ""}], "d": 3}
    assert missing == ["KEY", "EMPTY", "GONE"]


def test_interpolate_coerces_a_whole_placeholder() -> None:
    missing: list[str] = []
    assert interpolate(["${{ N }}", "${{ B }}"], {"N": "5", "B": "true"}, missing) == [5, True]
    assert missing == []


def test_build_environment_outside_a_checkout_reads_start_dir_and_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = tmp_path / "evals"
    start.mkdir()
    (tmp_path / ".env").write_text("PARENT=1\n")
    (start / ".env").write_text("HERE=1\nBOTH=start\n")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / ".env").write_text("CWD=1\nBOTH=cwd\n")
    monkeypatch.chdir(cwd)
    env = build_environment(start, env={"BOTH": "process"})
    assert env == {"HERE": "1", "CWD": "1", "BOTH": "process"}
    assert build_environment(start, env={})["BOTH"] == "start"
