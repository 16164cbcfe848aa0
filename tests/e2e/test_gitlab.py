"""`agentv-ci gitlab` end to end: a subprocess in a real git repository with GitLab's predefined
variables and the fake GitLab API on 127.0.0.1 (tests/fakes/gitlab_server.py)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.e2e.scaffold import FAILING, Project
from tests.e2e.test_action_sidecar import SIDECAR, _with_cli_agent_and_sidecar
from tests.e2e.test_flaky_history import EVAL, NEVER, OFTEN, SEEDS, _env, _seed_where
from tests.e2e.test_sidecar_baselines import WORSE
from tests.fakes.gitlab_server import FakeGitLab
from tests.fakes.stochastic_agent import TARGETS_YAML, passes
from tests.git_repos import git

TOKEN = FakeGitLab.PROJECT_TOKEN
PIPELINE = "https://gitlab.example/group/demo/-/pipelines/77"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


@pytest.fixture
def gitlab() -> Iterator[FakeGitLab]:
    with FakeGitLab(project_id=42) as server:
        yield server


def gitlab_env(
    project: Project,
    gitlab: FakeGitLab,
    *,
    token: bool = True,
    source_project: int = 42,
    own: int = 42,
    **extra: str,
) -> dict[str, str]:
    """A merge-request pipeline of MR !7 (`source_project` != 42: from a fork; `own`: the project the
    pipeline runs in)."""
    base = {
        k: v for k, v in os.environ.items() if not k.startswith(("CI_", "GITLAB_", "GITHUB_", "AGENTV_CI_"))
    }
    env = {
        **base,
        "HOME": str(project.root / "home"),
        "GIT_CONFIG_GLOBAL": str(project.root / "gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "CI": "true",
        "GITLAB_CI": "true",
        "CI_PROJECT_DIR": str(project.repo),
        "CI_PIPELINE_SOURCE": "merge_request_event",
        "CI_MERGE_REQUEST_IID": "7",
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": project.base,
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
        "CI_MERGE_REQUEST_PROJECT_ID": "42",
        "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": str(source_project),
        "CI_MERGE_REQUEST_PROJECT_URL": "https://gitlab.example/group/demo",
        "CI_PROJECT_ID": str(own),
        "CI_PROJECT_PATH": "group/demo",
        "CI_PROJECT_URL": "https://gitlab.example/group/demo",
        "CI_API_V4_URL": gitlab.api_url,
        "CI_SERVER_URL": "https://gitlab.example",
        "CI_COMMIT_SHA": git(project.repo, "rev-parse", "HEAD"),
        "CI_DEFAULT_BRANCH": "main",
        "CI_PIPELINE_ID": "77",
        "CI_PIPELINE_URL": PIPELINE,
        "CI_JOB_NAME": "evals",
        "CI_JOB_URL": "https://gitlab.example/group/demo/-/jobs/1234",
        "CI_JOB_TOKEN": FakeGitLab.JOB_TOKEN,
        **extra,
    }
    if token:
        env["AGENTV_CI_GITLAB_TOKEN"] = TOKEN
    return env


def branch_env(project: Project, gitlab: FakeGitLab, **extra: str) -> dict[str, str]:
    """A branch pipeline on main."""
    env = gitlab_env(project, gitlab, **extra)
    for name in [k for k in env if k.startswith("CI_MERGE_REQUEST_")]:
        del env[name]
    env.update(CI_PIPELINE_SOURCE="push", CI_COMMIT_BRANCH="main")
    return env


def run_gitlab(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentv_ci", "gitlab", *args],
        cwd=env["CI_PROJECT_DIR"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def dotenv(project: Project) -> dict[str, str]:
    text = (project.repo / ".agentv-ci/results/agentv-ci.env").read_text(encoding="utf-8")
    return dict(line.split("=", 1) for line in text.splitlines())


def test_an_mr_selects_from_the_diff_base_writes_one_note_then_edits_it(
    project: Project, gitlab: FakeGitLab
) -> None:
    project.commit({"evals/math.eval.yaml": FAILING})
    env = gitlab_env(project, gitlab)

    first = run_gitlab(env)

    assert first.returncode == 1, first.stdout + first.stderr
    assert "selected 1 of 2 eval file(s)" in first.stdout
    assert "evals/math.eval.yaml: eval file changed" in first.stdout
    notes = [n for n in gitlab.notes_on(7) if n.user_id == FakeGitLab.BOT_ID]
    assert len(notes) == 1
    assert "FAILED" in notes[0].body and "| math |" in notes[0].body
    assert f"[Pipeline]({PIPELINE})" in notes[0].body
    marker = notes[0].body.rsplit("\n", 1)[-1]
    assert marker.startswith("<!-- agentv-ci:sticky-comment key=gitlab-evals/"), marker
    assert (
        f"MR note created: https://gitlab.example/group/demo/-/merge_requests/7#note_{notes[0].id}"
        in first.stdout
    )
    assert all(r.headers.get("private-token") == TOKEN for r in gitlab.requests if r.server == "api")
    results = project.repo / ".agentv-ci/results"
    for report in ("junit.xml", "gl-code-quality-report.json", "metrics.txt"):
        assert (results / report).is_file(), report
    assert "math.eval.yaml" in (results / "gl-code-quality-report.json").read_text(encoding="utf-8")
    assert dotenv(project)["AGENTV_CI_VERDICT"] == "failed"
    assert "section_start:" in first.stdout and "section_end:" in first.stdout  # the run, folded

    someone = gitlab.add_note(7, f"a reviewer quoting {marker}", user_id=99)  # newer than ours
    project.commit({"evals/math.eval.yaml": FAILING.replace('"5"', '"4"')}, "fix")
    env["CI_COMMIT_SHA"] = git(project.repo, "rev-parse", "HEAD")
    second = run_gitlab(env)

    assert second.returncode == 0, second.stdout + second.stderr
    mine = [n for n in gitlab.notes_on(7) if n.user_id == FakeGitLab.BOT_ID]
    assert len(mine) == 1 and "PASSED" in mine[0].body
    assert len(gitlab.calls("POST", "/notes")) == 1 and len(gitlab.calls("PUT", "/notes")) == 1
    assert someone.body.startswith("a reviewer quoting")  # another user's quoting note: untouched
    for done in (first, second):
        assert TOKEN not in done.stdout + done.stderr


def test_without_a_token_there_is_no_note_and_one_line_says_so(project: Project, gitlab: FakeGitLab) -> None:
    project.commit({"evals/math.eval.yaml": FAILING})

    done = run_gitlab(gitlab_env(project, gitlab, token=False))

    assert done.returncode == 1, done.stdout + done.stderr
    assert gitlab.calls("POST") == [] and gitlab.calls("PUT") == [] and gitlab.calls("GET", "/notes") == []
    lines = [line for line in done.stdout.splitlines() if "MR note" in line]
    assert lines == [
        "MR note skipped: no AGENTV_CI_GITLAB_TOKEN (a project access token with `api` scope; "
        "CI_JOB_TOKEN cannot write notes)"
    ]
    assert (project.repo / ".agentv-ci/results/junit.xml").is_file()


def test_a_fork_mr_writes_no_note_and_its_pipeline_in_the_parent_is_refused(
    project: Project, gitlab: FakeGitLab
) -> None:
    project.commit({"evals/math.eval.yaml": FAILING})

    in_fork = run_gitlab(gitlab_env(project, gitlab, source_project=43, own=43))

    assert in_fork.returncode == 1, in_fork.stdout + in_fork.stderr
    assert gitlab.calls("POST") == [] and gitlab.calls("PUT") == []
    assert "MR note skipped: the merge request comes from a fork" in in_fork.stdout

    (project.repo / ".agentv-ci/results/index.jsonl").unlink()
    in_parent = run_gitlab(gitlab_env(project, gitlab, source_project=43, own=42))

    assert in_parent.returncode == 2, in_parent.stdout + in_parent.stderr
    assert "refusing to run the eval files of merge request !7: it comes from a fork" in in_parent.stderr
    assert not (project.repo / ".agentv-ci/results/index.jsonl").exists()  # nothing ran
    assert dotenv(project)["AGENTV_CI_VERDICT"] == "error"


def _zip_dir(directory: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in directory.rglob("*"):
            if path.is_file():
                archive.write(path, ".agentv-ci/results/" + path.relative_to(directory).as_posix())
    return buffer.getvalue()


def test_a_baseline_from_the_target_branch_artifact_is_named_and_gates(
    project: Project, gitlab: FakeGitLab
) -> None:
    _with_cli_agent_and_sidecar(project)
    git(project.repo, "checkout", "-q", "main")
    on_main = run_gitlab(branch_env(project, gitlab), "--changed-only=false")
    assert on_main.returncode == 0, on_main.stdout + on_main.stderr
    gitlab.set_artifact("main", "evals", _zip_dir(project.repo / ".agentv-ci/results"))
    git(project.repo, "checkout", "-q", "feature")
    project.commit({"answer.txt": WORSE}, "a worse agent")

    done = run_gitlab(
        gitlab_env(project, gitlab), "--changed-only", "false", "--baseline", "auto", "--max-regression=0.1"
    )

    assert done.returncode == 1, done.stdout + done.stderr
    assert "baseline: artifact 'evals@main'" in done.stdout
    assert "geo/words [agent]: regressed vs baseline (1.000 -> 0.500)" in done.stdout
    [note] = gitlab.notes_on(7)
    assert "**Baseline:** artifact `evals@main`" in note.body and "regressed" in note.body
    storage = [r for r in gitlab.requests if r.server == "storage"]
    assert storage and all("private-token" not in r.headers and "job-token" not in r.headers for r in storage)


def test_a_baseline_from_the_committed_sidecars(project: Project, gitlab: FakeGitLab) -> None:
    _with_cli_agent_and_sidecar(project)
    project.commit({"answer.txt": WORSE}, "a worse agent")

    done = run_gitlab(gitlab_env(project, gitlab), "--no-changed-only", "--max-regression", "0.1")

    assert done.returncode == 1, done.stdout + done.stderr
    assert f"baseline: committed sidecar {SIDECAR}" in done.stdout
    [note] = gitlab.notes_on(7)
    assert f"**Baseline:** committed sidecar `{SIDECAR}`." in note.body


def test_a_misspelt_flag_is_bad_input_with_a_suggestion(project: Project, gitlab: FakeGitLab) -> None:
    done = run_gitlab(gitlab_env(project, gitlab), "--treshold", "0.5")

    assert done.returncode == 2
    assert "has no flag `--treshold`" in done.stderr and "--threshold" in done.stderr
    assert gitlab.requests == []


def _coins_project(project: Project) -> None:
    """main holds only the stochastic agent's coins suite (`always`, `often`); feature adds a README."""
    git(project.repo, "checkout", "-q", "main")
    (project.repo / ".agentv" / "targets.yaml").write_text(TARGETS_YAML, encoding="utf-8")
    git(project.repo, "rm", "-q", "evals/geo.eval.yaml", "evals/math.eval.yaml")
    (project.repo / "evals").mkdir(exist_ok=True)  # `git rm` of its last files removed it
    project.commit({"evals/coins.eval.yaml": EVAL.replace(NEVER, "")}, "coins")
    project.base = git(project.repo, "rev-parse", "HEAD")
    git(project.repo, "checkout", "-q", "feature")
    git(project.repo, "reset", "-q", "--hard", "main")
    project.commit({"README.md": "a change\n"})


