"""The normalised data model shared by every stage: suites (input side) and results (output side)."""
