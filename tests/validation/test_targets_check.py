"""`validate` checks the targets a suite uses, located in the file where each problem was written."""

from __future__ import annotations

from pathlib import Path

from agentv_ci.validation.validator import validate_paths
from tests.cli_helpers import run_cli

TARGETS = """\
targets:
  - name: agent
    provider: cli
    command: python3 agent.py {OUTPUT_FILE}
    grader_target: judje
  - name: judge
    provider: mock
  - name: typo
    provider: opanai
  - name: headless
    provider: cli
  - name: unused
    provider: nonsense
"""


def _project(root: Path, targets: str = TARGETS) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / ".agentv").mkdir()
    (root / ".agentv" / "targets.yaml").write_text(targets)
    return root


def _suite(root: Path, name: str, target_lines: str) -> Path:
    path = root / f"{name}.eval.yaml"
    path.write_text(f"name: {name}\n{target_lines}tests:\n  - id: t\n    input: hi\n    criteria: says hi\n")
    return path


def _found(root: Path, **kwargs: object) -> set[tuple[str, str, int, int]]:
    report = validate_paths([root], env={}, **kwargs)  # type: ignore[arg-type]
    return {(d.code, Path(d.file).name, d.line, d.col) for d in report.diagnostics}


def test_each_target_problem_is_reported_where_it_was_written(tmp_path: Path) -> None:
    root = _project(tmp_path)
    _suite(root, "a", "execution:\n  target: agent\n")
    _suite(root, "b", "execution:\n  targets: [typo, headless]\n")
    _suite(root, "c", "execution:\n  target: agnet\n")
    assert _found(root) == {
        ("E401", "targets.yaml", 5, 5),  # agent's grader_target names an unknown target
        ("E205", "targets.yaml", 9, 5),  # typo's provider
        ("E206", "targets.yaml", 10, 5),  # headless has no command
        ("W111", "c.eval.yaml", 3, 11),  # the eval file names an unknown target (run --target replaces it)
    }  # `unused` is broken too, but no suite uses it


def test_messages_and_hints_say_how_to_fix_it(tmp_path: Path) -> None:
    root = _project(tmp_path)
    _suite(root, "b", "execution:\n  targets: [typo, headless]\n")
    _suite(root, "c", "execution:\n  target: agnet\n")
    by_code = {d.code: d for d in validate_paths([root], env={}).diagnostics}
    assert by_code["E205"].message == "target 'typo': unknown provider 'opanai'"
    assert by_code["E205"].hint == "did you mean `openai`?"
    assert by_code["E206"].message == "target 'headless' (cli) needs `command`"
    assert by_code["W111"].message.startswith("unknown target 'agnet'")
    assert by_code["W111"].hint == "did you mean 'agent'?"


def test_validate_exits_2_on_an_unknown_provider_and_prints_its_line(tmp_path: Path) -> None:
    root = _project(tmp_path)
    _suite(root, "b", "execution:\n  target: typo\n")
    done = run_cli("validate", ".", cwd=root)
    assert done.returncode == 2, done.stdout
    assert ".agentv/targets.yaml:9:5: error[E205]: target 'typo': unknown provider 'opanai'" in done.stdout


def test_implicit_default_is_checked_only_when_declared(tmp_path: Path) -> None:
    root = _project(tmp_path / "declared", "targets:\n  - name: default\n    provider: nope\n")
    _suite(root, "a", "")
    assert _found(root) == {("E205", "targets.yaml", 3, 5)}
    root = _project(tmp_path / "undeclared", "targets:\n  - name: other\n    provider: mock\n")
    _suite(root, "a", "")  # `run --target other` is how this one runs
    assert _found(root) == set()
    bare = tmp_path / "bare"
    (bare / ".git").mkdir(parents=True)
    _suite(bare, "a", "execution:\n  target: anything\n")
    assert _found(bare, targets_file=root / ".agentv" / "targets.yaml") == {("W111", "a.eval.yaml", 3, 11)}
    strict = validate_paths([bare], env={}, strict=True, targets_file=root / ".agentv" / "targets.yaml")
    assert [(d.code, d.severity) for d in strict.diagnostics] == [("W111", "error")]


def test_a_target_from_an_unset_variable_is_a_warning(tmp_path: Path) -> None:
    targets = "targets:\n  - name: default\n    use_target: ${{ AGENT_TARGET }}\n"
    root = _project(tmp_path, targets)
    _suite(root, "a", "")
    assert _found(root) == {("W109", "targets.yaml", 3, 5)}


