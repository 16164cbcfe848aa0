"""Loading for a run (`mode="check"`): the same diagnostics as a full load, without holding the tests
of a JSONL dataset; the tests it hands to `on_test`, spooled as a run spools them and taken back,
equal a full load's."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentv_ci.loading import jsonl
from agentv_ci.loading.discovery import find_eval_files
from agentv_ci.loading.plain_tests import PlainRow, PlainTemplate
from agentv_ci.loading.suite_loader import load_suite
from agentv_ci.model import suite as model
from agentv_ci.running.spooled_tests import SpooledTests
from tests.properties import property_settings

REPO = Path(__file__).resolve().parents[2]
FAST = property_settings(120)


def _same_load(path: Path, repo_root: Path | None = None) -> bool:
    """Check mode and keep mode agree on `path`; True when check mode streamed its tests."""
    full = load_suite(path, repo_root=repo_root, env={})
    seen: list[model.Test] = []
    checked = load_suite(
        path, repo_root=repo_root, env={}, mode="check", on_test=lambda suite, test: seen.append(test)
    )
    assert checked.diagnostics == full.diagnostics
    assert sorted(checked.dependencies) == sorted(full.dependencies)  # read lazily: in another order
    if full.suite is None:
        assert checked.suite is None
        return False
    assert checked.suite is not None
    assert _encoded(seen) == _encoded(full.suite.tests)  # every test was built and shown
    if not checked.streamed:
        assert msgspec.structs.replace(checked.suite, dependencies=full.dependencies) == full.suite
        return False
    assert checked.suite.tests == []  # nothing of the dataset is held
    same = msgspec.structs.replace(checked.suite, tests=full.suite.tests, dependencies=full.dependencies)
    assert same == full.suite
    spool = SpooledTests()  # what a run takes the dataset's tests back from
    try:
        for test in seen:
            spool.add(test)
        # equal, not byte-equal: msgspec omits a default string only when it is the same object
        assert list(spool) == full.suite.tests
    finally:
        spool.close()
    assert _spooled_as_a_run_spools(path, repo_root) == full.suite.tests
    return True


PLAIN_ROWS: list[int] = []  # how many tests the loads below spooled as their rows


def _spooled_as_a_run_spools(path: Path, repo_root: Path | None) -> list[model.Test]:
    """The tests of a check load spooled as a run spools them: a plain test as its row alone."""
    spool = SpooledTests()
    rows = 0

    def plain(suite: model.Suite, test: model.Test, template: PlainTemplate, row: PlainRow) -> None:
        nonlocal rows
        rows += 1
        spool.add_plain(test, template, row)

    try:
        load_suite(
            path,
            repo_root=repo_root,
            env={},
            mode="check",
            on_test=lambda suite, test: spool.add(test),
            on_plain=plain,
        )
        PLAIN_ROWS.append(rows)
        return list(spool)
    finally:
        spool.close()


def _encoded(tests: list[model.Test]) -> bytes:
    return msgspec.json.encode(tests)


def test_check_mode_loads_the_fixture_corpus_and_the_examples_as_a_full_load() -> None:
    files = find_eval_files([REPO / "tests" / "fixtures" / "evals", REPO / "examples"])
    PLAIN_ROWS.clear()
    streamed = [path for path in files if _same_load(path)]
    assert len(files) > 40 and len(streamed) >= 3
    assert sum(PLAIN_ROWS) > 0  # some came back from their template


CASE = st.fixed_dictionaries(
    {"id": st.one_of(st.sampled_from(["a", "b", "c", "d"]), st.integers(), st.none())},
    optional={
        "input": st.one_of(st.text(max_size=6), st.lists(st.text(max_size=3), max_size=2)),
        "criteria": st.text(max_size=6),
        "depends_on": st.one_of(st.sampled_from(["a", "b", "zz"]), st.lists(st.sampled_from(["a", "c"]))),
        "assertions": st.lists(st.sampled_from([{"type": "contains", "value": "x"}, {"type": "nope"}])),
        "suite": st.sampled_from(["s", "t"]),
    },
)


@FAST
@given(st.lists(st.one_of(CASE.map(json.dumps), st.sampled_from(["{", "[1]", "", "  "])), max_size=12))
def test_any_dataset_checks_as_a_full_load_and_streams_its_tests(lines: list[str]) -> None:
    # duplicate ids, unknown `depends_on`, cycles, bad lines: every diagnostic as a full load reports
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "cases.jsonl").write_text("\n".join(lines))
        (root / "cases.yaml").write_text("name: d\nassertions:\n  - type: contains\n    value: x\n")
        _same_load(root / "cases.jsonl", repo_root=root)


def test_a_check_load_hands_each_test_on_as_its_line_is_read_and_holds_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "big.jsonl").write_text(
        "".join(json.dumps({"id": f"t{i}", "input": "q", "criteria": "c"}) + "\n" for i in range(500))
    )
    read: list[int] = []  # lines read so far, as the reader hands them out
    original = jsonl._cases

    def counting(handle: Iterator[bytes], file: str, ctx: object) -> Iterator[object]:
        for item in original(handle, file, ctx):  # type: ignore[arg-type]
            read.append(1)
            yield item

    monkeypatch.setattr(jsonl, "_cases", counting)
    lines_read_when_shown: list[int] = []
    checked = load_suite(
        tmp_path / "big.jsonl",
        repo_root=tmp_path,
        env={},
        mode="check",
        on_test=lambda suite, test: lines_read_when_shown.append(len(read)),
    )
    assert checked.streamed and isinstance(checked.suite, model.Suite) and checked.suite.tests == []
    assert lines_read_when_shown[:3] == [1, 2, 3] and len(lines_read_when_shown) == 500  # as read
