"""The sharded workflow (examples/workflows/evals-sharded.yml) on a PR that affects no eval: end to
end through `agentv-ci action`, a real git repository, the fake GitHub API, and the artifacts
carried from the shard jobs to the merge job as upload-artifact / download-artifact carry them
(the shard's `output_dir`, hidden files left out, into `shards/agentv-ci-shard-N/`).

- Every shard selects nothing and says `skipped`; the merge job's `results: shards/*` is `skipped`
  too, exit 0 (before, it was "nothing conclusive ran", exit 3: a red for a docs-only PR).
- A shard that left no record at all is missing: the merge is incomplete, exit 3, naming it.
- A skipped shard beside a shard that ran: judged on the one that ran, and a skipped record never
  stands in for a shard the one that ran says had tests.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.e2e.scaffold import Project, run_action
from tests.fakes.github_server import FakeGitHub

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "examples" / "workflows" / "evals-sharded.yml"
SHARD_DIR = ".agentv-ci/shard"  # the example's `output_dir`, checked against it below


def _docs_only_pr(root: Path) -> Project:
    project = Project(root)  # two evals on a mock target, on main; the `feature` branch
    project.commit({"README.md": "better docs\n"}, "docs only")
    return project


def _shard(
    project: Project, github: FakeGitHub, index: int, count: int, *, exit_code: int = 0, **inputs: str
) -> Path:
    """One shard job: the Action with the example's inputs, then its upload (the output directory
    without hidden files) downloaded to `shards/agentv-ci-shard-<index>/`. Returns that directory."""
    env = project.env(
        github,
        project.event(),
        paths="evals",
        shard=f"{index}/{count}",
        comment="false",
        output_dir=SHARD_DIR,
        **inputs,
    )
    shutil.rmtree(project.repo / SHARD_DIR, ignore_errors=True)
    done = run_action(env, project.root)
    assert done.returncode == exit_code, done.stdout + done.stderr
    artifact = project.repo / "shards" / f"agentv-ci-shard-{index}"
    shutil.copytree(
        project.repo / SHARD_DIR, artifact, ignore=lambda _d, names: [n for n in names if n.startswith(".")]
    )
    return artifact


def _merge(project: Project, github: FakeGitHub) -> tuple[int, str, dict[str, str]]:
    env = project.env(github, project.event(), results="shards/*")
    done = run_action(env, project.root)
    return done.returncode, done.stdout + done.stderr, project.outputs()


def test_a_docs_only_pr_is_skipped_by_every_shard_and_by_the_merge(tmp_path: Path) -> None:
    with FakeGitHub() as github:
        project = _docs_only_pr(tmp_path)
        for index in (1, 2, 3):
            artifact = _shard(project, github, index, 3)
            assert project.outputs()["verdict"] == "skipped"
            # What the merge needs is in the upload: the (empty) results, a plan of no job naming the
            # shard, and a summary that says why nothing ran.
            assert {"index.jsonl", "plan.jsonl", "summary.json"} <= {p.name for p in artifact.iterdir()}
            plan = (artifact / "plan.jsonl").read_text()
            assert f'"shard":[{index},3]' in plan and '"nothing_selected":true' in plan
        assert github.comments_on(7) == []  # the shards do not comment

        code, output, outputs = _merge(project, github)

        assert code == 0, output
        assert outputs["verdict"] == "skipped", outputs
        assert "No eval is affected by the changes" in output
        assert "nothing conclusive ran" not in output
        assert outputs["verdict_text"].startswith("SKIPPED: No eval is affected by the changes")
        assert github.comments_on(7) == []  # nothing ran, and there is no earlier comment to update


def test_a_shard_without_any_record_makes_the_merge_incomplete(tmp_path: Path) -> None:
    with FakeGitHub() as github:
        project = _docs_only_pr(tmp_path)
        _shard(project, github, 1, 3)
        _shard(project, github, 2, 3)  # shard 3/3 was killed before it wrote anything: no artifact

        code, output, outputs = _merge(project, github)

        assert code == 3, output
        assert outputs["verdict"] == "inconclusive", outputs
        assert "no results from shard 3/3" in output, output
        [comment] = github.comments_on(7)
        assert "3/3" in comment.body and "skipped" not in outputs["verdict"]


@pytest.mark.parametrize(
    ("ran", "skipped", "exit_code"),
    # Both tests land in shard 2 of 2 (running/sharding.py): shard 1 of the run has no test.
    [(2, 1, 0), (1, 2, 3)],
    ids=["skipped-shard-had-no-tests", "skipped-record-for-a-shard-with-tests"],
)
def test_skipped_and_real_shards_are_judged_on_the_real_ones(
    tmp_path: Path, ran: int, skipped: int, exit_code: int
) -> None:
    with FakeGitHub() as github:
        project = _docs_only_pr(tmp_path)
        # Every eval, this shard's part (shard 1/2 has none: its own step is inconclusive, as before).
        _shard(project, github, ran, 2, exit_code=0 if ran == 2 else 3, changed_only="false")
        _shard(project, github, skipped, 2)

        code, output, outputs = _merge(project, github)

        assert code == exit_code, output
        if exit_code == 0:
            assert outputs["verdict"] == "passed" and outputs["tests"] == "2", outputs
        else:  # the run says shard 2/2 has both tests; a record that selected nothing does not run them
            assert outputs["verdict"] == "inconclusive", outputs
            assert "incomplete: 2 of 2 tests did not run" in output, output


def test_the_sharded_example_uploads_the_shard_record_whenever_the_shard_step_ran() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps = workflow["jobs"]["shard"]["steps"]
    [action] = [s for s in steps if str(s.get("uses", "")).startswith("agentevals/action@")]
    [upload] = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert steps.index(upload) > steps.index(action)
    assert action["with"]["output_dir"] == SHARD_DIR
    assert upload["with"]["path"] == SHARD_DIR  # the record (plan.jsonl, summary.json) is in it
    assert "!cancelled()" in upload["if"]  # skipped, passed or failed: always uploaded
    assert upload["with"]["name"].startswith("agentv-ci-shard-")
    merge = workflow["jobs"]["merge"]
    assert "!cancelled()" in merge["if"]
    [download] = [
        s for s in merge["steps"] if str(s.get("uses", "")).startswith("actions/download-artifact@")
    ]
    assert download["with"] == {"pattern": "agentv-ci-shard-*", "path": "shards"}
    [merged] = [s for s in merge["steps"] if str(s.get("uses", "")).startswith("agentevals/action@")]
    assert merged["with"]["results"] == "shards/*"