def _coins_run(project: Project, seed: str, broken: str = "none") -> bytes:
    """A zip of one run of the coins suite as a job's artifacts hold it."""
    out = project.root / "runs" / f"{seed}-{broken}"
    done = run_cli(
        "run", "evals", "-q", "-o", str(out), cwd=project.repo, env=_env(seed, broken), timeout=120
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return _zip_dir(out)


def _history_mr(project: Project, gitlab: FakeGitLab, seed: str, broken: str = "none") -> dict[str, str]:
    env = gitlab_env(project, gitlab, AGENTV_CI_CHANGED_ONLY="false", AGENTV_CI_HISTORY="5")
    return {**env, "AGENT_SEED": seed, "AGENT_BROKEN": broken}


def test_history_from_the_target_branch_pipelines_labels_flaky_and_a_stable_break_blocks(
    project: Project, gitlab: FakeGitLab
) -> None:
    _coins_project(project)
    seeds = SEEDS[:5]
    k = sum(passes(seed, OFTEN) for seed in seeds)
    assert 0 < k < 5
    on_main = [gitlab.add_pipeline("main", "evals", _coins_run(project, seed)) for seed in seeds]
    gitlab.add_pipeline("main", "evals", _coins_run(project, "x"), status="failed")
    # Newer pipelines of the MR's source branch and of the MR itself would label `always` flaky
    # (it fails in `broken` and passes in `s0`): neither is the target branch's history.
    broken, fine = _coins_run(project, "f", broken="id=always"), _coins_run(project, seeds[0])
    for data in (broken, fine, broken):
        gitlab.add_pipeline("feature", "evals", data)
        gitlab.add_pipeline("refs/merge-requests/7/head", "evals", data, source="merge_request_event")

    flaky = run_gitlab(_history_mr(project, gitlab, _seed_where(False)))

    assert flaky.returncode == 0, flaky.stdout + flaky.stderr
    assert (
        f"coins/often [default]: failed; not blocking, flaky: failed now; passed {k} of 5 runs on main"
        in (flaky.stdout)
    )
    [note] = gitlab.notes_on(7)
    assert "#### Flaky (1)" in note.body and "coins/often \\[default\\]" in note.body
    [listing] = gitlab.calls("GET", "/projects/42/pipelines")[:1]
    assert (listing.query["ref"], listing.query["status"]) == ("main", "success")
    read = {r.query.get("job_id") for r in gitlab.requests if r.server == "storage"}
    assert read == {str(p.job_id) for p in on_main}
    storage = [r for r in gitlab.requests if r.server == "storage"]
    assert all("private-token" not in r.headers and "job-token" not in r.headers for r in storage)

    stable = run_gitlab(_history_mr(project, gitlab, _seed_where(True), broken="id=always"))

    assert stable.returncode == 1, stable.stdout + stable.stderr
    assert "1 test(s) below threshold: coins/always [default]" in stable.stdout


def test_history_that_cannot_be_had_is_one_warning_and_waives_nothing(
    project: Project, gitlab: FakeGitLab
) -> None:
    _coins_project(project)
    for seed in SEEDS[:5]:
        gitlab.add_pipeline("main", "evals", _coins_run(project, seed))
    gitlab.fail_next(403, path="/projects/42/pipelines")

    done = run_gitlab(_history_mr(project, gitlab, _seed_where(False)))

    assert done.returncode == 1, done.stdout + done.stderr
    assert "coins/often [default]" in done.stdout and "not blocking" not in done.stdout
    lines = [line for line in (done.stdout + done.stderr).splitlines() if "history:" in line]
    assert len(lines) == 1 and "not applied" in lines[0], lines
    assert "GitLab API GET /projects/42/pipelines: HTTP 403" in lines[0]  # says why
    assert "Traceback" not in done.stderr
