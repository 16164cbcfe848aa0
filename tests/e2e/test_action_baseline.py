"""`agentv-ci action` names the baseline it compared against (the artifact and its run, or the commit
re-run), or says in one line why there was none; a suite whose only test changed definition shows
`n/a` and that test's old and new scores, never `+0.000`. Real git repositories, the CLI in a
subprocess and the fake GitHub API on 127.0.0.1."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.e2e.scaffold import FAILING, PASSING, Project, run_action
from tests.fakes.github_server import FakeGitHub
from tests.git_repos import git

NO_ARTIFACT = "baseline: auto: no unexpired 'agentv-ci-results' artifact from a run on 'main' in octo/demo"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def _summary_json(project: Project) -> dict[str, object]:
    data = json.loads((project.repo / ".agentv-ci/results/summary.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _cli_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}


def test_baseline_auto_without_an_artifact_says_why_in_the_log_summary_and_comment(
    project: Project, github_server: FakeGitHub
) -> None:
    project.commit({"evals/math.eval.yaml": FAILING.replace('"5"', '"4"')})
    env = project.env(github_server, project.event(), baseline="auto", max_regression="0.1")

    done = run_action(env, project.root)

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"baseline: none: {NO_ARTIFACT}" in done.stdout  # the log
    line = f"**No baseline:** {NO_ARTIFACT}."
    [comment] = github_server.comments_on(7)
    assert line in comment.body
    assert line in (project.repo / ".agentv-ci/results/summary.md").read_text(encoding="utf-8")
    assert line in (project.root / "files" / "summary.md").read_text(encoding="utf-8")
    assert _summary_json(project)["baseline"] == {"kind": "none", "reason": NO_ARTIFACT}

    # `report` says it again from summary.json, without the Action around it.
    done = run_cli(
        "report",
        ".agentv-ci/results",
        "--markdown",
        "again.md",
        cwd=project.repo,
        env=_cli_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert line in (project.repo / "again.md").read_text(encoding="utf-8")
    assert f"baseline: none: {NO_ARTIFACT}" in done.stdout


def test_baseline_auto_names_the_artifact_its_run_and_commit(
    project: Project, github_server: FakeGitHub
) -> None:
    env = _cli_env()
    git(project.repo, "checkout", "-q", "main")
    made = run_cli(
        "run", "evals", "-o", str(project.root / "base-run"), cwd=project.repo, env=env, timeout=120
    )
    assert made.returncode == 0, made.stdout + made.stderr
    git(project.repo, "checkout", "-q", "feature")
    base_run = project.root / "base-run"
    artifact = github_server.add_artifact(
        files={name: (base_run / name).read_bytes() for name in ("index.jsonl", "summary.json")}
    )
    project.commit({"evals/math.eval.yaml": FAILING.replace('"5"', '"4"')})
    env = project.env(github_server, project.event(), baseline="auto", changed_only="false")

    done = run_action(env, project.root)

    assert done.returncode == 0, done.stdout + done.stderr
    run_url = f"https://github.example/octo/demo/actions/runs/{artifact.run_id}"
    sha = f"{artifact.run_id:040x}"  # the head commit the fake API lists for the artifact's run
    [comment] = github_server.comments_on(7)
    assert (
        f"**Baseline:** artifact `agentv-ci-results` (id {artifact.id}) of workflow run "
        f"[{artifact.run_id}]({run_url}), commit `{sha}`." in comment.body
    )
    assert "| geo | 1 | 100% (1/1) | 1.000 | +0.000 over 1 of 1 test |" in comment.body
    assert (
        f"baseline: artifact 'agentv-ci-results' (id {artifact.id}) of workflow run {artifact.run_id} "
        f"({run_url}), commit {sha}" in done.stdout
    )
    recorded = _summary_json(project)["baseline"]
    assert recorded == {
        "kind": "artifact",
        "name": "agentv-ci-results",
        "artifact_id": artifact.id,
        "run_id": artifact.run_id,
        "run_url": run_url,
        "commit": sha,
    }


def test_merge_base_rerun_names_the_commit(project: Project, github_server: FakeGitHub) -> None:
    project.commit({"evals/math.eval.yaml": FAILING.replace('"5"', '"4"')})
    env = project.env(github_server, project.event(), baseline_ref="merge-base", max_regression="0.1")

    done = run_action(env, project.root)

    assert done.returncode == 0, done.stdout + done.stderr
    [comment] = github_server.comments_on(7)
    assert f"**Baseline:** re-run at commit `{project.base}` (`merge-base`)." in comment.body
    assert f"baseline: re-run at commit {project.base} (merge-base)" in done.stdout
    assert _summary_json(project)["baseline"] == {
        "kind": "commit",
        "commit": project.base,
        "ref": "merge-base",
    }


EIGHT_CHECKS = "tests:\n  - id: capital\n    input: Name eight words.\n    expected_output: {answer}\n" + (
    "    assertions:\n" + "".join(f"      - {{type: contains, value: w{i}}}\n" for i in range(8))
)


def test_a_suite_whose_only_test_changed_definition_shows_na_and_the_old_and_new_scores(
    project: Project, github_server: FakeGitHub
) -> None:
    """1.000 at the base; the PR edits the test (one check now asks for a word the answer lacks):
    0.875. The suite delta is n/a, not +0.000; the test is listed; the gate ignores it."""
    answer = " ".join(f"w{i}" for i in range(8))
    git(project.repo, "checkout", "-q", "main")
    project.commit({"evals/geo.eval.yaml": EIGHT_CHECKS.replace("{answer}", answer)}, "eight checks")
    project.base = git(project.repo, "rev-parse", "HEAD")
    git(project.repo, "checkout", "-q", "feature")
    git(project.repo, "reset", "-q", "--hard", "main")
    edited = EIGHT_CHECKS.replace("{answer}", answer).replace("value: w7", "value: w9")
    project.commit({"evals/geo.eval.yaml": edited}, "edit the test")
    env = project.env(github_server, project.event(), baseline_ref="merge-base", max_regression="0.1")

    done = run_action(env, project.root)

    assert done.returncode == 0, done.stdout + done.stderr  # a changed test is never a regression
    [comment] = github_server.comments_on(7)
    assert "| geo | 1 | 100% (1/1) | 0.875 | n/a (0 of 1 test comparable) |" in comment.body
    assert "+0.000" not in comment.body
    assert (
        "- geo: 1 test changed definition: geo/capital \\[default\\] old 1.000 -&gt; new 0.875"
        in comment.body
    )
    summary = (project.repo / ".agentv-ci/results/summary.md").read_text(encoding="utf-8")
    assert "n/a (0 of 1 test comparable)" in summary and "old 1.000 -&gt; new 0.875" in summary


def test_run_and_report_name_a_baseline_directory(tmp_path: Path) -> None:
    evals = tmp_path / "evals"
    (tmp_path / ".agentv").mkdir(parents=True)
    (tmp_path / ".agentv" / "targets.yaml").write_text("targets:\n  - name: default\n    provider: mock\n")
    evals.mkdir()
    (evals / "geo.eval.yaml").write_text(PASSING, encoding="utf-8")
    env = _cli_env()
    assert run_cli("run", "evals", "-o", "base", cwd=tmp_path, env=env, timeout=120).returncode == 0

    done = run_cli(
        "run", "evals", "-o", "head", "--baseline", "base", "--markdown", "head.md",
        cwd=tmp_path, env=env, timeout=120,
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    assert "baseline: results at base" in done.stdout
    assert "**Baseline:** results at `base`." in (tmp_path / "head.md").read_text(encoding="utf-8")
    recorded = json.loads((tmp_path / "head" / "summary.json").read_text(encoding="utf-8"))["baseline"]
    assert recorded == {"kind": "path", "name": "base"}

    again = run_cli("report", "head", "--markdown", "again.md", cwd=tmp_path, env=env, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    text = (tmp_path / "again.md").read_text(encoding="utf-8")
    assert (
        "**Baseline (when the run was gated):** results at `base`; not read again here, so no deltas." in text
    )
