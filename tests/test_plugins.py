"""Plugin loading through real entry points: built-ins, a third-party distribution, broken plugins.

A distribution is "installed" the way pip leaves it (a `*.dist-info` directory with
`entry_points.txt` on sys.path), and every check runs in a fresh subprocess so that entry-point
caches of this test process play no part.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from agentv_ci import plugins
from agentv_ci.errors import ConfigError
from tests.cli_helpers import mock_project, run_cli

REPO = Path(__file__).resolve().parent.parent
TEXT_STATS_SRC = REPO / "plugins" / "text-stats-grader" / "src"


def _install_fake_distribution(site: Path) -> None:
    """A distribution with a good grader, one that fails to import and one that breaks the contract."""
    dist = site / "fake_agentv_plugins-0.3.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-agentv-plugins\nVersion: 0.3\n")
    (dist / "entry_points.txt").write_text(
        "[agentv_ci.graders]\n"
        "text-stats = text_stats_grader:TextStatsGrader\n"
        "broken-import = fake_missing_module:Grader\n"
        "sync-grade = fake_sync_plugin:SyncGrader\n"
    )
    (site / "fake_sync_plugin.py").write_text(
        textwrap.dedent(
            """
            import msgspec

            class SyncGrader:
                class Config(msgspec.Struct):
                    pass

                def __init__(self, spec, config, *, base_dir):
                    pass

                def grade(self, ctx):  # not async: breaks the contract
                    return None
            """
        )
    )


def _run(args: list[str], site: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(TEXT_STATS_SRC), env.get("PYTHONPATH", "")])
    return run_cli(*args, cwd=cwd, env=env, timeout=120)


def test_every_builtin_entry_point_loads_and_meets_its_contract(tmp_path: Path) -> None:
    proc = _run(["plugins", "--check"], tmp_path / "empty-site", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in ("contains", "llm-grader", "code-grader", "composite", "openai", "cli", "junit", "sarif"):
        assert f"  {name} " in proc.stdout
    assert "BROKEN" not in proc.stdout


def test_third_party_grader_runs_and_broken_plugins_are_named(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _install_fake_distribution(site)
    listing = _run(["plugins", "--check"], site, tmp_path)
    assert listing.returncode == 2  # broken plugins found
    assert "text-stats" in listing.stdout and "(fake-agentv-plugins 0.3)  ok" in listing.stdout
    broken = next(line for line in listing.stdout.splitlines() if "broken-import" in line)
    assert "fake_missing_module:Grader" in broken and "ModuleNotFoundError" in broken
    sync = next(line for line in listing.stdout.splitlines() if "sync-grade" in line)
    assert "`grade` must be `async def`" in sync

    evals = mock_project(
        tmp_path / "evals",
        response="one two three four five",
        eval_file="stats.eval.yaml",
        eval_yaml="name: stats\ntests:\n"
        "  - id: short\n    input: hi\n    assertions:\n      - type: text-stats\n        max_words: 10\n"
        "  - id: too-long\n    input: hi\n    assertions:\n      - type: text-stats\n        max_words: 3\n",
    )
    out = tmp_path / "out"
    # A broken plugin elsewhere in the environment does not disturb a run that does not use it.
    proc = _run(["run", str(evals), "-o", str(out), "--no-fail"], site, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {r["test_id"]: r for r in map(json.loads, (out / "index.jsonl").read_text().splitlines())}
    assert rows["short"]["score"] == 1.0 and rows["short"]["scores"][0]["type"] == "text-stats"
    assert rows["too-long"]["score"] == 0.0 and rows["too-long"]["execution_status"] == "quality_failure"


def test_a_suite_using_a_broken_plugin_gets_a_named_error(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _install_fake_distribution(site)
    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "bad.eval.yaml").write_text(
        "name: bad\ntests:\n  - id: t\n    input: hi\n    assertions:\n      - type: broken-import\n"
    )
    proc = _run(["validate", str(evals)], site, tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "broken-import" in proc.stdout + proc.stderr
    assert "fake-agentv-plugins 0.3" in proc.stdout + proc.stderr


def test_register_for_tests_rejects_a_contract_breaker() -> None:
    class NoConfig:
        async def grade(self, ctx: object) -> None:
            return None

    with pytest.raises(ConfigError, match="missing Config"):
        plugins.register_for_tests(plugins.GRADERS_NAMESPACE, "no-config", NoConfig)
