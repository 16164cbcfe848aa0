"""The page in a real headless browser (Debian's `chromium`): its script runs under the page's own
Content-Security-Policy, the rendered table is read back, and a search typed into the box filters it;
a page against a baseline with two targets renders its Base and Δ columns, its changes and its matrix.

Two ways in: `--dump-dom` (the DOM after the scripts ran, with a `#q=` search in the URL) and the
DevTools protocol over `--remote-debugging-pipe` (keystrokes into the search box). Skips, saying why,
when no chromium is installed.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from test_html_report_baseline import HOSTILE, Tables, runs

from agentv_ci.api import GateDecision, ReportOptions
from agentv_ci_html_report import HtmlReporter
from test_html_report import summary

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    BROWSER is None, reason="no chromium on PATH (Debian: apt-get install chromium); .ci/run installs it"
)


def _flags(profile: Path) -> list[str]:
    return [
        str(BROWSER),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
    ]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("html") / "report.html"
    decision = GateDecision(passed=False, exit_code=1, reasons=["2 test(s) below threshold"])  # type: ignore[arg-type]
    HtmlReporter().write(summary(), ReportOptions(path=path, decision=decision))
    return path


class _Rows(HTMLParser):
    """Each results-table row: its cells' text and whether it is hidden."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[bool, list[str]]] = []
        self.shown = ""
        self._section: str | None = None
        self._cell: list[str] | None = None
        self._in_shown = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "section":
            self._section = attributes.get("id")
        elif tag == "tr" and self._section == "results" and "class" in attributes:
            self.rows.append(("hidden" in attributes, []))
        elif tag == "td" and self._section == "results" and self.rows:
            self._cell = []
        self._in_shown = attributes.get("id") == "shown"

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.rows[-1][1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        self._in_shown = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._in_shown:
            self.shown += data


def _dump_dom(url: str, profile: Path) -> _Rows:
    proc = subprocess.run([*_flags(profile), "--dump-dom", url], capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Refused to" not in proc.stderr  # no Content-Security-Policy violation
    rows = _Rows()
    rows.feed(proc.stdout)
    return rows


def test_the_browser_renders_the_table_failing_tests_first(page: Path, tmp_path: Path) -> None:
    rows = _dump_dom(page.as_uri(), tmp_path / "profile")
    assert rows.shown == "5 of 5 tests"  # written by the page's script: it ran
    assert [(hidden, cells[0], cells[2]) for hidden, cells in rows.rows] == [
        (False, "failed", "germany"),
        (False, "failed", "product"),
        (False, "error", "timeout"),
        (False, "passed", "france"),
        (False, "passed", "sum"),
    ]


def test_the_browser_renders_the_columns_against_a_baseline_and_the_matrix(tmp_path: Path) -> None:
    base, head = runs()
    path = tmp_path / "report.html"
    decision = GateDecision(passed=False, exit_code=1, reasons=["1 test(s) below threshold"])  # type: ignore[arg-type]
    HtmlReporter().write(head, ReportOptions(path=path, baseline=base, decision=decision))
    proc = subprocess.run(
        [*_flags(tmp_path / "profile"), "--dump-dom", path.as_uri()],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Refused to" not in proc.stderr
    dom = Tables()
    dom.feed(proc.stdout)  # the DOM the browser built, after the page's script ran
    assert dom.sections["results"][0] == [
        "Outcome", "Suite", "Test", "Target", "Score", "Base", "Δ", "Cost", "Tokens", "Details",
    ]  # fmt: skip
    rendered = {(r["Test"], r["Target"]): (r["Base"], r["Δ"], r["Cost"]) for r in dom.rows("results")}
    assert rendered[("refund", "mini")] == ("1.000", "-0.750 broken", "$0.000125")
    assert rendered[("added", HOSTILE)] == ("–", "new", "$0.5000")
    assert [r["Status"] for r in dom.rows("changes")][-2:] == ["removed", "removed"]
    assert dom.sections["matrix"][0] == ["Suite", "Test", HOSTILE, "mini"]
    assert dom.baseline.startswith("Baseline: artifact agentv-ci-results (id 12) of workflow run 345")
    # nothing hostile became an element: the only images are none, the only script is the page's
    assert "<img" not in proc.stdout and proc.stdout.count("<script") == 1


def test_a_screenshot_of_the_page_against_a_baseline(tmp_path: Path) -> None:
    """Written to $AGENTV_CI_SCREENSHOT when set (to look at); asserts the browser painted a page."""
    base, head = runs()
    path = tmp_path / "report.html"
    HtmlReporter().write(head, ReportOptions(path=path, baseline=base))
    shot = Path(os.environ.get("AGENTV_CI_SCREENSHOT") or tmp_path / "report.png")
    proc = subprocess.run(
        [*_flags(tmp_path / "profile"), f"--screenshot={shot}", "--window-size=1400,1800", path.as_uri()],
        capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_a_search_in_the_url_filters_the_rendered_table(page: Path, tmp_path: Path) -> None:
    rows = _dump_dom(page.as_uri() + "#q=math%20FAILED", tmp_path / "profile")
    assert rows.shown == "1 of 5 tests"
    assert [cells[2] for hidden, cells in rows.rows if not hidden] == ["product"]


class _DevTools:
    """The Chrome DevTools Protocol over `--remote-debugging-pipe` (fd 3 in, fd 4 out, NUL-framed)."""

    def __init__(self, url: str, profile: Path) -> None:
        to_browser_read, self._write = os.pipe()
        self._read, from_browser_write = os.pipe()

        def wire_fds() -> None:  # runs in the child: the protocol wants exactly fds 3 and 4
            browser_in, browser_out = os.dup(to_browser_read), os.dup(from_browser_write)
            os.dup2(browser_in, 3)
            os.dup2(browser_out, 4)

        self.proc = subprocess.Popen(
            [*_flags(profile), "--remote-debugging-pipe", url],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire_fds,  # the test process starts no threads
            pass_fds=(3, 4),  # kept open after `wire_fds` (fds are closed after it runs)
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next_id = 0
        self.session: str | None = None

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if self.session is not None:
            message["sessionId"] = self.session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._buffer:
                frame, self._buffer = self._buffer.split(b"\0", 1)
                reply = json.loads(frame)
                if reply.get("id") == self._next_id:
                    assert "error" not in reply, reply
                    return reply["result"]  # type: ignore[no-any-return]
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no reply to {method}"
            if select.select([self._read], [], [], remaining)[0]:
                chunk = os.read(self._read, 65536)
                assert chunk, "the browser closed the pipe"
                self._buffer += chunk

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return result["result"].get("value")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)
        os.close(self._write)
        os.close(self._read)


@pytest.fixture
def devtools(page: Path, tmp_path: Path) -> Iterator[_DevTools]:
    browser = _DevTools(page.as_uri(), tmp_path / "profile")
    try:
        targets = browser.call("Target.getTargets")["targetInfos"]
        target = next(t for t in targets if t["type"] == "page")
        attached = browser.call("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
        browser.session = attached["sessionId"]
        deadline = time.monotonic() + 30
        while browser.evaluate("document.documentElement.getAttribute('data-search-ready')") != "true":
            assert time.monotonic() < deadline, "the page's script never ran"
            time.sleep(0.05)
        yield browser
    finally:
        browser.close()


def test_typing_in_the_search_box_filters_rows_and_updates_the_url(devtools: _DevTools) -> None:
    read_table = """JSON.stringify({
        shown: document.getElementById("shown").textContent,
        visible: Array.from(document.querySelectorAll("#results tbody tr"))
            .filter(row => !row.hidden).map(row => row.cells[2].textContent),
        hash: window.location.hash})"""
    devtools.evaluate("document.getElementById('search').focus()")
    devtools.call("Input.insertText", {"text": "timed out"})
    state = json.loads(devtools.evaluate(read_table))
    assert state == {"shown": "1 of 5 tests", "visible": ["timeout"], "hash": "#q=timed%20out"}
    devtools.evaluate("document.getElementById('search').select()")
    devtools.call(
        "Input.dispatchKeyEvent",
        {"type": "keyDown", "key": "Backspace", "code": "Backspace", "windowsVirtualKeyCode": 8},
    )
    state = json.loads(devtools.evaluate(read_table))
    assert state["shown"] == "5 of 5 tests" and len(state["visible"]) == 5 and state["hash"] == ""
    verdict = devtools.evaluate("document.querySelector('.verdict').textContent")
    assert verdict.startswith("FAILED")
