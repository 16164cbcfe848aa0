"""Secret redaction: one registry of every value the run knows to be secret, and `redact`, which every
writer (results, reports, the step summary, the PR comment, the console, crash logs) applies to what
it writes. Each occurrence becomes `***`.

Secrets are registered as they become known: at start-up the values of environment variables whose
names say "secret" (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`, so `GITHUB_TOKEN` and
`INPUT_GITHUB_TOKEN` too); when a target is built, its `api_key`, its `headers` values and any other
field named like a secret. Besides the value as written, its common encodings are redacted: URL-encoded,
JSON- and XML-escaped, and base64 (also inside a longer base64 text such as `user:token`, the way
GitHub's runner masks them). Values shorter than `MIN_SECRET_LENGTH` characters are ignored: masking
`1` or `true` everywhere would destroy the reports and protect nothing.

A piece of a secret left by a cut is masked too: in `redact`, a prefix of at least `MIN_SECRET_LENGTH`
characters of a secret (or of an encoding of one) that ends the text or stands just before a cut
mark (`…`, `...`), and such a suffix that starts the text or stands just after one. Writers redact
each value on its own (a row's strings, an excerpt), so a value cut short by anyone, a plugin too,
ends at a text edge. Everything that excerpts text masks the whole text first (`excerpt`).

In GitHub Actions each newly registered secret is also printed as `::add-mask::` (by the `announce`
hook the CLI installs) before anything could print it.
"""

from __future__ import annotations

import html
import json
import re
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from agentv_ci.security.atomic_write import PendingFile
from agentv_ci.text_safety import clean_text

MASK = "***"
MIN_SECRET_LENGTH = 8
_CUT_MARKS = ("…", "...")  # what our excerpts (and most others) put where they cut

_SECRET_NAME = re.compile(r"(?:^|_)(?:KEY|TOKEN|SECRET)$|APIKEY$|PASSWORD|PASSWD", re.IGNORECASE)
# Fields of a target's configuration whose values are secrets (`api_key`, `apiKey`, `token`, ...).
_SECRET_FIELD = re.compile(r"key|token|secret|password|passwd|authorization|credential", re.IGNORECASE)
_HEADER_FIELDS = frozenset({"headers", "extra_headers", "default_headers"})


def is_secret_name(name: str) -> bool:
    """True for an environment variable whose name says it holds a secret."""
    return _SECRET_NAME.search(name) is not None


def _base64_fragments(raw: bytes) -> set[str]:
    """The base64 text `raw` produces wherever it sits inside a longer encoded text: one fragment per
    alignment (the byte offset modulo 3), without the characters that depend on the neighbours."""
    import base64  # here, not at start-up: only a run with secrets needs it

    fragments: set[str] = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode("ascii").rstrip("=")
        head = (0, 2, 3)[offset]
        tail = (offset + len(raw)) % 3  # a partial last group: its last character mixes in what follows
        fragment = encoded[head : len(encoded) - (1 if tail else 0)]
        fragments.add(fragment)
        fragments.add(fragment.replace("+", "-").replace("/", "_"))
    return fragments


def encodings(value: str) -> set[str]:
    """`value` and the forms it takes when URL-encoded, JSON- or XML-escaped, or base64-encoded."""

    forms = {
        value,
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote_plus(value),
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        html.escape(value, quote=False),
        html.escape(value, quote=True),
    }
    forms |= _base64_fragments(value.encode("utf-8", "surrogatepass"))
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


