"""Fake coding-agent executables for the agent target tests (see fake_agent.py)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

FAKE_AGENT = Path(__file__).resolve().parent / "fake_agent.py"
STREAMS = Path(__file__).resolve().parent / "streams"
AGENT_NAMES = ("claude", "codex", "copilot", "pi")


def install_fake_agents(bin_dir: Path, names: tuple[str, ...] = AGENT_NAMES) -> Path:
    """Executables named like the real agents in `bin_dir` (put it first on PATH); returns `bin_dir`."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        path = bin_dir / name
        path.write_text(
            f"#!{sys.executable}\nimport os, runpy\n"
            f"os.environ.setdefault('FAKE_AGENT_FAMILY', {name!r})\n"
            f"runpy.run_path({str(FAKE_AGENT)!r}, run_name='__main__')\n",
            encoding="utf-8",
        )
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return bin_dir


def path_with(bin_dir: Path) -> str:
    """PATH with `bin_dir` first."""
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
