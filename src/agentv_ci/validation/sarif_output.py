"""Diagnostics as a minimal SARIF 2.1.0 log (for code-scanning upload of `validate` results)."""

from __future__ import annotations

import json
from pathlib import Path

from agentv_ci import __version__
from agentv_ci.validation.codes import CODES
from agentv_ci.validation.output_formats import display_path
from agentv_ci.validation.validator import ValidationReport

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(file: str, base: Path | None) -> str:
    shown = display_path(file, base)
    return Path(shown).as_posix() if not Path(shown).is_absolute() else Path(shown).as_uri()


def sarif_log(report: ValidationReport, base: Path | None = None) -> dict[str, object]:
    used = sorted({d.code for d in report.diagnostics})
    rules = [
        {
            "id": code,
            "name": CODES.get(code, ("error", code))[1].title().replace(" ", "").replace("/", ""),
            "shortDescription": {"text": CODES.get(code, ("error", code))[1]},
            "defaultConfiguration": {"level": CODES.get(code, ("error", code))[0]},
        }
        for code in used
    ]
    index = {code: i for i, code in enumerate(used)}
    results = []
    for d in report.diagnostics:
        region: dict[str, int] = {"startLine": max(d.line, 1), "startColumn": max(d.col, 1)}
        text = d.message + (f" (hint: {d.hint})" if d.hint else "")
        results.append(
            {
                "ruleId": d.code,
                "ruleIndex": index[d.code],
                "level": d.severity,
                "message": {"text": text},
                "locations": [
                    {"physicalLocation": {"artifactLocation": {"uri": _uri(d.file, base)}, "region": region}}
                ],
            }
        )
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "agentv-ci",
                        "version": __version__,
                        "informationUri": "https://github.com/agentevals/agentv-ci",
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }


def render_sarif(report: ValidationReport, base: Path | None = None) -> str:
    return json.dumps(sarif_log(report, base), indent=2)
