"""Counting the tokens of a rendered prompt before it is sent (the cost estimate).

With `tiktoken` importable (it is not a dependency; install it for sharper estimates) prompts are
counted with its `o200k_base` encoding, within +-10% (other providers' tokenizers differ by about
that much). Without it, tokens are approximated as characters / 4, within +-25% (English prose runs
close to 4 characters a token; code, JSON and other languages drift either way). docs/running.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agentv_ci.model.suite import Message
from agentv_ci.prompting import content_text

__all__ = ["MESSAGE_OVERHEAD", "TokenCounter", "token_counter"]

MESSAGE_OVERHEAD = 4  # tokens a chat API adds around each message (role, separators)
REPLY_PRIMING = 3  # tokens a chat API adds to prime the reply


@dataclass(frozen=True)
class TokenCounter:
    """`count(text)`; `low`/`high`: the factors that bound the true count around it."""

    method: str
    count_text: Callable[[str], int]
    low: float
    high: float

    def count(self, text: str) -> int:
        return self.count_text(text) if text else 0

    def count_messages(self, messages: list[Message]) -> int:
        """A chat request's input tokens: every message's text plus the per-message overhead."""
        total = REPLY_PRIMING
        for message in messages:
            total += MESSAGE_OVERHEAD + self.count(content_text(message.content))
        return total


def _approximate(text: str) -> int:
    return (len(text) + 3) // 4


APPROXIMATE = TokenCounter("chars/4", _approximate, 0.75, 1.25)
_CHOSEN: list[TokenCounter] = []


def token_counter() -> TokenCounter:
    """tiktoken's counter when it is installed and its encoding loads, else the approximation (chosen
    once per process)."""
    if not _CHOSEN:
        _CHOSEN.append(_tiktoken() or APPROXIMATE)
    return _CHOSEN[0]


def _tiktoken() -> TokenCounter | None:
    try:
        # lazy: tiktoken, an optional extra loaded only when `_tiktoken` runs
        import tiktoken  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    try:
        encoding = tiktoken.get_encoding("o200k_base")
    except Exception:  # no cached encoding and no network: fall back to the approximation
        return None

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return TokenCounter("tiktoken o200k_base", count, 0.9, 1.1)
