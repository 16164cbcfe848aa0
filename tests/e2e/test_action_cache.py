"""`cache: true` end to end (issue 20, "answers reused across runs"): `agentv-ci action` in a real git
repository, the fake GitHub API, and a model on 127.0.0.1 (the fake LLM server) counting the
requests it gets.

- The same PR run twice, the second time in a fresh clone holding only the restored cache directory
  (what `actions/cache` gives the next push): no request is sent for the unchanged tests, and the
  comment, the job summary and summary.json say how many answers came from the cache and what that
  saved. Changing one test's input requests that test alone.
- A cache written by a fork PR's run is never read by a push run of the base repository (even with
  the fork's entries edited to answer anything); the base run's own cache then seeds a fork PR.
- Entries a PR commits into the cache directory are never read.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.scaffold import Project, run_action
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import Call, FakeLlmServer, Reply
from tests.git_repos import git

CACHE = Path(".agentv-ci") / "response-cache"
GEO = """\
tests:
  - id: capital
    input: What is the capital of France?
    assertions:
      - type: contains
        value: Paris
"""
MATH = """\
tests:
  - id: add
    input: What is 2 + 2?
    assertions:
      - type: contains
        value: "4"
"""


def _answer(call: Call) -> Reply:
    question = call.last_user_text()
    text = "Paris." if "France" in question else "4." if "2 + 2" in question else f"echo: {question}"
    return Reply(text=text, usage=(1000, 200))


@pytest.fixture
def llm() -> Iterator[FakeLlmServer]:
    with FakeLlmServer(_answer) as server:
        yield server


def _project(root: Path, llm: FakeLlmServer) -> Project:
    """main: two evals on a priced OpenAI-compatible model (the fake server); the `feature` branch."""
    project = Project(root)
    git(project.repo, "checkout", "-q", "main")
    project.commit(
        {
            ".agentv/targets.yaml": "targets:\n  - name: default\n    provider: openai\n"
            f"    model: gpt-4o-mini\n    api_key: sk-test\n    base_url: {llm.base_url}\n"
            "    max_retries: 0\n",
            ".gitignore": ".agentv-ci/\n",
            "evals/geo.eval.yaml": GEO,
            "evals/math.eval.yaml": MATH,
        },
        "a model target",
    )
    project.base = git(project.repo, "rev-parse", "HEAD")
    git(project.repo, "checkout", "-q", "-B", "feature")
    return project


def _env(project: Project, github: FakeGitHub, event: Path, name: str = "pull_request") -> dict[str, str]:
    return project.env(github, event, name, paths="evals", changed_only="false", cache="true")


def _comment(github: FakeGitHub) -> str:
    [comment] = github.comments_on(7)
    return comment.body


def _summary_json(repo: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo / ".agentv-ci/results/summary.json").read_text())
    return data


def _clone_with_cache(project: Project, name: str) -> Path:
    """A fresh checkout of the same commit, holding only the cache directory of the last run (as
    the next push's job gets it back from `actions/cache`)."""
    clone = project.root / name
    git(project.root, "clone", "-q", "--no-local", str(project.repo), str(clone))
    git(clone, "checkout", "-q", git(project.repo, "rev-parse", "HEAD"))
    shutil.copytree(project.repo / CACHE, clone / CACHE)
    return clone


def test_the_second_push_of_a_pr_sends_no_request_for_unchanged_tests(
    tmp_path: Path, llm: FakeLlmServer
) -> None:
    with FakeGitHub() as github:
        project = _project(tmp_path, llm)
        project.commit({"README.md": "a PR\n"}, "first push")
        env = _env(project, github, project.event())

        first = run_action(env, project.root)

        assert first.returncode == 0, first.stdout + first.stderr
        assert len(llm.calls) == 2
        assert "Response cache: 0 of 2 answers came from the cache" in _comment(github)
        assert sorted(p.name for p in (project.repo / CACHE).iterdir() if len(p.name) != 2) == ["origin.json"]
        assert len(list((project.repo / CACHE).glob("??/*.json"))) == 2
        assert not (project.root / "home" / ".cache" / "agentv-ci").exists()  # only where `cache_dir` says

        # The next push: a fresh container, the cache directory restored by actions/cache.
        clone = _clone_with_cache(project, "second")
        again = run_action({**env, "GITHUB_WORKSPACE": str(clone)}, project.root)

        output = again.stdout + again.stderr
        assert again.returncode == 0, output
        assert len(llm.calls) == 2, "an unchanged test was requested again"
        # 2 answers x (1000 in + 200 out) tokens at gpt-4o-mini's price ($0.15 / $0.60 per million).
        line = (
            "Response cache: 2 of 2 answers came from the cache (no request sent); they saved "
            "2,400 tokens (2,000 in, 400 out) and $0.0005."
        )
        assert line in _comment(github)
        assert line in (project.root / "files" / "summary.md").read_text()  # the job summary
        assert line in again.stdout  # the log
        assert _summary_json(clone)["cache"] == {
            "hits": 2,
            "misses": 0,
            "unpriced": 0,
            "saved_input_tokens": 2000,
            "saved_output_tokens": 400,
            "saved_usd": pytest.approx(0.00054),
            "judge": {  # no llm-grader here: no judge reply to cache
                "hits": 0,
                "misses": 0,
                "saved_input_tokens": 0,
                "saved_output_tokens": 0,
                "saved_usd": 0.0,
                "unpriced": 0,
            },
        }
        assert _summary_json(clone)["spent_usd"] == 0  # nothing was paid for
        rows = [json.loads(r) for r in (clone / ".agentv-ci/results/index.jsonl").read_text().splitlines()]
        assert sorted((r["test_id"], r["verdict"], r["output"]) for r in rows) == [
            ("add", "pass", "4."),
            ("capital", "pass", "Paris."),
        ]

        # A third push changes one test's input: that test alone is requested.
        (clone / "evals" / "geo.eval.yaml").write_text(GEO.replace("France?", "France, please?"))
        git(clone, "commit", "-qam", "reword one test")
        third = run_action({**env, "GITHUB_WORKSPACE": str(clone)}, project.root)

        assert third.returncode == 0, third.stdout + third.stderr
        assert [c.last_user_text() for c in llm.calls[2:]] == ["What is the capital of France, please?"]
        assert "Response cache: 1 of 2 answers came from the cache" in _comment(github)


def _poison(cache: Path) -> None:
    """Every entry now answers "Lyon.": what a fork's code could have written there."""
    for entry in cache.glob("??/*.json"):
        data = json.loads(entry.read_text())
        data["text"] = "Lyon."
        data["messages"] = [{"role": "assistant", "content": "Lyon."}]
        entry.write_text(json.dumps(data))


def test_a_cache_written_by_a_fork_pr_is_never_read_by_a_push_run_of_the_base(
    tmp_path: Path, llm: FakeLlmServer
) -> None:
    with FakeGitHub() as github:
        project = _project(tmp_path, llm)
        fork_event = project.event(head_repo="evil/demo")
        fork = run_action(_env(project, github, fork_event), project.root)
        assert fork.returncode == 0, fork.stdout + fork.stderr
        assert len(llm.calls) == 2
        cache = project.repo / CACHE
        marker = json.loads((cache / "origin.json").read_text())
        assert marker["fork"] is True and marker["repository"] == "octo/demo"
        assert "evil/demo" in marker["writer"]
        _poison(cache)
        # The poison is real: the fork's own next run reads it (and its gate fails on "Lyon.").
        poisoned = run_action(_env(project, github, fork_event), project.root)
        assert poisoned.returncode == 1, poisoned.stdout + poisoned.stderr
        assert len(llm.calls) == 2

        # A push to main of the base repository, with that directory restored: nothing is read.
        git(project.repo, "checkout", "-q", "main")
        push = run_action(_env(project, github, project.event(name="push"), "push"), project.root)

        output = push.stdout + push.stderr
        assert push.returncode == 0, output
        assert len(llm.calls) == 4, "the base run read the fork's entries"
        assert "was written by a run of pull request #7 from evil/demo" in output, output
        assert "its 2 entries were removed" in output
        assert "Response cache: 0 of 2 answers came from the cache" in push.stdout
        rows = (project.repo / ".agentv-ci/results/index.jsonl").read_text()
        assert "Lyon" not in rows
        marker = json.loads((cache / "origin.json").read_text())
        assert marker["fork"] is False
        assert not any("Lyon" in p.read_text() for p in cache.glob("??/*.json"))

        # The base's cache seeds a fork's PR (restored from main's scope): read, and stamped `fork`.
        git(project.repo, "checkout", "-q", "feature")
        seeded = run_action(_env(project, github, project.event(head_repo="evil/demo")), project.root)
        assert seeded.returncode == 0, seeded.stdout + seeded.stderr
        assert len(llm.calls) == 4
        assert json.loads((cache / "origin.json").read_text())["fork"] is True


def test_entries_a_pr_commits_into_the_cache_directory_are_never_read(
    tmp_path: Path, llm: FakeLlmServer
) -> None:
    with FakeGitHub() as github:
        project = _project(tmp_path, llm)
        env = _env(project, github, project.event())
        assert run_action(env, project.root).returncode == 0
        cache = project.repo / CACHE
        _poison(cache)
        git(project.repo, "add", "-f", str(CACHE))
        git(project.repo, "commit", "-qm", "answers that pass")

        done = run_action(_env(project, github, project.event()), project.root)

        output = done.stdout + done.stderr
        assert done.returncode == 0, output
        assert len(llm.calls) == 4  # both tests requested again
        assert output.count(f"the response cache directory {cache} holds files tracked by git") == 1, output
        assert "Lyon" not in (project.repo / ".agentv-ci/results/index.jsonl").read_text()


JUDGED = """\
tests:
  - id: capital
    input: What is the capital of France?
    assertions:
      - type: llm-grader
        prompt: "Is this answer right? Answer: {{output}}"
"""
VERDICT = json.dumps({"score": 1, "assertions": [{"text": "right", "passed": True}]})


def _judged(call: Call) -> Reply:
    if call.body and call.body.get("model") == "judge-model":
        return Reply(text=VERDICT, usage=(300, 40))
    return Reply(text="Paris.", usage=(1000, 200))


def test_the_second_push_sends_no_model_and_no_judge_request(tmp_path: Path) -> None:
    """Issue 28 item 3 through the Action: the judge is cached like the target."""
    with FakeLlmServer(_judged) as server, FakeGitHub() as github:
        project = Project(tmp_path)
        git(project.repo, "checkout", "-q", "main")
        targets = (
            "targets:\n  - name: default\n    provider: openai\n    model: gpt-4o-mini\n"
            f"    api_key: sk-test\n    base_url: {server.base_url}\n    max_retries: 0\n"
            "    grader_target: judge\n  - name: judge\n    provider: openai\n    model: judge-model\n"
            f"    api_key: sk-test\n    base_url: {server.base_url}\n    max_retries: 0\n"
            "    pricing: {input_per_mtok: 100, output_per_mtok: 100}\n"
        )
        project.commit(
            {".agentv/targets.yaml": targets, ".gitignore": ".agentv-ci/\n", "evals/geo.eval.yaml": JUDGED},
            "a judged eval",
        )
        project.base = git(project.repo, "rev-parse", "HEAD")
        git(project.repo, "checkout", "-q", "-B", "feature")
        project.commit({"README.md": "a PR\n"}, "first push")
        env = _env(project, github, project.event())

        first = run_action(env, project.root)
        assert first.returncode == 0, first.stdout + first.stderr
        judge_calls = [c for c in server.calls if c.body and c.body.get("model") == "judge-model"]
        assert len(judge_calls) == 1 and len(server.calls) >= 2  # the project's other eval answers too
        sent = len(server.calls)

        clone = _clone_with_cache(project, "second")
        again = run_action({**env, "GITHUB_WORKSPACE": str(clone)}, project.root)
        assert again.returncode == 0, again.stdout + again.stderr
        assert len(server.calls) == sent, "the second push sent a model or a judge request"
        cache = _summary_json(clone)["cache"]
        assert cache["misses"] == 0 and cache["hits"] == sent - 1
        assert (cache["judge"]["hits"], cache["judge"]["misses"]) == (1, 0)
        assert cache["judge"]["saved_usd"] == pytest.approx(0.034)  # 300 in + 40 out at $100 per M
        assert "1 of 1 judge replies came from the cache" in _comment(github)
