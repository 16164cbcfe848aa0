"""JS `RegExp` semantics on Python's `re`: each row is what Node's `new RegExp(p, f).test(s)` returns."""

from __future__ import annotations

import pytest

from agentv_ci.js_semantics.js_regex import compile_js_regex
from tests.graders.contexts import grade


@pytest.mark.parametrize(
    ("pattern", "flags", "text", "expected"),
    [
        (r"^\w+ ", None, "Ünïcödé café", False),  # \w is ASCII in JS
        (r"^\w+ ", None, "plain café", True),
        (r"\d", None, "٣", False),  # Arabic-Indic digit: not \d in JS
        (r"[\d]+\.\d{2}", None, "$5.00", True),
        (r"é\b", None, "café!", False),  # \b is ASCII: é is not a word char
        ("value $", None, "value \n", False),  # $ is the very end without m
        ("value $", "m", "value \nnext", True),
        ("a.b", None, "a\rb", False),  # . excludes \r in JS
        ("a.b", "s", "a\rb", True),
        ("^Second", None, "first\nSecond", False),
        ("^Second", "m", "first\nSecond", True),
        ("second", "i", "SECOND", True),
        (r"(?<cur>USD) \k<cur>", None, "USD USD", True),
        ("[^]x", None, "\nx", True),
        ("a[]", None, "a", False),
        (r"\/path\-x", None, "/path-x", True),
        (r"\q", None, "q", True),  # unknown letter escape = the letter (no u flag)
        ("FIRST", "gi", "first", True),
        (r"\u{1F600}", "u", "\U0001f600", True),
    ],
)
def test_matches_like_javascript(pattern: str, flags: str | None, text: str, expected: bool) -> None:
    assert bool(compile_js_regex(pattern, flags).search(text)) is expected


@pytest.mark.parametrize(
    ("pattern", "flags"),
    [("(", None), ("a", "x"), ("ab\\", None), ("a{", "u"), ("\\q", "u"), ("[z-a]", None), ("[a", None)],
)
def test_invalid_pattern_or_flag_is_a_value_error(pattern: str, flags: str | None) -> None:
    with pytest.raises(ValueError):
        compile_js_regex(pattern, flags)


def test_a_match_on_half_an_emoji_shows_the_whole_character() -> None:
    """Without `u` a match may take one surrogate; the shown text widens to whole characters, so it
    stays valid UTF-8 in every report."""
    result = grade("regex", "x\U0001f600y", value="\\uD83D")
    assert result.verdict == "pass"
    [assertion] = result.assertions
    assert assertion.actual is not None and "\U0001f600" in str(assertion.actual)
    str(assertion.actual).encode("utf-8")  # no lone surrogate
    assert assertion.evidence is not None and "\U0001f600" in assertion.evidence
