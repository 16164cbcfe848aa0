"""`ReportOptions` (plugin API 1.1): typed, frozen fields; `extras` only as the deprecated 1.0 view."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agentv_ci.api import ReportOptions


def test_the_fields_are_typed_and_frozen(tmp_path: Path) -> None:
    options = ReportOptions(
        tmp_path / "r.txt", tmp_path, selection={"a.eval.yaml": "changed"}, sarif_category="x"
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.sarif_category = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        options.selection["b.eval.yaml"] = "sneaked in"  # type: ignore[index]
    assert "extras" not in {f.name for f in dataclasses.fields(ReportOptions)}


def test_the_old_extras_are_a_read_only_view_that_warns(tmp_path: Path) -> None:
    options = ReportOptions(tmp_path / "r.txt", sarif_category="evals/nightly")
    with pytest.warns(DeprecationWarning, match="options.sarif_category"):
        extras = options.extras
    assert dict(extras) == {"decision": None, "sarif_category": "evals/nightly"}
    with pytest.raises(TypeError):
        extras["decision"] = "passed"  # type: ignore[index]


def test_a_1_0_caller_passing_extras_gets_the_fields_and_unknown_keys_are_refused(tmp_path: Path) -> None:
    with pytest.warns(DeprecationWarning):
        options = ReportOptions(tmp_path / "r.txt", extras={"selection": {"a": "b"}})
    assert options.selection == {"a": "b"}
    with pytest.raises(TypeError, match="unknown extras"):
        ReportOptions(tmp_path / "r.txt", extras={"decsion": None})
