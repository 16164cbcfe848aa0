"""Test-definition fingerprints, on real eval files in real directories, through the runner."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentv_ci.model.result import TestResult
from agentv_ci.model.suite import GraderSpec, Message
from agentv_ci.model.suite import Test as SuiteTest
from agentv_ci.running.budget import Budget
from agentv_ci.running.fingerprints import FINGERPRINT_LENGTH, DefinitionFingerprints, definition_fingerprint
from agentv_ci.running.plan import PlanOptions, plan_jobs
from agentv_ci.running.scheduler import Runner, RunnerOptions
from agentv_ci.running.selected_suites import load_selected_suites
from agentv_ci.targets.config import load_targets

EVAL = """\
name: fp
execution:
  target: model
tests:
  - id: greet
    input: Say hello
    expected_output: hello
    assertions:
      - type: contains
        value: hello
        weight: 2
  - id: with-file
    input:
      - role: user
        content:
          - type: file
            value: files/context.md
          - type: text
            value: Summarise the file.
    criteria: A one-line summary
    assertions:
      - name: both
        type: composite
        aggregator:
          type: weighted_average
        assertions:
          - type: contains
            value: summary
          - type: regex
            value: "^S"
  - id: listed-files
    input_files: [files/context.md]
    input: What does the attached file say?
    assertions:
      - type: contains
        value: context
"""

TARGETS = """\
targets:
  - name: model
    provider: openai
    model: gpt-4o-mini
    temperature: 0
    api_key: ${{ OPENAI_API_KEY }}
    workers: 4
