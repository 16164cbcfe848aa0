"""The quarantine is read from the base commit; a base this checkout does not hold applies none."""

from __future__ import annotations

from pathlib import Path

from agentv_ci.selection.quarantine_source import trusted_quarantine
from tests.git_repos import GitRepo

ENTRY = """\
quarantine:
  - test: geo/flaky
    owner: "@ana"
    reason: slow vendor API
    expires: 2999-12-31
"""
MISSING = "0123456789abcdef0123456789abcdef01234567"


def test_a_base_the_checkout_does_not_hold_applies_no_quarantine_and_says_so(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.write(".agentv/quarantine.yaml", ENTRY)
    base = repo.commit("quarantine on the base")
    held = trusted_quarantine(repo.root, base, {})
    assert held is not None and held.lookup("geo", "flaky", "any") is not None  # the base's entry applies

    book = trusted_quarantine(repo.root, MISSING, {})
    assert book is not None and not book.tests  # fails closed: nothing waived
    assert len(book.notes) == 1 and "not applied" in book.notes[0] and MISSING in book.notes[0]


def test_a_shallow_checkout_without_a_quarantine_file_stays_silent(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("README.md", "hi\n")
    repo.commit("no quarantine")
    assert trusted_quarantine(repo.root, MISSING, {}) is None
