"""`validate` checks the targets a suite uses against its targets file, as `run` would before its
first test: the name is declared, its provider is installed, its fields convert and the required ones
are there. API keys are not asked for (validation runs without secrets).

What is checked, per suite: every target the eval file names (`execution.target`/`targets`, test or
suite) and `default` when the targets file declares it, plus each checked target's `grader_target`.
A suite with no targets file is not checked (`run --targets FILE` may supply one).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import msgspec

from agentv_ci.errors import ConfigError
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import Suite
from agentv_ci.targets.config import TargetsConfig, UnknownTargetError, UnsetVariableError, load_targets
from agentv_ci.targets.factory import CheckedTarget, UnknownProviderError, check_target
from agentv_ci.validation.codes import severity_of
from agentv_ci.validation.diagnostics import Diagnostic

__all__ = ["TargetChecker"]

DEFAULT_TARGET = "default"


def _diagnostic(code: str, error: ConfigError, where: SourceLocation | None, fallback: str) -> Diagnostic:
    location = where or error.location
    return Diagnostic(
        severity=severity_of(code),
        code=code,
        message=error.message,
        file=location.file if location else fallback,
        line=location.line if location else 0,
        col=location.col if location else 0,
        hint=error.hint,
    )


class TargetChecker:
    """Checks suites' targets; targets files are read and each target checked once per run."""

    def __init__(self, *, targets_file: Path | None = None, env: Mapping[str, str] | None = None) -> None:
        self.targets_file = targets_file
        self.env = env
        self._configs: dict[Path, TargetsConfig | Diagnostic] = {}
        self._checked: dict[tuple[str, str], list[Diagnostic]] = {}

    def check(self, suite: Suite) -> list[Diagnostic]:
        config = self._config_for(Path(suite.path))
        if isinstance(config, Diagnostic):
            return [config]
        if config.path is None:
            return []
        diagnostics: list[Diagnostic] = []
        for name, written_at in self._used_targets(suite, config).items():
            diagnostics.extend(self._check_name(name, config, written_at, suite.path))
        return diagnostics

    def _config_for(self, eval_path: Path) -> TargetsConfig | Diagnostic:
        directory = eval_path.parent
        cached = self._configs.get(directory)
        if cached is None:
            try:
                cached = load_targets(eval_path, explicit=self.targets_file, env=self.env)
            except ConfigError as exc:
                cached = _diagnostic("E403", exc, None, str(eval_path))
            self._configs[directory] = cached
        return cached

    @staticmethod
    def _used_targets(suite: Suite, config: TargetsConfig) -> dict[str, SourceLocation | None]:
        """Target name -> where the eval file named it (None: the implicit `default`)."""
        used: dict[str, SourceLocation | None] = {}
        for test in suite.tests:
            for execution in (test.execution, suite.execution):
                names = execution.targets or ([execution.target] if execution.target else [])
                if names:
                    for name in names:
                        used.setdefault(name, execution.target_location)
                    break
            else:
                if DEFAULT_TARGET in config.targets:
                    used.setdefault(DEFAULT_TARGET, None)
        return used

    def _check_name(
        self, name: str, config: TargetsConfig, written_at: SourceLocation | None, eval_path: str
    ) -> list[Diagnostic]:
        key = (str(config.path), name)
        if key not in self._checked:
            found, checked = _check(name, config, unknown_at=written_at, fallback=eval_path)
            owner = checked.definition if checked is not None else None
            if owner is not None and owner.grader_target:
                where = owner.key_locations.get("grader_target", owner.key_locations.get("judge_target"))
                found += _check(owner.grader_target, config, unknown_at=where, fallback=eval_path)[0]
            self._checked[key] = found
            return found
        if written_at is None:
            return self._checked[key]
        # An unknown target named by several eval files is reported where each one names it.
        return [
            msgspec.structs.replace(d, file=written_at.file, line=written_at.line, col=written_at.col)
            if d.code == "E401" and d.message.startswith(f"unknown target {name!r}")
            else d
            for d in self._checked[key]
        ]


def _check(
    name: str, config: TargetsConfig, *, unknown_at: SourceLocation | None, fallback: str
) -> tuple[list[Diagnostic], CheckedTarget | None]:
    """Diagnostics for target `name` (an unknown name located at `unknown_at`), and the checked target."""
    try:
        return [], check_target(name, config)
    except ConfigError as exc:
        code = _CODES.get(type(exc), "E403")
        return [_diagnostic(code, exc, unknown_at if code == "E401" else None, fallback)], None


_CODES: dict[type[ConfigError], str] = {
    UnknownTargetError: "E401",
    UnknownProviderError: "E402",
    UnsetVariableError: "W108",
}
