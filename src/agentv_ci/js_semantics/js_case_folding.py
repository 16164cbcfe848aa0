"""Which characters a JavaScript regex with the `i` flag treats as equal (ECMA-262 `Canonicalize`).

- Without `u`, on UTF-16 code units: a unit's canonical form is its `toUpperCase()` when that is one
  unit, except that a non-ASCII unit never maps into ASCII. So the Kelvin sign (U+212A) does not
  match `k`, nor long s (U+017F) `s`, nor dotless i (U+0131) `i`; `ß` matches only itself.
- With `u`, on code points: Unicode simple case folding (CaseFolding.txt statuses C and S). The
  Kelvin sign and long s then match `k` and `s`; `İ`/`ı` still match neither `i` nor `I`.

Python's `re`/`regex` IGNORECASE folds differently from both, so the translated pattern spells each
equivalence out instead (see `js_regex`). Python knows full case folding only; the simple foldings it
cannot derive (a few lowercase letters whose S mapping is another lowercase letter) are listed below.
The tables come from Python's Unicode data (14.0 on Python 3.11), plus the case pairs Unicode 16 and
17 added, which node 20 (Unicode 17) already folds; `tests/graders/test_js_strings.py` compares every
cased character with node's.
"""

from __future__ import annotations

import bisect
import functools

__all__ = ["Ranges", "case_group_of", "case_groups", "close_under_case", "merge_ranges"]

# No cased letter lies past the Adlam block (U+1E900-1E95F): the scan stops there.
_LAST_CASED = 0x1E960
# CaseFolding.txt's S mappings between two lowercase letters, which `str.lower()` cannot reveal.
_SIMPLE_ONLY = {0x1FD3: 0x0390, 0x1FE3: 0x03B0, 0xFB05: 0xFB06}
# Upper -> lower case pairs of Unicode 16-17 (Latin, Cyrillic, Garay, Beria Erfe), unknown to older data.
_NEWER_LOWER = {
    **{0xA7DC: 0x019B, 0xA7CB: 0x0264, 0x1C89: 0x1C8A, 0xA7CC: 0xA7CD, 0xA7CE: 0xA7CF},
    **{0xA7D2: 0xA7D3, 0xA7D4: 0xA7D5, 0xA7DA: 0xA7DB},
    **{upper: upper + 0x20 for upper in range(0x10D50, 0x10D66)},
    **{upper: upper + 0x1B for upper in range(0x16EA0, 0x16EB9)},
}
_NEWER_UPPER = {lower: upper for upper, lower in _NEWER_LOWER.items()}


def _canonical_unit(code: int) -> int:
    if code in _NEWER_UPPER:
        return _NEWER_UPPER[code]
    upper = chr(code).upper()
    if len(upper) != 1:
        return code
    if code >= 128 and ord(upper) < 128:
        return code
    return ord(upper)


def _simple_fold(code: int) -> int:
    if code in _SIMPLE_ONLY or code in _NEWER_LOWER:
        return _SIMPLE_ONLY.get(code) or _NEWER_LOWER[code]
    folded = chr(code).casefold()
    if len(folded) == 1:  # status C (or no folding)
        return ord(folded)
    lower = chr(code).lower()  # a full (F) folding; its S mapping, when any, is the lowercase letter
    return ord(lower) if len(lower) == 1 else code


@functools.lru_cache(maxsize=2)
def case_groups(unicode: bool) -> tuple[tuple[int, ...], ...]:
    """Every set of two or more characters that the `i` flag makes equal, sorted."""
    canonical = _simple_fold if unicode else _canonical_unit
    stop = _LAST_CASED if unicode else 0x10000
    by_form: dict[int, list[int]] = {}
    for code in range(stop):
        by_form.setdefault(canonical(code), []).append(code)
    return tuple(sorted(tuple(g) for g in by_form.values() if len(g) > 1))


@functools.lru_cache(maxsize=2)
def case_group_of(unicode: bool) -> dict[int, tuple[int, ...]]:
    """Each character that has a case group -> its group."""
    return {code: group for group in case_groups(unicode) for code in group}


Ranges = list[tuple[int, int]]  # inclusive (low, high) code ranges


def close_under_case(ranges: Ranges, unicode: bool) -> Ranges:
    """`ranges` (sorted, merged, inclusive) plus every character equal to one of them under `i`."""
    cased = _cased_codes(unicode)
    group_of = case_group_of(unicode)
    extra: Ranges = []
    for low, high in ranges:
        for code in cased[bisect.bisect_left(cased, low) : bisect.bisect_right(cased, high)]:
            extra.extend((member, member) for member in group_of[code])
    return merge_ranges([*ranges, *extra]) if extra else ranges


@functools.lru_cache(maxsize=2)
def _cased_codes(unicode: bool) -> list[int]:
    return sorted(case_group_of(unicode))


def merge_ranges(ranges: Ranges) -> Ranges:
    """Sorted, with overlapping or adjacent ranges joined."""
    merged: Ranges = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            if high > merged[-1][1]:
                merged[-1] = (merged[-1][0], high)
        else:
            merged.append((low, high))
    return merged
