"""The common test, a dataset line of `id`, `input` text, `criteria` / `expected_output` text and
`metadata`: what such a test has of its own (`PlainRow`) over what every one of its suite shares
(`PlainTemplate`). The builder builds it from the two, and a run spools only its row and builds it
again from the same template when it takes the test back (running/spooled_tests.py): one function
builds it both times, so the two cannot differ."""

from __future__ import annotations

from typing import Any

import msgspec

from agentv_ci.loading.execution import merge_execution
from agentv_ci.loading.suite_defaults import SuiteDefaults, merge_metadata
from agentv_ci.loading.workspace import merge_workspace
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import Message, Test

__all__ = ["PlainRow", "PlainTemplate"]


class PlainRow(msgspec.Struct, array_like=True, frozen=True, gc=False):
    """What a plain test has of its own; `metadata` as written (its suite's is merged in when built),
    `line` and `col` where it was written (in the file its template's tests are read from). Not
    tracked by the cyclic GC: what it holds (decoded JSON) never refers back to it."""

    id: str
    text: str
    criteria: str | None
    expected: str | None
    metadata: dict[str, Any]
    line: int
    col: int


class PlainTemplate:
    """What every plain test of one suite shares. Its tests share the suite's graders list and
    execution spec (nothing changes a built test in place), which the caches keyed by their identity
    recognise at once."""

    __slots__ = ("_last", "execution", "graders", "metadata", "prefix", "preprocessors", "suite", "workspace")

    def __init__(self, defaults: SuiteDefaults) -> None:
        self.prefix = defaults.input_messages
        self.graders = list(defaults.graders)
        self.execution = merge_execution(defaults.execution, None)
        self.metadata = defaults.metadata
        self.workspace = defaults.workspace
        self.preprocessors = defaults.preprocessors
        self.suite = defaults.name
        self._last: tuple[Test, PlainRow] | None = None

    def build(self, row: PlainRow, location: SourceLocation) -> Test:
        """The test of `row`, written at `location`; `row_of` gives the row back for it."""
        test = self.test(row, location)
        self._last = (test, row)
        return test

    def row_of(self, test: Test) -> PlainRow | None:
        """The row of `test` when it is the test this template built last (None otherwise)."""
        last = self._last
        return last[1] if last is not None and last[0] is test else None

    def test(self, row: PlainRow, location: SourceLocation) -> Test:
        expected = row.expected
        # Messages by position (role, content): a third cheaper than by keyword, twice a test.
        text = Message("user", row.text)
        return Test(
            id=row.id,
            input=[*self.prefix, text] if self.prefix else [text],
            criteria=row.criteria,
            expected_output=[] if expected is None else [Message("assistant", expected)],
            graders=self.graders,
            execution=self.execution,
            metadata=merge_metadata(self.metadata, row.metadata) if self.metadata else row.metadata,
            workspace=None if self.workspace is None else merge_workspace(self.workspace, None),
            preprocessors=self.preprocessors,
            suite=self.suite,
            location=location,
        )
