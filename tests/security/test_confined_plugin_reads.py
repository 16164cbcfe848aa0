"""Files plugins read go through the loader's confinement and size cap (issue 19, item 8), via the
public `agentv_ci.api.read_confined_file`. Through the CLI with the in-repo json-schema grader:
`schema: /dev/zero`, `schema: /etc/passwd`, a symlink escaping the repository and a FIFO are located
`validate` errors and `run` refusals, in bounded memory; the helper itself refuses the same."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentv_ci.api import ConfigError, ConfinedReadError, SourceLocation, read_confined_file
from agentv_ci.security import file_reads
from agentv_ci.security.file_reads import allow_for_plugins

PEAK_RSS_LIMIT_KB = 400 * 1024  # `schema: /dev/zero` reached 7.3 GB before


def _project(tmp_path: Path, schema: str) -> Path:
    project = tmp_path / "project"
    (project / ".agentv").mkdir(parents=True, exist_ok=True)
    (project / ".git").mkdir(exist_ok=True)  # the repository root
    (project / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - {name: default, provider: mock, response: '{\"a\": 1}'}\n"
    )
    eval_file = project / "s.eval.yaml"
    eval_file.write_text(
        "tests:\n  - id: t\n    input: hi\n    assertions:\n"
        f"      - type: json-schema\n        schema: {schema}\n"
    )
    return eval_file


# Started from a small helper, which reports its child's peak: a child forked from pytest itself
# would inherit pytest's own RSS into its ru_maxrss.
_PEAK = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "print('peak-kib', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(code)\n"
)


def _cli(*args: str, cwd: Path) -> tuple[int, str, int]:
    """(exit code, stdout+stderr, peak RSS in KiB) of `python -m agentv_ci ARGS`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTV_CI_"))}
    env["XDG_CACHE_HOME"] = str(cwd / ".cache-home")
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, sys.executable, "-m", "agentv_ci", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    output, _, peak = done.stdout.rpartition("peak-kib ")
    return done.returncode, output, int(peak.strip())


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: "/dev/zero", "schema /dev/zero is outside the repository"),
        (lambda p: "/etc/passwd", "schema /etc/passwd is outside the repository"),
        (lambda p: _link(p, "escape.json", "/etc/passwd"), "schema escape.json (-> /etc/passwd) is outside"),
        (lambda p: _link(p, "zero.json", "/dev/zero"), "schema zero.json (-> /dev/zero) is outside"),
        (lambda p: _fifo(p, "pipe.json"), "schema pipe.json is not a regular file"),
    ],
    ids=["dev-zero", "etc-passwd", "symlink-out", "symlink-dev-zero", "fifo"],
)
def test_validate_and_run_refuse_a_schema_outside_the_repository_at_its_line(
    tmp_path: Path, make: object, message: str
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    schema = make(project)  # type: ignore[operator]
    eval_file = _project(tmp_path, schema)
    code, output, peak_kb = _cli("validate", str(eval_file), cwd=tmp_path)
    assert code == 2, output
    assert "project/s.eval.yaml:6:17: error" in output and message in output, output  # `schema:`
    assert "--allow-outside-repo" in output or "regular file" in output
    assert "Traceback" not in output
    assert peak_kb < PEAK_RSS_LIMIT_KB, peak_kb
    code, output, peak_kb = _cli("run", str(eval_file), "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert code == 2, output
    assert message in output and "Traceback" not in output
    assert peak_kb < PEAK_RSS_LIMIT_KB, peak_kb


def _link(project: Path, name: str, to: str) -> str:
    (project / name).symlink_to(to)
    return name


def _fifo(project: Path, name: str) -> str:
    os.mkfifo(project / name)
    return name


def test_a_schema_inside_the_repository_still_grades(tmp_path: Path) -> None:
    eval_file = _project(tmp_path, "schemas/a.json")
    (eval_file.parent / "schemas").mkdir()
    (eval_file.parent / "schemas" / "a.json").write_text('{"type": "object", "required": ["a"]}')
    code, output, _ = _cli("run", str(eval_file), "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert code == 0, output


def test_allow_outside_repo_widens_plugin_reads_as_it_widens_the_loader(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "a.json").write_text('{"type": "object"}')
    eval_file = _project(tmp_path, str(shared / "a.json"))
    code, output, _ = _cli("validate", str(eval_file), cwd=tmp_path)
    assert code == 2 and "outside the repository" in output
    code, output, _ = _cli("validate", str(eval_file), "--allow-outside-repo", str(shared), cwd=tmp_path)
    assert code == 0, output


def test_the_helper_caps_size_reads_relative_paths_and_locates_its_errors(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "small.txt").write_bytes(b"x" * 100)
    (tmp_path / "big.txt").write_bytes(b"x" * 101)
    sub = tmp_path / "sub"
    assert read_confined_file("small.txt", base_dir=sub, max_bytes=100) == b"x" * 100
    assert read_confined_file("file://../big.txt", base_dir=sub) == b"x" * 101
    where = SourceLocation("s.eval.yaml", 3, 7)
    with pytest.raises(ConfinedReadError, match=r"big.txt is larger than 100 bytes") as info:
        read_confined_file("../big.txt", base_dir=sub, max_bytes=100, location=where)
    assert info.value.location == where and isinstance(info.value, ConfigError)
    with pytest.raises(ConfinedReadError, match=r"file not found: nope\.txt"):
        read_confined_file("nope.txt", base_dir=sub)
    with pytest.raises(ConfinedReadError, match="is outside the repository"):
        read_confined_file("../../x", base_dir=sub)
    with pytest.raises(ConfinedReadError, match="not a regular file"):
        read_confined_file(".", base_dir=sub)


def test_allowed_directories_are_the_invocations_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(file_reads, "_ALLOWED", {})
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "f").write_text("ok")
    with pytest.raises(ConfinedReadError):
        read_confined_file(tmp_path / "other" / "f", base_dir=tmp_path / "repo")
    allow_for_plugins([tmp_path / "other"])
    assert read_confined_file(tmp_path / "other" / "f", base_dir=tmp_path / "repo") == b"ok"
