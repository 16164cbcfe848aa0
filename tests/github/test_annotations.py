from __future__ import annotations

import re
from pathlib import Path

from agentv_ci.gating import GateOptions, decide
from agentv_ci.github.annotations import annotations, escape_data, escape_property, workflow_command
from agentv_ci.model.result import AssertionResult, GraderResult, RunSummary, TestResult

WORKSPACE = Path("/github/workspace")  # never touched: only used to relativise paths
COMMAND = re.compile(r"^::(error|warning|notice)(?: ([^:]*))?::(.*)$")


def unescape(text: str) -> str:
    """What the Actions runner shows for escaped data (the inverse of @actions/core escaping)."""
    return (
        text.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
    )


def parse(line: str) -> tuple[str, dict[str, str], str]:
    """(command, properties, message) of one workflow-command line, as the runner splits it."""
    assert "\n" not in line and "\r" not in line
    match = COMMAND.match(line)
    assert match, line
    props = dict(p.split("=", 1) for p in match.group(2).split(",")) if match.group(2) else {}
    return match.group(1), {k: unescape(v) for k, v in props.items()}, unescape(match.group(3))


def failing(
    test_id: str,
    score: float,
    *,
    required: bool = False,
    eval_path: str | None = "evals/s.eval.yaml",
    line: int | None = 3,
    **kw: object,
) -> TestResult:
    grader = GraderResult(
        "g", "contains", 0.0, "fail", required=required, assertions=[AssertionResult("has it", False, "no")]
    )
    return TestResult(
        test_id, "s", "m", score, "quality_failure", scores=[grader], eval_path=eval_path, line=line,
        **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def errored(test_id: str) -> TestResult:
    return TestResult(
        test_id, "s", "m", 0.0, "execution_error", error="timed out", eval_path="evals/s.eval.yaml", line=9
    )


def passing(test_id: str, score: float = 1.0) -> TestResult:
    return TestResult(test_id, "s", "m", score, "ok", verdict="pass", eval_path="evals/s.eval.yaml", line=1)


def run(*rows: TestResult) -> RunSummary:
    return RunSummary(list(rows))


def test_escaping_matches_actions_core() -> None:
    assert escape_data("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext: a,b"
    assert escape_property("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext%3A a%2Cb"
    assert escape_data("%0A") == "%250A"  # an encoded newline in the text stays text
    line = workflow_command("error", "50%\nfail", file="evals/a,b:c.yaml", line=4, title="t: x, y")
    assert line == "::error file=evals/a%2Cb%3Ac.yaml,line=4,title=t%3A x%2C y::50%25%0Afail"


def test_most_severe_first_and_at_the_tests_line() -> None:
    summary = run(
        failing("low", 0.1, line=11),
        passing("fine"),
        failing("required", 0.7, required=True, line=5),
        errored("crashed"),
        failing("lower", 0.05, line=12),
    )
    lines = [
        parse(line) for line in annotations(summary, decide(summary, GateOptions()), repo_root=WORKSPACE)
    ]
    assert [(kind, props["title"]) for kind, props, _ in lines] == [
        ("error", "Eval errored: s/crashed [m]"),
        ("error", "Eval failed: s/required [m]"),  # a failed required grader outranks lower scores
        ("error", "Eval failed: s/lower [m]"),
        ("error", "Eval failed: s/low [m]"),
    ]
    assert [(p["file"], p["line"]) for _, p, _ in lines] == [
        ("evals/s.eval.yaml", "9"), ("evals/s.eval.yaml", "5"), ("evals/s.eval.yaml", "12"),
        ("evals/s.eval.yaml", "11"),
    ]  # fmt: skip
    assert lines[0][2] == "s/crashed [m]: execution error: timed out"
    assert lines[1][2].startswith(
        "s/required [m]: score 0.700 < threshold 0.80\ng (contains): score 0.000 [required]"
    )


def test_capped_at_the_limit_with_a_notice_for_the_rest() -> None:
    summary = run(*(failing(f"t{i:02}", i / 100) for i in range(25)))
    lines = annotations(summary, decide(summary, GateOptions()), repo_root=WORKSPACE)
    assert len(lines) == 11
    assert [parse(line)[1]["title"] for line in lines[:10]] == [
        f"Eval failed: s/t{i:02} [m]" for i in range(10)
    ]
    kind, _props, message = parse(lines[-1])
    assert kind == "notice"
    assert message.startswith("15 more failing or regressed test(s) not annotated here")
    assert "job summary" in message
    assert len(annotations(summary, decide(summary, GateOptions()), repo_root=WORKSPACE, limit=25)) == 25


def test_absolute_paths_under_the_repo_become_repo_relative() -> None:
    inside = failing("inside", 0.1, eval_path="/github/workspace/evals/x.eval.yaml")
    outside = failing("outside", 0.2, eval_path="/tmp/elsewhere/y.eval.yaml")
    nowhere = failing("nowhere", 0.3, eval_path=None, line=None)
    summary = run(inside, outside, nowhere)
    lines = [
        parse(line) for line in annotations(summary, decide(summary, GateOptions()), repo_root=WORKSPACE)
    ]
    props = {p["title"]: p for _, p, _ in lines}
    assert (props["Eval failed: s/inside [m]"]["file"], props["Eval failed: s/inside [m]"]["line"]) == (
        "evals/x.eval.yaml", "3",
    )  # fmt: skip
    assert "file" not in props["Eval failed: s/outside [m]"]  # would not land in the PR diff
    assert not {"file", "line"} & set(props["Eval failed: s/nowhere [m]"])


def test_model_text_cannot_inject_workflow_commands() -> None:
    attack = (
        "ok\n::set-output name=verdict::passed\r::error file=x::pwned\n%0A::warning::again\n"
        "  ::stop-commands::t"
    )
    grader = GraderResult(
        "judge", "llm-grader", 0.0, "fail", assertions=[AssertionResult("safe", False, attack)]
    )
    result = TestResult(
        "id,with:colons\n::error::x", "s", "m", 0.0, "quality_failure", scores=[grader], error=attack,
        eval_path="evals/e.yaml", line=2, output=attack,
    )  # fmt: skip
    summary = run(result, errored("boom"))
    lines = annotations(summary, decide(summary, GateOptions()), repo_root=WORKSPACE)
    assert len(lines) == 2
    for line in lines:
        kind, props, message = parse(line)  # one command per physical line, nothing after it
        assert kind == "error"
        assert "%0A::" not in line and "%0D::" not in line  # no command at the start of a decoded line
        assert all(not part.lstrip().startswith("::") for part in re.split("[\r\n]", message))
    kind, props, message = parse(lines[1])
    assert props["title"].startswith("Eval failed: s/id,with:colons")  # commas and colons survive as text
    assert "pwned" in message  # the text is shown, inert


def test_passing_tests_that_got_worse_are_warnings_after_the_failures() -> None:
    base = run(passing("slipped", 1.0), passing("wobbly", 0.95), failing("red", 0.9, verdict="pass"))
    head = run(passing("slipped", 0.85), passing("wobbly", 0.9), failing("red", 0.1))
    decision = decide(head, GateOptions(), base)
    lines = [parse(line) for line in annotations(head, decision, repo_root=WORKSPACE)]
    assert [(kind, p["title"]) for kind, p, _ in lines] == [
        ("error", "Eval failed: s/red [m]"),
        ("warning", "Eval regressed: s/slipped [m]"),
        ("warning", "Eval possible regression: s/wobbly [m]"),
    ]
    assert lines[1][2] == "s/slipped [m]: regressed vs baseline (1.000 -> 0.850)"
    assert len(annotations(head, decision, repo_root=WORKSPACE, limit=2)) == 3  # 2 + the notice


def test_failures_on_a_green_run_are_warnings() -> None:
    summary = run(*(passing(f"p{i}") for i in range(9)), failing("tolerated", 0.5))
    decision = decide(summary, GateOptions(min_pass_rate=0.8))
    assert decision.passed
    (line,) = annotations(summary, decision, repo_root=WORKSPACE)
    assert parse(line)[0] == "warning"


def test_a_clean_run_has_no_annotations() -> None:
    summary = run(passing("a"), passing("b"))
    assert annotations(summary, decide(summary, GateOptions()), repo_root=WORKSPACE) == []
