"""End to end: the HTML report against a baseline, through `run --baseline --report html=`.

Two OpenAI-compatible targets (a fake server on 127.0.0.1 reporting token usage, priced by model) run
the same eval twice: the head run breaks one test on one target, edits another test's definition,
drops one and adds one (with a hostile id). The page names the baseline as the PR comment does, shows
base score, Δ and status per test, the changes vs the baseline (new, changed, removed), cost and
tokens per test and in total, and a tests x targets matrix; every run string is escaped."""

from __future__ import annotations

import os
from html.parser import HTMLParser
from pathlib import Path

from tests.cli_helpers import run_cli
from tests.fakes.llm_server import Call, FakeLlmServer, Reply

BASE_EVAL = """\
name: shop
execution:
  targets: [mini, big]
tests:
  - id: refund
    input: What is the refund window?
    assertions: [{type: contains, value: 30 days}]
  - id: greeting
    input: Say hello in French.
    assertions: [{type: contains, value: Bonjour}]
  - id: edited
    input: Say the words.
    assertions: [{type: contains, value: alpha}]
  - id: dropped
    input: Say the words again.
    assertions: [{type: contains, value: alpha}]
"""
HOSTILE_ID = "<b>added</b>"
HEAD_EVAL = BASE_EVAL.replace(
    "value: alpha}]\n  - id: dropped\n", f"value: beta}}]\n  - id: '{HOSTILE_ID}'\n"
)
HOSTILE_ANSWER = 'Bonjour <script>alert("x")</script><img src=x onerror=alert(1)>'
BASELINE_DIR = "base<i>line"  # a directory name is run text too


def _responder(head: list[bool]) -> object:
    def respond(call: Call) -> Reply:
        text = call.last_user_text()
        if "refund" in text:  # the head run's mini model forgets the policy
            worse = head[0] and call.body["model"] == "gpt-4o-mini"
            return Reply(
                text="Refunds within 14 days." if worse else "Refunds within 30 days.", usage=(100, 20)
            )
        if "hello" in text:
            return Reply(text=HOSTILE_ANSWER, usage=(40, 10))
        return Reply(text="alpha beta", usage=(40, 10))

    return respond


