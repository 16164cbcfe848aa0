"""Pieces of a secret left by a cut: masked at a text's edges and next to a cut mark, by every
excerpt the graders and reporters take, whatever the cut."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentv_ci.graders.outcome import around, excerpt, shown
from agentv_ci.security.redaction import SECRETS, SecretRegistry
from agentv_ci.security.redaction import excerpt as report_excerpt
from tests.properties import property_settings

KEY = "sk-live-Q7w2E9r4T1y6U3i8O5p0A2s7D4f9G1h6J3k8L5z0X2"


def pieces(text: str) -> list[str]:
    return [piece for piece in (KEY[i : i + 8] for i in range(len(KEY) - 7)) if piece in text]


@pytest.fixture
def registry() -> SecretRegistry:
    found = SecretRegistry()
    found.add(KEY)
    return found


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        (f"the key {KEY[:20]}", "the key ***"),  # a prefix ending the text
        (f"{KEY[30:]} was the end", "*** was the end"),  # a suffix starting it
        (f"cut here {KEY[:12]}… [80 chars cut]", "cut here ***… [80 chars cut]"),
        (f"cut here {KEY[:12]}... (90 chars)", "cut here ***... (90 chars)"),
        (f"…{KEY[42:]}", "…***"),  # the last 8 characters after a cut
        (f"key {KEY} and {KEY[:9]}", "key *** and ***"),
        (f"a prefix {KEY[:20]} within the text is not at a cut", None),
        (f"seven {KEY[:7]}", None),  # shorter than 8: ignored, as short secrets are
        (f"{KEY[1:9]}x", None),  # neither a prefix nor a suffix
    ],
)
def test_a_piece_of_a_secret_at_a_cut_is_masked(
    registry: SecretRegistry, text: str, redacted: str | None
) -> None:
    assert registry.redact(text) == (text if redacted is None else redacted)


def test_a_window_masks_a_secret_it_cuts_on_both_sides(registry: SecretRegistry) -> None:
    text = f"before {KEY} after"
    assert registry.redact_window(text, 20, 40) == "***"  # inside the key: no prefix nor suffix left
    assert registry.redact_window(text, 2, 30) == "fore ***"
    assert registry.redact_window(text, 40, len(text)) == "*** after"


def test_every_checked_needle_edge_makes_a_text_worth_redacting(registry: SecretRegistry) -> None:
    # A row holding only a piece of a secret is redacted by the results writer (its pre-check).
    assert registry.contains(f"x {KEY[:10]}") and registry.contains_bytes(f"{KEY[-10:]} x".encode())
    assert not registry.contains("nothing secret here")


@property_settings(300)
@given(
    st.integers(min_value=0, max_value=400),
    st.integers(min_value=1, max_value=400),
    st.integers(min_value=0, max_value=3),
)
def test_no_excerpt_keeps_a_piece_of_a_secret(position: int, limit: int, copies: int) -> None:
    """Wherever the key stands and wherever the excerpt cuts, no 8 characters of it survive."""
    SECRETS.add(KEY)
    try:
        text = "x" * position + f"{KEY} y " * copies + KEY + "z" * 50 + KEY[:30]
        for result in (
            report_excerpt(text, limit),
            excerpt(text, limit),
            shown(text, limit),
            shown({"answer": text, "keys": [KEY[:20]]}, limit),
            around(text, position, position + 1),
            around(text, position + 20, position + 21, context=limit % 30),  # inside a copy of the key
            around(text, len(text) - 5, len(text)),
        ):
            assert pieces(result) == [], result
    finally:
        SECRETS.clear()
