"""`agentv_ci.api` is the plugin contract: a name disappearing (or appearing unnoticed) fails here."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import agentv_ci
from agentv_ci import api
from agentv_ci.errors import ConfigError

# Everything a grader, target or reporter plugin may import. Removing a name is a breaking change of
# the plugin API (a new major PLUGIN_API_VERSION); adding one is a minor change: update both.
PUBLIC = {
    "GRADERS_NAMESPACE", "GRADER_PASS_BAR", "PLUGIN_API_VERSION", "REPORTERS_NAMESPACE", "TARGETS_NAMESPACE",
    "AssertionResult", "BaselineSource", "Comparison", "ConfigError", "ConfinedReadError",
    "DependencyResult", "GateDecision", "GraderError", "GraderPlugin", "GraderResult",
    "GraderSpec", "GraderTargetRequest", "GradingContext", "Message", "Outcome", "PluginKind",
    "ReportOptions", "ReporterPlugin", "RunSummary", "SourceLocation", "SuiteComparison", "TargetError",
    "TargetPlugin", "TargetInvocation", "TargetProxyClient", "TargetProxyError",
    "TargetRequest", "TargetResponse", "Test", "TestComparison", "TestResult", "TokenUsage", "ToolCall",
    "Totals", "Verdict",
    "answer_text", "call_target", "check_plugin", "compare_runs", "content_text", "final_answer",
    "grade_answer", "make_grader", "outcome_of", "pass_fail_result", "read_confined_file",
    "reference_answer", "score_result", "totals_by_suite",
    "totals_of",
}  # fmt: skip


def test_the_public_names_are_exactly_the_contract() -> None:
    assert set(api.__all__) == PUBLIC
    assert len(api.__all__) == len(PUBLIC)  # no duplicates
    for name in PUBLIC:
        assert hasattr(api, name), name


def test_every_public_class_and_function_is_documented() -> None:
    for name in PUBLIC:
        value = getattr(api, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"{name} has no docstring"


def test_the_api_version_and_namespaces() -> None:
    assert api.PLUGIN_API_VERSION == "1.1"
    assert (api.GRADERS_NAMESPACE, api.TARGETS_NAMESPACE, api.REPORTERS_NAMESPACE) == (
        "agentv_ci.graders",
        "agentv_ci.targets",
        "agentv_ci.reporters",
    )
    assert typing.get_args(api.PluginKind) == ("grader", "target", "reporter")


def test_the_package_is_typed() -> None:
    assert (Path(agentv_ci.__file__).parent / "py.typed").is_file()


def test_answer_text_is_the_final_answer_of_a_response() -> None:
    messages = [api.Message("assistant", "first"), api.Message("tool", "x"), api.Message("assistant", "last")]
    assert api.answer_text(api.TargetResponse(messages=messages)) == "last"
    assert api.answer_text(api.TargetResponse(text="direct", messages=messages)) == "direct"


def test_check_plugin_raises_config_error_naming_the_problem() -> None:
    class NoGrade:
        api_version = "1.0"
        config_schema: typing.ClassVar[dict[str, object]] = {"type": "object"}

        def __init__(self, spec: object, config: object, *, base_dir: Path) -> None:
            pass

    with pytest.raises(ConfigError) as caught:
        api.check_plugin("grader", NoGrade)
    assert caught.value.message == (
        "grader plugin 'NoGrade' breaks the plugin contract: "
        "it has no `grade` method (a grader needs `async def grade(self, ctx)`)"
    )
    with pytest.raises(ValueError, match="kind must be one of grader, target, reporter"):
        api.check_plugin("judge", NoGrade)  # type: ignore[arg-type]


def test_importing_the_api_does_not_import_stevedore_or_jsonschema() -> None:
    heavy = "('stevedore', 'jsonschema', 'httpx')"
    code = f"import sys, agentv_ci.api; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


class _ScoresAsTold:
    """A grader plugin that scores whatever its config says (the contract check passes)."""

    api_version = "1.0"
    config_schema: typing.ClassVar[dict[str, object]] = {"type": "object"}

    def __init__(self, spec: api.GraderSpec, config: dict[str, object], *, base_dir: Path) -> None:
        self.spec, self.score = spec, config["score"]

    async def grade(self, ctx: api.GradingContext) -> api.GraderResult:
        return api.GraderResult(name=self.spec.name, type=self.spec.type, score=self.score, verdict="pass")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("score", "problem"),
    [
        (7.0, "score 7 is outside [0, 1]"),
        (-0.5, "score -0.5 is outside [0, 1]"),
        (float("nan"), "score nan is not a finite number"),
        (float("inf"), "score inf is not a finite number"),
        ("0.9", "score '0.9' is not a number"),
    ],
)
def test_grade_answer_refuses_a_score_the_runner_would_refuse(score: object, problem: str) -> None:
    with pytest.raises(api.GraderError) as caught:
        api.grade_answer(_ScoresAsTold, "an answer", {"score": score})
    assert caught.value.message == f"grader '_ScoresAsTold' breaks the scoring contract: {problem}"


def test_grade_answer_returns_a_score_in_range() -> None:
    for score in (0, 0.5, 1):
        assert api.grade_answer(_ScoresAsTold, "an answer", {"score": score}).score == score