class _Page(HTMLParser):
    """Text of `p.baseline`, and per section id, its tables: header cells and rows of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.baseline = ""
        self.tables: dict[str, list[tuple[list[str], list[list[str]]]]] = {}
        self._section = ""
        self._cell: list[str] | None = None
        self._in_baseline = False
        self._row: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "section":
            self._section = attributes.get("id") or ""
        elif tag == "table":
            self.tables.setdefault(self._section, []).append(([], []))
        elif tag == "tr" and self._section in self.tables:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "p" and "baseline" in (attributes.get("class") or "").split():
            self._in_baseline = True

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            headers, rows = self.tables[self._section][-1]
            if self._row and not headers:
                headers.extend(self._row)
            elif self._row:
                rows.append(self._row)
            self._row = None
        elif tag == "p":
            self._in_baseline = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._in_baseline:
            self.baseline += data

    def table(self, section: str, index: int = 0) -> list[dict[str, str]]:
        headers, rows = self.tables[section][index]
        return [dict(zip(headers, row, strict=True)) for row in rows]


def _run_twice(root: Path) -> str:
    (root / ".git").mkdir(parents=True)
    (root / ".agentv").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    head = [False]
    with FakeLlmServer(_responder(head)) as server:  # type: ignore[arg-type]
        targets = "".join(
            f"  - name: {name}\n    provider: openai\n    model: {model}\n"
            f"    base_url: {server.base_url}\n    api_key: sk-test\n"
            for name, model in (("mini", "gpt-4o-mini"), ("big", "gpt-4o"))
        )
        (root / ".agentv" / "targets.yaml").write_text("targets:\n" + targets, encoding="utf-8")
        (root / "shop.eval.yaml").write_text(BASE_EVAL, encoding="utf-8")
        done = run_cli("run", ".", "-o", BASELINE_DIR, "--no-fail", cwd=root, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        head[0] = True
        (root / "shop.eval.yaml").write_text(HEAD_EVAL, encoding="utf-8")
        done = run_cli(
            "run", ".", "-o", "head", "--baseline", BASELINE_DIR, "--report", "html=head/report.html",
            cwd=root, env=env, timeout=300,
        )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr  # refund [mini] broke
    return (root / "head" / "report.html").read_text(encoding="utf-8")


def test_the_html_report_shows_the_run_against_its_baseline(tmp_path: Path) -> None:
    text = _run_twice(tmp_path / "repo")
    page = _Page()
    page.feed(text)

    # the baseline, named as in the PR comment (and escaped: it is a directory name)
    assert page.baseline == "Baseline: results at base<i>line."
    assert "base&lt;i&gt;line" in text and "<i>line" not in text

    # per test: score, base score, Δ with its status, cost and tokens (USD per M tokens: gpt-4o-mini
    # 0.15 in / 0.60 out, gpt-4o 2.50 / 10.00; the server reports (100, 20) and (40, 10) tokens)
    tests = {(r["Test"], r["Target"]): r for r in page.table("results")}
    shown = {key: (r["Score"], r["Base"], r["Δ"], r["Cost"], r["Tokens"]) for key, r in tests.items()}
    assert shown == {
        ("refund", "mini"): ("0.000", "1.000", "-1.000 broken", "$0.000027", "120"),
        ("refund", "big"): ("1.000", "1.000", "+0.000", "$0.000450", "120"),
        ("greeting", "mini"): ("1.000", "1.000", "+0.000", "$0.000012", "50"),
        ("greeting", "big"): ("1.000", "1.000", "+0.000", "$0.000200", "50"),
        ("edited", "mini"): ("1.000", "1.000", "definition changed", "$0.000012", "50"),
        ("edited", "big"): ("1.000", "1.000", "definition changed", "$0.000200", "50"),
        (HOSTILE_ID, "mini"): ("1.000", "–", "new", "$0.000012", "50"),
        (HOSTILE_ID, "big"): ("1.000", "–", "new", "$0.000200", "50"),
    }
    assert page.table("results")[0]["Test"] == "refund"  # the failing test first

    # the changes vs the baseline: broken first, then definition changed, new, removed
    changes = [(r["Status"], r["Test"], r["Target"], r["Base"], r["Head"]) for r in page.table("changes")]
    assert changes == [
        ("broken", "refund", "mini", "1.000", "0.000"),
        ("definition changed", "edited", "big", "1.000", "1.000"),
        ("definition changed", "edited", "mini", "1.000", "1.000"),
        ("new", HOSTILE_ID, "big", "–", "1.000"),
        ("new", HOSTILE_ID, "mini", "–", "1.000"),
        ("removed", "dropped", "big", "1.000", "–"),
        ("removed", "dropped", "mini", "1.000", "–"),
    ]

    # totals: the suite row and the whole run's cost and tokens
    [suite] = page.table("suites")
    assert (suite["Suite"], suite["Cost"], suite["Tokens"]) == ("shop", "$0.001113", "540")
    assert suite["Δ vs baseline"].startswith("-0.250 ")  # over the 4 matched tests: one lost 1.0
    assert "540 tokens" in text

    # the matrix: tests down, targets across, each cell its score and Δ
    rows = page.table("matrix")
    matrix = {r["Test"]: (r["big"], r["mini"]) for r in rows if r["Suite"] != "Total"}
    assert matrix == {
        HOSTILE_ID: ("1.000 new", "1.000 new"),
        "dropped": ("– removed (base 1.000)", "– removed (base 1.000)"),
        "edited": ("1.000 definition changed", "1.000 definition changed"),
        "greeting": ("1.000 +0.000", "1.000 +0.000"),
        "refund": ("1.000 +0.000", "0.000 -1.000 broken"),
    }
    per_target = {r["Test"]: (r["big"], r["mini"]) for r in rows if r["Suite"] == "Total"}
    assert per_target == {
        "pass rate": ("100% (4/4)", "75% (3/4)"),
        "mean score": ("1.000", "0.750"),
        "cost": ("$0.001050", "$0.000063"),
        "tokens": ("270", "270"),
    }

    # hostile strings stay text
    assert "<b>added" not in text and "&lt;b&gt;added&lt;/b&gt;" in text
    assert "<script>alert" not in text and "<img src=x" not in text