class SecretRegistry:
    """The secrets of this process and their encodings, compiled into one pattern."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, None] = {}
        self._needles: tuple[str, ...] = ()
        self._byte_needles: tuple[bytes, ...] = ()
        # The first and last MIN_SECRET_LENGTH characters of each needle: every needle, and every
        # piece of one a cut can leave, holds one of them.
        self._edges: tuple[str, ...] = ()
        self._byte_edges: tuple[bytes, ...] = ()
        self._pattern: re.Pattern[str] | None = None
        self._bytes_pattern: re.Pattern[bytes] | None = None
        # Called once with each new secret (the CLI prints `::add-mask::` in GitHub Actions).
        self.announce: Callable[[str], None] | None = None

    def __bool__(self) -> bool:
        return bool(self._needles)

    @property
    def values(self) -> tuple[str, ...]:
        """The registered secrets as given (not their encodings), in registration order."""
        return tuple(self._values)

    def add(self, value: str) -> bool:
        """Register one secret (ignored when shorter than MIN_SECRET_LENGTH); True when it is new.
        A value of several lines also registers each line of it."""
        value = value.strip()
        if len(value) < MIN_SECRET_LENGTH or value in self._values:
            return False
        parts = [value, *(line.strip() for line in value.splitlines() if line.strip() != value)]
        with self._lock:
            if value in self._values:
                return False
            added = [p for p in parts if len(p) >= MIN_SECRET_LENGTH and p not in self._values]
            for part in added:
                self._values[part] = None
            needles = set(self._needles)
            for part in added:
                needles |= encodings(part)
            # Longest first: a secret containing another is masked whole.
            self._needles = tuple(sorted(needles, key=lambda n: (-len(n), n)))
            self._byte_needles = tuple(n.encode("utf-8", "surrogatepass") for n in self._needles)
            edges = {n[:MIN_SECRET_LENGTH] for n in needles} | {n[-MIN_SECRET_LENGTH:] for n in needles}
            self._edges = tuple(sorted(edges))
            self._byte_edges = tuple(e.encode("utf-8", "surrogatepass") for e in self._edges)
            alternatives = "|".join(re.escape(n) for n in self._needles)
            self._pattern = re.compile(alternatives)
            self._bytes_pattern = re.compile(alternatives.encode("utf-8", "surrogatepass"))
        announce = self.announce
        if announce is not None:
            for part in added:
                announce(part)
        return True

    def add_many(self, values: Iterable[str]) -> None:
        for value in values:
            self.add(value)

    def add_environment(self, env: Mapping[str, str]) -> None:
        """Register the values of the variables of `env` whose names say they are secret."""
        for name, value in env.items():
            if value and is_secret_name(name):
                self.add(value)

    def add_config(self, fields: Mapping[str, Any]) -> None:
        """Register the secrets of a target's configuration: fields named like secrets (`api_key`,
        `token`...) and every value of its `headers` (also the credential after `Bearer `/`Basic `)."""
        for key, value in fields.items():
            if isinstance(value, Mapping) and str(key).lower() in _HEADER_FIELDS:
                for header in value.values():
                    if isinstance(header, str):
                        self.add(header)
                        for word in header.split()[1:]:
                            self.add(word)
            elif isinstance(value, Mapping):
                self.add_config(value)
            elif isinstance(value, str) and _SECRET_FIELD.search(str(key)):
                self.add(value)

    # A substring test per needle (a fast C search each) rules out nearly every text about three times
    # faster than one pass of the alternation; the pattern only runs where there is something to mask.
    def _holds_secret(self, text: str) -> bool:
        return any(needle in text for needle in self._needles)

    def contains(self, text: str) -> bool:
        """Whether `text` holds a secret or a piece of one that `redact` may mask: an edge is in every
        secret and in every piece of one."""
        return any(edge in text for edge in self._edges)

    def contains_bytes(self, data: bytes | bytearray) -> bool:
        return any(edge in data for edge in self._byte_edges)

    def redact(self, text: str) -> str:
        """`text` with every secret (and encoding of one) replaced by `***`, and every piece of one
        that a cut left at its start or end, or next to a cut mark (see the module docstring)."""
        pattern = self._pattern
        if pattern is None or not text:
            return text
        if self._holds_secret(text):
            text = pattern.sub(MASK, text)
        spans = _cut_pieces(text, self._needles, self._edges)  # near the cuts only: no scan of all
        return _masked(text, spans) if spans else text

    def redact_window(self, text: str, start: int, end: int) -> str:
        """`redact(text[start:end])`, with every secret that overlaps the window masked too, even one
        the window cuts on both sides (a long token around a short match)."""
        pattern = self._pattern
        if pattern is None:
            return text[start:end]
        longest = max(len(n) for n in self._needles)
        wide_start = max(start - longest, 0)
        pieces: list[str] = []
        position = start
        for match in pattern.finditer(text, wide_start, min(end + longest, len(text))):
            if match.end() <= start:
                continue
            if match.start() >= end:
                break
            pieces += [text[position : match.start()], MASK]
            position = max(position, match.end())
        pieces.append(text[position:end])
        return self.redact("".join(pieces))

    def redact_bytes(self, data: bytes) -> bytes:
        """`redact` for UTF-8 bytes."""
        pattern = self._bytes_pattern
        if pattern is None or not data or not self.contains_bytes(data):
            return data
        return pattern.sub(MASK.encode(), data)

    def redact_stream(self, source: BinaryIO, chunk_bytes: int) -> Iterator[tuple[bytes, bool]]:
        """`redact_bytes` of everything `source` holds, as (piece, whether it was masked) in order,
        the same bytes as redacting it whole. A match starting before the last (longest needle - 1)
        bytes of what has been read lies wholly inside it; later ones wait for more."""
        pattern = self._bytes_pattern
        longest = max((len(n) for n in self._byte_needles), default=1)
        mask = MASK.encode()
        carry = b""
        while True:
            chunk = source.read(chunk_bytes)
            data = carry + chunk
            if pattern is None or not data:
                if data:
                    yield data, False
                return
            cut = len(data) if not chunk else len(data) - (longest - 1)
            pieces: list[bytes] = []
            position = 0
            if self.contains_bytes(data):
                for match in pattern.finditer(data):
                    if match.start() >= cut:
                        break
                    pieces += [data[position : match.start()], mask]
                    position = match.end()
            keep_from = max(position, cut)
            pieces.append(data[position:keep_from])
            yield b"".join(pieces), len(pieces) > 1
            carry = data[keep_from:]
            if not chunk:
                return

    def redact_tree(self, value: Any) -> Any:
        """A JSON-like tree with every string (keys too) redacted."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {self.redact_tree(k): self.redact_tree(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact_tree(v) for v in value]
        return value

    def clear(self) -> None:
        """Forget every secret (tests)."""
        with self._lock:
            self._values.clear()
            self._needles = ()
            self._byte_needles = ()
            self._edges = ()
            self._byte_edges = ()
            self._pattern = None
            self._bytes_pattern = None


