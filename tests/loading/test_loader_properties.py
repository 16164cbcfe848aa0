"""Property-based: whatever bytes an eval file or a JSONL dataset holds, loading ends in a suite or in
located diagnostics: never an exception, never a hang."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from agentv_ci.loading.suite_loader import LoadResult, load_suite
from tests.properties import property_settings

FAST = property_settings(150)

YAML_PIECES = [
    "tests:", "  - id: t", "    input: hi", "    criteria: x", "    expected_output: y", "assertions:",
    "  - type: regex", "    value: '(a+)+$'", "  - type: contains", "    value: [1, 2]",
    "  - type: code-grader",
    "    command: [python3, ../../x.py]", "input_files: [/etc/passwd]", "  - file://../../etc/hosts",
    "  - include: '*.yaml'", "workspace: {template: /}", "execution: {target: x, timeout_seconds: -1}",
    "&a [*a, *a]", "*a", "!!python/object:os.system", "<<: *a", "? [x]", "- {", "}", "[", "]", "\t",
    "\x00", "\x07", "\ufeff", "${{ HOME }}", "{{ v }}", "'", '"', "|", ">-", "---", "...", "#", "%YAML 1.1",
    "\ud800", "é", ": ", "- ", "null:", "true:", "1e309", "0o17", "-.inf",
]  # fmt: skip


def _yaml_text() -> st.SearchStrategy[str]:
    piece = st.one_of(st.sampled_from(YAML_PIECES), st.text(max_size=20))
    line = st.lists(piece, min_size=1, max_size=4).map(" ".join)
    return st.lists(line, max_size=25).map("\n".join)


def _check(result: LoadResult) -> None:
    assert isinstance(result, LoadResult)
    for d in result.diagnostics:
        assert d.file and d.line >= 1 and d.col >= 1 and d.code and d.message
    if result.suite is None:
        assert any(d.severity == "error" for d in result.diagnostics)


def _load(name: str, data: bytes) -> LoadResult:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        path = root / name
        path.write_bytes(data)
        return load_suite(path, repo_root=root, env={})


@FAST
@given(_yaml_text())
def test_any_yaml_text_loads_to_a_suite_or_located_diagnostics(text: str) -> None:
    _check(_load("e.eval.yaml", text.encode("utf-8", "surrogatepass")))


@FAST
@given(st.binary(max_size=400))
def test_any_bytes_as_an_eval_file_load_to_a_suite_or_located_diagnostics(data: bytes) -> None:
    _check(_load("e.eval.yaml", data))


JSON = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)
CASE = st.fixed_dictionaries(
    {"id": st.one_of(st.text(max_size=8), st.integers(), st.none())},
    optional={"input": JSON, "criteria": JSON, "expected_output": JSON, "assertions": JSON, "metadata": JSON,
              "input_files": st.lists(st.sampled_from(["/etc/passwd", "../../x", "a.txt"]), max_size=2)},
)  # fmt: skip


def _jsonl_line() -> st.SearchStrategy[bytes]:
    encoded = CASE.map(lambda case: json.dumps(case).encode())
    deep = st.integers(min_value=150, max_value=30_000).map(
        lambda n: b'{"id": "d", "input": ' + b"[" * n + b"]" * n + b"}"
    )
    unclosed = st.integers(min_value=1, max_value=30_000).map(lambda n: b'{"id": "u", "x": ' + b"{" * n)
    return st.one_of(encoded, deep, unclosed, st.binary(max_size=60))


@FAST
@given(st.lists(_jsonl_line(), max_size=8))
def test_any_jsonl_dataset_loads_to_a_suite_or_located_diagnostics(lines: list[bytes]) -> None:
    data = b"\n".join(lines)
    result = _load("cases.jsonl", data)
    _check(result)
    for d in result.diagnostics:
        if d.code == "E005":
            assert 1 <= d.line <= data.count(b"\n") + 1
