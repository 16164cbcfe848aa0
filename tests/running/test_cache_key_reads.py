"""Response-cache keys and the repository files an answer can depend on beyond the target's code:
the targets file and the files the eval file reads (for targets that run code), and the files the
run's `select_all_on` globs match (for every target, hashed once per run).

Real targets from real targets.yaml files, real eval files loaded by the loader, a real git
repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.loading.suite_loader import load_suite
from agentv_ci.model.suite import Message
from agentv_ci.model.suite import Test as EvalTest
from agentv_ci.plugins import TargetRequest
from agentv_ci.running.cache_keys import CacheKeys
from agentv_ci.running.watched_files import watched_files
from agentv_ci.targets.config import load_targets
from agentv_ci.targets.factory import create_target
from tests.git_repos import git

CLI = """\
targets:
  - name: bot
    provider: cli
    command: python3 agent/bot.py {PROMPT_FILE} {OUTPUT_FILE}
    cwd: ..
  - name: model
    provider: openai
    model: gpt-4o-mini
    base_url: http://127.0.0.1:9/v1
    api_key: sk-test-0000
"""
EVAL = """\
tests:
  - id: add
    input:
      - role: user
        content:
          - type: text
            value: What is 2 + 2?
    assertions:
      - type: contains
        value: "4"
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository: a cli bot, a prompt file beside its directory, an eval file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent").mkdir()
    (tmp_path / "prompts").mkdir()
    (tmp_path / "evals").mkdir()
    (tmp_path / "agent" / "bot.py").write_text("print('4')\n")
    (tmp_path / "prompts" / "answer.txt").write_text("4\n")
    (tmp_path / "prompts" / "style.txt").write_text("brief\n")
    (tmp_path / "targets.yaml").write_text(CLI)
    (tmp_path / "evals" / "a.eval.yaml").write_text(EVAL)
    (tmp_path / "README.md").write_text("demo\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "base")
    return tmp_path


def _key(
    project: Path, target: str = "bot", *, watch: tuple[str, ...] = (), keys: CacheKeys | None = None
) -> str:
    eval_file = project / "evals" / "a.eval.yaml"
    config = load_targets(eval_file)
    suite = load_suite(eval_file).suite
    assert suite is not None
    test = EvalTest(id="add", suite="a", input=[Message(role="user", content="What is 2 + 2?")])
    request = TargetRequest(
        test=test,
        messages=test.input,
        prompt="What is 2 + 2?",
        eval_path=Path("evals/a.eval.yaml"),
        attempt=0,
    )
    keys = keys if keys is not None else CacheKeys(watch=watch)
    part = keys.target_part(create_target(target, config), target, config)
    key = keys.key(part, request, None, reads=suite.dependencies)
    assert key is not None
    return key


def test_the_targets_file_keys_a_cli_target_not_a_model(project: Path) -> None:
    bot, model = _key(project), _key(project, "model")
    # Another target's entry changes: the whole file is what a cli agent may read (its env, its
    # neighbours), so its answers are keyed apart; a model's answer is its request's alone.
    (project / "targets.yaml").write_text(CLI + "  - name: other\n    provider: mock\n")
    assert _key(project) != bot
    assert _key(project, "model") == model


def test_the_files_the_eval_file_reads_key_a_cli_target_not_a_model(project: Path) -> None:
    bot, model = _key(project), _key(project, "model")
    # The eval file itself is one of them (a grader edit: the agent may read the eval file too).
    (project / "evals" / "a.eval.yaml").write_text(EVAL.replace('value: "4"', 'value: "four"'))
    assert _key(project) != bot
    assert _key(project, "model") == model
    (project / "evals" / "a.eval.yaml").write_text(EVAL)
    assert _key(project) == bot  # back as it was: the same key
    (project / "README.md").write_text("edited\n")  # nothing the eval or the bot reads
    assert _key(project) == bot


def test_select_all_on_files_key_every_target(project: Path) -> None:
    watch = ("prompts/**",)
    bot, model = _key(project, watch=watch), _key(project, "model", watch=watch)
    assert _key(project) != bot  # without the patterns, a different key: they are part of it
    (project / "prompts" / "answer.txt").write_text("5\n")
    assert _key(project, watch=watch) != bot
    assert _key(project, "model", watch=watch) != model
    (project / "prompts" / "answer.txt").write_text("4\n")
    assert _key(project, watch=watch) == bot
    (project / "README.md").write_text("edited\n")  # matched by no pattern
    assert _key(project, watch=watch) == bot
    (project / "prompts" / "style.txt").unlink()  # a deleted file drops out: a new key
    assert _key(project, watch=watch) != bot


def test_select_all_on_files_are_hashed_once_per_run(project: Path) -> None:
    keys = CacheKeys(watch=("/prompts/*",))
    first = _key(project, keys=keys)
    (project / "prompts" / "answer.txt").write_text("5\n")  # edited mid-run: the run keeps its key
    assert _key(project, keys=keys) == first
    assert _key(project, watch=("/prompts/*",)) != first


def test_watched_files_are_the_tracked_ones_matching_repo_relative_globs(project: Path) -> None:
    (project / "prompts" / "draft.txt").write_text("untracked\n")
    found = [path for path, _digest in watched_files(["prompts/*", " /README.md "], project)]
    assert found == ["README.md", "prompts/answer.txt", "prompts/style.txt"]
    assert watched_files([], project) == []
