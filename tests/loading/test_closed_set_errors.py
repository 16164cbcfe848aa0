"""A value outside a closed set (a `Literal` in the model) is the loader's E103 at file:line:col,
never msgspec's own Literal error or a traceback."""

from __future__ import annotations

from pathlib import Path

from tests.cli_helpers import run_cli

EVAL = """\
tests:
  - id: a
    input: hi
    criteria: ok
    mode: chat
    on_dependency_failure: ignore
    execution:
      repeat: {count: 2, strategy: best_of}
    workspace:
      isolation: per_suite
      mode: pool2
      hooks:
        before_each: {reset: hard}
  - id: b
    input: hi
    mode: conversation
    turns:
      - input: hi
    aggregation: median
    on_turn_failure: retry
"""


def test_each_unknown_choice_is_an_e103_at_its_place(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text("targets:\n  - name: default\n    provider: mock\n")
    path = tmp_path / "closed.eval.yaml"
    path.write_text(EVAL)
    done = run_cli("validate", str(path), cwd=tmp_path, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "Expected `" not in done.stdout + done.stderr  # msgspec's Literal message
    errors = {line.split(": error[E103]: ")[0] for line in done.stdout.splitlines() if "error[E103]" in line}
    assert errors == {
        f"closed.eval.yaml:{line}:{col}"
        for line, col in [(5, 11), (6, 28), (8, 36), (10, 18), (11, 13), (13, 30), (19, 18), (20, 22)]
    }, done.stdout