def _cuts(text: str) -> tuple[list[int], list[int]]:
    """Where pieces of text were cut off: positions a cut ends a piece at (the text's end, each cut
    mark) and positions one starts a piece at (the text's start, after each cut mark)."""
    ends, starts = [len(text)], [0]
    for mark in _CUT_MARKS:
        found = text.find(mark)
        while found != -1:
            ends.append(found)
            starts.append(found + len(mark))
            found = text.find(mark, found + len(mark))
    return ends, starts


def _cut_pieces(text: str, needles: tuple[str, ...], edges: tuple[str, ...]) -> list[tuple[int, int]]:
    """(start, end) of each prefix of a needle, at least MIN_SECRET_LENGTH long, that ends at a cut,
    and of each such suffix that starts at one (the longest at each place)."""
    size = MIN_SECRET_LENGTH
    longest = max((len(n) for n in needles), default=0)
    spans: list[tuple[int, int]] = []
    ends, starts = _cuts(text)
    for end in ends:
        before = text[max(end - longest, 0) : end]
        if not any(edge in before for edge in edges):
            continue
        for needle in needles:  # the earliest place from which `before` runs on as the needle does
            at = before.find(needle[:size])
            while at != -1 and not needle.startswith(before[at:]):
                at = before.find(needle[:size], at + 1)
            if at != -1:
                spans.append((end - len(before) + at, end))
    for start in starts:
        after = text[start : start + longest]
        if not any(edge in after for edge in edges):
            continue
        for needle in needles:  # the last place up to which `after` is the end of the needle
            at = after.rfind(needle[-size:])
            while at != -1 and not needle.endswith(after[: at + size]):
                at = after.rfind(needle[-size:], 0, at + size - 1)
            if at != -1:
                spans.append((start, start + at + size))
    return spans


def _masked(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with each run of (possibly overlapping) `spans` replaced by one `***`."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    pieces: list[str] = []
    position = 0
    for start, end in merged:
        pieces += [text[position:start], MASK]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


SECRETS = SecretRegistry()


def redact(text: str) -> str:
    """`text` with every secret the run knows replaced by `***` (see the module docstring)."""
    return SECRETS.redact(text)


def excerpt(text: str | None, limit: int) -> str:
    """`clean_text` then cap at `limit` characters (marking the cut). Secrets are masked in the whole
    text first, and a piece of one the cut leaves at the end is masked too."""
    if not text:
        return ""
    if SECRETS._pattern is None:  # no secret: `redact` returns its input (the cleaning stays)
        text = clean_text(text)
        if len(text) <= limit:
            return text
        cut = max(limit - 20, 0)
        return text[:cut] + f"… [{len(text) - cut} chars cut]"
    text = clean_text(redact(text))
    if len(text) <= limit:
        return text
    cut = max(limit - 20, 0)
    return redact(text[:cut]) + f"… [{len(text) - cut} chars cut]"


def redact_bytes(data: bytes) -> bytes:
    return SECRETS.redact_bytes(data)


def register_secret(value: str) -> bool:
    return SECRETS.add(value)


def register_environment(env: Mapping[str, str]) -> None:
    SECRETS.add_environment(env)


def redact_file(path: Path, *, chunk_bytes: int = 1 << 20) -> None:
    """Redact a file some writer (a reporter plugin) produced, in place; nothing to do without secrets.

    Read in chunks, so a report of any size costs `chunk_bytes` of memory: a secret that straddles two
    chunks is found because the last (longest secret - 1) bytes of a chunk wait for the next one, and
    the file is only rewritten when something was masked."""
    if not SECRETS or not path.is_file():
        return
    masked = False
    with path.open("rb") as source, PendingFile(path) as target:
        for piece, changed in SECRETS.redact_stream(source, chunk_bytes):
            target.handle.write(piece)
            masked = masked or changed
        if masked:
            target.commit()
