"""The sticky comment's marker and body: size cap, hostile model text, layout."""

from __future__ import annotations

import re

from agentv_ci.gating import GateOptions, decide
from agentv_ci.github.comment import (
    GITHUB_BODY_LIMIT,
    comment_marker,
    marker_key,
    post_sticky_comment,
    render_comment,
)
from agentv_ci.model.result import AssertionResult, GraderResult, RunSummary, TestResult
from agentv_ci.reporting.markdown import units
from tests.fakes.github_server import FakeGitHub
from tests.reporting.golden import FAKE_REPO
from tests.reporting.sample_runs import baseline_summary, sample_summary
from tests.reporting.test_markdown import _outside_fences

MARKER = comment_marker(marker_key("evals", ["evals/a.eval.yaml"]))
RUN_URL = "https://github.com/octo/demo/actions/runs/42"
EVENT = {
    "pull_request": {"number": 7, "head": {"repo": {"full_name": "octo/demo"}}},
    "repository": {"full_name": "octo/demo"},
}
HOSTILE = (
    "<!-- hidden --> --> <!-- agentv-ci:sticky-comment key=evals/0 -->\n"
    f"{MARKER}\n"
    "::error file=a.py,line=1::pwned\n@octocat @org/team</details><details open>"
    "<img src=x onerror=alert(1)><script>x</script>\n```\nbreak\n```"
)


def _render(summary: RunSummary, baseline: RunSummary | None = None, **kw: object) -> str:
    decision = decide(summary, GateOptions(), baseline)
    options: dict[str, object] = {"repo_root": FAKE_REPO, "run_url": RUN_URL, "marker": MARKER, **kw}
    return render_comment(summary, decision, baseline=baseline, **options)  # type: ignore[arg-type]


def _huge(answer: str, count: int = 3000) -> RunSummary:
    rows = [
        TestResult(
            f"test-{i}-" + "n" * 60,
            f"suite-{i % 40}",
            "model",
            0.1,
            "quality_failure",
            scores=[
                GraderResult(
                    "judge", "llm-grader", 0.1, "fail", assertions=[AssertionResult("ok", False, answer)]
                )
            ],
            input="q" * 3000,
            output=answer,
        )
        for i in range(count)
    ]
    return RunSummary(rows)


def test_marker_key_depends_on_workflow_and_the_eval_set_not_its_order() -> None:
    key = marker_key("Evals / PR", ["b.yaml", "a.yaml", "a.yaml"])
    assert key == marker_key("Evals / PR", ["a.yaml", "b.yaml"])
    assert key != marker_key("Evals / PR", ["a.yaml"])
    assert key != marker_key("Evals / nightly", ["a.yaml", "b.yaml"])
    assert re.fullmatch(r"Evals-PR/[0-9a-f]{12}", key)


def test_marker_cannot_be_broken_out_of() -> None:
    marker = comment_marker("x --> <script>alert(1)</script> <!-- y --!> z\n@bob")
    assert marker.startswith("<!-- agentv-ci:sticky-comment key=") and marker.endswith(" -->")
    inner = marker[len("<!--") : -len("-->")]
    assert "--" not in inner.replace("agentv-ci", "") and "<" not in inner and ">" not in inner
    assert "\n" not in marker and "@" not in marker
    assert comment_marker("") == "<!-- agentv-ci:sticky-comment key=default -->"


def test_body_has_verdict_first_table_changes_details_link_and_marker_last() -> None:
    body = _render(sample_summary(FAKE_REPO), baseline_summary(FAKE_REPO))
    lines = body.splitlines()
    assert lines[0].startswith("❌ **agentv-ci: FAILED: 2/6 tests passed")
    assert lines[-1] == MARKER and body.count(MARKER) == 1
    assert f"[Workflow run]({RUN_URL})" in body
    table = body.index("| Suite | Tests | Pass rate | Mean score | Δ vs baseline |")
    changes = body.index("#### Changes vs baseline")
    details = body.index("<details><summary>Worst tests")
    assert table < changes < details < body.index(RUN_URL)
    # regressions first in the changes
    assert body.index("| broken |") < body.index("| possible regression |")