def test_sources_is_a_known_key_and_a_bad_one_is_located(tmp_path: Path) -> None:
    sources = "targets:\n  - name: agent\n    provider: cli\n    command: python3 agent.py {OUTPUT_FILE}\n"
    root = _project(tmp_path, sources + "    sources: [agent.py, lib/]\n")
    _suite(root, "a", "execution:\n  target: agent\n")
    assert _found(root) == set()  # no W108 "unknown key" for `sources`
    (root / ".agentv" / "targets.yaml").write_text(sources + "    sources: agent.py\n")
    assert _found(root) == {("E207", "targets.yaml", 5, 5)}


def test_with_no_targets_file_at_all_a_named_target_is_an_error_unless_target_is_given(
    tmp_path: Path,
) -> None:
    """`run` refuses these (nothing declares them, and no `--target NAME` but the built-in `mock`
    can replace them): so does `validate`, where the eval file names the target (E402)."""
    bare = tmp_path / "bare"
    (bare / ".git").mkdir(parents=True)
    _suite(bare, "named", "execution:\n  target: anything\n")
    _suite(bare, "implicit", "")  # runs against `default`, declared nowhere
    _suite(bare, "builtin", "execution:\n  target: mock\n")
    report = validate_paths([bare], env={})
    found = {(d.code, d.severity, Path(d.file).name, d.line, d.col) for d in report.diagnostics}
    assert found == {
        ("E402", "error", "named.eval.yaml", 3, 11),  # at the `target:` value
        ("E402", "error", "implicit.eval.yaml", 0, 0),  # the file: nothing in it names `default`
    }
    named = next(d for d in report.diagnostics if Path(d.file).name == "named.eval.yaml")
    assert named.message == "unknown target 'anything' (no targets.yaml was found)"
    assert named.hint is not None and "--target mock" in named.hint and "--targets FILE" in named.hint

    # `--target` replaces the files' own names, as in `run`; it is checked in their place.
    assert validate_paths([bare], env={}, cli_targets=("mock",)).diagnostics == []
    wrong = validate_paths([bare], env={}, cli_targets=("gpt",)).diagnostics
    assert {(d.code, Path(d.file).name) for d in wrong} == {
        ("E402", "named.eval.yaml"),
        ("E402", "implicit.eval.yaml"),
        ("E402", "builtin.eval.yaml"),
    }
    # With a targets file, `--target` names one of its targets; an undeclared one is an error.
    root = _project(tmp_path / "declared", "targets:\n  - name: judge\n    provider: mock\n")
    _suite(root, "a", "execution:\n  target: elsewhere\n")
    assert _found(root) == {("W111", "a.eval.yaml", 3, 11)}
    assert _found(root, cli_targets=("judge",)) == set()
    assert _found(root, cli_targets=("jugde",)) == {("E401", "a.eval.yaml", 0, 0)}


def test_validate_exits_2_without_a_targets_file_and_0_with_target_mock(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    _suite(tmp_path, "a", "execution:\n  target: gpt\n")
    done = run_cli("validate", "a.eval.yaml", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "a.eval.yaml:3:11: error[E402]: unknown target 'gpt' (no targets.yaml was found)" in done.stdout
    assert "  hint: create .agentv/targets.yaml" in done.stdout
    ran = run_cli("run", "a.eval.yaml", "-o", "out", cwd=tmp_path)
    assert ran.returncode == 2 and "unknown target 'gpt'" in ran.stderr  # the same verdict as `run`

    done = run_cli("validate", "a.eval.yaml", "--target", "mock", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("0 error(s), 0 warning(s)")
    ran = run_cli("run", "a.eval.yaml", "--target", "mock", "--dry-run", "-o", "out", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_each_line_of_a_dataset_has_its_own_targets_checked(tmp_path: Path) -> None:
    """Lines that share the suite's target are checked once; a line naming its own is checked where
    it names it, after and between lines that do not."""
    root = _project(tmp_path)
    (root / "data.yaml").write_text("name: data\nexecution:\n  target: judge\n")
    lines = [f'{{"id": "t{i}", "input": "hi", "criteria": "says hi"}}' for i in range(6)]
    lines[2] = '{"id": "own", "input": "hi", "criteria": "says hi", "execution": {"target": "jugde"}}'
    lines[4] = '{"id": "many", "input": "hi", "criteria": "x", "execution": {"targets": ["judge", "nope"]}}'
    (root / "data.jsonl").write_text("\n".join(lines) + "\n")
    report = validate_paths([root / "data.jsonl"], repo_root=root)
    assert report.tests == 6
    assert [(d.code, Path(d.file).name, d.line, d.message[:22]) for d in report.diagnostics] == [
        ("W111", "data.jsonl", 3, "unknown target 'jugde'"),
        ("W111", "data.jsonl", 5, "unknown target 'nope' "),
    ]
