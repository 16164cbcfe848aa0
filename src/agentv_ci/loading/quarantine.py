"""`.agentv/quarantine.yaml`: tests whose failures do not block until a date, each with an owner.

```yaml
quarantine:
  - test: support/refund        # suite/test_id (the id may hold more slashes; the suite cannot)
    target: default             # optional: every target when left out
    owner: "@ana"
    reason: the vendor API times out
    expires: 2026-12-31         # YYYY-MM-DD, inclusive (UTC)
```

Every problem is a located `E118` (unknown keys `W101`), for `validate` and for the commands that
read the file (which refuse an invalid one, exit 2: a quarantine half read would block or waive
the wrong tests). The file's text is untrusted: strings only, bounded lengths, no control characters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci.errors import LoadError
from agentv_ci.loading.context import did_you_mean
from agentv_ci.loading.yaml_source import JsonPath, MarkedDocument, parse_yaml
from agentv_ci.model.codes import severity_of
from agentv_ci.model.diagnostics import Diagnostic
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.waivers import ANY_TARGET, Waiver, WaiverBook, waiver_key

__all__ = [
    "QUARANTINE_PATH",
    "InvalidQuarantine",
    "QuarantineEntry",
    "QuarantineFile",
    "parse_quarantine",
    "quarantine_of_bytes",
    "quarantine_waivers",
    "read_quarantine_file",
    "unreadable_quarantine",
]

QUARANTINE_PATH = ".agentv/quarantine.yaml"  # relative to the repository root
MAX_QUARANTINE_BYTES = 1024 * 1024
_REQUIRED = ("test", "owner", "reason", "expires")
_KEYS = (*_REQUIRED, "target")
_LIMITS = {"test": 300, "target": 100, "owner": 100, "reason": 500}
_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_HINT = "each entry: test: suite/test_id, owner, reason, expires: YYYY-MM-DD (and an optional target)"


class QuarantineEntry(msgspec.Struct, frozen=True):
    """One quarantined test (x target; `target` None: every target) and where it was written."""

    suite: str
    test_id: str
    target: str | None
    owner: str
    reason: str
    expires: date
    location: SourceLocation

    @property
    def key(self) -> str:
        return waiver_key(self.suite, self.test_id, self.target or ANY_TARGET)

    @property
    def name(self) -> str:
        return f"{self.suite}/{self.test_id}" + (f" [{self.target}]" if self.target else "")

    def waiver(self, today: date) -> Waiver:
        """Quarantined through `expires` (inclusive); from the day after, a waiver that blocks."""
        if self.expires < today:
            text = f"quarantine expired on {self.expires} (owner {self.owner}): {self.reason}"
            return Waiver("expired", text + "; renew or remove the entry")
        return Waiver("quarantined", f"quarantined (owner {self.owner}, until {self.expires}): {self.reason}")

    def same_terms(self, other: QuarantineEntry) -> bool:
        return (self.owner, self.reason, self.expires) == (other.owner, other.reason, other.expires)


class QuarantineFile(msgspec.Struct, frozen=True):
    """The valid entries of one quarantine file, and every problem found in it."""

    file: str
    entries: list[QuarantineEntry]
    diagnostics: list[Diagnostic]

    def checked(self) -> list[QuarantineEntry]:
        """The entries; `InvalidQuarantine` (exit 2) when the file has an error."""
        errors = [d for d in self.diagnostics if d.severity == "error"]
        if errors:
            raise InvalidQuarantine(self.file, errors)
        return self.entries


class InvalidQuarantine(LoadError):
    """A quarantine file with errors: each located diagnostic, then the conclusion."""

    def __init__(self, file: str, errors: list[Diagnostic]) -> None:
        super().__init__(
            f"{len(errors)} error(s) in the quarantine file {file}; nothing was run",
            hint="`agentv-ci validate` lists them; " + _HINT,
        )
        self.errors = errors

    def render(self) -> str:
        return "\n".join([*(d.render() for d in self.errors), super().render()])


def parse_quarantine(text: str, file: str) -> QuarantineFile:
    """The entries of a quarantine file's `text` (`file` names it in diagnostics)."""
    try:
        document = parse_yaml(text, file)
    except LoadError as exc:
        where = exc.location or SourceLocation(file)
        return QuarantineFile(file, [], [_at("E118", exc.message, where, exc.hint)])
    return _Reader(document).read()


def quarantine_waivers(
    trusted: Sequence[QuarantineEntry],
    proposed: Sequence[QuarantineEntry] | None,
    *,
    today: date,
    base: str | None,
) -> WaiverBook:
    """The waivers of the `trusted` entries (the base's, or the work tree's when there is no base), and
    a note for each entry the change `proposed` (its work tree's, read only with a base) that differs
    from the base's: it has no effect, and the output says so."""
    tests = {entry.key: entry.waiver(today) for entry in trusted}
    notes: list[str] = []
    if base is not None and proposed is not None:
        by_key = {entry.key: entry for entry in trusted}
        for entry in proposed:
            known = by_key.get(entry.key)
            if known is None:
                notes.append(
                    f"{entry.location}: quarantine entry {entry.name} exists only in this change, "
                    f"not on the base {base}: it has no effect"
                )
            elif not entry.same_terms(known):
                notes.append(
                    f"{entry.location}: quarantine entry {entry.name} differs from the base {base}'s: "
                    "the base's applies"
                )
    return WaiverBook(tests=tests, notes=notes)


