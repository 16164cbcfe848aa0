"""Deterministic text assertions (AgentV `graders/assertions.ts`): score 1 or 0, one assertion.

All read the final answer text. `value` must be a non-empty string (a list of them for the
`*-any` / `*-all` forms); numbers written in YAML are compared as their text. Trimming is JavaScript's
`trim()` (it removes U+FEFF and keeps U+001C-001F and U+0085, unlike `str.strip()`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agentv_ci.errors import ConfigError
from agentv_ci.graders import regex_search
from agentv_ci.graders.outcome import (
    ShownOnce,
    answer_text,
    around,
    checked,
    errored,
    excerpt,
    shown,
    shown_text,
)
from agentv_ci.js_semantics.js_numbers import js_trim
from agentv_ci.js_semantics.js_regex import compile_js_regex, js_subject, span_in_text
from agentv_ci.model.result import AssertionResult, GraderResult
from agentv_ci.model.suite import GraderSpec
from agentv_ci.plugins import GradingContext


class TextConfig(msgspec.Struct):
    """`value`: the expected text (or list of texts); `flags`: regex flags (JS-style)."""

    value: Any = None
    flags: str | None = None


def _as_text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None if value is None else str(value).lower()
    if isinstance(value, int | float | str):
        return str(value)
    return None


class _TextGrader:
    """Base: validates `value` at build time so a bad config is reported before any answer exists."""

    Config: ClassVar[type[msgspec.Struct]] = TextConfig
    inline: ClassVar[bool] = True  # pure computation: graded without an asyncio task
    answer_only: ClassVar[bool] = True  # reads the answer's text alone (graders/answer_only.py)
    many: ClassVar[bool] = False

    def __init__(self, spec: GraderSpec, config: TextConfig, *, base_dir: Path) -> None:
        self.spec = spec
        self.config = config
        self.base_dir = base_dir
        self.values = self._values(config.value)
        # What every answer's assertion shows as expected, built once (see ShownOnce).
        self.expected = ShownOnce(self.values if self.many else self.values[0])

    def _values(self, raw: Any) -> list[str]:
        where = self.spec.config_locations.get("value", self.spec.location)
        if self.many:
            items = raw if isinstance(raw, list) else [raw] if raw is not None else []
            texts = [_as_text(v) for v in items]
            if not texts or any(not t for t in texts):
                raise ConfigError(
                    f"{self.spec.type} grader {self.spec.name!r}: `value` must be a non-empty list of "
                    "non-empty strings",
                    location=where,
                )
            return [t for t in texts if t]
        text = _as_text(raw)
        if not text:
            hint = "use contains-any / contains-all for a list" if isinstance(raw, list) else None
            raise ConfigError(
                f"{self.spec.type} grader {self.spec.name!r}: `value` must be a non-empty string",
                location=where,
                hint=hint,
            )
        return [text]

    async def grade(self, ctx: GradingContext) -> GraderResult:
        return self.evaluate(answer_text(ctx.response))

    def answer_assertion(self, output: str) -> AssertionResult | None:
        """The one assertion of `grade`'s result for an answer whose text is `output`, at once
        (graders/answer_only.py)."""
        return self.assertion(output)

    def evaluate(self, output: str, started: float | None = None) -> GraderResult:
        """The result for the answer text `output` (timed since `started`, when given)."""
        return checked(self.spec, self.assertion(output), started)

    def assertion(self, output: str) -> AssertionResult:
        """The check of the answer text `output`: its result's one assertion."""
        raise NotImplementedError

    def _trimmed_check(self, output: str, trimmed: str, passed: bool, text: str) -> AssertionResult:
        """A check on the trimmed answer (`trimmed` shown as actual), the answer quoted as evidence
        when it fails."""
        evidence = None if passed else excerpt(output)
        expected, actual = self.expected.text(), shown(trimmed)
        return AssertionResult(text, passed, evidence, expected, actual)


