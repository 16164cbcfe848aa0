"""Reading a responses file: lines msgspec refuses are decoded by json.loads as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.errors import LoadError
from agentv_ci.graders.responses_file import read_responses


def _read(tmp_path: Path, line: str) -> list:
    path = tmp_path / "responses.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    return read_responses(path)


def test_a_lone_surrogate_escape_is_read_as_json_loads_reads_it(tmp_path: Path) -> None:
    (recorded,) = _read(tmp_path, '{"test_id": "t", "output": "half \\ud83d an emoji"}')
    assert recorded.response.text == "half \ud83d an emoji"


def test_huge_integers_are_read_exactly(tmp_path: Path) -> None:
    (recorded,) = _read(tmp_path, '{"test_id": "t", "output": {"n": 123456789012345678901234567890}}')
    assert recorded.response.text == '{"n": 123456789012345678901234567890}'


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"test_id": "t", "output": "x", "cost_usd": NaN}', "is not a finite number >= 0"),
        ('{"test_id": "t", "output": "x", "duration_ms": 1e400}', "is not a finite number >= 0"),
        ('{"test_id": "t", "output": ' + "[" * 50_000 + "]" * 50_000 + "}", "invalid JSON: maximum"),
    ],
)
def test_what_msgspec_refuses_is_judged_as_before(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(LoadError) as caught:
        _read(tmp_path, line)
    assert message in caught.value.render()
    assert caught.value.render().startswith(f"{tmp_path / 'responses.jsonl'}:1:")
