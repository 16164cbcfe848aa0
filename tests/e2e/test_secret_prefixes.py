"""End to end: no piece of a secret survives a cut. A real cli agent echoes a 50-character key from its
environment so that every excerpt the graders and reporters take cuts through a copy of it (the
300-character `actual`, the 200-character evidence, the context around a match), and its answer ends
in the first 30 characters of the key (an answer cut off mid-key). No 8-character piece of the key
may reach index.jsonl, JUnit, SARIF, the Markdown summary, summary.json or the committed sidecar."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tests.cli_helpers import run_cli

KEY = "sk-live-Q7w2E9r4T1y6U3i8O5p0A2s7D4f9G1h6J3k8L5z0X2"  # 50 characters

# Copies of the key at 180 (the evidence cut at 200), 255 (the `actual` cut at 280 of the quoted
# JSON) and 400 (40 characters before "MARKER": the context a found `contains` shows starts inside
# it), and the answer ends in a prefix of it.
AGENT = """\
import os, pathlib, sys
key = os.environ["AGENT_KEY"]
answer = "x" * 180 + key + "x" * 25 + key + "x" * 95 + key + " MARKER " + "x" * 100
answer += " and then it was cut off at " + key[:30]
pathlib.Path(sys.argv[1]).write_text(answer)
"""
EVAL = """\
execution:
  target: agent
tests:
  - id: echo
    input: Tell me the key
    assertions:
      - {name: absent, type: contains, value: nothing-here}
      - {name: anchored, type: regex, value: "^nomatch$"}
      - {name: exact, type: equals, value: something else}
      - {name: marker, type: contains, value: MARKER}
"""
SIDECAR = "evals/echo.eval.baseline.jsonl"


def pieces(secret: str, size: int = 8) -> list[str]:
    return [secret[i : i + size] for i in range(len(secret) - size + 1)]


def leaked(text: str) -> list[str]:
    return [piece for piece in pieces(KEY) if piece in text]


def test_no_piece_of_a_secret_survives_an_excerpt_cut(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / ".agentv").mkdir()
    (root / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: agent\n    provider: cli\n"
        f"    command: {sys.executable} agent.py {{OUTPUT_FILE}}\n    cwd: ..\n"
        "    env:\n      AGENT_KEY: ${{ DEPLOY_API_KEY }}\n",
        encoding="utf-8",
    )
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    (root / "evals").mkdir()
    (root / "evals" / "echo.eval.yaml").write_text(EVAL, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env["DEPLOY_API_KEY"] = KEY

    done = run_cli(
        "run",
        "evals",
        "-o",
        "out",
        "--junit",
        "out/junit.xml",
        "--sarif",
        "out/results.sarif",
        "--markdown",
        "out/summary.md",
        "--update-baseline",
        cwd=root,
        env=env,
        timeout=120,
    )

    assert done.returncode == 1, done.stdout + done.stderr  # three graders fail: a quality failure
    assert f"wrote 1 baseline sidecar(s):\n  {SIDECAR}\n" in done.stdout
    [row] = [json.loads(line) for line in (root / "out" / "index.jsonl").read_text().splitlines()]
    # The agent did echo the key, and every grader's `actual` was cut from an answer holding it.
    assert row["output"].count("***") == 4
    actuals = {g["name"]: g["assertions"][0]["actual"] for g in row["scores"]}
    assert set(actuals) == {"absent", "anchored", "exact", "marker"}
    assert all("***" in actual for actual in actuals.values()), actuals
    outputs = {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for path in [*(root / "out").rglob("*"), root / SIDECAR]
        if path.is_file()
    }
    assert {"out/index.jsonl", "out/junit.xml", "out/results.sarif", "out/summary.md", SIDECAR} <= set(
        outputs
    )
    leaks = {name: leaked(text) for name, text in outputs.items() if leaked(text)}
    assert leaks == {}
    assert leaked(done.stdout) == [] and leaked(done.stderr) == []
