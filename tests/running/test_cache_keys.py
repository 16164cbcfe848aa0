"""Response-cache keys: every part that can change an answer changes the key; nothing else does.

Real targets built from real targets.yaml files, real files on disk, real git repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.model.suite import Message
from agentv_ci.model.suite import Test as EvalTest
from agentv_ci.model.workspace import WorkspaceHook, WorkspaceRepo, WorkspaceSpec
from agentv_ci.plugins import TargetRequest
from agentv_ci.running.cache_keys import CacheKeys, checked_out_commit
from agentv_ci.targets.config import TargetsConfig, load_targets
from agentv_ci.targets.factory import create_target
from tests.git_repos import git

OPENAI = """\
targets:
  - name: model
    provider: openai
    model: {model}
    base_url: {base_url}
    temperature: {temperature}
    max_tokens: {max_tokens}
    api_key: {api_key}
    headers:
      x-prompt-version: "{header}"
      authorization: Bearer {api_key}
"""
DEFAULTS = {
    "model": "gpt-4o-mini",
    "base_url": "http://127.0.0.1:9/v1",
    "temperature": 0.0,
    "max_tokens": 100,
    "api_key": "sk-first-key-0000",
    "header": "1",
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "a.eval.yaml").write_text("tests: []\n")
    return tmp_path


def _targets(project: Path, text: str) -> TargetsConfig:
    (project / "targets.yaml").write_text(text)
    return load_targets(project / "evals" / "a.eval.yaml")


def _request(
    project: Path, *, content: str = "What is 2 + 2?", attempt: int = 0, **kwargs: object
) -> TargetRequest:
    test = EvalTest(id="add", suite="math", input=[Message(role="user", content=content)])
    return TargetRequest(
        test=test,
        messages=test.input,
        prompt=content,
        eval_path=Path("evals/a.eval.yaml"),
        attempt=attempt,
        **kwargs,  # type: ignore[arg-type]
    )


def _model_key(project: Path, request: TargetRequest | None = None, **changes: object) -> str:
    config = _targets(project, OPENAI.format(**{**DEFAULTS, **changes}))
    target = create_target("model", config)
    keys = CacheKeys()
    key = keys.key(keys.target_part(target, "model", config), request or _request(project), None)
    assert key is not None
    return key


@pytest.mark.parametrize(
    "change",
    [
        {"model": "gpt-4o"},
        {"base_url": "http://127.0.0.1:10/v1"},
        {"temperature": 0.7},
        {"max_tokens": 101},
        {"header": "2"},
    ],
    ids=lambda change: next(iter(change)),
)
def test_every_request_parameter_of_a_model_target_is_keyed(project: Path, change: dict[str, object]) -> None:
    assert _model_key(project, **change) != _model_key(project)


def test_an_unchanged_setup_has_the_same_key_and_a_rotated_api_key_does_not_matter(project: Path) -> None:
    first = _model_key(project)
    assert _model_key(project) == first
    assert _model_key(project, api_key="sk-second-key-111") == first  # secrets are not answers


def test_the_request_itself_is_keyed(project: Path) -> None:
    same = _model_key(project)
    assert _model_key(project, _request(project, content="What is 2 + 3?")) != same
    assert _model_key(project, _request(project, attempt=1)) != same


def test_an_attached_file_is_keyed_by_its_content(project: Path) -> None:
    attached = project / "evals" / "notes.txt"
    attached.write_text("the answer is 4\n")
    block = {"type": "file", "value": "notes.txt", "path": str(attached)}
    test = EvalTest(id="add", suite="math", input=[Message(role="user", content=[block])])

    def key() -> str:
        request = TargetRequest(
            test=test,
            messages=test.input,
            prompt="<file>",
            eval_path=Path("evals/a.eval.yaml"),
            files=[str(attached)],
        )
        return _model_key(project, request)

    before = key()
    assert key() == before
    attached.write_text("the answer is 5\n")
    assert key() != before


# --------------------------------------------------------------------------- workspaces


def _workspace_key(project: Path, spec: WorkspaceSpec, workspace: Path | None = None) -> str | None:
    config = _targets(project, OPENAI.format(**DEFAULTS))
    target = create_target("model", config)
    keys = CacheKeys()
    return keys.key(
        keys.target_part(target, "model", config), _request(project, workspace_path=workspace), spec
    )


def test_a_workspace_template_is_keyed_by_its_content(project: Path) -> None:
    template = project / "template"
    (template / "src").mkdir(parents=True)
    (template / "src" / "app.py").write_text("print('v1')\n")
    spec = WorkspaceSpec(template=str(template))
    before = _workspace_key(project, spec)
    assert before is not None and _workspace_key(project, spec) == before
    (template / "src" / "app.py").write_text("print('v2')\n")
    assert _workspace_key(project, spec) != before
    (template / "src" / "app.py").write_text("print('v1')\n")
    assert _workspace_key(project, spec) == before
    (template / "src" / "new.py").write_text("")
    assert _workspace_key(project, spec) != before  # a file added to the template
    assert _workspace_key(project, WorkspaceSpec()) != _workspace_key(project, spec)


def test_the_scripts_a_workspace_setup_hook_runs_are_keyed_by_content(project: Path) -> None:
    (project / "setup").mkdir()
    (project / "setup" / "seed.py").write_text("open('data.txt', 'w').write('v1')\n")
    (project / "setup" / "cleanup.py").write_text("")
    spec = WorkspaceSpec(
        hooks={
            "before_all": WorkspaceHook(command=["python3", "setup/seed.py"], cwd=str(project)),
            "after_all": WorkspaceHook(command=["python3", "setup/cleanup.py"], cwd=str(project)),
        }
    )
    before = _workspace_key(project, spec)
    assert before is not None and _workspace_key(project, spec) == before
    (project / "setup" / "cleanup.py").write_text("print('bye')\n")  # a teardown cannot change answers
    assert _workspace_key(project, spec) == before
    (project / "setup" / "seed.py").write_text("open('data.txt', 'w').write('v2')\n")
    assert _workspace_key(project, spec) != before


def test_a_workspace_repo_is_keyed_by_the_commit_checked_out(project: Path) -> None:
    upstream = project / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    (upstream / "lib.py").write_text("v = 1\n")
    git(upstream, "add", "-A")
    git(upstream, "commit", "-qm", "one")
    first = git(upstream, "rev-parse", "HEAD")
    (upstream / "lib.py").write_text("v = 2\n")
    git(upstream, "commit", "-qam", "two")
    second = git(upstream, "rev-parse", "HEAD")
    workspace = project / "ws"
    workspace.mkdir()
    git(workspace, "clone", "-q", str(upstream), "repo")
    spec = WorkspaceSpec(repos=[WorkspaceRepo(path="repo", repo=f"file://{upstream}", commit="main")])

    git(workspace / "repo", "checkout", "-q", "--detach", first)
    assert checked_out_commit(workspace / "repo") == first
    at_first = _workspace_key(project, spec, workspace)
    assert at_first is not None and _workspace_key(project, spec, workspace) == at_first
    git(workspace / "repo", "checkout", "-q", "--detach", second)
    at_second = _workspace_key(project, spec, workspace)
    assert at_second is not None and at_second != at_first  # `commit: main` moved: not the same answer
    git(workspace / "repo", "checkout", "-q", "main")  # a branch checked out (a static workspace)
    assert checked_out_commit(workspace / "repo") == second
    assert _workspace_key(project, spec, workspace) == at_second


def test_a_workspace_repo_whose_commit_is_unknown_is_never_cached(project: Path) -> None:
    spec = WorkspaceSpec(repos=[WorkspaceRepo(path="repo", repo="file:///nowhere", commit="main")])
    (project / "ws").mkdir()
    assert _workspace_key(project, spec, project / "ws") is None


# --------------------------------------------------------------------------- the code a target runs

CLI = """\
targets:
  - name: bot
    provider: cli
    command: python3 agent/bot.py {PROMPT_FILE} {OUTPUT_FILE}
    cwd: ..
