"""How a run used the response cache: answers taken from it, requests sent, and what the cached
answers had cost when they were made (their recorded usage and cost), i.e. what the run saved. The
targets' answers and the judges' replies (llm-graders, code graders asking a grader target) are
counted apart.

`summary.json` carries it as `cache`; the console, the Markdown summary, the job summary and the PR
comment say it in one line (`describe`).
"""

from __future__ import annotations

import msgspec

__all__ = ["CacheCounts", "CacheUse"]


class CacheCounts(msgspec.Struct):
    """`hits`: replies read from the cache (no request sent); `misses`: cacheable requests sent
    (their replies were then written to the cache). `saved_*`: the recorded token usage and cost of
    the cached replies; `unpriced`: cached replies that recorded no cost (a model with no price, a
    cli agent), left out of `saved_usd`."""

    hits: int = 0
    misses: int = 0
    saved_input_tokens: int = 0
    saved_output_tokens: int = 0
    saved_usd: float = 0.0
    unpriced: int = 0

    @property
    def answers(self) -> int:
        return self.hits + self.misses

    def added(self, other: CacheCounts) -> CacheCounts:
        return CacheCounts(
            hits=self.hits + other.hits,
            misses=self.misses + other.misses,
            saved_input_tokens=self.saved_input_tokens + other.saved_input_tokens,
            saved_output_tokens=self.saved_output_tokens + other.saved_output_tokens,
            saved_usd=round(self.saved_usd + other.saved_usd, 6),
            unpriced=self.unpriced + other.unpriced,
        )


class CacheUse(CacheCounts):
    """The targets' answers (the inherited counts) and, in `judge`, the grader targets' replies."""

    judge: CacheCounts = msgspec.field(default_factory=CacheCounts)

    def merged(self, other: CacheUse) -> CacheUse:
        """The two uses added up (shards merged into one run)."""
        targets = self.added(other)
        return CacheUse(**msgspec.structs.asdict(targets), judge=self.judge.added(other.judge))

    def describe(self) -> str:
        """One plain-text line, e.g. `Response cache: 3 of 4 answers and 2 of 2 judge replies came
        from the cache (no request sent); they saved 1,234 tokens (1,000 in, 234 out) and $0.0123. ...`"""
        judge = self.judge
        if self.answers == 0 and judge.answers == 0:
            return "Response cache: on; no answer could be cached in this run."
        counted = f"{self.hits} of {self.answers} answers"
        if judge.answers:
            counted += f" and {judge.hits} of {judge.answers} judge replies"
        if self.hits == 0 and judge.hits == 0:
            return f"Response cache: {counted} came from the cache (all were requested)."
        saved = self.added(judge)
        tokens = saved.saved_input_tokens + saved.saved_output_tokens
        spared = (
            f"{tokens:,} tokens ({saved.saved_input_tokens:,} in, {saved.saved_output_tokens:,} out)"
            f" and ${saved.saved_usd:.4f}"
        )
        if saved.unpriced:
            spared += f" ({saved.unpriced} of them recorded no cost)"
        return (
            f"Response cache: {counted} came from the cache "
            f"(no request sent); they saved {spared}. The table's Cost and Tokens columns count them "
            "as recorded when they were made; they are not in the cost spent."
        )
