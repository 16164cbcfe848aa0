"""Record AgentV 4.42.4's own field-accuracy results for the cases below into table.json.

How: node imports AgentV's built core bundle (`agentv/dist/chunk-*.js`, the one exporting
`FieldAccuracyGrader`) and calls `new FieldAccuracyGrader({config}).evaluate({evalCase, candidate})`
directly: AgentV's own grader code, without its CLI around it (no target needed). Each case is run
under TZ=UTC (what CI uses, and what agentv-ci's date reading pins) and under two other zones; the
zones whose results differ from UTC's are recorded too, to show where AgentV depends on the machine.

Usage (needs node and `npm install agentv@4.42.4` somewhere):
    python tests/conformance/field_accuracy_js/record.py /work/tools/agentv/node_modules/agentv
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
ZONES = ("UTC", "America/New_York", "Asia/Tokyo")


def num(cid: str, have: Any, want: Any, tolerance: Any = 0, relative: bool = False) -> dict[str, Any]:
    field: dict[str, Any] = {"path": "v", "match": "numeric_tolerance", "tolerance": tolerance}
    if relative:
        field["relative"] = True
    return {"id": cid, "field": field, "candidate": have, "expected": want}


def day(cid: str, have: Any, want: Any, formats: list[str] | None = None) -> dict[str, Any]:
    field: dict[str, Any] = {"path": "v", "match": "date"}
    if formats is not None:
        field["formats"] = formats
    return {"id": cid, "field": field, "candidate": have, "expected": want}


CASES: list[dict[str, Any]] = [
    # parseFloat prefixes
    num("pf-unit-suffix", "12.50kg", 12.5),
    num("pf-leading-space", "  \t12.5", 12.5),
    num("pf-nbsp", "\u00a012", 12),
    num("pf-bom", "\ufeff12", 12),
    num("pf-newline", "\n7", 7),
    num("pf-plus", "+12.5", 12.5),
    num("pf-minus", "-3", -3),
    num("pf-exponent-garbage", "1e3x", 1000),
    num("pf-exponent-neg", "0.1e-2", 0.001),
    num("pf-exponent-dangling", "1e", 1),
    num("pf-exponent-sign-only", "1e+", 1),
    num("pf-hex", "0x10", 0),
    num("pf-hex-not-16", "0x10", 16),
    num("pf-leading-dot", ".5", 0.5),
    num("pf-trailing-dot", "5.", 5),
    num("pf-dot-exponent", ".e1", 0),
    num("pf-two-dots", "1.2.3", 1.2),
    num("pf-comma", "1,234", 1),
    num("pf-underscore", "1_000", 1),
    num("pf-space-inside", "12 34", 12),
    num("pf-empty", "", 0),
    num("pf-blank", "   ", 0),
    num("pf-letters", "abc", 0),
    num("pf-e-first", "e5", 0),
    num("pf-double-sign", "+-1", -1),
    num("pf-unicode-minus", "\u22125", -5),
    num("pf-arabic-digits", "\u0661\u0662", 12),
    num("pf-fullwidth", "\uff11\uff12", 12),
    num("pf-infinity", "Infinity", 1),
    num("pf-neg-infinity", "-Infinity", 1),
    num("pf-infinity-lower", "infinity", 1),
    num("pf-infinity-suffix", "Infinityx", 1),
    num("pf-overflow", "1e400", 1),
    num("pf-tiny", "1e-400", 0),
    num("pf-expected-string", 12.5, "12.5 kg"),
    num("pf-both-strings", "3 apples", "3.0 pears"),
    num("pf-bool", True, 1),
    num("pf-null", None, 0),
    num("pf-array", [1], 1),
    num("pf-object", {"a": 1}, 1),
    num("pf-long-digits", "123456789012345678901234567890", 1.2345678901234568e29),
    # tolerance boundaries (no epsilon)
    num("tol-100.2-vs-100.1", 100.2, 100.1, 0.1),
    num("tol-100.1-vs-100.2", 100.1, 100.2, 0.1),
    num("tol-1.1-vs-1.0", 1.1, 1.0, 0.1),
    num("tol-0.3-vs-sum", 0.30000000000000004, 0.3, 0),
    num("tol-exact-1", 11, 10, 1),
    num("tol-just-over", 11.000001, 10, 1),
    num("tol-half", 10.5, 10, 0.5),
    num("tol-diff-0.125", 1.125, 1, 1),
    num("tol-diff-0.375", 1.375, 1, 1),
    num("tol-diff-2.675", 3.675, 1, 5),
    num("tol-tiny", 1.0000001, 1, 1e-7),
    num("tol-tiny-2", 1.0000002, 1, 1e-7),
    num("tol-big", 1e21, 0, 1e22),
    num("tol-negative", 1, 1, -0.1),
    num("tol-relative-10pc", 110, 100, 0.1, True),
    num("tol-relative-over", 110.00001, 100, 0.1, True),
    num("tol-relative-zero", 0.05, 0, 0.1, True),
    num("tol-relative-negative-expected", -90, -100, 0.1, True),
    num("tol-relative-0.3", 0.33, 0.3, 0.1, True),
    num("tol-string-tolerance", 10.4, 10, "0.5"),
    # dates: two-digit years, compact dates, V8's legacy parser, time zones
    day("d-2digit-24", "03/05/24", "2024-03-05"),
    day("d-2digit-49", "03/05/49", "2049-03-05"),
    day("d-2digit-50", "03/05/50", "1950-03-05"),
    day("d-2digit-99", "03/05/99", "1999-03-05"),
    day("d-2digit-00", "1/2/00", "2000-01-02"),
    day("d-2digit-eu-formats", "05/03/24", "2024-03-05", ["DD/MM/YYYY"]),
    day("d-compact", "20240305", "2024-03-05"),
    day("d-compact-both", "20240305", "20240305"),
    day("d-compact-number", 20240305, "2024-03-05"),
    day("d-year-only", "2024", "2024-01-01"),
    day("d-year-number", 2024, "2024-01-01"),
    day("d-us-default", "03/05/2024", "2024-03-05"),
    day("d-eu-declared", "05/03/2024", "2024-03-05", ["DD/MM/YYYY"]),
    day("d-eu-declared-may", "05/03/2024", "2024-05-03", ["DD/MM/YYYY"]),
    day("d-day-over-12", "13/05/2024", "2024-05-13"),
    day("d-day-over-12-eu", "13/05/2024", "2024-05-13", ["DD/MM/YYYY"]),
    day("d-dashes", "05-03-2024", "2024-05-03"),
    day("d-dots", "05.03.2024", "2024-05-03"),
    day("d-dash-day-over-12", "25-12-2024", "2024-12-25"),
    day("d-month-name-dash", "15-JAN-2025", "2025-01-15"),
    day("d-month-name-first", "March 5, 2024", "2024-03-05"),
    day("d-day-month-year", "5 March 2024", "2024-03-05"),
    day("d-weekday", "Tue Mar 05 2024", "2024-03-05"),
    day("d-year-month-day-words", "2024 March 5", "2024-03-05"),
    day("d-no-year", "Mar 5", "2001-03-05"),
    day("d-no-year-numeric", "3/5", "2001-03-05"),
    day("d-slash-ymd", "2024/03/05", "2024-03-05"),
    day("d-short-iso", "2024-3-5", "2024-03-05"),
    day("d-iso-feb-30", "2024-02-30", "2024-03-01"),
    day("d-iso-month-13", "2024-13-01", "2025-01-01"),
    day("d-us-feb-30", "02/30/2024", "2024-03-01"),
    day("d-iso-space-time", "2024-03-05 10:00", "2024-03-05"),
    day("d-iso-T-no-zone", "2024-03-05T10:00:00", "2024-03-05"),
    day("d-iso-z-late", "2024-03-05T23:30:00Z", "2024-03-05"),
    day("d-iso-offset-next-day", "2024-03-05T23:30:00-05:00", "2024-03-06"),
    day("d-iso-offset-same-day", "2024-03-05T23:30:00-05:00", "2024-03-05"),
    day("d-iso-offset-prev-day", "2024-03-05T00:30:00+02:00", "2024-03-04"),
    day("d-iso-offset-compact", "2024-03-05T00:30:00+0200", "2024-03-04"),
    day("d-iso-millis", "2024-03-05T23:59:59.999Z", "2024-03-05"),
    day("d-iso-24h", "2024-03-05T24:00:00Z", "2024-03-06"),
    day("d-iso-bad-hour", "2024-03-05T25:00:00Z", "2024-03-05"),
    day("d-iso-vs-us", "2024-03-05", "03/05/2024"),
    day("d-iso-vs-words", "2024-03-05", "March 5, 2024"),
    day("d-legacy-gmt-offset", "Mar 5 2024 23:30 GMT-0500", "2024-03-06"),
    day("d-legacy-pst", "Mar 5 2024 20:00 PST", "2024-03-06"),
    day("d-legacy-pm", "3/5/2024 11:30 pm", "2024-03-05"),
    day("d-legacy-utc-word", "5 Mar 2024 23:00 UTC+0300", "2024-03-05"),
    day("d-paren-comment", "Tue Mar 05 2024 (Central European)", "2024-03-05"),
    day("d-garbage-after", "2024-03-05junk", "2024-03-05"),
    day("d-garbage-before", "on 2024-03-05", "2024-03-05"),
    day("d-expanded-year", "+002024-03-05", "2024-03-05"),
    day("d-neg-sign", "-2024-03-05", "2024-03-05"),
    day("d-padded", "  2024-03-05  ", "2024-03-05"),
    day("d-iso-z-date-only", "2024-03-05Z", "2024-03-05"),
    day("d-ms-timestamp", "1709596800000", "2024-03-05"),
    day("d-word-only", "today", "2024-03-05"),
    day("d-empty", "", "2024-03-05"),
    day("d-bool", True, "2024-03-05"),
    day("d-null", None, "2024-03-05"),
    day("d-mismatch", "2024-03-06", "2024-03-05"),
    day("d-unparseable-expected", "2024-03-05", "not a date"),
    day("d-year-large", "275760-09-13", "2024-03-05"),
    day("d-year-6digit", "+275760-09-13", "+275760-09-13"),
]


NODE_SCRIPT = r"""
const fs = require('fs');
const path = require('path');
const dist = path.join(process.env.AGENTV_DIR, 'dist');
const bundle = fs.readdirSync(dist).filter(f => f.endsWith('.js'))
  .find(f => fs.readFileSync(path.join(dist, f), 'utf8').includes('var FieldAccuracyGrader = class'));
