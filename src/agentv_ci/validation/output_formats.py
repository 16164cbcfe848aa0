"""Rendering diagnostics for humans (text), machines (json) and GitHub workflow annotations."""

from __future__ import annotations

import json

import msgspec

from agentv_ci.loading.paths import display_path
from agentv_ci.model.diagnostics import Diagnostic
from agentv_ci.text_safety import neutralise_workflow_commands, printable
from agentv_ci.validation.validator import ValidationReport


def _relative(d: Diagnostic) -> Diagnostic:
    return msgspec.structs.replace(d, file=display_path(d.file))


def render_relative(diagnostic: Diagnostic) -> str:
    """One diagnostic rendered as text, its path relative to the working directory when below it."""
    return _relative(diagnostic).render()


def render_text(report: ValidationReport) -> str:
    lines = [render_relative(d) for d in report.diagnostics]
    summary = (
        f"{len(report.files)} file(s), {report.tests} test(s): "
        f"{report.errors} error(s), {report.warnings} warning(s)"
    )
    lines.append(summary)
    return "\n".join(lines)


def render_json(report: ValidationReport) -> str:
    payload = {
        "files": [display_path(f) for f in report.files],
        "tests": report.tests,
        "errors": report.errors,
        "warnings": report.warnings,
        "diagnostics": [msgspec.to_builtins(_relative(d)) for d in report.diagnostics],
    }
    return json.dumps(payload, indent=2)


def github_commands(report: ValidationReport) -> list[str]:
    """GitHub workflow commands, one per diagnostic: `::error file=...,line=...,col=...,title=...::message`
    (print each with security.streams.print_workflow_command)."""
    # lazy: `workflow_commands` loaded only when `github_commands` runs
    from agentv_ci.workflow_commands import escape_data, escape_property

    lines = []
    for d in report.diagnostics:
        props = [f"file={escape_property(printable(display_path(d.file)))}"]
        if d.line > 0:
            props += [f"line={d.line}", f"col={d.col or 1}"]
        props.append(f"title={escape_property(printable(d.code))}")
        message = printable(d.message) + (f"\nhint: {printable(d.hint)}" if d.hint else "")
        data = escape_data(neutralise_workflow_commands(message))
        lines.append(f"::{d.severity} {','.join(props)}::{data}")
    return lines


def github_conclusion(report: ValidationReport) -> str:
    """The plain last line of `--format github`."""
    return f"{report.errors} error(s), {report.warnings} warning(s) in {len(report.files)} file(s)"


def render_github(report: ValidationReport) -> str:
    """`github_commands` and the conclusion as one text."""
    return "\n".join([*github_commands(report), github_conclusion(report)])
