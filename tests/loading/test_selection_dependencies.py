"""What the loader records as dependencies (`LoadResult.dependencies`, `Suite.dependencies`): the files
and directories change-based selection watches for each eval file."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from agentv_ci.loading.suite_loader import LoadResult, load_suite


def _write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def _load(path: Path, root: Path, **kwargs: bool) -> LoadResult:
    return load_suite(path, repo_root=root, env={}, **kwargs)


def _relative(result: LoadResult, root: Path) -> set[str]:
    base = str(root.resolve()) + "/"
    return {d[len(base) :] for d in result.dependencies if d.startswith(base)}


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path.resolve()


def test_prompt_md_next_to_the_eval_is_a_dependency_whether_or_not_it_exists(root: Path) -> None:
    with_prompt = _write(root / "a" / "EVAL.yaml", "tests:\n  - id: t\n    criteria: fixes it\n")
    _write(root / "a" / "PROMPT.md", "Fix the bug.\n")
    without = _write(root / "b" / "EVAL.yaml", "tests:\n  - id: t\n    input: hi\n    criteria: greets\n")
    loaded = _load(with_prompt, root)
    assert loaded.ok
    assert "a/PROMPT.md" in _relative(loaded, root)
    # Adding a PROMPT.md next to `b` would change what its tests send: it is watched too.
    assert "b/PROMPT.md" in _relative(_load(without, root), root)


def test_a_code_grader_script_and_its_own_directory_are_dependencies(root: Path) -> None:
    _write(root / "graders" / "check.py", "print('{}')\n")
    _write(root / "evals" / "local.py", "print('{}')\n")
    eval_file = _write(
        root / "evals" / "code.eval.yaml",
        """\
        tests:
          - id: t
            input: hi
            assertions:
              - type: code-grader
                command: [python, ../graders/check.py]
              - type: code-grader
                command: [python, local.py]
        """,
    )
    deps = _relative(_load(eval_file, root), root)
    assert {"graders/check.py", "graders", "evals/local.py"} <= deps
    # The eval file's own directory is not watched for a script that sits next to it: every sibling
    # eval file would then select this one.
    assert "evals" not in deps


def test_a_case_glob_watches_its_fixed_directory(root: Path) -> None:
    _write(root / "cases" / "nested" / "a.cases.yaml", "- id: a\n  input: x\n  criteria: y\n")
    eval_file = _write(root / "glob.eval.yaml", "tests: cases/**/*.cases.yaml\n")
    loaded = _load(eval_file, root)
    assert loaded.ok, loaded.diagnostics
    assert {"cases", "cases/nested/a.cases.yaml"} <= _relative(loaded, root)


def test_a_case_directory_is_a_dependency(root: Path) -> None:
    _write(root / "cases" / "one" / "case.yaml", "input: x\ncriteria: y\n")
    eval_file = _write(root / "dir.eval.yaml", "tests: ./cases\n")
    assert {"cases", "cases/one/case.yaml"} <= _relative(_load(eval_file, root), root)


def test_an_assertion_template_and_the_nearer_places_that_would_shadow_it(root: Path) -> None:
    template = "assertions:\n  - type: contains\n    value: please\n"
    _write(root / ".agentv" / "templates" / "polite.yaml", template)
    uses = "tests:\n  - id: t\n    input: x\n    assertions:\n      - include: polite\n"
    eval_file = _write(root / "sub" / "t.eval.yaml", uses)
    loaded = _load(eval_file, root)
    assert loaded.ok, loaded.diagnostics
    deps = _relative(loaded, root)
    assert ".agentv/templates/polite.yaml" in deps
    assert "sub/.agentv/templates/polite.yaml" in deps
    # AgentV looks for <name>.yaml in every root before <name>.yml in any: no .yml can shadow it
    assert "sub/.agentv/templates/polite.yml" not in deps
    assert ".agentv/templates/polite.yml" not in deps


def test_every_place_a_dotenv_could_be_is_a_dependency(root: Path) -> None:
    _write(root / ".env", "X=1\n")
    eval_file = _write(
        root / "deep" / "er" / "e.eval.yaml", "tests:\n  - id: t\n    input: x\n    criteria: y\n"
    )
    assert {".env", "deep/.env", "deep/er/.env"} <= _relative(_load(eval_file, root), root)


def test_a_missing_case_file_is_a_dependency_of_an_eval_that_fails_to_load(root: Path) -> None:
    eval_file = _write(root / "e.eval.yaml", "tests: ./gone.jsonl\n")
    loaded = _load(eval_file, root)
    assert not loaded.ok
    assert {"e.eval.yaml", "gone.jsonl"} <= _relative(loaded, root)


def test_an_unparseable_eval_file_still_lists_itself(root: Path) -> None:
    eval_file = _write(root / "bad.eval.yaml", "tests: [\n")
    loaded = _load(eval_file, root)
    assert loaded.suite is None
    assert "bad.eval.yaml" in _relative(loaded, root)


def test_without_building_graders_the_suite_and_dependencies_are_the_same(root: Path) -> None:
    _write(root / "prompts" / "judge.md", "Judge {{output}}\n")
    eval_file = _write(
        root / "e.eval.yaml",
        """\
        tests:
          - id: t
            input: Look up the refund policy
            assertions:
              - type: tool-trajectory
                mode: in_order
              - type: llm-grader
                prompt: file://prompts/judge.md
        """,
    )
    full = _load(eval_file, root)
    light = _load(eval_file, root, build_graders=False)
    # The trajectory grader's own check (E202) needs a build; the light load skips it.
    assert [d.code for d in full.diagnostics] == ["E202"]
    assert light.diagnostics == []
    assert light.dependencies == full.dependencies
    assert "prompts/judge.md" in _relative(light, root)
    assert light.suite is not None and full.suite is not None
    assert light.suite.tests == full.suite.tests
