"""The quarantine file's parser (hostile text, located E118) and the waivers built from it."""

from __future__ import annotations

from datetime import date

import pytest

from agentv_ci.loading.quarantine import InvalidQuarantine, parse_quarantine, quarantine_waivers

ENTRY = (
    "quarantine:\n  - test: geo/broken\n    owner: '@ana'\n    reason: vendor API\n    expires: {expires}\n"
)


def _problems(text: str) -> list[tuple[int, int, str, str]]:
    found = parse_quarantine(text, "q.yaml")
    return [(d.line, d.col, d.code, d.message) for d in found.diagnostics]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- a\n", (1, 1, "E118", "the quarantine file must be a mapping with a `quarantine:` list")),
        ("quarantine: {}\n", (1, 13, "E118", "`quarantine` must be a list of entries")),
        (
            "quarantine:\n  - geo/broken\n",
            (2, 5, "E118", "a quarantine entry must be a mapping (test, owner, reason, expires)"),
        ),
        (ENTRY.format(expires="20300101"), (5, 14, "E118", "`expires` is not a date (YYYY-MM-DD): 20300101")),
        (
            ENTRY.format(expires="'2030-1-1'"),
            (5, 14, "E118", "`expires` is not a date (YYYY-MM-DD): '2030-1-1'"),
        ),
        (ENTRY.replace("'@ana'", "''"), (3, 12, "E118", "`owner` must be a non-empty string")),
        (
            ENTRY.replace("'@ana'", "'@ana\\e[31m'").replace("'@", '"@').replace("m'", 'm"'),
            (3, 12, "E118", "`owner` holds a control character"),
        ),
        (ENTRY.replace("vendor API", "x" * 501), (4, 13, "E118", "`reason` is over 500 characters")),
        (
            ENTRY.replace("geo/broken", "/broken"),
            (2, 11, "E118", "`test` must be suite/test_id, got '/broken'"),
        ),
        (ENTRY.replace("geo/broken", "geo/"), (2, 11, "E118", "`test` must be suite/test_id, got 'geo/'")),
        (
            ENTRY.format(expires="2030-01-01") + "    target: ''\n",
            (6, 13, "E118", "`target` must be a non-empty string"),
        ),
        (
            "quarantine: [\n",
            (2, 1, "E118", "YAML syntax error: did not find expected node content"),
        ),
        ("quarantine: []\nowner: x\n", (2, 1, "W101", "unknown key 'owner' in the quarantine file")),
    ],
)
def test_each_problem_is_located(text: str, expected: tuple[int, int, str, str]) -> None:
    assert expected in _problems(text)


def test_a_test_quarantined_twice_is_an_error_at_the_second_entry() -> None:
    text = ENTRY.format(expires="2030-01-01") + ENTRY.format(expires="2031-01-01").replace(
        "quarantine:\n", ""
    )
    assert _problems(text) == [(6, 5, "E118", "geo/broken is quarantined twice (first at line 2)")]
    with pytest.raises(InvalidQuarantine) as raised:
        parse_quarantine(text, "q.yaml").checked()
    assert "q.yaml:6:5: error[E118]" in raised.value.render()


def test_an_entry_applies_through_its_last_day_and_blocks_from_the_next() -> None:
    [entry] = parse_quarantine(ENTRY.format(expires="2030-01-31"), "q.yaml").checked()
    assert (entry.suite, entry.test_id, entry.target) == ("geo", "broken", None)
    on_the_day = quarantine_waivers([entry], None, today=date(2030, 1, 31), base=None)
    waiver = on_the_day.lookup("geo", "broken", "any-target")
    assert waiver is not None and not waiver.blocks
    assert waiver.text == "quarantined (owner @ana, until 2030-01-31): vendor API"
    after = quarantine_waivers([entry], None, today=date(2030, 2, 1), base=None)
    expired = after.lookup("geo", "broken", "default")
    assert expired is not None and expired.blocks
    assert expired.text.startswith("quarantine expired on 2030-01-31 (owner @ana): vendor API")


def test_a_target_narrows_the_entry_and_the_test_id_may_hold_slashes() -> None:
    text = ENTRY.format(expires="2030-01-31").replace("geo/broken", "geo/a/b") + "    target: gpt\n"
    [entry] = parse_quarantine(text, "q.yaml").checked()
    book = quarantine_waivers([entry], None, today=date(2030, 1, 1), base=None)
    assert book.lookup("geo", "a/b", "gpt") is not None
    assert book.lookup("geo", "a/b", "claude") is None


def test_without_a_base_the_proposed_entries_are_not_compared() -> None:
    [entry] = parse_quarantine(ENTRY.format(expires="2030-01-31"), "q.yaml").checked()
    assert quarantine_waivers([], [entry], today=date(2030, 1, 1), base=None).notes == []
    notes = quarantine_waivers([], [entry], today=date(2030, 1, 1), base="main").notes
    assert notes == [
        "q.yaml:2:5: quarantine entry geo/broken exists only in this change, "
        "not on the base main: it has no effect"
    ]


def test_an_empty_file_or_list_quarantines_nothing() -> None:
    assert parse_quarantine("", "q.yaml").checked() == []
    assert parse_quarantine("quarantine:\n", "q.yaml").checked() == []