class Contains(_TextGrader):
    """`contains`: the answer contains `value` (case-sensitive substring)."""

    def __init__(self, spec: GraderSpec, config: TextConfig, *, base_dir: Path) -> None:
        super().__init__(spec, config, base_dir=base_dir)
        self.texts = (f'Output does not contain "{self.values[0]}"', f'Output contains "{self.values[0]}"')

    def assertion(self, output: str) -> AssertionResult:
        value = self.values[0]
        at = output.find(value)
        if at >= 0:
            return AssertionResult(
                self.texts[1], True, None, self.expected.text(), around(output, at, at + len(value))
            )
        return AssertionResult(self.texts[0], False, None, self.expected.text(), shown(output))


class IContains(_TextGrader):
    """`icontains`: as `contains`, ignoring case."""

    def __init__(self, spec: GraderSpec, config: TextConfig, *, base_dir: Path) -> None:
        super().__init__(spec, config, base_dir=base_dir)
        value = self.values[0]
        self.lowered = value.lower()
        self.texts = (
            f'Output does not contain "{value}" (case-insensitive)',
            f'Output contains "{value}" (case-insensitive)',
        )

    def assertion(self, output: str) -> AssertionResult:
        at = output.lower().find(self.lowered)
        if at >= 0:
            actual = around(output, at, at + len(self.values[0]))
            return AssertionResult(self.texts[1], True, None, self.expected.text(), actual)
        return AssertionResult(self.texts[0], False, None, self.expected.text(), shown(output))


class _ManyGrader(_TextGrader):
    many = True
    require_all: ClassVar[bool] = False
    ignore_case: ClassVar[bool] = False

    def assertion(self, output: str) -> AssertionResult:
        haystack = output.lower() if self.ignore_case else output
        found = [v for v in self.values if (v.lower() if self.ignore_case else v) in haystack]
        missing = [v for v in self.values if v not in found]
        passed = not missing if self.require_all else bool(found)
        quoted = ", ".join(f'"{v}"' for v in (missing if self.require_all else self.values))
        if self.require_all and self.ignore_case:
            text = (
                f"Output contains all {len(self.values)} expected strings (case-insensitive)"
                if passed
                else f"Output missing (case-insensitive): {quoted}"
            )
        elif self.require_all:
            text = (
                f"Output contains all {len(self.values)} expected strings"
                if passed
                else f"Output missing: {quoted}"
            )
        else:
            suffix = " (case-insensitive)" if self.ignore_case else ""
            text = (
                f'Output contains "{found[0]}"{suffix}'
                if passed
                else f"Output does not contain any of: {quoted}{suffix}"
            )
        expected = shown(missing) if self.require_all and not passed else self.expected.text()
        if passed and found:  # what was found, in its place (a negated check fails on it)
            first = found[0].lower() if self.ignore_case else found[0]
            at = haystack.find(first)
            actual = around(output, at, at + len(first))
        else:
            actual = shown(output)
        return AssertionResult(text, passed, None, expected, actual)


class ContainsAny(_ManyGrader):
    """`contains-any`: the answer contains at least one of `value` (a list)."""


class ContainsAll(_ManyGrader):
    """`contains-all`: the answer contains every item of `value` (a list)."""

    require_all = True


class IContainsAny(_ManyGrader):
    """`icontains-any`: as `contains-any`, ignoring case."""

    ignore_case = True


class IContainsAll(_ManyGrader):
    """`icontains-all`: as `contains-all`, ignoring case."""

    require_all = True
    ignore_case = True


class _Affix(_TextGrader):
    """The trimmed answer starts (`starts-with`) or ends (`ends-with`) with the trimmed `value`."""

    verb = ""  # "start" or "end"

    def _has(self, text: str, affix: str) -> bool:
        raise NotImplementedError

    def assertion(self, output: str) -> AssertionResult:
        value = self.values[0]
        trimmed = js_trim(output)
        passed = self._has(trimmed, js_trim(value))
        verb = f"{self.verb}s" if passed else f"does not {self.verb}"
        return self._trimmed_check(output, trimmed, passed, f'Output {verb} with "{value}"')


class StartsWith(_Affix):
    """`starts-with`: the trimmed answer starts with the trimmed `value`."""

    verb = "start"

    def _has(self, text: str, affix: str) -> bool:
        return text.startswith(affix)


