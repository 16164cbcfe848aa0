"""Selection errs towards running: a target's code (its script, the modules it imports, its
directory tree, `sources:`), `python -m` and `sh -c` code graders, and datasets in git submodules
select the evals that use them; changed files that selected nothing are listed. Real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.selection import changed_files, select_changed_evals
from agentv_ci.selection.render import render_selection
from tests.git_repos import GitRepo, git

TARGETS = """\
targets:
  - name: default
    provider: cli
    command: python3 agent/support_bot.py {PROMPT_FILE} {OUTPUT_FILE}
    cwd: ..
  - name: canned
    provider: mock
  - name: coder
    provider: claude
    executable: node tools/claude-wrapper.mjs
    cwd: ../workdir
"""
BOT = "import sys\nsys.path.insert(0, '.')\nfrom shared import answers\n"
EVAL = "tests:\n  - id: t\n    input: hi\n    criteria: says hi\n"


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    repo.write(".agentv/targets.yaml", TARGETS)
    repo.write("agent/support_bot.py", BOT)
    repo.write("agent/prompts/system.md", "Be nice.\n")
    repo.write("shared/__init__.py", "")
    repo.write("shared/answers.py", "ANSWER = 'hi'\n")
    repo.write("shared/unused.py", "")
    repo.write("tools/claude-wrapper.mjs", "")
    repo.write("workdir/app.py", "")
    repo.write("evals/support.eval.yaml", EVAL)
    repo.write("evals/canned.eval.yaml", "execution:\n  target: canned\n" + EVAL)
    repo.write("evals/coder.eval.yaml", "execution:\n  target: coder\n" + EVAL)
    repo.write("README.md", "demo\n")
    repo.commit("base")
    repo.branch("feature")
    return repo


def _select(repo: GitRepo, **kwargs: object) -> dict[str, list[str]]:
    selection = select_changed_evals(
        [repo.root / "evals"], changed_files(repo.root, "main"), repo_root=repo.root, env={}, **kwargs
    )  # type: ignore[arg-type]
    return {e.repo_path: e.reasons for e in selection.selected}


def _change(repo: GitRepo, rel: str, text: str = "changed\n") -> None:
    repo.write(rel, text)
    repo.commit(f"change {rel}")


def test_the_agent_script_selects_the_evals_of_its_target_only(repo: GitRepo) -> None:
    _change(repo, "agent/support_bot.py", BOT + "# broken\n")
    assert _select(repo) == {"evals/support.eval.yaml": ["agent/support_bot.py changed"]}


def test_a_module_the_script_imports_from_elsewhere_selects_them(repo: GitRepo) -> None:
    _change(repo, "shared/answers.py", "ANSWER = 'bye'\n")
    assert _select(repo) == {"evals/support.eval.yaml": ["shared/answers.py changed"]}


def test_a_file_in_the_scripts_directory_tree_selects_them(repo: GitRepo) -> None:
    _change(repo, "agent/prompts/system.md", "Be rude.\n")
    assert _select(repo) == {
        "evals/support.eval.yaml": [
            "agent/prompts/system.md changed (under agent/, the script directory of target 'default')"
        ]
    }


def test_a_coding_agents_executable_and_cwd_select_its_evals(repo: GitRepo) -> None:
    _change(repo, "tools/claude-wrapper.mjs", "// new\n")
    assert _select(repo) == {"evals/coder.eval.yaml": ["tools/claude-wrapper.mjs changed"]}
    _change(repo, "workdir/app.py", "x = 1\n")
    assert _select(repo)["evals/coder.eval.yaml"][-1] == (
        "workdir/app.py changed (under workdir/, the working directory of target 'coder')"
    )


def test_declared_sources_replace_what_the_command_names(repo: GitRepo) -> None:
    repo.write(
        ".agentv/targets.yaml", TARGETS.replace("    cwd: ..\n", "    cwd: ..\n    sources: [lib/]\n", 1)
    )
    repo.write("lib/core.py", "")
    repo.commit("sources")
    repo.git("checkout", "--quiet", "-B", "main")
    repo.git("checkout", "--quiet", "-B", "feature")
    _change(repo, "lib/core.py", "x = 2\n")
    _change(repo, "shared/answers.py", "ANSWER = 'bye'\n")
    assert _select(repo) == {
        "evals/support.eval.yaml": ["lib/core.py changed (under lib/, in the `sources:` of target 'default')"]
    }


def test_forced_target_names_replace_the_evals_own(repo: GitRepo) -> None:
    _change(repo, "agent/support_bot.py", BOT + "# v2\n")
    selected = _select(repo, target_names=["default"])
    assert set(selected) == {"evals/support.eval.yaml", "evals/canned.eval.yaml", "evals/coder.eval.yaml"}


def test_changed_files_that_selected_nothing_are_listed(repo: GitRepo) -> None:
    repo.write("README.md", "more\n")
    repo.write("shared/unused.py", "x = 1\n")
    _change(repo, "agent/support_bot.py", BOT + "# v2\n")
    selection = select_changed_evals(
        [repo.root / "evals"], changed_files(repo.root, "main"), repo_root=repo.root, env={}
    )
    assert selection.unselecting == ["README.md", "shared/unused.py"]
    assert selection.to_json()["unselecting"] == ["README.md", "shared/unused.py"]
    text = render_selection(selection).splitlines()
    assert text[-2:] == [
        "changed, selected no eval: README.md",
        "changed, selected no eval: shared/unused.py",
    ]


GRADED = """\
tests:
  - id: t
    input: hi
    assertions:
      - type: code-grader
        command: {command}
        cwd: ..
