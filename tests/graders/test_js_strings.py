"""JavaScript's string rules in the graders, row by row against what node gives.

`js_strings/table.json` was recorded by `js_strings/record.mjs` from node's own `RegExp`,
`String.prototype.trim` and `JSON.parse`. Each row is graded here by agentv-ci's `regex`, `equals`
and `is-json` graders and must give node's answer; the last test re-runs node when it is installed
and compares with the committed table, so the table is what node says, not what we wish it said.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentv_ci.js_semantics.js_regex import compile_js_regex, js_subject
from tests.graders.contexts import grade

HERE = Path(__file__).parent / "js_strings"
TABLE = json.loads((HERE / "table.json").read_text(encoding="utf-8"))


def json_text(kind: str, depth: int) -> str:
    """The deep documents record.mjs describes by [kind, depth]."""
    return {
        "array": "[" * depth + "]" * depth,
        "object": '{"a":' * depth + "1" + "}" * depth,
        "unclosed": "[" * depth + "]" * (depth - 1),
        "trailing-comma": "[" * depth + "1," + "]" * depth,
        "mixed": '[{"a":' * depth + "null" + "}]" * depth,
    }[kind]


def _units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


@pytest.mark.parametrize("row", TABLE["regex"], ids=lambda r: f"/{r['pattern']}/{r['flags']} {r['text']!r}")
def test_regex_gives_what_node_gives(row: dict[str, Any]) -> None:
    result = grade("regex", row["text"], value=row["pattern"], flags=row["flags"] or None)
    assert result.error is None
    assert result.verdict == ("pass" if row["test"] else "fail")
    if row["test"]:  # where it matched, counted in UTF-16 code units as JS's `match.index`
        subject = js_subject(row["text"], row["flags"])
        found = compile_js_regex(row["pattern"], row["flags"] or None).search(subject)
        assert found is not None
        start = found.start() if subject is not row["text"] or "u" not in row["flags"] else None
        if start is None:
            start = _units(row["text"][: found.start()])
        assert start == row["index"]


@pytest.mark.parametrize("row", TABLE["trim"], ids=lambda r: f"U+{r['code']:04X}")
def test_trim_and_space_are_javascripts(row: dict[str, Any]) -> None:
    char, word = chr(row["code"]), "\u4e00"  # a word no row's character can stand for
    trimmed = grade("equals", f"{char}{word}{char}", value=word).verdict == "pass"
    assert trimmed is row["trimmed"]
    assert (grade("starts-with", f"{char}{word}.", value=word).verdict == "pass") is row["trimmed"]
    assert (grade("ends-with", f".{word}{char}", value=word).verdict == "pass") is row["trimmed"]
    assert (grade("regex", char, value="\\s").verdict == "pass") is row["space"]


@pytest.mark.parametrize("row", TABLE["json_deep"], ids=lambda r: f"{r['doc'][0]}-{r['doc'][1]}")
def test_is_json_on_deep_documents_is_a_verdict(row: dict[str, Any]) -> None:
    result = grade("is-json", json_text(*row["doc"]))
    assert result.error is None  # never an execution error
    assert result.verdict == ("pass" if row["parses"] else "fail")


@pytest.mark.parametrize("row", TABLE["json_text"], ids=lambda r: repr(r["text"]))
def test_is_json_accepts_what_json_parse_accepts(row: dict[str, Any]) -> None:
    result = grade("is-json", row["text"])
    assert result.error is None
    assert result.verdict == ("pass" if row["parses"] else "fail")


def test_the_table_covers_the_issue_points() -> None:
    rows = {(r["pattern"], r["flags"], r["text"]) for r in TABLE["regex"]}
    assert {("^..$", "", "😀"), ("k", "i", "\u212a"), ("a\\sb", "", "a\ufeffb")} <= rows
    trimmed = {r["code"]: r["trimmed"] for r in TABLE["trim"]}
    assert trimmed[0xFEFF] and not trimmed[0x1F] and not trimmed[0x85]
    assert {"parses": True, "doc": ["array", 5000]} in TABLE["json_deep"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_table_is_what_node_gives_now() -> None:
    done = subprocess.run(
        ["node", str(HERE / "record.mjs")], capture_output=True, text=True, check=True, timeout=120
    )
    fresh = json.loads(done.stdout)
    for part in ("regex", "trim", "json_deep", "json_text"):
        assert fresh[part] == TABLE[part], part


_FOLDING_SCRIPT = r"""
const ours = JSON.parse(require("fs").readFileSync(0, "utf8"));
const quote = (s) => s.replace(/[\\^$.*+?()[\]{}|\/]/g, "\\$&");
const same = (a, b) => new RegExp("^" + quote(a) + "$", "ui").test(b);
const canon = [];
for (let c = 0; c < 0x10000; c++) {
  const upper = String.fromCharCode(c).toUpperCase();
  const u = upper.length === 1 ? upper.charCodeAt(0) : c;
  canon.push(c >= 128 && u < 128 ? c : u);
}
const related = [];
for (let c = 0; c < 0x1e960; c++) {
  if (c >= 0xd800 && c < 0xe000) continue;
  const s = String.fromCodePoint(c);
  for (const o of [s.toLowerCase(), s.toUpperCase()]) {
    if ([...o].length === 1 && o !== s) related.push([c, o.codePointAt(0), same(s, o)]);
  }
}
const groups = ours.map((g) => g.every((c) => same(String.fromCodePoint(g[0]), String.fromCodePoint(c))));
process.stdout.write(JSON.stringify({ canon, related, groups }));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_case_folding_is_nodes_for_every_cased_character() -> None:
    """The `i` flag's equivalences, without `u` (every UTF-16 unit) and with it (every character
    related by node's toLowerCase/toUpperCase, and every group we make), as node's own RegExp has them."""
    from agentv_ci.js_semantics.js_case_folding import case_group_of, case_groups

    ours = case_groups(True)
    done = subprocess.run(
        ["node", "-e", _FOLDING_SCRIPT],
        input=json.dumps(ours),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    node = json.loads(done.stdout)
    by_canon: dict[int, list[int]] = {}
    for code, form in enumerate(node["canon"]):
        by_canon.setdefault(form, []).append(code)
    assert {tuple(g) for g in by_canon.values() if len(g) > 1} == set(case_groups(False))
    group_of = case_group_of(True)
    assert [r for r in node["related"] if (r[1] in group_of.get(r[0], ())) != r[2]] == []
    assert all(node["groups"])
