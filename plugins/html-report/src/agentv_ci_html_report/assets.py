"""The page's only stylesheet and script, inlined; the Content-Security-Policy allows exactly these
two (by hash) and nothing else: no network, no other script, even if model output slipped through
escaping."""

from __future__ import annotations

import base64
import hashlib

STYLE = """
:root { color-scheme: light; --pass: #1a7f37; --fail: #cf222e; --error: #9a6700; --muted: #59636e;
  --line: #d1d9e0; --bg: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1f2328; }
header, main { max-width: 1180px; margin: 0 auto; padding: 16px 24px; }
header { border-bottom: 1px solid var(--line); }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 24px 0 8px; }
.verdict { font-weight: 600; margin: 4px 0; }
.verdict.passed { color: var(--pass); } .verdict.failed { color: var(--fail); }
.verdict.inconclusive { color: var(--error); }
.meta, .reasons { color: var(--muted); margin: 2px 0; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--bg); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; min-width: 58px; text-align: center; border-radius: 10px; padding: 0 8px;
  font-size: 12px; font-weight: 600; color: #fff; }
.badge.passed { background: var(--pass); } .badge.failed { background: var(--fail); }
.badge.error { background: var(--error); } .badge.not_run { background: var(--muted); }
tr.failed td:first-child, tr.error td:first-child { box-shadow: inset 3px 0 var(--fail); }
.search { display: flex; gap: 12px; align-items: center; margin: 8px 0; }
#search { flex: 1; font: inherit; padding: 6px 10px; border: 1px solid var(--line); border-radius: 6px; }
#shown { color: var(--muted); white-space: nowrap; }
ul.failures { margin: 0; padding-left: 18px; }
.failures li { color: var(--fail); } .failures .evidence { color: var(--muted); }
.failures .diff { color: var(--muted); font-family: monospace; white-space: pre-wrap; word-break: break-all; }
pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0; background: var(--bg); padding: 6px;
  border-radius: 4px; max-height: 160px; overflow: auto; }
details summary { cursor: pointer; color: var(--muted); }
svg text { font: 11px system-ui, sans-serif; fill: #1f2328; }
.track { fill: #eaeef2; } .fill { fill: var(--pass); } .axis { stroke: var(--line); }
.bin.low { fill: var(--fail); } .bin.mid { fill: #d4a72c; } .bin.high { fill: var(--pass); }
.empty { color: var(--muted); }
.baseline { margin: 2px 0; } .baseline.none { color: var(--error); }
code { font: 12px/1.4 ui-monospace, monospace; background: var(--bg); padding: 0 4px; border-radius: 4px;
  word-break: break-all; }
.change.worse { color: var(--fail); font-weight: 600; }
.change.better { color: var(--pass); font-weight: 600; }
.change.other { color: var(--muted); } td.change { white-space: nowrap; }
tr.total td { font-weight: 600; background: var(--bg); }
#matrix td.cell, #matrix td.removed, #matrix td.empty { white-space: nowrap; text-align: right; }
#matrix .score { font-variant-numeric: tabular-nums; font-weight: 600; }
#matrix td.cell.passed .score { color: var(--pass); } #matrix td.cell.failed .score { color: var(--fail); }
#matrix td.cell.error .score, #matrix td.removed { color: var(--muted); }
.evidence { color: var(--muted); margin: 0 0 4px; }
"""

SCRIPT = """
(function () {
  "use strict";
  var input = document.getElementById("search");
  var shown = document.getElementById("shown");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#results tbody tr"));
  function apply(query) {
    var terms = query.toLowerCase().split(/\\s+/).filter(Boolean);
    var count = 0;
    rows.forEach(function (row) {
      var text = row.getAttribute("data-search") || "";
      var match = terms.every(function (term) { return text.indexOf(term) !== -1; });
      row.hidden = !match;
      if (match) { count += 1; }
    });
    shown.textContent = count + " of " + rows.length + " tests";
  }
  function queryFromHash() {
    var found = /(?:^|&)q=([^&]*)/.exec(window.location.hash.slice(1));
    return found ? decodeURIComponent(found[1].replace(/\\+/g, " ")) : "";
  }
  input.addEventListener("input", function () {
    apply(input.value);
    var url = window.location.pathname + window.location.search;
    window.history.replaceState(null, "", input.value ? url + "#q=" + encodeURIComponent(input.value) : url);
  });
  input.value = queryFromHash();
  apply(input.value);
  document.documentElement.setAttribute("data-search-ready", "true");
})();
"""


def csp_hash(text: str) -> str:
    """The CSP source expression allowing exactly this inline element content."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src {csp_hash(STYLE)}; script-src {csp_hash(SCRIPT)}; img-src data:"
)