"""


def _code_project(project: Path) -> None:
    (project / "agent" / "data").mkdir(parents=True)
    (project / "agent" / "bot.py").write_text("import lib\nprint(lib.answer())\n")
    (project / "agent" / "lib.py").write_text("def answer():\n    return 'Paris'\n")
    (project / "agent" / "data" / "facts.json").write_text('{"capital": "Paris"}\n')
    (project / "README.md").write_text("not the agent's code\n")


def _cli_key(project: Path, targets_yaml: str = CLI) -> str:
    config = _targets(project, targets_yaml)
    target = create_target("bot", config)
    keys = CacheKeys()
    key = keys.key(keys.target_part(target, "bot", config), _request(project), None)
    assert key is not None
    return key


@pytest.mark.parametrize(
    "changed",
    ["agent/bot.py", "agent/lib.py", "agent/data/facts.json"],
    ids=["the-script", "a-module-beside-it", "a-file-in-its-tree"],
)
def test_the_content_of_the_code_a_cli_target_runs_is_keyed(project: Path, changed: str) -> None:
    _code_project(project)
    before = _cli_key(project)
    assert _cli_key(project) == before  # unchanged: the same key
    (project / "README.md").write_text("edited\n")
    assert _cli_key(project) == before  # not its code
    (project / changed).write_text((project / changed).read_text() + "# changed\n")
    assert _cli_key(project) != before


def test_a_deleted_or_added_file_of_the_code_changes_the_key(project: Path) -> None:
    _code_project(project)
    before = _cli_key(project)
    (project / "agent" / "extra.py").write_text("")
    with_extra = _cli_key(project)
    assert with_extra != before
    (project / "agent" / "extra.py").unlink()
    assert _cli_key(project) == before
    (project / "agent" / "data" / "facts.json").unlink()
    assert _cli_key(project) != before


def test_declared_sources_are_the_code(project: Path) -> None:
    _code_project(project)
    (project / "shared").mkdir()
    (project / "shared" / "prompts.md").write_text("Be brief.\n")
    declared = CLI + "    sources: [agent/bot.py, shared/]\n"
    before = _cli_key(project, declared)
    (project / "shared" / "prompts.md").write_text("Be verbose.\n")
    after = _cli_key(project, declared)
    assert after != before
    (project / "agent" / "data" / "facts.json").write_text("{}\n")  # not declared: not keyed
    assert _cli_key(project, declared) == after


def test_a_target_that_runs_code_in_the_workspace_is_never_cached_and_said_once(project: Path) -> None:
    _code_project(project)
    config = _targets(project, CLI)
    target = create_target("bot", config)
    warnings: list[str] = []
    keys = CacheKeys(warnings)
    part = keys.target_part(target, "bot", config)
    (project / "ws").mkdir()
    spec = WorkspaceSpec(template=str(project / "agent"))
    # What the agent does to the workspace (and the graders read there) cannot come from a cache.
    assert keys.key(part, _request(project, workspace_path=project / "ws"), spec) is None
    assert keys.key(part, _request(project, workspace_path=project / "ws"), spec) is None
    assert warnings == [
        "response cache: target 'bot' runs in the tests' workspaces; its answers there are not cached "
        "(what it does to a workspace cannot be replayed)"
    ]
    assert keys.key(part, _request(project), None) is not None  # without a workspace it is cached


def test_a_file_a_target_field_names_is_keyed_by_content(project: Path) -> None:
    recording = project / "evals" / "recorded.jsonl"
    recording.write_text('{"test_id": "add", "text": "4"}\n')
    replay = "targets:\n  - name: bot\n    provider: replay\n    fixtures: recorded.jsonl\n"
    before = _cli_key(project, replay)
    assert _cli_key(project, replay) == before
    recording.write_text('{"test_id": "add", "text": "5"}\n')
    assert _cli_key(project, replay) != before
