"""Inline SVG charts: a pass-rate bar and a score histogram. No script, no external resource."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

BINS = 10
_WIDTH = 160
_HEIGHT = 36
_LABELS = 12  # room under the axis for "0" and "1"


def score_bins(scores: Sequence[float], bins: int = BINS) -> list[int]:
    """Counts of scores in [0, 0.1), [0.1, 0.2), ..., [0.9, 1.0] (1.0 in the last bin)."""
    counts = [0] * bins
    for score in scores:
        index = min(bins - 1, max(0, int(score * bins)))
        counts[index] += 1
    return counts


def histogram_svg(scores: Sequence[float], label: str) -> str:
    """A bar per score bin, tallest bin full height; each bar's <title> says its range and count."""
    counts = score_bins(scores)
    top = max(counts) or 1
    bar = _WIDTH / len(counts)
    bars: list[str] = []
    for index, count in enumerate(counts):
        low, high = index / len(counts), (index + 1) / len(counts)
        height = round((_HEIGHT - 2) * count / top, 1)
        kind = "low" if high <= 0.5 else "mid" if high <= 0.8 else "high"
        bars.append(
            f'<rect class="bin {kind}" x="{index * bar + 1:.1f}" y="{_HEIGHT - height:.1f}" '
            f'width="{bar - 2:.1f}" height="{height}"><title>scores {low:.1f}–{high:.1f}: '
            f"{count} test(s)</title></rect>"
        )
    total = _HEIGHT + _LABELS
    return (
        f'<svg class="histogram" role="img" width="{_WIDTH}" height="{total}" '
        f'viewBox="0 0 {_WIDTH} {total}" aria-label="score distribution of {escape(label)}: '
        f'{len(scores)} score(s)">'
        f'<line class="axis" x1="0" y1="{_HEIGHT - 0.5}" x2="{_WIDTH}" y2="{_HEIGHT - 0.5}"/>'
        + "".join(bars)
        + f'<text x="1" y="{total - 1}">0</text>'
        + f'<text x="{_WIDTH - 1}" y="{total - 1}" text-anchor="end">1</text>'
        + "</svg>"
    )


def pass_rate_svg(rate: float | None, label: str) -> str:
    """A horizontal bar filled to the pass rate, with the percentage written next to it."""
    width = 100
    filled = 0 if rate is None else round(width * rate, 1)
    text = "n/a" if rate is None else f"{rate:.0%}"
    return (
        f'<svg class="passrate" role="img" width="{width + 46}" height="14" viewBox="0 0 {width + 46} 14" '
        f'aria-label="pass rate of {escape(label)}: {text}">'
        f'<rect class="track" x="0" y="2" width="{width}" height="10" rx="2"/>'
        f'<rect class="fill" x="0" y="2" width="{filled}" height="10" rx="2"/>'
        f'<text x="{width + 6}" y="11">{text}</text></svg>'
    )