const cases = JSON.parse(fs.readFileSync(0, 'utf8'));
import(path.join(dist, bundle)).then(m => {
  const out = cases.map(c => {
    const grader = new m.FieldAccuracyGrader({config: {fields: [c.field]}});
    const r = grader.evaluate({
      evalCase: {expected_output: [{role: 'assistant', content: {v: c.expected}}]},
      candidate: JSON.stringify({v: c.candidate}),
    });
    return {score: r.score, assertions: r.assertions.map(a => [a.text, a.passed])};
  });
  process.stdout.write(JSON.stringify(out));
});
"""


def run(agentv_dir: str, zone: str) -> list[dict[str, Any]]:
    env = {**os.environ, "TZ": zone, "AGENTV_DIR": agentv_dir}
    done = subprocess.run(
        ["node", "-e", NODE_SCRIPT],
        input=json.dumps(CASES),
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    return list(json.loads(done.stdout))


def main() -> None:
    agentv_dir = sys.argv[1] if len(sys.argv) > 1 else "/work/tools/agentv/node_modules/agentv"
    version = json.loads((Path(agentv_dir) / "package.json").read_text())["version"]
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    results = {zone: run(agentv_dir, zone) for zone in ZONES}
    rows = []
    for i, case in enumerate(CASES):
        row = {**case, "agentv": results["UTC"][i]}
        other = {z: results[z][i] for z in ZONES[1:] if results[z][i] != results["UTC"][i]}
        if other:
            row["agentv_in_other_zones"] = other
        rows.append(row)
    table = {
        "_comment": (
            f"Recorded from AgentV {version}'s FieldAccuracyGrader (its built bundle, called by node "
            f"{node}) by tests/conformance/field_accuracy_js/record.py; `agentv` is the result with "
            "TZ=UTC (what CI runs and agentv-ci pins), `agentv_in_other_zones` the zones where "
            "AgentV's result differs. Do not edit by hand: re-run record.py."
        ),
        "agentv_version": version,
        "cases": rows,
    }
    (HERE / "table.json").write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
