"""Referenced files stay inside the repository (E305), symlinks followed, unless the invocation allows
a directory: an eval file can never widen its own box."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentv_ci.loading.suite_loader import LoadResult, load_suite
from agentv_ci.security.confinement import Confinement

OUTSIDE_SECRET = "contents of a file outside the repository"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """tmp/repo (a git root) with evals/, and tmp/outside/secret.txt next to it."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "evals").mkdir()
    (root / "evals" / "inside.txt").write_text("inside")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(OUTSIDE_SECRET)
    (tmp_path / "outside" / "cases.yaml").write_text("- id: stolen\n  input: hi\n  criteria: x\n")
    (tmp_path / "outside" / "grade.py").write_text("print('{\"score\": 1}')\n")
    return root


def load(repo: Path, body: str, **kwargs: object) -> LoadResult:
    path = repo / "evals" / "e.eval.yaml"
    path.write_text(textwrap.dedent(body))
    return load_suite(path, env={}, **kwargs)  # type: ignore[arg-type]


def e305(result: LoadResult) -> list[tuple[int, int, str]]:
    return [(d.line, d.col, d.message) for d in result.diagnostics if d.code == "E305"]


@pytest.mark.parametrize("value", ["/etc/passwd", "../../../../../../../../etc/passwd", "~/.bashrc"])
def test_a_file_block_outside_the_repository_is_a_located_error(repo: Path, value: str) -> None:
    result = load(
        repo,
        f"""\
        tests:
          - id: t
            input:
              - role: user
                content:
                  - type: file
                    value: {value}
            criteria: x
        """,
    )
    found = e305(result)
    assert [(line, col) for line, col, _ in found] == [(7, 20)]
    assert "outside the repository" in found[0][2]
    hint = next(d.hint for d in result.diagnostics if d.code == "E305")
    assert hint is not None and "--allow-outside-repo" in hint and str(repo.resolve()) in hint


def test_every_kind_of_reference_is_confined(repo: Path) -> None:
    outside = repo.parent / "outside"
    result = load(
        repo,
        f"""\
        input_files: [{outside}/secret.txt]
        workspace:
          template: {outside}
        tests:
          - {outside}/cases.yaml
          - ../../outside/*.yaml
          - id: t
            input: hi
            input_files: [../../outside/secret.txt]
            assertions:
              - type: code-grader
                command: [python3, ../../outside/grade.py]
              - type: llm-grader
                prompt: file://../../outside/secret.txt
        """,
    )
    lines = sorted(line for line, _, _ in e305(result))
    assert lines == [1, 3, 5, 6, 9, 12, 14]


def test_a_symlink_inside_the_repository_to_a_file_outside_is_refused(repo: Path) -> None:
    (repo / "evals" / "link.txt").symlink_to(repo.parent / "outside" / "secret.txt")
    (repo / "evals" / "cases.yaml").symlink_to(repo.parent / "outside" / "cases.yaml")
    result = load(
        repo,
        """\
        tests:
          - cases.yaml
          - id: t
            input: hi
            input_files: [link.txt]
            criteria: x
        """,
    )
    assert sorted(line for line, _, _ in e305(result)) == [2, 5]


def test_files_inside_the_repository_and_symlinks_within_it_are_fine(repo: Path) -> None:
    (repo / "evals" / "alias.txt").symlink_to(repo / "evals" / "inside.txt")
    result = load(
        repo,
        """\
        tests:
          - id: t
            input: hi
            input_files: [inside.txt, alias.txt, /evals/inside.txt]
            criteria: x
        """,
    )
    assert result.ok, result.diagnostics


def test_an_allowed_directory_widens_the_box_for_that_directory_only(repo: Path) -> None:
    body = """\
    tests:
      - id: t
        input: hi
        input_files: [../../outside/secret.txt, /etc/hostname]
        criteria: x
    """
    allowed = load(repo, body, allow_outside=[repo.parent / "outside"])
    assert [m for _, _, m in e305(allowed)] == [m for _, _, m in e305(allowed) if "hostname" in m]
    assert len(e305(allowed)) == (1 if Path("/etc/hostname").exists() else 0)
    assert len(e305(load(repo, body))) == (2 if Path("/etc/hostname").exists() else 1)


