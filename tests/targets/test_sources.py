"""A target's own code (`targets.sources`): declared `sources:`, else what its command runs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from agentv_ci.errors import ConfigError
from agentv_ci.targets.config import parse_targets_file
from agentv_ci.targets.sources import target_source_files, target_sources


def _write(root: Path, rel: str, text: str = "") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = (tmp_path / "repo").resolve()
    (root / ".git").mkdir(parents=True)
    _write(root, "agent/support_bot.py", "from shared import prompts\n")
    _write(root, "agent/data/faq.md", "faq")
    _write(root, "agent/__pycache__/x.pyc", "")
    _write(root, "shared/__init__.py")
    _write(root, "shared/prompts.py", "")
    _write(root, "shared/other.py", "")
    _write(root, "lib/a.py", "")
    _write(root, "lib/b.txt", "")
    return root


def _targets(repo: Path, body: str) -> Path:
    return _write(repo, ".agentv/targets.yaml", body)


def _rel(paths: list[Path] | tuple[Path, ...], root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in paths)


def test_default_sources_are_the_script_its_directory_tree_and_its_imports(repo: Path) -> None:
    path = _targets(
        repo,
        """\
        targets:
          - name: bot
            provider: cli
            command: python3 agent/support_bot.py {PROMPT_FILE} {OUTPUT_FILE}
            cwd: ..
        """,
    )
    definition = parse_targets_file(path, {}).targets["bot"]
    found = target_sources(definition, targets_file=path, repo_root=repo, base_dir=repo / "evals")
    assert found.cwd == repo
    assert not found.declared
    assert _rel(found.files, repo) == ["agent/support_bot.py", "shared/__init__.py", "shared/prompts.py"]
    assert _rel(found.directories, repo) == ["agent"]
    # Every existing file: the tree (caches skipped) plus the imported modules, not shared/other.py.
    assert _rel(target_source_files(definition, path, repo, base_dir=repo / "evals"), repo) == [
        "agent/data/faq.md",
        "agent/support_bot.py",
        "shared/__init__.py",
        "shared/prompts.py",
    ]


def test_a_coding_agent_executable_and_its_args(repo: Path) -> None:
    path = _targets(
        repo,
        """\
        targets:
          - name: pi
            provider: pi-coding-agent
            executable: python3 -m agent.support_bot
            args: [--config, lib/b.txt]
        """,
    )
    definition = parse_targets_file(path, {}).targets["pi"]
    found = target_sources(definition, targets_file=path, repo_root=repo)
    expected = ["agent/support_bot.py", "lib/b.txt", "shared/__init__.py", "shared/prompts.py"]
    assert _rel(found.files, repo) == expected


def test_declared_sources_replace_the_default_and_resolve_from_the_project_dir(repo: Path) -> None:
    path = _targets(
        repo,
        """\
        targets:
          - name: bot
            provider: cli
            command: python3 agent/support_bot.py {OUTPUT_FILE}
            sources: [lib/*.py, shared/, /agent/data/faq.md]
        """,
    )
    definition = parse_targets_file(path, {}).targets["bot"]
    assert definition.sources == ("lib/*.py", "shared/", "/agent/data/faq.md")
    assert "sources" not in definition.fields  # never handed to the provider
    found = target_sources(definition, targets_file=path, repo_root=repo)
    assert found.declared
    assert _rel(found.files, repo) == ["agent/data/faq.md", "lib/a.py"]
    assert _rel(found.directories, repo) == ["shared"]
    assert _rel(found.glob_roots, repo) == ["lib"]
    assert _rel(found.all_files(), repo) == [
        "agent/data/faq.md",
        "lib/a.py",
        "shared/__init__.py",
        "shared/other.py",
        "shared/prompts.py",
    ]


def test_a_model_target_has_no_sources(repo: Path) -> None:
    path = _targets(repo, "targets:\n  - name: gpt\n    provider: openai\n    model: gpt-4o\n")
    definition = parse_targets_file(path, {}).targets["gpt"]
    assert target_source_files(definition, path, repo) == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("agent/", "must be a list of paths or globs"),
        ("[1, 2]", "must be a list of paths or globs"),
        ("['']", "must be a list of paths or globs"),
        ("[../../elsewhere/]", "outside the repository"),
        ("[/../x]", "outside the repository"),
    ],
)
def test_bad_sources_are_located_errors(repo: Path, value: str, message: str) -> None:
    entry = f"  - name: bot\n    provider: cli\n    command: x\n    sources: {value}\n"
    path = _targets(repo, "targets:\n" + entry)
    with pytest.raises(ConfigError) as caught:
        parse_targets_file(path, {})
    assert message in caught.value.message
    assert caught.value.location is not None
    assert (caught.value.location.file, caught.value.location.line) == (str(path), 5)
