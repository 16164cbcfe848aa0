"""Every diagnostic code the loader and validator emit (documented in docs/diagnostics.md)."""

from __future__ import annotations

from typing import Literal

Severity = Literal["error", "warning"]

# code -> (default severity, short title)
CODES: dict[str, tuple[Severity, str]] = {
    # files and syntax
    "E001": ("error", "file cannot be read"),
    "E002": ("error", "YAML syntax error"),
    "E003": ("error", "duplicate key"),
    "E004": ("error", "document too large or too deeply nested (alias bomb)"),
    "E005": ("error", "invalid JSONL line"),
    "E006": ("error", "unsupported file type for tests"),
    "E007": ("error", "a file agentv-ci writes is a symlink"),
    "E008": ("error", "a file `init` writes already exists"),
    # structure
    "E101": ("error", "wrong type"),
    "E102": ("error", "missing required field"),
    "E103": ("error", "invalid value"),
    "E104": ("error", "invalid name"),
    "E105": ("error", "duplicate test id"),
    "E106": ("error", "invalid regular expression"),
    "E107": ("error", "negative weight"),
    "E108": ("error", "threshold / score outside 0..1"),
    "E109": ("error", "timeout_seconds outside 1..3600"),
    "E110": ("error", "number out of range"),
    "E111": ("error", "test has no input"),
    "E112": ("error", "test has nothing to grade"),
    "E113": ("error", "conflicting fields"),
    "E114": ("error", "not supported by agentv-ci"),
    "E115": ("error", "over a documented bound on the work of a run"),
    "E116": ("error", "duplicate suite name"),
    "E118": ("error", "invalid quarantine file"),
    # graders
    "E201": ("error", "unknown grader type"),
    "E202": ("error", "invalid grader configuration"),
    "E203": ("error", "plugin failed to load"),
    # targets files
    "E205": ("error", "unknown target provider"),
    "E206": ("error", "invalid target configuration"),
    "E207": ("error", "invalid targets file"),
    # references
    "E301": ("error", "referenced file not found"),
    "E302": ("error", "include cycle"),
    "E303": ("error", "include nested too deeply"),
    "E304": ("error", "invalid include"),
    "E305": ("error", "file outside the repository"),
    "E306": ("error", "workspace reset would rewrite a git work tree"),
    # targets named by a suite (the targets file itself: E205-E207)
    "E401": ("error", "unknown target"),
    "E402": ("error", "target defined nowhere: no targets file"),
    # commands
    "E501": ("error", "data where the shell could run it"),
    # warnings
    "W101": ("warning", "unknown key"),
    "W102": ("warning", "deprecated form"),
    "W103": ("warning", "case directory without case.yaml"),
    "W104": ("warning", "pattern matched no files"),
    "W105": ("warning", "unknown grader config key"),
    "W106": ("warning", "suspicious value"),
    "W107": ("warning", "role marker in content"),
    "W108": ("warning", "unknown target config key"),
    "W109": ("warning", "target setting from an unset environment variable"),
    "W111": ("warning", "the eval file names an undeclared target"),
    "W110": ("warning", "accepted but not run"),
    "W112": ("warning", "file edits expected under a read-only agent sandbox"),
    "W113": ("warning", "a cli command that names no file of the repository"),
}

# Warnings that become errors under `--strict`.
STRICT_PROMOTED = frozenset({"W101", "W105", "W108", "W111"})


def severity_of(code: str) -> Severity:
    return CODES[code][0]