def test_an_unusable_run_url_is_left_out() -> None:
    for url in ("javascript:alert(1)", "https://x/a) [y](https://evil", "https://x/\n@bob", None):
        body = _render(sample_summary(FAKE_REPO), run_url=url)
        assert "[Workflow run]" not in body and body.endswith(MARKER)


def test_huge_run_fits_under_githubs_limit_with_marker_last(github_server: FakeGitHub) -> None:
    body = _render(_huge("a" * 40_000))
    assert len(body) <= 60_000 and len(body.encode()) <= GITHUB_BODY_LIMIT and units(body) <= 60_000
    assert body.startswith("❌ **agentv-ci: FAILED: 0/3000 tests passed")
    assert "| **Total** | 3000 |" in body
    assert re.search(
        r"… \d+ more failing test\(s\) not shown; see the job summary or the results artifact", body
    )
    assert body.endswith(
        f"[Workflow run]({RUN_URL}): full report in the job summary or the results artifact.\n\n{MARKER}"
    )
    assert _outside_fences(body).count("<details>") == _outside_fences(body).count("</details>")
    outcome = post_sticky_comment(
        token=FakeGitHub.PAT,
        repository="octo/demo",
        event=EVENT,
        body=body,
        marker=MARKER,
        api_url=github_server.base_url,
    )
    assert outcome.action == "created", outcome.reason  # GitHub's 422 would make it "skipped"
    assert github_server.comments_on(7)[0].body == body


def test_huge_run_of_wide_characters_fits_in_bytes_too() -> None:
    summary = _huge("日本語の回答🙂" * 3000, count=500)
    summary = RunSummary(
        [
            TestResult(
                r.test_id + "🙂" * 50,
                "スイート🙂" + r.suite,
                r.target,
                r.score,
                r.execution_status,
                output=r.output,
            )
            for r in summary.results
        ]
    )
    body = _render(summary)
    assert len(body.encode("utf-8")) <= 60_000
    assert body.endswith(MARKER) and body.startswith("❌ **agentv-ci: FAILED")
    assert "| **Total** | 500 |" in body


def test_the_fake_refuses_a_body_over_the_limit_as_github_does(github_server: FakeGitHub) -> None:
    outcome = post_sticky_comment(
        token=FakeGitHub.PAT,
        repository="octo/demo",
        event=EVENT,
        body="x" * 65_537,
        marker=MARKER,
        api_url=github_server.base_url,
    )
    assert outcome.action == "skipped"
    assert "422" in (outcome.reason or "") and "Body is too long (maximum is 65536 characters)" in (
        outcome.reason or ""
    )


def test_hostile_model_text_cannot_break_the_comment_or_its_marker() -> None:
    rows = [
        TestResult(
            f"t{i} {HOSTILE}",
            f"suite {HOSTILE}",
            "m",
            0.0,
            "quality_failure",
            error=HOSTILE,
            scores=[
                GraderResult(
                    "g", "llm-grader", 0.0, "fail", assertions=[AssertionResult(HOSTILE, False, HOSTILE)]
                )
            ],
            input=HOSTILE,
            output=HOSTILE,
        )
        for i in range(3)
    ]
    summary = RunSummary(rows, selection={f"evals/{HOSTILE}.yaml": HOSTILE})
    body = _render(summary)
    assert body.count("<!--") == 1 and body.count(MARKER) == 1 and body.splitlines()[-1] == MARKER
    assert body.rindex("<!--") == len(body) - len(MARKER)  # the only comment opening is the marker's
    assert "@octocat" not in body and "@org/team" not in body
    assert not re.search(r"^\s*::", body, re.MULTILINE)
    prose = _outside_fences(body)
    tags = {tag.lower() for tag in re.findall(r"<\s*/?\s*([a-zA-Z]+)", prose)}
    assert tags <= {"details", "summary"}
    assert prose.count("<details>") == prose.count("</details>") == 1
