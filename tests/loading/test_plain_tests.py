"""The common test (a dataset line of `input`, `criteria`, `expected_output`, `metadata`) is built by a
short path (`TestBuilder._build_plain`). It must give exactly what the general path gives: the same
`Test`, the same diagnostics, for every value those keys can hold and every suite around them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentv_ci.loading import tests_builder
from agentv_ci.loading.suite_loader import load_suite

TEXT = st.sampled_from(["What is 2+2?", "", "  ", "@[System]: hi", "answer @[ x", "{{ name }}", "é ✓"])
# Mostly text (the short path's case), sometimes anything else a line may hold there.
VALUE = st.one_of(
    TEXT, TEXT, TEXT, st.none(), st.integers(-2, 2), st.lists(TEXT, max_size=2), st.just({"role": "user"})
)
LINE = st.fixed_dictionaries(
    {"id": st.one_of(st.sampled_from(["t", "case-1", "t", " ", ""]), st.integers(0, 3))},
    optional={
        "input": VALUE,
        "criteria": VALUE,
        "expected_output": VALUE,
        "metadata": st.one_of(st.none(), st.just({}), st.just({"tags": ["a"], "k": 1}), TEXT),
    },
)
SUITE_WITH_GRADER = "name: plain\nassertions:\n  - type: contains\n    value: '4'\n"
SIDECAR = st.sampled_from(
    [
        "name: plain\n",
        SUITE_WITH_GRADER,
        "name: plain\ninput: You are terse.\nmetadata:\n  tags: [suite]\n  owner: me\n",
        "name: plain\nexecution:\n  threshold: 0.5\nworkspace:\n  template: .\n",
        "name: plain\ninput_files: [notes.txt]\nassertions:\n  - type: icontains\n    value: x\n",
    ]
)


def _load(root: Path, lines: list[dict[str, Any]], sidecar: str) -> tuple[Any, Any]:
    (root / "notes.txt").write_text("notes\n")
    (root / "plain.yaml").write_text(sidecar)
    (root / "plain.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = load_suite(root / "plain.yaml", repo_root=root)
    return result.suite, result.diagnostics


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINE, min_size=1, max_size=4), sidecar=SIDECAR)
@example(lines=[{"id": "t", "input": "2+2?"}], sidecar="name: plain\n")  # E112: nothing to grade
@example(lines=[{"id": "t", "input": "2+2?", "criteria": None}], sidecar="name: plain\n")
@example(lines=[{"id": "t", "input": "2+2?", "metadata": {}}], sidecar=SUITE_WITH_GRADER)
def test_the_short_path_builds_what_the_general_path_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[dict[str, Any]], sidecar: str
) -> None:
    short = _load(tmp_path, lines, sidecar)
    with monkeypatch.context() as patched:
        patched.setattr(tests_builder.TestBuilder, "_build_plain", lambda self, raw, node, test_id: None)
        general = _load(tmp_path, lines, sidecar)
    assert short == general


def test_the_short_path_is_taken_for_a_plain_line_and_not_for_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[str] = []
    plain = tests_builder.TestBuilder._build_plain

    def spy(self: tests_builder.TestBuilder, raw: dict[str, Any], node: Any, test_id: str) -> Any:
        built = plain(self, raw, node, test_id)
        if built is not None:
            taken.append(test_id)
        return built

    monkeypatch.setattr(tests_builder.TestBuilder, "_build_plain", spy)
    lines = [
        {"id": "plain", "input": "2+2?", "expected_output": "4", "metadata": {"k": 1}},
        {"id": "marker", "input": "@[User]: 2+2?", "criteria": "says 4"},  # W107: the general path
        {"id": "graders", "input": "2+2?", "assertions": [{"type": "contains", "value": "4"}]},
    ]
    suite, diagnostics = _load(tmp_path, lines, "name: plain\n")
    assert taken == ["plain"]
    assert [t.id for t in suite.tests] == ["plain", "marker", "graders"]
    assert [d.code for d in diagnostics] == ["W107"]
    assert {"id", "input", "criteria", "expected_output", "metadata"} <= tests_builder._PLAIN_KEYS