def test_outside_git_the_root_is_the_eval_files_directory(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "shared.txt").write_text("one level up")
    path = tmp_path / "evals" / "e.eval.yaml"
    path.write_text("tests:\n  - id: t\n    input: hi\n    input_files: [../shared.txt]\n    criteria: x\n")
    assert [d.code for d in load_suite(path, env={}).diagnostics] == ["E305"]


def test_confinement_follows_symlinked_roots_and_rejects_prefix_lookalikes(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo-evil").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "repo")
    box = Confinement.at(tmp_path / "alias")
    assert box.permits(tmp_path / "repo" / "x.txt")
    assert box.permits(tmp_path / "alias" / "x.txt")
    assert not box.permits(tmp_path / "repo-evil" / "x.txt")  # a shared prefix is not a parent
    assert not box.permits(tmp_path / "repo" / ".." / "repo-evil")


def test_run_refuses_a_file_outside_the_repository_unless_the_invocation_allows_it(repo: Path) -> None:
    """The issue's case: `value: /etc/passwd`-style references validated and ran (exit 0)."""
    secret = repo.parent / "outside" / "secret.txt"
    (repo / "evals" / "e.eval.yaml").write_text(
        "tests:\n  - id: t\n    input:\n      - role: user\n        content:\n"
        f"          - type: file\n            value: {secret}\n"
        "    assertions:\n      - type: contains\n        value: secret.txt\n"
    )
    (repo / ".agentv").mkdir()
    (repo / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: cli\n"
        f'    command: {sys.executable} -c "import shutil,sys; shutil.copy(sys.argv[1], sys.argv[2])" '
        "{PROMPT_FILE} {OUTPUT_FILE}\n"
    )
    command = [sys.executable, "-m", "agentv_ci", "run", "evals", "-o", "out", "-q"]
    env = {k: v for k, v in os.environ.items() if k != "AGENTV_CI_ALLOW_OUTSIDE_REPO"}
    refused = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "e.eval.yaml:7:20: error[E305]" in refused.stderr
    assert not (repo / "out" / "index.jsonl").exists()
    validate = [sys.executable, "-m", "agentv_ci", "validate", "evals"]
    checked = subprocess.run(validate, cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert checked.returncode == 2 and "E305" in checked.stdout

    flag = [*command, "--allow-outside-repo", str(secret.parent)]
    allowed = subprocess.run(flag, cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    by_env = {**env, "AGENTV_CI_ALLOW_OUTSIDE_REPO": str(secret.parent)}
    also = subprocess.run([*validate], cwd=repo, env=by_env, capture_output=True, text=True, timeout=60)
    assert also.returncode == 0, also.stdout + also.stderr


def test_offline_grading_is_confined_too(repo: Path) -> None:
    secret = repo.parent / "outside" / "secret.txt"
    (repo / "evals" / "e.eval.yaml").write_text(
        f"tests:\n  - id: t\n    input: hi\n    input_files: [{secret}]\n"
        "    assertions:\n      - type: contains\n        value: ok\n"
    )
    (repo / "answers.jsonl").write_text('{"test_id": "t", "output": "ok"}\n')
    command = [
        sys.executable,
        "-m",
        "agentv_ci",
        "grade",
        "evals/e.eval.yaml",
        "--responses",
        "answers.jsonl",
    ]
    env = {k: v for k, v in os.environ.items() if k != "AGENTV_CI_ALLOW_OUTSIDE_REPO"}
    refused = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "E305" in refused.stderr, refused.stdout + refused.stderr
    flag = [*command, "--allow-outside-repo", str(secret.parent), "-o", "out"]
    allowed = subprocess.run(flag, cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
