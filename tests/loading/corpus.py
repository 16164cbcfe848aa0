"""The fixture corpus under tests/fixtures/evals: valid eval files and invalid cases with expectations."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "evals"
VALID = FIXTURES / "valid"
INVALID = FIXTURES / "invalid"


def invalid_cases() -> list[Path]:
    return sorted(p for p in INVALID.iterdir() if p.is_dir())


def invalid_main(case: Path) -> Path:
    """`main.jsonl` when present (a dataset with its sidecar), else `main.eval.yaml`."""
    jsonl = case / "main.jsonl"
    return jsonl if jsonl.exists() else case / "main.eval.yaml"


def expected(case: Path) -> set[tuple[str, str, int, int]]:
    """(code, file relative to the case dir, line, col) from `expect.txt`."""
    out = set()
    for line in (case / "expect.txt").read_text().splitlines():
        if line.strip():
            code, where = line.split()
            file, row, col = where.rsplit(":", 2)
            out.add((code, file, int(row), int(col)))
    return out
