"""Every key the loader accepts is either used (it changes the loaded suite the runner reads) or
reported (a diagnostic): a key accepted and silently ignored gives a clean `validate`, a run and a
wrong score (issue 13). The walk covers the key sets of loading/keys.py; a new key fails here until
it gets a sample below."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from agentv_ci.loading import keys
from agentv_ci.loading.matrix_targets import MATRIX_TARGET_KEYS as _MATRIX_TARGET_KEYS
from agentv_ci.loading.preprocessors import PREPROCESSOR_KEYS
from agentv_ci.loading.suite_loader import load_suite

# Keys that change nothing by design, with the reason.
NO_OP = {
    ("suite", "$schema"): "a schema pointer for editors",
    ("suite", "defaults"): "a holder for YAML anchors (AgentV's autoresearch example)",
    ("suite", "tests"): "the base document has it",
    ("suite", "author"): "descriptive metadata; it changes no run in AgentV either",
    ("suite", "license"): "descriptive metadata; it changes no run in AgentV either",
    ("suite", "category"): "descriptive metadata; it changes no run in AgentV either",
    ("suite", "requires"): "an advisory version range (AgentV: advisory too)",
    ("turn", "input"): "the base document has it",
    ("test", "id"): "the base document has it",
    ("hook", "command"): "the base document has it",
    ("repo", "path"): "the base document has it",
    ("repo", "repo"): "the base document has it",
    ("preprocessor", "type"): "the base document has it",
    ("preprocessor", "command"): "the base document has it",
    ("matrix", "name"): "the base document has it",
}

SUITE = {
    "$schema": "agentv-eval-v2",
    "name": "walk-two",
    "suite": "other",
    "description": "d",
    "version": "2",
    "author": "a",
    "license": "MIT",
    "category": "c",
    "tags": ["t"],
    "requires": {"agentv": ">=4"},
    "metadata": {"k": "v"},
    "governance": {"k": "v"},
    "execution": {"threshold": 0.5},
    "experiment": {"threshold": 0.5},
    "assertions": [{"type": "contains", "value": "x"}],
    "input": "sys",
    "input_files": ["f.txt"],
    "preprocessors": [{"type": "txt", "command": ["cat"]}],
    "workspace": {"isolation": "per_test"},
    "defaults": {"a": 1},
    "vars": {"a": 1},
}
TEST = {
    "vars": {"q": "x"},
    "criteria": "other",
    "input": "other",
    "input_files": ["f.txt"],
    "expected_output": "e",
    "assertions": [{"type": "contains", "value": "x"}],
    "execution": {"threshold": 0.5},
    "workspace": {"isolation": "per_test"},
    "metadata": {"k": "v"},
    "conversation_id": "c",
    "suite": "s2",
    "depends_on": ["b"],
    "on_dependency_failure": "fail",
    "mode": "conversation",
    "turns": [{"input": "t"}],
    "aggregation": "min",
    "on_turn_failure": "stop",
    "window_size": 2,
    "description": "d",
    "note": "n",
    "tags": ["t"],
    "rubrics": ["r"],
    "run": {"threshold": 0.5},
}
EXECUTION = {
    "target": "t",
    "targets": ["t"],
    "workers": 2,
    "assertions": [{"type": "contains", "value": "x"}],
    "evaluators": [{"type": "contains", "value": "x"}],
    "skip_defaults": True,
    "cache": False,
    "cache_path": "c.json",
    "trials": {"count": 2},
    "repeat": {"count": 2},
    "runs": 2,
    "budget_usd": 1,
    "fail_on_error": True,
    "threshold": 0.5,
    "timeout_seconds": 30,
    "name": "n",
    "early_exit": True,
    "agent": "a",
    "model": "m",
    "agent_options": {"a": 1},
    "sandbox": "docker",
    "workspace": {"isolation": "per_test"},
}
WORKSPACE = {
    "template": "tpl",
    "repos": [{"path": "r", "repo": "SRC"}],
    "hooks": {"before_all": {"command": ["true"]}},
    "isolation": "per_test",
    "mode": "temp",
    "path": "/tmp/static-ws",
    "docker": {"image": "x"},
    "env": {"required_commands": ["git"]},
    "scope": "attempt",
    "setup": {"command": "x"},
    "name": "n",
    "allow_reset_of_worktree": True,
}
REPO = {"commit": "main", "base_commit": "main", "ancestor": 1, "sparse": ["a"]}
HOOK = {"script": ["echo"], "timeout_ms": 5, "cwd": ".", "reset": "fast", "env": {"A": "1"}}
HOOKS = {"before_all": {"command": ["true"]}, "before_each": {"command": ["true"]},
         "after_each": {"reset": "fast"}, "after_all": {"command": ["true"]}, "enabled": False}  # fmt: skip
TURN = {"expected_output": "e", "assertions": [{"type": "contains", "value": "x"}], "criteria": "c",
        "id": "i", "assert": [{"type": "contains", "value": "x"}], "rubrics": ["r"]}  # fmt: skip
MATRIX = {"use_target": "t", "hooks": {"before_each": {"command": ["true"]}}}
PREPROCESSOR: dict[str, Any] = {}


def _document(context: str, key: str | None, value: Any, src: str) -> dict[str, Any]:
    test: dict[str, Any] = {"id": "a", "input": "hi", "criteria": "c"}
    doc: dict[str, Any] = {"tests": [test, {"id": "b", "input": "hi", "criteria": "c"}]}
    where: dict[str, Any]
    if context == "suite":
        where = doc
    elif context == "test":
        where = test
    elif context == "execution":
        where = doc.setdefault("execution", {})
    elif context == "workspace":
        where = doc.setdefault("workspace", {})
    elif context == "repo":
        where = {"path": "r", "repo": src}
        doc["workspace"] = {"repos": [where]}
    elif context == "hook":
        where = {"command": ["true"]}
        doc["workspace"] = {"hooks": {"before_each": where}}
    elif context == "hooks":
        where = {}
        doc["workspace"] = {"hooks": where}
    elif context == "turn":
        where = {"input": "t"}
        test.update(mode="conversation", turns=[where])
        del test["criteria"]
    elif context == "matrix":
        where = {"name": "t"}
        doc["execution"] = {"targets": [where]}
    else:
        raise AssertionError(context)
    if key is not None:
        where[key] = value.replace("SRC", src) if isinstance(value, str) else value
        if context == "workspace" and key == "repos":
            where[key] = [{"path": "r", "repo": src}]
    return doc


def _load(tmp_path: Path, doc: dict[str, Any]) -> tuple[Any, set[tuple[str, str]]]:
    path = tmp_path / "walk.eval.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    result = load_suite(path, repo_root=tmp_path)
    suite = msgspec.to_builtins(result.suite) if result.suite is not None else None
    if isinstance(suite, dict):
        suite.pop("dependencies", None)
    diagnostics = {(d.code, d.message) for d in result.diagnostics}
    return _strip_locations(suite), diagnostics


def _strip_locations(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_locations(v) for k, v in value.items() if "location" not in k}
    if isinstance(value, list):
        return [_strip_locations(v) for v in value]
    return value


CASES = [
    *(("suite", k) for k in sorted(keys.SUITE_KEYS)),
    *(("test", k) for k in sorted(keys.TEST_KEYS)),
    *(("execution", k) for k in sorted(keys.EXECUTION_KEYS)),
    *(("workspace", k) for k in sorted(keys.WORKSPACE_KEYS)),
    *(("repo", k) for k in sorted(keys.WORKSPACE_REPO_KEYS)),
    *(("hook", k) for k in sorted(keys.WORKSPACE_HOOK_KEYS)),
    *(("hooks", k) for k in (*keys.WORKSPACE_HOOKS, "enabled")),
    *(("turn", k) for k in sorted(keys.TURN_KEYS)),
    *(("matrix", k) for k in sorted(_MATRIX_TARGET_KEYS)),
    *(("preprocessor", k) for k in sorted(PREPROCESSOR_KEYS)),
]
SAMPLES = {
    "suite": SUITE,
    "test": TEST,
    "execution": EXECUTION,
    "workspace": WORKSPACE,
    "repo": REPO,
    "hook": HOOK,
    "hooks": HOOKS,
    "turn": TURN,
    "matrix": MATRIX,
    "preprocessor": PREPROCESSOR,
}


@pytest.mark.parametrize(("context", "key"), CASES, ids=[f"{c}.{k}" for c, k in CASES])
def test_every_accepted_key_is_used_or_reported(tmp_path: Path, context: str, key: str) -> None:
    if (context, key) in NO_OP:
        return
    samples = SAMPLES[context]
    assert key in samples, f"{context}.{key} is accepted by the loader but has no sample here: add one"
    (tmp_path / "tpl").mkdir()
    (tmp_path / "f.txt").write_text("file\n")
    (tmp_path / "src.git").mkdir()
    (tmp_path / ".git").mkdir()  # the repository root
    src = (tmp_path / "src.git").as_uri()
    without, base_diagnostics = _load(tmp_path, _document(context, None, None, src))
    with_key, diagnostics = _load(tmp_path, _document(context, key, samples[key], src))
    changed = with_key != without
    reported = diagnostics - base_diagnostics
    assert changed or reported, textwrap.dedent(
        f"""\
        `{key}` ({context}) is accepted but neither changes the loaded suite nor is reported:
        the runner would silently ignore it. Use it, report it (W110/E114), or list it in NO_OP."""
    )
