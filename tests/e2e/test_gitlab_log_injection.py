"""Untrusted text cannot forge GitLab's job log (issue 29): a test id, an eval file name or a model
answer holding GitLab's section markers (`section_start:<unix>:<name>[collapsed=true]`,
`section_end:...`) or ESC sequences is printed by `run` so that neither of GitLab's log parsers
opens, closes or collapses a section, and no colour or cursor sequence reaches the log.

GitLab parses the log twice: the backend (`Gitlab::Ci::Ansi2json`) wants `\\r\\e[0K` after the
marker, but the job log viewer (`app/assets/javascripts/ci/job_log_viewer/lib/scanner.js`) takes
`section_<start|end>:<number>:<name>` anywhere in a line, up to a carriage return or the line's end,
with no escape at all. `forged_sections` below follows both.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.cli_helpers import run_cli
from tests.e2e.test_log_injection import terminal_bytes

# The backend's regex (lib/gitlab/regex.rb, build_trace_section_regex).
_BACKEND = re.compile(
    r"section_(start|end):(\d+):([a-zA-Z0-9_.-]+)(\[(?:\w+=\w+)(?:, ?(?:\w+=\w+))*\])?\r\x1b\[0K"
)
# What JavaScript's Number() accepts (after trimming); anything else is NaN.
_JS_NUMBER = re.compile(r"^(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Infinity|0[xX][0-9a-fA-F]+|)$")


def forged_sections(output: str) -> list[str]:
    """Every section marker either GitLab parser would act on in `output`."""
    found = [m.group(0) for m in _BACKEND.finditer(output)]
    for line in output.split("\n"):
        offset = line.find("section_")
        while offset >= 0:
            rest = line[offset + len("section_") :]
            marker = rest.split("\r", 1)[0]
            parts = [p.strip() for p in marker.split(":")]
            if len(parts) == 3 and parts[0] in ("start", "end") and _JS_NUMBER.match(parts[1]) and parts[2]:
                found.append("section_" + marker)
            offset = line.find("section_", offset + 1)
    return found


OPEN = "section_start:1700000000:evil[collapsed=true]"
CLOSE = "section_end:1700000000:step_script"
ESCAPED = "\x1b[0Ksection_start:1700000000:evil2[collapsed=true]\r\x1b[0K\x1b[31mred"


def _project(root: Path) -> Path:
    (root / ".agentv").mkdir(parents=True)
    answer = f"{OPEN} then {CLOSE}"
    (root / ".agentv" / "targets.yaml").write_text(
        f"targets:\n  - name: default\n    provider: mock\n    response: '{answer}'\n", encoding="utf-8"
    )
    evals = root / f"x {CLOSE}"
    evals.mkdir()
    ids = [f"a {OPEN}", "b " + ESCAPED.replace("\x1b", "\\e").replace("\r", "\\r")]
    cases = "".join(
        f'  - id: "{test_id}"\n    input: hi\n    assertions: [{{type: contains, value: nope}}]\n'
        for test_id in ids
    )
    (evals / f"{OPEN}.eval.yaml").write_text(f"tests:\n{cases}", encoding="utf-8")
    return root


def test_section_markers_in_data_neither_open_nor_close_a_gitlab_section(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GITLAB_", "CI_"))}
    env.update({"CI": "true", "GITLAB_CI": "true"})
    run = run_cli("run", ".", "-o", str(tmp_path / "out"), cwd=root, env=env, timeout=120)
    both = run.stdout + run.stderr
    assert run.returncode == 1, both
    failures = [line for line in run.stderr.splitlines() if line.startswith("FAIL")]
    assert len(failures) == 2, both  # the test ids were printed (so the check below means something)
    assert any("evil" in line for line in failures) and any("evil2" in line for line in failures)
    assert forged_sections(both) == []
    assert terminal_bytes(both) == []  # no ESC: no colour, no erase-line, no CR
