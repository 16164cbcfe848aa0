"""`validate` accepts every eval file of AgentV v4.42.4's own repository but the justified ones.

The tree is extracted from the AgentV mirror (`git archive v4.42.4`); without it the test skips.
Justified refusals, each a located error:

- `examples/features/prompt-template-sdk`: its code-grader script `../prompts/custom-grader.ts` is
  not in the repository (E301);
- `examples/features/sdk-custom-assertion`: `type: word-count` is a TypeScript custom assertion,
  which agentv-ci cannot run (E201);
and nothing else. Target names that no targets file the eval file reads declares (the nearest one
and those farther up; `gemini-llm`, `mock_agent` outside its own example, ...) are warnings (W111):
`run --target NAME` replaces them, and AgentV's `eval` refuses these files without one too ("Failed
to resolve target"); the exact names are pinned below.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from agentv_ci.validation.validator import validate_paths

MIRROR = Path("/work/.mirror/EntityProcess+agentv/repo")
TAG = "v4.42.4"
EVAL_NAMES = re.compile(r"(^|/)(EVAL\.ya?ml|eval\.ya?ml|[^/]+\.eval\.ya?ml)$")
JUSTIFIED = {
    "examples/features/prompt-template-sdk/evals/dataset.eval.yaml": {"E301"},
    "examples/features/sdk-custom-assertion/evals/dataset.eval.yaml": {"E201"},
}


@pytest.fixture(scope="module")
def agentv_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (MIRROR / "HEAD").exists():
        pytest.skip(f"the AgentV mirror is not on this machine ({MIRROR})")
    tree = tmp_path_factory.mktemp("agentv-4.42.4")
    archive = subprocess.run(
        ["git", "--git-dir", str(MIRROR), "archive", TAG], check=True, capture_output=True
    )
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    subprocess.run(["git", "init", "-q", str(tree)], check=True)  # the repository root, as in a checkout
    return tree


def test_validate_accepts_agentv_4_42_4_eval_files(
    agentv_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(agentv_tree)
    files = sorted(
        p
        for p in agentv_tree.rglob("*")
        if p.is_file() and EVAL_NAMES.search(p.relative_to(agentv_tree).as_posix())
    )
    assert len(files) == 115  # the v4.42.4 corpus (reference section 9)
    refused: dict[str, set[str]] = {}
    undeclared: dict[str, set[str]] = {}
    for path in files:
        report = validate_paths([path], strict=False, allow_outside=(), targets_file=None)
        relative = path.relative_to(agentv_tree).as_posix()
        for d in report.diagnostics:
            name = re.match(r"unknown target '([^']+)'", d.message)
            if d.code == "W111" and name:
                undeclared.setdefault(relative, set()).add(name.group(1))
            elif d.severity == "error":
                refused.setdefault(relative, set()).add(d.code)
    assert refused == JUSTIFIED
    # names no targets file these suites read declares (AgentV's run refuses these files too)
    assert undeclared == {
        "examples/features/basic-jsonl/evals/dataset.eval.yaml": {"azure-llm"},
        "examples/showcase/bug-fix-benchmark/evals/bug-fixes.eval.yaml": {
            "claude-agent-skills", "claude-baseline", "claude-compound", "claude-superpowers",
        },
        "examples/showcase/multi-model-benchmark/evals/benchmark.eval.yaml": {"gemini-llm"},
        "examples/showcase/psychotherapy/evals/encouragement.eval.yaml": {"gemini-llm"},
        "examples/showcase/psychotherapy/evals/listening.eval.yaml": {"gemini-llm"},
        "examples/showcase/psychotherapy/evals/routing.eval.yaml": {"gemini-llm"},
        "examples/showcase/tool-evaluation-plugins/tool-eval-demo.eval.yaml": {"mock_agent"},
    }  # fmt: skip
