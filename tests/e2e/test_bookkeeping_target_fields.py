"""End to end: target fields that cannot change an answer do not switch off the regression gate.

A committed sidecar catches a 1.0 -> 0.5 drop of a real cli agent (exit 1). Adding `pricing:`,
rate limits, `workers`, an `env:` entry or `sources:` to the target in the same change used to make
every test "changed definition since the baseline, not compared" and the run pass (exit 0). A field
that does say which program answers (`command`) still makes the tests `changed`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_sidecar_baselines import WORSE, cli, write_project

REGRESSED = "geo/words [agent]: regressed vs baseline (1.000 -> 0.500)"


@pytest.mark.parametrize(
    "added",
    [
        "    pricing: {input_per_mtok: 1, output_per_mtok: 2}\n",
        "    max_rpm: 100\n    max_tpm: 100000\n    max_concurrency: 2\n    workers: 2\n",
        "    env:\n      UNUSED_SETTING: 'on'\n",
        "    sources: [agent.py]\n",
    ],
    ids=["pricing", "limits", "env", "sources"],
)
def test_a_bookkeeping_field_added_with_a_regression_still_fails_the_gate(tmp_path: Path, added: str) -> None:
    project = write_project(tmp_path / "project")
    assert cli(project, "run", "evals", "-o", "out/base", "--update-baseline", "-q").returncode == 0
    (project / "answer.txt").write_text(WORSE, encoding="utf-8")
    targets = project / ".agentv" / "targets.yaml"
    targets.write_text(targets.read_text(encoding="utf-8") + added, encoding="utf-8")

    done = cli(project, "run", "evals", "-o", "out/head", "--max-regression", "0.1", "-q")

    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert REGRESSED in output
    assert "changed definition" not in output


def test_a_different_command_is_still_a_changed_definition(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project")
    assert cli(project, "run", "evals", "-o", "out/base", "--update-baseline", "-q").returncode == 0
    targets = project / ".agentv" / "targets.yaml"
    targets.write_text(
        targets.read_text(encoding="utf-8").replace(" agent.py", " -B agent.py"), encoding="utf-8"
    )

    done = cli(project, "run", "evals", "-o", "out/head", "--max-regression", "0.1", "-q")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 test(s) changed definition since the baseline" in done.stdout
