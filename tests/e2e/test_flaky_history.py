"""Flakiness measured, not declared (issue 27 item 2), end to end with a stochastic `cli` agent
(tests/fakes/stochastic_agent.py): `agentv-ci flaky` labels tests from ten single-sample runs, and
`--history` keeps a test those runs label flaky from blocking while a stable test that breaks still
blocks, through `run`, `report` and `agentv-ci action` (history from base-branch artifacts served by
the fake GitHub API; artifacts of the pull request's own branch do not count)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.e2e.scaffold import Project, run_action
from tests.fakes.github_server import FakeGitHub
from tests.fakes.stochastic_agent import TARGETS_YAML, passes
from tests.git_repos import git

TARGETS = TARGETS_YAML
EVAL = """\
tests:
  - id: always
    input: id=always p=1
    assertions: [{type: equals, value: PASS}]
  - id: never
    input: id=never p=0
    assertions: [{type: equals, value: PASS}]
  - id: often
    input: id=often p=0.6
    assertions: [{type: equals, value: PASS}]
"""
OFTEN = "id=often p=0.6"
NEVER = "  - id: never\n    input: id=never p=0\n    assertions: [{type: equals, value: PASS}]\n"
SEEDS = [f"s{n}" for n in range(10)]  # not digits: `${{ }}` values are typed as YAML


def _env(seed: str, broken: str = "none") -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "AGENT_"))}
    return {**base, "AGENT_SEED": seed, "AGENT_BROKEN": broken}


def _project(root: Path) -> Path:
    (root / ".agentv").mkdir(parents=True)
    (root / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    (root / "evals").mkdir()
    (root / "evals" / "coins.eval.yaml").write_text(EVAL, encoding="utf-8")
    return root


def _seed_where(often_passes: bool) -> str:
    return next(f"head-{n}" for n in range(100) if passes(f"head-{n}", OFTEN) == often_passes)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """The project and ten single-sample runs of it (seeds 0..9, oldest first)."""
    root = _project(tmp_path_factory.mktemp("coins"))
    runs = []
    for seed in SEEDS:
        out = root / "history" / f"run-{seed}"
        done = run_cli("run", "evals", "-q", "-o", str(out), cwd=root, env=_env(seed), timeout=120)
        assert done.returncode == 1, done.stdout + done.stderr  # `never` fails every time
        runs.append(out)
    return root, runs


def test_flaky_labels_counts_and_wilson_interval_from_ten_runs(history: tuple[Path, list[Path]]) -> None:
    stats = pytest.importorskip("scipy.stats")
    root, runs = history
    often = [passes(seed, OFTEN) for seed in SEEDS]
    assert 0 < sum(often) < len(often)  # the seeds give the 60% test both verdicts
    flips = sum(1 for a, b in itertools.pairwise(often) if a != b)

    done = run_cli("flaky", *map(str, runs), "--json", cwd=root, env=_env("x"), timeout=120)

    assert done.returncode == 0, done.stdout + done.stderr
    rows = {row["test_id"]: row for row in json.loads(done.stdout)}
    assert set(rows) == {"always", "never", "often"}
    k = sum(often)
    expected = {
        "always": ("stable-pass", 10, 0),
        "never": ("stable-fail", 0, 0),
        "often": ("flaky", k, flips),
    }
    for test_id, (label, passed, flipped) in expected.items():
        row = rows[test_id]
        assert (row["suite"], row["target"], row["label"]) == ("coins", "default", label)
        assert (row["runs"], row["attempts"], row["passes"], row["flips"]) == (10, 10, passed, flipped)
        assert row["runs_passed"] == passed
        low, high = stats.binomtest(passed, 10).proportion_ci(confidence_level=0.95, method="wilson")
        assert row["pass_rate"] == pytest.approx(passed / 10)
        assert row["interval"] == pytest.approx([low, high], abs=1e-9)

    table = run_cli("flaky", *map(str, runs), cwd=root, env=_env("x"), timeout=120)
    assert table.returncode == 0, table.stdout + table.stderr
    low, high = stats.binomtest(k, 10).proportion_ci(method="wilson")
    line = next(line for line in table.stdout.splitlines() if "coins/often [default]" in line)
    assert f"{k / 10:.0%} [{low:.0%}, {high:.0%}]" in line and "flaky" in line
    assert f"{flips}" in line.split()


def test_flaky_refuses_bad_input_with_a_location(history: tuple[Path, list[Path]], tmp_path: Path) -> None:
    root, runs = history
    missing = run_cli("flaky", str(tmp_path / "nowhere"), cwd=root, env=_env("x"), timeout=120)
    assert missing.returncode == 2, missing.stdout + missing.stderr
    assert "nowhere" in missing.stderr and "Traceback" not in missing.stderr
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"test_id": "a", "suite": "s", "target": "t", "score": 0.5}\n{"test_id": \n')
    done = run_cli("flaky", str(runs[0]), str(broken), cwd=root, env=_env("x"), timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{broken}:2:1" in done.stderr and "Traceback" not in done.stderr
    assert run_cli("flaky", cwd=root, env=_env("x"), timeout=120).returncode == 2  # no RUN


def _head(root: Path, name: str, seed: str, *args: str, broken: str = "none") -> tuple[int, str]:
    out = root / "heads" / name
    shutil.rmtree(out, ignore_errors=True)
    done = run_cli(
        "run", "evals", "-q", "-o", str(out), "--test-id", "always", "--test-id", "often", *args,
        cwd=root, env=_env(seed, broken), timeout=120,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def test_history_waives_a_flaky_failure_and_blocks_a_stable_one(history: tuple[Path, list[Path]]) -> None:
    root, runs = history
    k = sum(passes(seed, OFTEN) for seed in SEEDS)
    history_args = [arg for run in runs for arg in ("--history", str(run))]
    note = (
        "coins/often [default]: failed; not blocking, "
        f"flaky: failed now; passed {k} of 10 runs on the base branch"
    )

    # Without history the flaky test's failure blocks, as today.
    code, text = _head(root, "plain", _seed_where(False))
    assert code == 1, text

    code, text = _head(root, "flaky", _seed_where(False), *history_args)
    assert code == 0, text
    assert note in text

    code, text = _head(root, "broken", _seed_where(True), *history_args, broken="id=always")
    assert code == 1, text
    assert "1 test(s) below threshold: coins/always [default]" in text

    # `report` applies the same history to a finished run.
    again = run_cli(
        "report", str(root / "heads" / "flaky"), *history_args, cwd=root, env=_env("x"), timeout=120
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert note in again.stdout
    again = run_cli(
        "report", str(root / "heads" / "broken"), *history_args, cwd=root, env=_env("x"), timeout=120
    )
    assert again.returncode == 1, again.stdout + again.stderr


def _artifact_files(run: Path) -> dict[str, bytes]:
    return {name: (run / name).read_bytes() for name in ("index.jsonl", "summary.json")}


def test_action_history_comes_from_base_branch_artifacts_only(
    history: tuple[Path, list[Path]], tmp_path: Path, github_server: FakeGitHub
) -> None:
    _, runs = history
    project = Project(tmp_path)
    git(project.repo, "checkout", "-q", "main")
    (project.repo / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    git(project.repo, "rm", "-q", "evals/geo.eval.yaml", "evals/math.eval.yaml")
    (project.repo / "evals").mkdir(exist_ok=True)  # `git rm` of its last files removed it
    without_never = EVAL.replace(NEVER, "")
    assert without_never != EVAL
    project.commit({"evals/coins.eval.yaml": without_never}, "coins")
    project.base = git(project.repo, "rev-parse", "HEAD")
    git(project.repo, "checkout", "-q", "feature")
    git(project.repo, "reset", "-q", "--hard", "main")
    project.commit({"README.md": "a change\n"})

    base_runs = runs[:5]
    k = sum(passes(seed, OFTEN) for seed in SEEDS[:5])
    assert 0 < k < 5
    for run in base_runs:
        github_server.add_artifact(files=_artifact_files(run))
    # The pull request's own branch, and a pull_request run on main, would label `always` flaky:
    # neither counts.
    feature = tmp_path / "feature-run"
    made = run_cli(
        "run",
        "evals",
        "-q",
        "-o",
        str(feature),
        cwd=project.repo,
        env=_env("f", broken="id=always"),
        timeout=120,
    )
    assert made.returncode == 1, made.stdout + made.stderr
    for _ in range(3):
        github_server.add_artifact(branch="feature", files=_artifact_files(runs[0]))
        github_server.add_artifact(branch="feature", files=_artifact_files(feature))
        github_server.add_artifact(event="pull_request", files=_artifact_files(feature))

    env = project.env(github_server, project.event(), changed_only="false", history="5")
    done = run_action({**env, "AGENT_SEED": _seed_where(False), "AGENT_BROKEN": "none"}, project.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"flaky: failed now; passed {k} of 5 runs on main" in done.stdout
    [comment] = github_server.comments_on(7)
    assert "#### Flaky (1)" in comment.body and "coins/often \\[default\\]" in comment.body

    done = run_action({**env, "AGENT_SEED": _seed_where(True), "AGENT_BROKEN": "id=always"}, project.root)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 test(s) below threshold: coins/always [default]" in done.stdout
