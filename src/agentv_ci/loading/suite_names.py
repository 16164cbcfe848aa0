"""E116: two eval files of one run giving their tests the same suite name.

A result is keyed by (suite, test id, target) in the plan, index.jsonl, `--resume`, `merge`, the
reports and the sidecar baselines, as AgentV keys its index.jsonl. AgentV names a suite from its
`name:` (or `suite:`), else from the file name, so `evals/a/EVAL.yaml` and `evals/b/EVAL.yaml` are
both suite `EVAL`: their tests would share keys, and one test's result would pass for the other's.
The names stay AgentV's (a path in the key would break comparison with AgentV's results); a second
file giving a suite name that an earlier file (in discovery order) gave is an error instead.

Checked per test (a per-test `suite:` and an included suite's tests carry their own name), with one
identity comparison for every test after a suite's first.
"""

from __future__ import annotations

from agentv_ci.errors import LoadError
from agentv_ci.loading.keys import TESTS_ALIASES
from agentv_ci.loading.paths import display_path
from agentv_ci.loading.yaml_source import parse_yaml
from agentv_ci.model.codes import severity_of
from agentv_ci.model.diagnostics import Diagnostic
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import Suite, Test

__all__ = ["SuiteNames"]

HINT = (
    "give each eval file its own suite name: `name:` (without one a suite is named by its file name, "
    "as AgentV names it); results are keyed by suite, test id and target"
)
TEST_HINT = (
    "this test's suite name comes from its `suite:`, or from the suite file it was included from (run "
    "that file and this one separately); results are keyed by suite, test id and target"
)

# Where a suite name was given: its eval file, and the test that gave it (a per-test `suite:` or an
# included suite's test; None: the file's own name). Locations only, so no test is held.
_Origin = tuple[str, SourceLocation | None]


class SuiteNames:
    """The eval file each suite name of a run first came from, and the later files that gave it too."""

    __slots__ = ("_clashes", "_first", "_last_name", "_last_path")

    def __init__(self) -> None:
        self._first: dict[str, _Origin] = {}
        self._clashes: dict[tuple[str, str], tuple[_Origin, _Origin]] = {}  # (name, path) -> first, later
        self._last_name: str | None = None
        self._last_path: str | None = None

    def note(self, suite: Suite, test: Test) -> None:
        """Record that `suite`'s eval file runs `test` under its suite name."""
        name = test.suite or suite.name
        if name is self._last_name and suite.path is self._last_path:
            return  # the same suite as the test before (the common case: no lookup)
        self._last_name, self._last_path = name, suite.path
        given_by_test = (test.location or SourceLocation(suite.path, 1, 1)) if name != suite.name else None
        origin = (suite.path, given_by_test)
        first = self._first.setdefault(name, origin)
        if first[0] != suite.path:
            self._clashes.setdefault((name, suite.path), (first, origin))

    def diagnostics(self) -> list[Diagnostic]:
        """E116 at each later file giving a suite name an earlier file gave, naming where that one did."""
        out: list[Diagnostic] = []
        for (name, _), (first, later) in self._clashes.items():
            where, there = _located(later, first[0]), _located(first, later[0])
            first_at = f"{display_path(there.file)}:{there.line}:{there.col or 1}"
            message = f"suite name {name!r} is also the suite of {first_at}"
            hint = HINT if later[1] is None else TEST_HINT
            out.append(
                Diagnostic(severity_of("E116"), "E116", message, where.file, where.line, where.col, hint)
            )
        return out


def _located(origin: _Origin, other: str) -> SourceLocation:
    """Where a suite name was given: the test that gave it, unless that test was written in the `other`
    file (a suite the file includes: then its `tests:`); else the file's `name:`/`suite:` key, else
    its first line (named by its file name). The file is read again only here, for a clash."""
    path, given_by_test = origin
    if given_by_test is None:
        return _key_location(path, ("name", "suite"))
    if given_by_test.file == other:
        return _key_location(path, TESTS_ALIASES)
    return given_by_test


def _key_location(path: str, keys: tuple[str, ...]) -> SourceLocation:
    """The first of `keys` written at the top of the YAML file `path`, else its first line."""
    if not path.lower().endswith((".yaml", ".yml")):
        return SourceLocation(path, 1, 1)
    try:
        with open(path, encoding="utf-8") as handle:
            document = parse_yaml(handle.read(), path)
    except (OSError, UnicodeDecodeError, LoadError):
        return SourceLocation(path, 1, 1)
    data = document.data
    key = next((k for k in keys if isinstance(data, dict) and data.get(k) is not None), None)
    return document.locate((key,), key=True) if key else SourceLocation(path, 1, 1)
