"""End to end: `run --update-baseline` never writes through a committed symlink.

A symlink committed at the sidecar's old temporary name (`.<name>.<pid>.tmp`) pointed at a file
outside the repository: the write followed it, and the rename then made the sidecar that symlink. The
CLI runs here in a real process whose PID is known before it starts working (it waits for a line on
stdin), so the symlink sits at exactly the name that process would have used. A symlink at the
sidecar's own name is refused (E007, exit 2) with nothing written.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.e2e.test_sidecar_baselines import GEO_SIDECAR, MATH_SIDECAR, rows, write_project

# `python -m agentv_ci ARGS` once a line arrives on stdin (the PID is the CLI's own).
LAUNCH = (
    "import runpy, sys; sys.stdin.readline(); sys.argv[0] = 'agentv-ci'; "
    "runpy.run_module('agentv_ci', run_name='__main__')"
)
PRECIOUS = b"outside the repository: must never change\n"


def run_with_known_pid(root: Path, plant: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI in `root`; before it starts, each of `plant` (a sidecar path) gets a symlink at
    `.<sidecar name>.<pid>.tmp` pointing at `../outside/<sidecar name>`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    process = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, *args],
        cwd=root,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    for sidecar in plant:
        path = root / sidecar
        path.with_name(f".{path.name}.{process.pid}.tmp").symlink_to(root.parent / "outside" / path.name)
    stdout, stderr = process.communicate("go\n", timeout=300)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def outside_files(root: Path) -> dict[str, bytes]:
    outside = root.parent / "outside"
    outside.mkdir(exist_ok=True)
    files = {Path(name).name: PRECIOUS for name in (GEO_SIDECAR, MATH_SIDECAR)}
    for name, data in files.items():
        (outside / name).write_bytes(data)
    return files


def test_a_symlink_at_the_temporary_name_is_not_written_through(tmp_path: Path) -> None:
    root = write_project(tmp_path / "project")
    before = outside_files(root)

    done = run_with_known_pid(
        root, [GEO_SIDECAR, MATH_SIDECAR], "run", "evals", "-o", "out", "--update-baseline"
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert {p.name: p.read_bytes() for p in (tmp_path / "outside").iterdir()} == before
    for sidecar in (GEO_SIDECAR, MATH_SIDECAR):
        assert not (root / sidecar).is_symlink()
        assert (root / sidecar).is_file()
    assert [r["test_id"] for r in rows(root / GEO_SIDECAR)] == ["alpha", "words"]
    assert [r["test_id"] for r in rows(root / MATH_SIDECAR)] == ["sum"]
    # No temporary file is left behind (the planted symlinks are not ours to remove).
    left = sorted(p.name for p in (root / "evals").iterdir() if p.name.startswith("."))
    assert left and all((root / "evals" / name).is_symlink() for name in left)


def test_a_symlinked_sidecar_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    root = write_project(tmp_path / "project")
    outside_files(root)
    outside = tmp_path / "outside" / "geo.eval.baseline.jsonl"
    outside.write_bytes(b"")  # an empty results file: it reads as a baseline without rows
    (root / GEO_SIDECAR).symlink_to(outside)

    done = run_with_known_pid(root, [], "run", "evals", "-o", "out", "--update-baseline")

    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{GEO_SIDECAR}: error[E007]: refusing to write through a symlink" in done.stderr
    assert "Traceback" not in done.stderr
    assert outside.read_bytes() == b""
    assert (root / GEO_SIDECAR).is_symlink() and (root / GEO_SIDECAR).resolve() == outside.resolve()
    assert not (root / MATH_SIDECAR).exists()  # checked before anything was written