class EndsWith(_Affix):
    """`ends-with`: the trimmed answer ends with the trimmed `value`."""

    verb = "end"

    def _has(self, text: str, affix: str) -> bool:
        return text.endswith(affix)


class Equals(_TextGrader):
    """`equals`: the trimmed answer equals the trimmed `value` exactly (the text shows `value` as written)."""

    def __init__(self, spec: GraderSpec, config: TextConfig, *, base_dir: Path) -> None:
        super().__init__(spec, config, base_dir=base_dir)
        self.trimmed = js_trim(self.values[0])
        self.expected = ShownOnce(self.trimmed)

    def assertion(self, output: str) -> AssertionResult:
        trimmed = js_trim(output)
        passed = trimmed == self.trimmed
        verb = "equals" if passed else "does not equal"
        return self._trimmed_check(output, trimmed, passed, f'Output {verb} "{self.values[0]}"')


class Regex(_TextGrader):
    """`regex`: `value` is searched for anywhere in the answer (JS `RegExp.test`), with `flags`;
    the sticky flag `y` matches at the start only, as `test()` does from `lastIndex` 0."""

    def __init__(self, spec: GraderSpec, config: TextConfig, *, base_dir: Path) -> None:
        super().__init__(spec, config, base_dir=base_dir)
        try:
            self.pattern = compile_js_regex(self.values[0], config.flags)
        except ValueError as exc:
            where = spec.config_locations.get("value", spec.location)
            raise ConfigError(f"regex grader {spec.name!r}: {exc}", location=where) from None
        flags = self.flags = config.flags or ""
        self.sticky = "y" in flags
        described = f"/{self.values[0]}/{flags}" + (f" (flags: {flags})" if flags else "")
        self.texts = (f"Output does not match pattern {described}", f"Output matches pattern {described}")
        self.expected = ShownOnce(f"/{self.values[0]}/{flags}", shown_text)

    async def grade(self, ctx: GradingContext) -> GraderResult:
        output = answer_text(ctx.response)
        flags, sticky = self.flags, self.sticky
        subject = js_subject(output, flags)
        try:
            match = regex_search.search_inline(self.pattern, subject, sticky=sticky)
            if match is regex_search.PENDING:  # a long match: finished off the event loop
                match = await regex_search.finish(self.pattern, subject, sticky=sticky)
        except regex_search.RegexTimeout:
            return errored(
                self.spec,
                f"regex /{self.values[0]}/{flags} did not finish within {regex_search.REGEX_BUDGET_S:g}s "
                f"on a {len(output)}-character answer (catastrophic backtracking?)",
            )
        return checked(self.spec, self._verdict(match, output, subject), None)

    def answer_assertion(self, output: str) -> AssertionResult | None:
        """The match's inline slice (graders/answer_only.py): None when it needs longer (`grade`
        finishes it off the event loop)."""
        subject = js_subject(output, self.flags)
        match = regex_search.search_inline(self.pattern, subject, sticky=self.sticky)
        if match is regex_search.PENDING:
            return None
        return self._verdict(match, output, subject)

    def evaluate(self, output: str, started: float | None = None) -> GraderResult:
        """Synchronous grading (within the same time budget, holding the caller meanwhile)."""
        flags = self.config.flags or ""
        run = self.pattern.match if "y" in flags else self.pattern.search
        subject = js_subject(output, flags)
        try:
            match = run(subject, timeout=regex_search.REGEX_BUDGET_S)
        except TimeoutError:
            return errored(self.spec, f"regex /{self.values[0]}/{flags} did not finish in time")
        return checked(self.spec, self._verdict(match, output, subject), started)

    def _verdict(self, match: Any, output: str, subject: str) -> AssertionResult:
        pattern = self.expected.text()
        if match:
            start, end = match.span()
            if subject is not output:  # offsets in code units back to whole characters: no half emoji
                start, end = span_in_text(output, subject, start, end)
            found = around(output, start, end)
            return AssertionResult(self.texts[1], True, excerpt(output[start:end]), pattern, found)
        return AssertionResult(self.texts[0], False, excerpt(output), pattern, shown(output))
