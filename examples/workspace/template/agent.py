"""A toy coding agent (part of the workspace template): reads notes.txt in its working directory (the
per-test copy of the workspace template) and reports the status line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

notes = Path("notes.txt").read_text(encoding="utf-8") if Path("notes.txt").exists() else ""
statuses = [line.split(":", 1)[1].strip() for line in notes.splitlines() if line.startswith("status:")]
status = statuses[0] if statuses else "unknown"
with open(sys.argv[1], "w", encoding="utf-8") as handle:
    json.dump({"text": f"The project status is {status}."}, handle)
