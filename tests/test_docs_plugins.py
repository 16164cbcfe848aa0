"""Every code block of docs/plugins.md is run, in the page's order, in a fresh venv holding agentv-ci
and the in-repo plugins installed from wheels (the `fresh_venv` fixture):

- a block whose first line is `# file: PATH` is written (without that line) to PATH in a scratch
  project (toml and yaml blocks are parsed first);
- other yaml/toml blocks are parsed; the error messages the page quotes are compared with what
  `validate` really prints;
- python blocks without a path run as scripts with the venv's python and must exit 0;
- sh blocks run with bash (`-euo pipefail`) in the venv, its own pip offline (local wheels only),
  and must exit 0; the outcomes the page states are checked afterwards.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO_ROOT
from tests.fresh_venv import FreshVenv
from tests.plugin_site import install_fake_plugins, run_with_site

DOC = REPO_ROOT / "docs" / "plugins.md"
LANGUAGES = {"python", "toml", "yaml", "sh"}
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    language: str
    text: str
    line: int

    @property
    def path(self) -> str | None:
        match = re.match(r"# file: (\S+)\n", self.text)
        return match.group(1) if match else None


def blocks() -> list[Block]:
    text = DOC.read_text()
    return [Block(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in _FENCE.finditer(text)]


def test_every_block_has_a_language_the_test_runs() -> None:
    found = blocks()
    assert len(found) >= 12
    assert {b.language for b in found} == LANGUAGES, [(b.line, b.language) for b in found]


def test_the_quoted_error_messages_are_what_validate_prints(tmp_path: Path) -> None:
    quoted = [yaml.safe_load(b.text) for b in blocks() if b.language == "yaml" and b.path is None]
    messages = [m for group in quoted if isinstance(group, list) for m in group]
    assert len(messages) == 4
    site = install_fake_plugins(tmp_path / "site")
    uses = "".join(
        f"      - type: {kind}\n" for kind in ("broken-import", "sync-grade", "future-api", "shout")
    )
    (tmp_path / "e.eval.yaml").write_text(f"tests:\n  - id: t\n    input: hi\n    assertions:\n{uses}")
    printed = run_with_site(["validate", "e.eval.yaml"], site, tmp_path).stdout
    for message in messages:
        assert f"error[E203]: {message}" in printed


@pytest.mark.slow
def test_the_page_runs(fresh_venv_to_change: FreshVenv, tmp_path: Path) -> None:
    fresh_venv = fresh_venv_to_change
    fresh_venv.install("pip")  # the venv's own pip, for the page's `pip install`
    project = tmp_path / "project"
    project.mkdir()
    outputs: dict[int, str] = {}
    for block in blocks():
        where = f"docs/plugins.md:{block.line}"
        if block.language == "toml":
            tomllib.loads(block.text)
        elif block.language == "yaml":
            yaml.safe_load(block.text)
        if block.path is not None:
            target = project / block.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text.split("\n", 1)[1])  # without the `# file:` line
            continue
        if block.language == "python":
            proc = fresh_venv.run("python", "-c", block.text, cwd=project)
        elif block.language == "sh":
            proc = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", block.text],
                cwd=project,
                env=fresh_venv.env(fresh_venv.offline_pip_env()),
                capture_output=True,
                text=True,
                timeout=600,
            )
        else:
            continue
        assert proc.returncode == 0, f"{where}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        outputs[block.line] = proc.stdout + proc.stderr

    # What the page says happens:
    assert (project / "results" / "words.csv").read_text().splitlines() == [
        "suite,test,outcome,score,words",
        "words,short,passed,1.00,4",
        "words,too-long,failed,0.00,14",
    ]
    assert (project / "dist" / "agentv_ci_word_tools-1.0.0-py3-none-any.whl").is_file()
    listing = next(out for out in outputs.values() if "agentv-ci 0.1.0, plugin API 1.1" in out)
    for name in ("word-count", "shout", "word-csv"):
        assert re.search(rf"^  {name} +agentv-ci-word-tools 1\.0\.0 +api 1\.0 ", listing, re.MULTILINE)
    typo = next(out for out in outputs.values() if "typo/words.eval.yaml" in out)
    assert (
        "typo/words.eval.yaml:5:9: error[E202]: invalid word-count grader 'word-count': "
        "Object missing required field `max_words`\n"
        "  hint: `max_word` on line 6 looks like a misspelling of `max_words`\n"
        "typo/words.eval.yaml:6:9: warning[W105]: unknown key `max_word` for grader type `word-count`\n"
        "  hint: did you mean `max_words`?\n"
    ) in typo
    assert any(re.search(r"^4 passed", out, re.MULTILINE) for out in outputs.values())  # the package's tests


@pytest.mark.parametrize(
    "block", [b for b in blocks() if b.language == "python" and b.path], ids=lambda b: b.path
)
def test_the_python_files_compile(block: Block) -> None:
    compile(block.text, block.path or "<doc>", "exec")