def read_quarantine_file(path: Path, shown: str) -> QuarantineFile | None:
    """The quarantine file at `path` (named `shown`), or None when there is none."""
    if not path.is_file() and not path.is_symlink():
        return None
    if path.is_symlink():  # it could point anywhere, e.g. at a file the base branch does not hold
        return unreadable_quarantine(shown, f"{QUARANTINE_PATH} is a symlink; commit the file itself")
    data = path.read_bytes()[: MAX_QUARANTINE_BYTES + 1]
    return quarantine_of_bytes(data, shown)


def quarantine_of_bytes(data: bytes, shown: str) -> QuarantineFile:
    """A quarantine file from its bytes (a work-tree file or a base commit's blob)."""
    if len(data) > MAX_QUARANTINE_BYTES:
        return unreadable_quarantine(shown, f"the quarantine file is over {MAX_QUARANTINE_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return unreadable_quarantine(shown, "the quarantine file is not UTF-8")
    return parse_quarantine(text, shown)


def unreadable_quarantine(shown: str, message: str) -> QuarantineFile:
    """A quarantine file refused whole (E118 at the file): too large, a symlink, not text."""
    return QuarantineFile(shown, [], [_at("E118", message, SourceLocation(shown))])


def _at(code: str, message: str, where: SourceLocation, hint: str | None = None) -> Diagnostic:
    return Diagnostic(severity_of(code), code, message, where.file, where.line, where.col, hint)


class _Reader:
    """One pass over a parsed document, collecting entries and diagnostics."""

    def __init__(self, document: MarkedDocument) -> None:
        self.document = document
        self.entries: list[QuarantineEntry] = []
        self.diagnostics: list[Diagnostic] = []
        self.first: dict[str, SourceLocation] = {}

    def problem(self, message: str, path: JsonPath, *, key: bool = False, code: str = "E118") -> None:
        hint = _HINT if code == "E118" else None
        self.diagnostics.append(_at(code, message, self.document.locate(path, key=key), hint))

    def read(self) -> QuarantineFile:
        data = self.document.data
        if data is None:
            return self._done()
        if not isinstance(data, dict):
            self.problem("the quarantine file must be a mapping with a `quarantine:` list", ())
            return self._done()
        for name in data:
            if name != "quarantine":
                self.problem(f"unknown key {name!r} in the quarantine file", (name,), key=True, code="W101")
        listed = data.get("quarantine")
        if listed is None:
            return self._done()
        if not isinstance(listed, list):
            self.problem("`quarantine` must be a list of entries", ("quarantine",))
            return self._done()
        for index, item in enumerate(listed):
            self._entry(item, ("quarantine", index))
        return self._done()

    def _done(self) -> QuarantineFile:
        return QuarantineFile(self.document.file, self.entries, self.diagnostics)

    def _entry(self, item: Any, path: JsonPath) -> None:
        if not isinstance(item, dict):
            self.problem("a quarantine entry must be a mapping (test, owner, reason, expires)", path)
            return
        for name in item:
            if name not in _KEYS:
                close = did_you_mean(name, _KEYS)
                message = f"unknown key {name!r} in a quarantine entry"
                self.diagnostics.append(
                    _at(
                        "W101",
                        message,
                        self.document.locate((*path, name), key=True),
                        f"did you mean {close!r}?" if close else f"known keys: {', '.join(_KEYS)}",
                    )
                )
        missing = [name for name in _REQUIRED if name not in item]
        for name in missing:
            self.problem(f"quarantine entry has no `{name}`", path)
        texts = {name: self._text(item, name, path) for name in ("test", "owner", "reason", "target")}
        expires = self._date(item, path)
        test = texts["test"]
        split = self._test_name(test, (*path, "test")) if test is not None else None
        if missing or split is None or expires is None or None in (texts["owner"], texts["reason"]):
            return
        if "target" in item and texts["target"] is None:
            return
        owner, reason = texts["owner"], texts["reason"]
        assert owner is not None and reason is not None
        entry = QuarantineEntry(
            split[0], split[1], texts["target"], owner, reason, expires, self.document.locate(path)
        )
        first = self.first.setdefault(entry.key, entry.location)
        if first is not entry.location:
            self.problem(f"{entry.name} is quarantined twice (first at line {first.line})", path)
            return
        self.entries.append(entry)

    def _text(self, item: dict[str, Any], name: str, path: JsonPath) -> str | None:
        if name not in item:
            return None
        value, where = item[name], (*path, name)
        if not isinstance(value, str) or not value.strip():
            self.problem(f"`{name}` must be a non-empty string", where)
            return None
        if len(value) > _LIMITS[name]:
            self.problem(f"`{name}` is over {_LIMITS[name]} characters", where)
            return None
        if _CONTROL.search(value):
            self.problem(f"`{name}` holds a control character", where)
            return None
        return value.strip()

    def _test_name(self, test: str, where: JsonPath) -> tuple[str, str] | None:
        suite, slash, test_id = test.partition("/")
        if not slash or not suite.strip() or not test_id.strip() or suite != suite.strip():
            self.problem(f"`test` must be suite/test_id, got {test!r}", where)
            return None
        return suite, test_id

    def _date(self, item: dict[str, Any], path: JsonPath) -> date | None:
        if "expires" not in item:
            return None
        value, where = item["expires"], (*path, "expires")
        if isinstance(value, str) and _DATE.match(value):
            try:
                return date.fromisoformat(value)
            except ValueError:
                pass
        self.problem(f"`expires` is not a date (YYYY-MM-DD): {value!r}", where)
        return None
