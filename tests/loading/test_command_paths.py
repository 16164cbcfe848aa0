"""`command_files`: which repository files a command runs (scripts, `python -m` modules, `sh -c`
strings, shell scripts, and the in-repo modules Python scripts import), on real files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from agentv_ci.loading.command_paths import command_files, shell_segments


def _write(root: Path, rel: str, text: str = "") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    _write(root, "agent/bot.py", "import json\nfrom lib import helper\nimport mypkg.core\n")
    _write(root, "lib/__init__.py")
    _write(root, "lib/helper.py", "from .inner import value\n")
    _write(root, "lib/inner.py", "value = 1\n")
    _write(root, "lib/unused.py", "")
    _write(root, "src/mypkg/__init__.py")
    _write(root, "src/mypkg/core.py", "")
    _write(root, "checks/__init__.py")
    _write(root, "checks/grade.py", "import checks.util\n")
    _write(root, "checks/util.py", "")
    _write(root, "checks/pkg/__main__.py", "")
    _write(root, "evals/x.py", "")
    _write(root, "run.sh", '#!/bin/sh\nset -e\ncd "$(dirname "$0")"\npython3 agent/bot.py "$@"\n')
    _write(root, "json.txt", "")
    return root.resolve()


def _rel(paths: tuple[Path, ...], root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in paths)


BOT_IMPORTS = [
    "lib/__init__.py",
    "lib/helper.py",
    "lib/inner.py",
    "src/mypkg/__init__.py",
    "src/mypkg/core.py",
]


def test_a_script_and_the_in_repo_modules_it_imports_transitively(repo: Path) -> None:
    found = command_files("python3 agent/bot.py {PROMPT_FILE} {OUTPUT_FILE}", repo, repo)
    assert _rel(found.scripts, repo) == ["agent/bot.py"]
    # `json` is the standard library (not in the repo); lib/unused.py is never imported.
    assert _rel(found.imports, repo) == BOT_IMPORTS


def test_python_dash_m_resolves_the_module_file_and_its_imports(repo: Path) -> None:
    found = command_files(["python3", "-m", "checks.grade"], repo, repo)
    assert _rel(found.scripts, repo) == ["checks/grade.py"]
    assert _rel(found.imports, repo) == ["checks/__init__.py", "checks/util.py"]
    package = command_files("python -m checks.pkg --flag", repo, repo)
    assert _rel(package.scripts, repo) == ["checks/pkg/__main__.py"]


def test_sh_and_bash_dash_c_strings_are_resolved_with_cd(repo: Path) -> None:
    found = command_files(["sh", "-c", "cd .. && python3 -m checks.grade"], repo / "evals", repo)
    assert _rel(found.scripts, repo) == ["checks/grade.py"]
    found = command_files('bash -lc "FOO=1 uv run python evals/x.py > out.txt"', repo, repo)
    assert _rel(found.scripts, repo) == ["evals/x.py"]


def test_a_shell_script_is_followed_to_the_scripts_it_runs(repo: Path) -> None:
    found = command_files("./run.sh {PROMPT}", repo, repo)
    assert _rel(found.scripts, repo) == ["agent/bot.py", "run.sh"]
    assert _rel(found.imports, repo) == BOT_IMPORTS


def test_inline_python_code_imports_count(repo: Path) -> None:
    found = command_files(["python3", "-c", "import checks.grade; checks.grade.main()"], repo, repo)
    assert "checks/grade.py" in _rel(found.imports, repo)
    assert "checks/util.py" in _rel(found.imports, repo)


def test_a_missing_script_is_still_named_and_nothing_outside_the_repo_is(repo: Path, tmp_path: Path) -> None:
    _write(tmp_path, "outside.py", "")
    found = command_files("python3 agent/gone.py && python3 ../outside.py", repo, repo)
    assert _rel(found.scripts, repo) == ["agent/gone.py"]
    assert command_files("claude --print", repo, repo).files == ()


def test_shell_segments_split_at_operators_and_drop_redirect_targets() -> None:
    segments = shell_segments("a 1 && b 2 | c; d > out.txt 2>&1\ne")
    assert segments == [["a", "1"], ["b", "2"], ["c"], ["d"], ["e"]]
    assert shell_segments("echo 'unterminated") == []


@pytest.mark.parametrize(
    ("command", "unnamed"),
    [
        ("python3 agent/bot.py {OUTPUT_FILE}", False),
        ("python3 -m checks.grade", False),
        ("./run.sh", False),
        ("npx tsx agent/bot.py", False),
        ("make -s answer", True),
        ("npm run answer", True),
        ("python3 -c 'from lib import helper; helper.main()'", True),
        ("node -e 'require(\"./agent\")'", True),
        ("my-installed-agent --prompt x", True),  # an entry point installed from the repository
        ("python3 agent/bot.py && make post", True),  # one part runs code it does not name
    ],
)
def test_a_command_that_runs_code_it_does_not_name_says_so(repo: Path, command: str, unnamed: bool) -> None:
    assert command_files(command, repo, repo).unnamed_code is unnamed


def test_a_shell_script_that_calls_make_runs_code_it_does_not_name(repo: Path) -> None:
    _write(repo, "build.sh", "#!/bin/sh\nmake -s agent\n")
    assert command_files("sh build.sh", repo, repo).unnamed_code
