"""OpenMetrics report for GitLab's metrics widget: parsed back by a strict OpenMetrics text parser
(the subset the report uses) and by GitLab's own reading of each line (`#` cut, shell words)."""

from __future__ import annotations

import math
import re
import shlex
from pathlib import Path

import pytest

from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.reporting import write_report
from agentv_ci.reporting.openmetrics import render_openmetrics
from tests.reporting.golden import FAKE_REPO, assert_golden
from tests.reporting.sample_runs import sample_summary

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LABEL_NAME = r"[a-zA-Z_][a-zA-Z0-9_]*"
_LABEL_VALUE = r'"(?:[^"\\\n]|\\[\\"n])*"'
_SAMPLE = re.compile(
    rf"^({_NAME})(?:\{{((?:{_LABEL_NAME}={_LABEL_VALUE})(?:,{_LABEL_NAME}={_LABEL_VALUE})*)?\}})? (\S+)$"
)
_PAIR = re.compile(rf"({_LABEL_NAME})=({_LABEL_VALUE})")
_VALUE = re.compile(r"^(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|NaN|[+-]Inf)$")


def _unescape(quoted: str) -> str:
    return re.sub(r"\\([\\\"n])", lambda m: "\n" if m.group(1) == "n" else m.group(1), quoted[1:-1])


def parse_openmetrics(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """(name, labels) -> value; fails on anything the OpenMetrics text format forbids that we could
    write: a missing or misplaced `# EOF`, a sample outside its declared family, an interleaved or
    repeated family, a bad name, label, escape or value, a repeated sample."""
    assert text.endswith("# EOF\n"), "an OpenMetrics exposition ends with # EOF"
    lines = text[: -len("# EOF\n")].split("\n")
    assert lines.pop() == ""
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    families: list[str] = []
    for line in lines:
        if line.startswith("# "):
            keyword, name, *rest = line[2:].split(" ", 2)
            assert keyword in ("TYPE", "HELP"), line
            assert re.fullmatch(_NAME, name), line
            if keyword == "TYPE":
                assert rest == ["gauge"], line
                assert name not in families, f"family {name} declared twice"
                families.append(name)
            else:
                assert families and families[-1] == name, line
            continue
        match = _SAMPLE.match(line)
        assert match, f"not an OpenMetrics sample: {line!r}"
        name, labels_text, value = match.groups()
        assert families and families[-1] == name, f"{name} outside its family"
        labels = tuple((k, _unescape(v)) for k, v in _PAIR.findall(labels_text or ""))
        assert len({k for k, _ in labels}) == len(labels)
        assert _VALUE.match(value), line
        key = (name, labels)
        assert key not in samples, f"repeated sample {key}"
        samples[key] = float(value)
    return samples


def gitlab_metrics(text: str) -> dict[str, str]:
    """What GitLab stores (ee Gitlab::Ci::Parsers::Metrics::Generic): per non-blank line, everything
    from `#` cut, then shell words; name = the first, value = the second. A quote left open raises
    there, and the whole report fails."""
    metrics: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        words = shlex.split(re.sub(r"#.*$", "", line))
        if not words or len(words) < 2:
            continue
        assert words[0] not in metrics, f"GitLab would read {words[0]!r} twice"
        metrics[words[0]] = words[1]
    return metrics


def test_openmetrics_matches_golden() -> None:
    assert_golden("metrics.txt", render_openmetrics(sample_summary(FAKE_REPO)))


def test_the_figures_parse_back_and_gitlab_reads_each_metric(tmp_path: Path) -> None:
    write_report("openmetrics", sample_summary(FAKE_REPO), tmp_path / "metrics.txt", repo_root=FAKE_REPO)
    text = (tmp_path / "metrics.txt").read_text(encoding="utf-8")
    samples = parse_openmetrics(text)
    assert samples[("agentv_ci_pass_ratio", ())] == 0.5
    assert samples[("agentv_ci_suite_mean_score", (("suite", "smoke"),))] == 0.625
    assert samples[("agentv_ci_errors", ())] == 1
    assert gitlab_metrics(text) == {
        "agentv_ci_pass_ratio": "0.5",
        "agentv_ci_suite_pass_ratio{suite=math}": "0.5",
        "agentv_ci_suite_pass_ratio{suite=smoke}": "0.5",
        "agentv_ci_mean_score": "0.7125",
        "agentv_ci_suite_mean_score{suite=math}": "0.8",
        "agentv_ci_suite_mean_score{suite=smoke}": "0.625",
        "agentv_ci_tests": "6",
        "agentv_ci_errors": "1",
        "agentv_ci_cost_usd": "0.0052",
        "agentv_ci_tokens": "155",
        "agentv_ci_duration_seconds": "60.0",
    }


HOSTILE_SUITES = [
    'quote"d',
    "back\\slash",
    "new\nline",
    "tab\tand cr\r",
    "hash#tag # EOF",
    "hash＃tag # EOF",  # reads like the one before once `#` is replaced
    "{brace}=,",
    "\x1b[31mred",
    "it's",
    "space d",
    "",
    "\ud83d",
    "é\u202e",
]


def test_hostile_suite_names_keep_every_line_valid_and_every_suite_distinct() -> None:
    results = [
        TestResult(f"t{i}", suite, "mock", 1.0, "ok", verdict="pass")
        for i, suite in enumerate(HOSTILE_SUITES)
    ]
    text = render_openmetrics(RunSummary(results=results))
    samples = parse_openmetrics(text)
    suites = {labels for (name, labels) in samples if name == "agentv_ci_suite_pass_ratio"}
    assert len(suites) == len(HOSTILE_SUITES)
    stored = gitlab_metrics(text)
    assert len([n for n in stored if n.startswith("agentv_ci_suite_pass_ratio{")]) == len(HOSTILE_SUITES)
    assert all(value == "1.0" for name, value in stored.items() if "pass_ratio" in name)
    assert "\x1b" not in text and "\r" not in text


def test_unknown_figures_are_nan_not_zero() -> None:
    errored = TestResult("t", "s", "mock", 0.0, "execution_error", error="boom")
    samples = parse_openmetrics(render_openmetrics(RunSummary(results=[errored])))
    assert math.isnan(samples[("agentv_ci_pass_ratio", ())])
    assert math.isnan(samples[("agentv_ci_cost_usd", ())])
    assert samples[("agentv_ci_errors", ())] == 1


@pytest.mark.parametrize("score", [0.1, 1 / 3])
def test_the_same_figures_read_the_same_on_every_run(score: float) -> None:
    def run() -> str:
        rows = [TestResult("t", "s", "mock", score, "quality_failure", verdict="fail", duration_ms=5.0)]
        return render_openmetrics(RunSummary(results=rows, duration_ms=1234.5678))

    assert run() == run()
    assert "agentv_ci_duration_seconds 1.235\n" in run()