"""


def make_project(root: Path, *, eval_text: str = EVAL, targets: str = TARGETS) -> Path:
    """A checkout: `.git`, `.agentv/targets.yaml`, `evals/fp.eval.yaml` and the file it reads."""
    (root / ".git").mkdir(parents=True)
    (root / ".agentv").mkdir()
    (root / ".agentv" / "targets.yaml").write_text(targets, encoding="utf-8")
    (root / "evals" / "files").mkdir(parents=True)
    (root / "evals" / "files" / "context.md").write_text("The context file.\n", encoding="utf-8")
    (root / "evals" / "fp.eval.yaml").write_text(eval_text, encoding="utf-8")
    return root


def run_rows(
    root: Path, *, plan: PlanOptions | None = None, api_key: str = "sk-one", **options: object
) -> list[TestResult]:
    suites = load_selected_suites([root / "evals"], env={})
    rows: list[TestResult] = []
    runner_options = RunnerOptions(dry_run=True, env={"OPENAI_API_KEY": api_key}, **options)  # type: ignore[arg-type]
    asyncio.run(Runner(plan_jobs(suites, plan or PlanOptions()), runner_options, rows.append).run())
    return rows


def fingerprints(root: Path, **kwargs: object) -> dict[str, str | None]:
    return {row.test_id: row.fingerprint for row in run_rows(root, **kwargs)}  # type: ignore[arg-type]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "head")


def test_every_row_carries_a_short_hex_fingerprint(project: Path) -> None:
    found = fingerprints(project)
    assert set(found) == {"greet", "with-file", "listed-files"}
    for value in found.values():
        assert value is not None and len(value) == FINGERPRINT_LENGTH
        int(value, 16)
    assert len(set(found.values())) == 3


def test_same_definition_in_two_checkouts_at_different_paths_agrees(tmp_path: Path, project: Path) -> None:
    # a base run in a temporary worktree elsewhere, from another working directory
    base = make_project(tmp_path / "elsewhere" / "base-worktree")
    cwd = os.getcwd()
    try:
        os.chdir(base)
        in_base = fingerprints(base)
    finally:
        os.chdir(cwd)
    assert in_base == fingerprints(project)


def test_fingerprints_do_not_depend_on_the_process_hash_seed(project: Path) -> None:
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from agentv_ci.running.fingerprints import definition_fingerprint\n"
        "from agentv_ci.running.selected_suites import load_selected_suites\n"
        "suite = load_selected_suites([Path(sys.argv[1])], env={})[0]\n"
        "print([definition_fingerprint(t, eval_path=suite.path, threshold=0.8, target='m') "
        "for t in suite.tests])\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script, str(project / "evals")],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1


def test_moving_a_test_within_its_file_keeps_its_fingerprint(project: Path) -> None:
    before = fingerprints(project)
    # greet moves to the end, three lines further down, under a new comment
    eval_file = project / "evals" / "fp.eval.yaml"
    head, greet_and_rest = EVAL.split("  - id: greet\n")
    greet, rest = greet_and_rest.split("  - id: with-file\n")
    eval_file.write_text(
        head + "  - id: with-file\n" + rest + "\n\n  # moved here\n  - id: greet\n" + greet, encoding="utf-8"
    )
    rows = {r.test_id: r for r in run_rows(project)}
    assert rows["greet"].line != 6
    assert {k: r.fingerprint for k, r in rows.items()} == before


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        ("input: Say hello", "input: Say hello!", {"greet"}),
        ("expected_output: hello", "expected_output: hello there", {"greet"}),
        ("        weight: 2", "        weight: 3", {"greet"}),
        ("        value: hello\n", "        value: hell\n", {"greet"}),
        (
            "      - type: contains\n        value: hello",
            "      - type: icontains\n        value: hello",
            {"greet"},
        ),
        ('value: "^S"', 'value: "^T"', {"with-file"}),  # a composite member
        ("criteria: A one-line summary", "criteria: A two-line summary", {"with-file"}),
        ("value: Summarise the file.", "value: Summarize the file.", {"with-file"}),
        ("        value: context\n", "        value: contexts\n", {"listed-files"}),
    ],
)
def test_changing_the_definition_changes_the_fingerprint(
    project: Path, old: str, new: str, changed: set[str]
) -> None:
    before = fingerprints(project)
    edit(project / "evals" / "fp.eval.yaml", old, new)
    after = fingerprints(project)
    assert {k for k in before if before[k] != after[k]} == changed


def test_editing_a_referenced_file_changes_the_tests_that_read_it(project: Path) -> None:
    before = fingerprints(project)
    (project / "evals" / "files" / "context.md").write_text("Another context.\n", encoding="utf-8")
    after = fingerprints(project)
    assert {k for k in before if before[k] != after[k]} == {"with-file", "listed-files"}


def test_editing_a_grader_script_changes_the_tests_it_grades(project: Path, tmp_path: Path) -> None:
    grader = (
        "  - id: graded\n    input: Say hello\n    assertions:\n      - type: code-grader\n"
        "        command: [python3, graders/check.py]\n"
    )
    edit(project / "evals" / "fp.eval.yaml", "  - id: listed-files\n", grader + "  - id: listed-files\n")
    (project / "evals" / "graders").mkdir()
    script = project / "evals" / "graders" / "check.py"
    script.write_text("print('{\"score\": 1}')\n", encoding="utf-8")
    before = fingerprints(project)
    other = make_project(tmp_path / "elsewhere", eval_text=(project / "evals" / "fp.eval.yaml").read_text())
    (other / "evals" / "graders").mkdir()
    (other / "evals" / "graders" / "check.py").write_text(script.read_text(), encoding="utf-8")
    assert fingerprints(other) == before  # the same script in another checkout: the same definition
    script.write_text("print('{\"score\": 0}')\n", encoding="utf-8")
    after = fingerprints(project)
    assert {k for k in before if before[k] != after[k]} == {"graded"}


def test_threshold_in_the_file_changes_it_but_not_on_the_command_line(project: Path) -> None:
    before = fingerprints(project)
    assert fingerprints(project, plan=PlanOptions(threshold=0.9)) == before  # how the run judges
    edit(project / "evals" / "fp.eval.yaml", "  target: model\n", "  target: model\n  threshold: 0.7\n")
    assert all(before[k] != v for k, v in fingerprints(project).items())


def test_target_model_changes_it_but_secrets_and_runner_knobs_do_not(project: Path) -> None:
    before = fingerprints(project)
    assert fingerprints(project, api_key="sk-two") == before  # the key comes from the environment
    targets = project / ".agentv" / "targets.yaml"
    edit(
        targets, "    workers: 4\n", "    workers: 8\n    timeout_seconds: 30\n    headers: {X-Token: abc}\n"
    )
    edit(targets, "${{ OPENAI_API_KEY }}", "sk-literal-key")
    assert fingerprints(project) == before
    edit(targets, "model: gpt-4o-mini", "model: gpt-4o")
    assert all(before[k] != v for k, v in fingerprints(project).items())


def test_another_target_is_another_fingerprint(project: Path) -> None:
    edit(
        project / ".agentv" / "targets.yaml",
        "    workers: 4\n",
        "    workers: 4\n  - name: other\n    provider: openai\n    model: gpt-4o-mini\n    temperature: 0\n",
    )
    rows = run_rows(project, plan=PlanOptions(targets=["model", "other"]))
    by_target = {(r.test_id, r.target): r.fingerprint for r in rows}
    assert by_target[("greet", "model")] != by_target[("greet", "other")]


def test_attempts_and_not_run_rows_carry_the_same_fingerprint(project: Path) -> None:
    single = fingerprints(project)
    repeated = run_rows(project, plan=PlanOptions(repeat=3))
    for row in repeated:
        assert row.fingerprint == single[row.test_id]  # --repeat is noise handling, not a new test
        assert row.trials and {t.fingerprint for t in row.trials} == {single[row.test_id]}
    stopped = run_rows(project, budget=Budget(0.0))
    assert {r.execution_status for r in stopped} == {"not_run"}
    assert {r.test_id: r.fingerprint for r in stopped} == single


def test_definition_fingerprint_reads_the_target_from_targets_yaml(project: Path) -> None:
    suite = load_selected_suites([project / "evals"], env={})[0]
    test = suite.tests[0]
    targets = load_targets(Path(suite.path), env={"OPENAI_API_KEY": "sk"})
    declared = definition_fingerprint(
        test, eval_path=suite.path, threshold=0.8, target="model", targets=targets
    )
    bare = definition_fingerprint(test, eval_path=suite.path, threshold=0.8, target="model")
    assert declared != bare
    assert declared == fingerprints(project)["greet"]


def test_the_results_file_keeps_the_fingerprint(project: Path, tmp_path: Path) -> None:
    from agentv_ci.results.results_file import ResultsWriter, read_results

    rows = run_rows(project)
    with ResultsWriter(tmp_path / "index.jsonl") as writer:
        for row in rows:
            writer.append(row)
    first = json.loads((tmp_path / "index.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first["fingerprint"] == rows[0].fingerprint
    assert [r.fingerprint for r in read_results(tmp_path / "index.jsonl")] == [r.fingerprint for r in rows]


def test_one_graders_list_under_two_eval_files_is_fingerprinted_for_each(tmp_path: Path) -> None:
    # The spool shares one graders list between tests: the cache that recognises it by identity
    # must still tell eval files apart (a grader naming a file is hashed with that file's bytes).
    for name, text in (("a", "one"), ("b", "two")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "check.py").write_text(text)
    graders = [GraderSpec(type="code-grader", name="c", config={"command": "check.py"})]
    test = SuiteTest(id="t", input=[Message(role="user", content="q")], graders=graders)
    shared = DefinitionFingerprints()
    paths = [str(tmp_path / d / "eval.yaml") for d in ("a", "b", "a")]
    got = [shared.fingerprint(test, eval_path=p, threshold=0.8, target="m", targets=None) for p in paths]
    fresh = [definition_fingerprint(test, eval_path=p, threshold=0.8, target="m") for p in paths]
    assert got == fresh
    assert got[0] != got[1]


def test_one_instance_agrees_with_a_fresh_one_job_after_job_whatever_the_target(project: Path) -> None:
    # The instance remembers the last job's target: jobs alternating between targets and configs
    # (an empty name too) must each get what a fresh instance gives.
    config = load_targets(project / "evals" / "fp.eval.yaml", env={})
    test = SuiteTest(id="t", input=[Message(role="user", content="q")])
    eval_path = str(project / "evals" / "fp.eval.yaml")
    shared = DefinitionFingerprints()
    calls = [("", None), ("model", config), ("", None), ("model", None), ("model", config), ("other", config)]
    got = [
        shared.fingerprint(test, eval_path=eval_path, threshold=0.8, target=t, targets=c) for t, c in calls
    ]
    fresh = [
        definition_fingerprint(test, eval_path=eval_path, threshold=0.8, target=t, targets=c)
        for t, c in calls
    ]
    assert got == fresh
    assert len(set(got)) == 4
