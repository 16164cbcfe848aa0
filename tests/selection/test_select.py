"""`select_changed_evals` on real repositories: a base commit on `main`, one change on `feature`."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.selection import Selection, changed_files, select_changed_evals
from agentv_ci.selection import graph as graph_module
from tests.git_repos import GitRepo

TARGETS = "targets:\n  - name: default\n    provider: mock\n"
INLINE = "tests:\n  - id: t\n    input: hi\n    criteria: greets\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    repo = GitRepo.init(tmp_path / "project")
    monkeypatch.chdir(repo.root)
    repo.write(".agentv/targets.yaml", TARGETS)
    repo.write("README.md", "# project\n")
    repo.write("plain.eval.yaml", INLINE)
    repo.write("evals/refunds.eval.yaml", "tests: ./cases/refunds.jsonl\n")
    repo.write("evals/cases/refunds.jsonl", '{"id": "r1", "input": "refund?", "criteria": "explains"}\n')
    repo.write("evals/globbed.eval.yaml", "tests: globbed/*.cases.yaml\n")
    repo.write("evals/globbed/a.cases.yaml", "- id: a\n  input: x\n  criteria: y\n")
    repo.write("evals/wrapper.eval.yaml", "tests:\n  - include: ../shared/extra.cases.yaml\n")
    repo.write("shared/extra.cases.yaml", "- id: extra\n  input: x\n  criteria: y\n")
    repo.write(
        "evals/code.eval.yaml",
        """\
        tests:
          - id: t
            input: hi
            assertions:
              - type: code-grader
                command: [python, graders/check.py]
        """,
    )
    repo.write("evals/graders/check.py", "import helper\n")
    repo.write("evals/graders/helper.py", "SCORE = 1\n")
    repo.write("agent/EVAL.yaml", "tests:\n  - id: fix\n    criteria: fixes the bug\n")
    repo.write("agent/PROMPT.md", "Fix the failing test.\n")
    repo.write("env/env.eval.yaml", "tests:\n  - id: t\n    input: ${{ QUESTION }}\n    criteria: answers\n")
    repo.write("env/.env", "QUESTION=why\n")
    repo.write("team/.agentv/targets.yaml", TARGETS)
    repo.write("team/team.eval.yaml", INLINE)
    repo.commit("base")
    repo.branch("feature")
    return repo


ALL = {
    "plain.eval.yaml",
    "evals/refunds.eval.yaml",
    "evals/globbed.eval.yaml",
    "evals/wrapper.eval.yaml",
    "evals/code.eval.yaml",
    "agent/EVAL.yaml",
    "env/env.eval.yaml",
    "team/team.eval.yaml",
}


def _select(repo: GitRepo, *paths: str, commit: bool = True, **kwargs: object) -> Selection:
    if commit:
        repo.commit("feature change")
    changes = changed_files(repo.root, "main", include_uncommitted=not commit)
    return select_changed_evals(
        [Path(p) for p in paths or (".",)], changes, repo_root=repo.root, env={}, **kwargs
    )  # type: ignore[arg-type]


def _picked(selection: Selection) -> dict[str, list[str]]:
    return {e.repo_path: e.reasons for e in selection.selected}


def test_a_modified_eval_file_selects_itself_only(repo: GitRepo) -> None:
    repo.write("plain.eval.yaml", INLINE + "description: now with one\n")
    selection = _select(repo)
    assert _picked(selection) == {"plain.eval.yaml": ["eval file changed"]}
    assert selection.total == len(ALL)
    assert selection.removed == []
    assert selection.all_reason is None
    [picked] = selection.selected
    assert picked.path == (repo.root / "plain.eval.yaml").resolve()


def test_an_added_eval_file_is_selected_and_a_deleted_one_is_removed(repo: GitRepo) -> None:
    repo.write("new/fresh.eval.yaml", INLINE)
    repo.delete("team/team.eval.yaml")
    selection = _select(repo)
    assert _picked(selection) == {"new/fresh.eval.yaml": ["eval file added"]}
    assert selection.removed == ["team/team.eval.yaml"]
    assert selection.total == len(ALL)


def test_a_renamed_eval_file_is_a_removal_plus_an_addition(repo: GitRepo) -> None:
    repo.git("mv", "plain.eval.yaml", "renamed.eval.yaml")
    selection = _select(repo)
    assert _picked(selection) == {"renamed.eval.yaml": ["eval file added"]}
    assert selection.removed == ["plain.eval.yaml"]


def test_a_changed_jsonl_case_file_selects_the_eval_reading_it(repo: GitRepo) -> None:
    repo.write("evals/cases/refunds.jsonl", '{"id": "r1", "input": "refund now?", "criteria": "explains"}\n')
    assert _picked(_select(repo)) == {"evals/refunds.eval.yaml": ["evals/cases/refunds.jsonl changed"]}


def test_a_deleted_dependency_selects_the_eval_that_reads_it(repo: GitRepo) -> None:
    repo.delete("evals/cases/refunds.jsonl")
    selection = _select(repo)
    assert _picked(selection) == {"evals/refunds.eval.yaml": ["evals/cases/refunds.jsonl deleted"]}
    assert selection.removed == []  # a case file, not an eval


def test_a_new_file_matching_a_case_glob_selects_the_eval(repo: GitRepo) -> None:
    repo.write("evals/globbed/b.cases.yaml", "- id: b\n  input: x\n  criteria: y\n")
    assert _picked(_select(repo)) == {"evals/globbed.eval.yaml": ["evals/globbed/b.cases.yaml added"]}


def test_a_deleted_file_a_case_glob_matched_selects_the_eval_through_the_glob_directory(
    repo: GitRepo,
) -> None:
    repo.delete("evals/globbed/a.cases.yaml")
    assert _picked(_select(repo)) == {
        "evals/globbed.eval.yaml": ["evals/globbed/a.cases.yaml deleted (under evals/globbed/)"]
    }


def test_any_file_below_a_case_globs_directory_selects_the_eval(repo: GitRepo) -> None:
    # The glob's fixed directory is watched as a whole (conservative: docs/selection.md).
    repo.write("evals/globbed/notes.txt", "not a case file\n")
    assert _picked(_select(repo)) == {
        "evals/globbed.eval.yaml": ["evals/globbed/notes.txt added (under evals/globbed/)"]
    }


def test_a_changed_include_selects_the_eval_including_it(repo: GitRepo) -> None:
    repo.write("shared/extra.cases.yaml", "- id: extra\n  input: changed\n  criteria: y\n")
    assert _picked(_select(repo)) == {"evals/wrapper.eval.yaml": ["shared/extra.cases.yaml changed"]}


def test_a_grader_script_and_a_file_in_its_directory_select_the_eval(repo: GitRepo) -> None:
    repo.write("evals/graders/check.py", "import helper  # changed\n")
    assert _picked(_select(repo)) == {"evals/code.eval.yaml": ["evals/graders/check.py changed"]}
    repo.write("evals/graders/helper.py", "SCORE = 0.5\n")
    repo.commit("helper")
    changes = changed_files(repo.root, "HEAD~1")
    picked = _picked(select_changed_evals([Path(".")], changes, repo_root=repo.root, env={}))
    # check.py imports helper: the module itself is a dependency (docs/selection.md).
    assert picked == {"evals/code.eval.yaml": ["evals/graders/helper.py changed"]}
    repo.write("evals/graders/weights.json", "{}\n")
    repo.commit("weights")
    changes = changed_files(repo.root, "HEAD~1")
    picked = _picked(select_changed_evals([Path(".")], changes, repo_root=repo.root, env={}))
    assert picked == {"evals/code.eval.yaml": ["evals/graders/weights.json added (under evals/graders/)"]}


def test_a_targets_file_selects_only_the_evals_it_applies_to(repo: GitRepo) -> None:
    repo.write("team/.agentv/targets.yaml", TARGETS + "  - name: other\n    provider: mock\n")
    assert _picked(_select(repo)) == {"team/team.eval.yaml": ["team/.agentv/targets.yaml changed"]}


def test_the_root_targets_file_selects_every_eval_without_a_nearer_one(repo: GitRepo) -> None:
    repo.write(".agentv/targets.yaml", TARGETS + "  - name: other\n    provider: mock\n")
    picked = _picked(_select(repo))
    assert set(picked) == ALL - {"team/team.eval.yaml"}
    assert picked["plain.eval.yaml"] == [".agentv/targets.yaml changed"]


def test_a_new_targets_file_nearer_an_eval_selects_it(repo: GitRepo) -> None:
    repo.write("env/.agentv/targets.yaml", TARGETS)
    assert _picked(_select(repo)) == {"env/env.eval.yaml": ["env/.agentv/targets.yaml added"]}


def test_a_dotenv_change_selects_the_evals_below_it(repo: GitRepo) -> None:
    repo.write("env/.env", "QUESTION=why not\n")
    assert _picked(_select(repo)) == {"env/env.eval.yaml": ["env/.env changed"]}


def test_prompt_md_changed_or_added_selects_the_eval_next_to_it(repo: GitRepo) -> None:
    repo.write("agent/PROMPT.md", "Fix the failing test, carefully.\n")
    repo.write("team/PROMPT.md", "Now there is one here too.\n")
    assert _picked(_select(repo)) == {
        "agent/EVAL.yaml": ["agent/PROMPT.md changed"],
        "team/team.eval.yaml": ["team/PROMPT.md added"],
    }


@pytest.mark.parametrize("config", [".agentv/config.yaml", "agentv.config.ts"])
def test_global_config_selects_every_eval(repo: GitRepo, config: str) -> None:
    repo.write(config, "anything\n")
    repo.delete("plain.eval.yaml")
    selection = _select(repo)
    reason = f"global config {config} added: all evals selected"
    assert selection.all_reason == reason
    assert _picked(selection) == {path: [reason] for path in ALL - {"plain.eval.yaml"}}
    assert selection.removed == ["plain.eval.yaml"]


def test_a_select_all_on_glob_selects_every_eval(repo: GitRepo) -> None:
    repo.write("src/agent/core.py", "ANSWER = 42\n")
    selection = _select(repo, select_all_on=["src/*"])
    changes = selection.changes
    reason = "src/agent/core.py added (select_all_on): all evals selected"
    assert selection.all_reason == reason
    assert _picked(selection) == {path: [reason] for path in ALL}
    # Without the glob, the agent's code is no eval's dependency.
    assert select_changed_evals([repo.root], changes, repo_root=repo.root).selected == []


def test_an_unrelated_change_selects_nothing(repo: GitRepo) -> None:
    repo.write("README.md", "# project, documented\n")
    selection = _select(repo)
    assert selection.selected == []
    assert selection.total == len(ALL)


def test_an_eval_file_that_fails_to_load_is_still_selected_when_it_changed(repo: GitRepo) -> None:
    repo.write("plain.eval.yaml", "tests: [\n")
    repo.write("evals/refunds.eval.yaml", "tests: ./cases/missing.jsonl\n")
    assert _picked(_select(repo)) == {
        "plain.eval.yaml": ["eval file changed"],
        "evals/refunds.eval.yaml": ["eval file changed"],
    }


def test_a_broken_eval_is_selected_when_its_missing_file_appears(repo: GitRepo) -> None:
    repo.write("evals/refunds.eval.yaml", "tests: ./cases/later.jsonl\n")
    repo.commit("points at a file that is not there yet")
    repo.git("branch", "--force", "main")
    repo.write("evals/cases/later.jsonl", '{"id": "l", "input": "x", "criteria": "y"}\n')
    assert _picked(_select(repo)) == {"evals/refunds.eval.yaml": ["evals/cases/later.jsonl added"]}


def test_uncommitted_and_untracked_changes_count_when_asked(repo: GitRepo) -> None:
    repo.write("evals/cases/refunds.jsonl", '{"id": "r1", "input": "edited", "criteria": "explains"}\n')
    repo.write("untracked.eval.yaml", INLINE)
    assert _picked(_select(repo, commit=False)) == {
        "evals/refunds.eval.yaml": ["evals/cases/refunds.jsonl changed"],
        "untracked.eval.yaml": ["eval file added"],
    }


def test_only_evals_under_the_paths_are_considered(repo: GitRepo) -> None:
    repo.write(".agentv/targets.yaml", TARGETS + "  - name: other\n    provider: mock\n")
    repo.delete("plain.eval.yaml")
    selection = _select(repo, "evals")
    assert set(_picked(selection)) == {e for e in ALL if e.startswith("evals/")}
    assert selection.total == 4
    assert selection.removed == []  # plain.eval.yaml is outside `evals`


def test_a_forced_targets_file_applies_to_every_eval(repo: GitRepo) -> None:
    repo.write("ci/targets.yaml", TARGETS)
    picked = _picked(_select(repo, targets_file=repo.root / "ci" / "targets.yaml"))
    assert set(picked) == ALL
    assert picked["team/team.eval.yaml"] == ["ci/targets.yaml added"]


def test_a_deleted_jsonl_dataset_with_its_sidecar_is_removed(repo: GitRepo) -> None:
    repo.write("data/set.jsonl", '{"id": "d", "input": "x", "criteria": "y"}\n')
    repo.write("data/set.yaml", "name: set\n")
    repo.commit("dataset")
    repo.git("branch", "--force", "main")
    repo.delete("data/set.jsonl")
    repo.delete("data/set.yaml")
    assert _select(repo).removed == ["data/set.jsonl"]


def test_reasons_are_capped_per_eval(repo: GitRepo) -> None:
    for i in range(15):
        repo.write(f"evals/globbed/n{i:02d}.cases.yaml", f"- id: n{i}\n  input: x\n  criteria: y\n")
    [picked] = _select(repo).selected
    assert len(picked.reasons) == 10
    assert picked.reasons[0] == "evals/globbed/n00.cases.yaml added"
    assert picked.reasons[-1] == "and 6 more changed file(s)"


def test_loading_in_worker_processes_gives_the_same_selection(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write(".agentv/targets.yaml", TARGETS + "  - name: other\n    provider: mock\n")
    repo.write("evals/graders/helper.py", "SCORE = 0\n")
    repo.commit("two changes")
    changes = changed_files(repo.root, "main")
    serial = select_changed_evals([Path(".")], changes, repo_root=repo.root, env={}, workers=1)
    monkeypatch.setattr(graph_module, "PARALLEL_FROM", 1)
    parallel = select_changed_evals([Path(".")], changes, repo_root=repo.root, env={}, workers=2)
    assert parallel == serial
    assert _picked(serial)["evals/code.eval.yaml"] == [
        ".agentv/targets.yaml changed",
        "evals/graders/helper.py changed",  # check.py imports it
    ]


def test_as_summary_selection_joins_the_reasons(repo: GitRepo) -> None:
    repo.write("evals/graders/check.py", "import helper  # changed\n")
    repo.write("evals/code.eval.yaml", (repo.root / "evals/code.eval.yaml").read_text() + "description: d\n")
    assert _select(repo).as_summary_selection() == {
        "evals/code.eval.yaml": "eval file changed; evals/graders/check.py changed"
    }


@pytest.mark.parametrize(
    ("absolute", "relative"),
    [
        ("{root}/.env", ".env"),
        ("{root}/a/./b/../c.yaml", "a/c.yaml"),
        ("{root}/.agentv/targets.yaml", ".agentv/targets.yaml"),
        ("{root}", ""),
        ("{root}/a/..", ""),
        ("{root}/../elsewhere.txt", None),
        ("{root}-sibling/x.yaml", None),
        ("/etc/hosts", None),
    ],
)
def test_repo_relative_paths(tmp_path: Path, absolute: str, relative: str | None) -> None:
    root = tmp_path.resolve()
    assert graph_module.RepoPaths(root).relative(absolute.format(root=root)) == relative
