"""Generated eval suites for the benchmarks (deterministic: the same arguments write the same files).

- `write_mock_suites`: ten suites of `count / 10` tests each against the built-in mock target, each test
  graded by three deterministic graders (contains, regex, icontains). `jsonl`: a JSONL dataset per
  suite with a YAML sidecar holding the graders; `yaml`: one eval file per suite with inline tests.
- `write_validate_dataset`: one JSONL dataset of `count` cases (criteria, input, expected output,
  metadata) with a sidecar and a targets.yaml, for `validate`.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["write_mock_suites", "write_validate_dataset"]

TARGETS = "targets:\n  - name: default\n    provider: mock\n"
SIDECAR = (
    "assertions:\n"
    "  - type: contains\n    value: answer number\n"
    "  - type: regex\n    value: '^answer number \\d+'\n"
    "  - type: icontains\n    value: SUITE\n"
)


def write_mock_suites(directory: Path, count: int, fmt: str, *, files: int = 10) -> Path:
    """`files` suites of `count // files` tests in `directory` (created), with a targets.yaml."""
    (directory / ".agentv").mkdir(parents=True)
    (directory / ".agentv" / "targets.yaml").write_text(TARGETS)
    per_file = count // files
    for file_index in range(files):
        name = f"bench-{file_index}"
        if fmt == "jsonl":
            with (directory / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
                for i in range(per_file):
                    answer = f"answer number {i} for suite {file_index}"
                    row = {"id": f"t{i}", "input": f"question {i}?", "expected_output": answer}
                    handle.write(json.dumps(row) + "\n")
            (directory / f"{name}.yaml").write_text(f"name: {name}\n" + SIDECAR)
        elif fmt == "yaml":
            parts = [f"name: {name}\ntests:\n"]
            for i in range(per_file):
                answer = f"answer number {i} for suite {file_index}"
                parts.append(
                    f"  - id: t{i}\n    input: question {i}?\n    expected_output: {answer}\n"
                    "    assertions:\n"
                    "      - type: contains\n        value: answer number\n"
                    "      - type: regex\n        value: '^answer number \\d+'\n"
                    "      - type: icontains\n        value: SUITE\n"
                )
            (directory / f"{name}.eval.yaml").write_text("".join(parts))
        else:
            raise ValueError(f"unknown suite format {fmt!r}")
    return directory


VALIDATE_SIDECAR = """\
name: bench-100k
description: Generated benchmark dataset
execution:
  target: default
  threshold: 0.8
assertions:
  - type: contains
    value: answer
  - Answers the question correctly
"""


def write_validate_dataset(directory: Path, count: int) -> Path:
    """`dataset.jsonl` (+ `dataset.yaml`) in `directory`; returns the dataset's path."""
    (directory / ".agentv").mkdir(parents=True, exist_ok=True)
    (directory / ".agentv" / "targets.yaml").write_text(TARGETS)  # its `target: default` (else E402)
    dataset = directory / "dataset.jsonl"
    (directory / "dataset.yaml").write_text(VALIDATE_SIDECAR)
    with dataset.open("w", encoding="utf-8") as handle:
        for i in range(count):
            row = {
                "id": f"case-{i:06d}",
                "criteria": f"Explains item {i} correctly",
                "input": f"What is item {i}?",
                "expected_output": f"Item {i} is an answer.",
                "metadata": {"bucket": i % 17},
            }
            handle.write(json.dumps(row) + "\n")
    return dataset
