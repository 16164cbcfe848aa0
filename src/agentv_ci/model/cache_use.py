"""How a run used the response cache: answers taken from it, requests sent, and what the cached
answers had cost when they were made (their recorded usage and cost), i.e. what the run saved.

`summary.json` carries it as `cache`; the console, the Markdown summary, the job summary and the PR
comment say it in one line (`describe`).
"""

from __future__ import annotations

import msgspec

__all__ = ["CacheUse"]


class CacheUse(msgspec.Struct):
    """`hits`: answers read from the cache (no request sent); `misses`: cacheable requests sent to a
    target (their answers were then written to the cache). `saved_*`: the recorded token usage and
    cost of the cached answers; `unpriced`: cached answers that recorded no cost (a model with no
    price, a cli agent), left out of `saved_usd`."""

    hits: int = 0
    misses: int = 0
    saved_input_tokens: int = 0
    saved_output_tokens: int = 0
    saved_usd: float = 0.0
    unpriced: int = 0

    @property
    def answers(self) -> int:
        return self.hits + self.misses

    def merged(self, other: CacheUse) -> CacheUse:
        """The two uses added up (shards merged into one run)."""
        return CacheUse(
            hits=self.hits + other.hits,
            misses=self.misses + other.misses,
            saved_input_tokens=self.saved_input_tokens + other.saved_input_tokens,
            saved_output_tokens=self.saved_output_tokens + other.saved_output_tokens,
            saved_usd=round(self.saved_usd + other.saved_usd, 6),
            unpriced=self.unpriced + other.unpriced,
        )

    def describe(self) -> str:
        """One plain-text line, e.g. `Response cache: 3 of 4 answers came from the cache (no request
        sent); they saved 1,234 tokens (1,000 in, 234 out) and $0.0123. ...`"""
        if self.answers == 0:
            return "Response cache: on; no answer could be cached in this run."
        if self.hits == 0:
            return f"Response cache: 0 of {self.answers} answers came from the cache (all were requested)."
        tokens = self.saved_input_tokens + self.saved_output_tokens
        saved = (
            f"{tokens:,} tokens ({self.saved_input_tokens:,} in, {self.saved_output_tokens:,} out)"
            f" and ${self.saved_usd:.4f}"
        )
        if self.unpriced:
            saved += f" ({self.unpriced} of them recorded no cost)"
        return (
            f"Response cache: {self.hits} of {self.answers} answers came from the cache "
            f"(no request sent); they saved {saved}. The table's Cost and Tokens columns count them "
            "as recorded when they were made; they are not in the cost spent."
        )
