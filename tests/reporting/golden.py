"""Golden-file comparison. Set AGENTV_CI_UPDATE_GOLDEN=1 to rewrite the files after a reviewed change."""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN_DIR = Path(__file__).resolve().parent.parent / "golden"
FAKE_REPO = Path("/repo")  # never touched on disk: only used to relativise eval paths


def assert_golden(name: str, actual: str) -> None:
    path = GOLDEN_DIR / name
    if os.environ.get("AGENTV_CI_UPDATE_GOLDEN") == "1":
        path.write_text(actual, encoding="utf-8")
    assert path.is_file(), (
        f"missing golden file {path}; run with AGENTV_CI_UPDATE_GOLDEN=1 once and review it"
    )
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{name} differs from its golden file (AGENTV_CI_UPDATE_GOLDEN=1 rewrites it)"