"""


@pytest.mark.parametrize(
    ("command", "changed"),
    [
        ('["python3", "-m", "checks.grade"]', "checks/grade.py"),
        ('["python3", "-m", "checks.grade"]', "checks/scoring.py"),  # a module grade.py imports
        ("[sh, -c, 'cd graders && python3 x.py --strict']", "graders/x.py"),
        ("\"bash -c 'python3 graders/x.py'\"", "graders/x.py"),
    ],
)
def test_code_graders_run_as_modules_or_through_a_shell_are_tracked(
    repo: GitRepo, command: str, changed: str
) -> None:
    repo.write("checks/__init__.py", "")
    repo.write("checks/grade.py", "from checks import scoring\n")
    repo.write("checks/scoring.py", "")
    repo.write("graders/x.py", "")
    repo.write("evals/graded.eval.yaml", "execution:\n  target: canned\n" + GRADED.format(command=command))
    repo.commit("graders")
    repo.git("checkout", "--quiet", "-B", "main")
    repo.git("checkout", "--quiet", "-B", "feature")
    _change(repo, changed, "# changed\n")
    assert _select(repo) == {"evals/graded.eval.yaml": [f"{changed} changed"]}


def test_a_changed_submodule_pointer_selects_the_evals_reading_files_in_it(
    repo: GitRepo, tmp_path: Path
) -> None:
    data = GitRepo.init(tmp_path / "data")
    data.write("cases.jsonl", '{"id": "a", "input": "hi", "criteria": "says hi"}\n')
    data.commit("v1")
    allow = ("-c", "protocol.file.allow=always")
    git(repo.root, *allow, "submodule", "add", "--quiet", str(data.root), "vendor/data")
    repo.write("evals/dataset.eval.yaml", "execution:\n  target: canned\ntests: ../vendor/data/cases.jsonl\n")
    repo.commit("dataset in a submodule")
    repo.git("checkout", "--quiet", "-B", "main")
    repo.git("checkout", "--quiet", "-B", "feature")
    data.write("cases.jsonl", '{"id": "a", "input": "hello", "criteria": "says hi"}\n')
    data.commit("v2")
    sub = repo.root / "vendor/data"
    git(sub, *allow, "pull", "--quiet", "origin", "main")
    repo.commit("bump the dataset")
    assert changed_files(repo.root, "main").by_path()["vendor/data"].status == "M"
    assert _select(repo) == {
        "evals/dataset.eval.yaml": ["submodule vendor/data changed (vendor/data/cases.jsonl is in it)"]
    }
