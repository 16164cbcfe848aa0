"""The error tree. Every user-facing error carries a location and maps to an exit code (`ExitCode`;
docs/gates.md and docs/running.md#exit-codes list them)."""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: `agentv-ci --help` does not import msgspec
    from agentv_ci.model.source import SourceLocation


class ExitCode(IntEnum):
    OK = 0
    GATE_FAILED = 1
    BAD_INPUT = 2
    INCONCLUSIVE = 3
    INTERNAL = 4
    INTERRUPTED = 130


class AgentvCiError(Exception):
    """Base for expected errors: printed without a traceback."""

    exit_code: ExitCode = ExitCode.BAD_INPUT

    def __init__(
        self, message: str, *, location: SourceLocation | None = None, hint: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.hint = hint

    def render(self) -> str:
        prefix = f"{self.location}: " if self.location else ""
        text = f"{prefix}error: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class UsageError(AgentvCiError):
    """A bad flag or argument combination."""


class LoadError(AgentvCiError):
    """An eval file (or a file it references) cannot be read or parsed."""


class InvalidEvalFiles(LoadError):
    """Eval files with error diagnostics: rendered as each located diagnostic, then the conclusion
    (the last line of a CI log is where the eye lands)."""

    def __init__(self, diagnostics: list[str]) -> None:
        super().__init__(f"{len(diagnostics)} error(s) in eval files; nothing was run")
        self.diagnostics = diagnostics

    def render(self) -> str:
        return "\n".join([*self.diagnostics, super().render()])


class ConfigError(AgentvCiError):
    """A targets file, grader or plugin configuration is invalid."""


class TargetError(AgentvCiError):
    """A target could not produce an answer (network, process, timeout)."""

    exit_code = ExitCode.INCONCLUSIVE


class TargetTimeout(TargetError):
    """A target ran out of time (its wall-clock deadline passed): `failure_reason_code: timeout`."""


class GraderError(AgentvCiError):
    """A grader could not produce a score (crash, timeout, unparseable judge output)."""

    exit_code = ExitCode.INCONCLUSIVE
