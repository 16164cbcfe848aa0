"""The public API for plugin authors: everything a grader, target or reporter plugin imports.

This module is the contract (`PLUGIN_API_VERSION`); the modules it re-exports from are internals that
may move between releases. A name listed in `__all__` is removed or changed only with a new major
plugin API version. See docs/plugins.md.

    from agentv_ci.api import GraderResult, GradingContext, answer_text, score_result

Groups:

- the version and the entry-point namespaces: `PLUGIN_API_VERSION`, `GRADERS_NAMESPACE`, ...
- the contracts: `GraderPlugin`, `TargetPlugin`, `ReporterPlugin`
- what plugins receive: `GradingContext` (with `DependencyResult`s), `GraderSpec`, `Test`, `Message`,
  `TargetRequest`, `ReportOptions`, `RunSummary`, ...
- what they return: `GraderResult`, `AssertionResult`, `TargetResponse`, `TokenUsage`
- errors: `ConfigError` (bad configuration), `GraderError`, `TargetError`
- the baseline diff (reporters): `compare_runs`, `Comparison` (with `TestComparison`s and
  `SuiteComparison`s), `BaselineSource` (what a run was compared with: `RunSummary.baseline`)
- helpers: `answer_text` (the final answer of a response), `score_result`, `pass_fail_result`,
  `outcome_of`, `totals_of`, `totals_by_suite` (the numbers every built-in reporter shows)
- files: `read_confined_file` (a file a plugin's config names, read under the loader's confinement
  and size cap), `ConfinedReadError`
- testing: `check_plugin`, `make_grader`, `grade_answer`, `call_target`
- code-grader scripts: `TargetProxyClient` (AgentV's target proxy: `invoke`, `invoke_batch`,
  `get_info`), `TargetInvocation`, `TargetProxyError`
"""

from __future__ import annotations

from agentv_ci.compare import Comparison, SuiteComparison, TestComparison, compare_runs
from agentv_ci.errors import ConfigError, GraderError, TargetError
from agentv_ci.gating import GateDecision
from agentv_ci.graders.outcome import GRADER_PASS_BAR, answer_text
from agentv_ci.graders.outcome import check as pass_fail_result
from agentv_ci.graders.outcome import scored as score_result
from agentv_ci.model.baseline import BaselineSource
from agentv_ci.model.result import (
    AssertionResult,
    DependencyResult,
    GraderResult,
    RunSummary,
    TargetResponse,
    TestResult,
    TokenUsage,
    Verdict,
)
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import GraderSpec, Message, Test, ToolCall
from agentv_ci.plugins.contracts import (
    GRADERS_NAMESPACE,
    REPORTERS_NAMESPACE,
    TARGETS_NAMESPACE,
    GraderPlugin,
    GraderTargetRequest,
    GradingContext,
    PluginKind,
    ReporterPlugin,
    ReportOptions,
    TargetPlugin,
    TargetRequest,
)
from agentv_ci.plugins.testing import call_target, check_plugin, grade_answer, make_grader
from agentv_ci.plugins.versions import PLUGIN_API_VERSION
from agentv_ci.prompting import content_text, final_answer, reference_answer
from agentv_ci.results.totals import Outcome, Totals, outcome_of, totals_by_suite, totals_of
from agentv_ci.security.file_reads import ConfinedReadError, read_confined_file
from agentv_ci.target_client import TargetInvocation, TargetProxyClient, TargetProxyError

__all__ = [
    "GRADERS_NAMESPACE",
    "GRADER_PASS_BAR",
    "PLUGIN_API_VERSION",
    "REPORTERS_NAMESPACE",
    "TARGETS_NAMESPACE",
    "AssertionResult",
    "BaselineSource",
    "Comparison",
    "ConfigError",
    "ConfinedReadError",
    "DependencyResult",
    "GateDecision",
    "GraderError",
    "GraderPlugin",
    "GraderResult",
    "GraderSpec",
    "GraderTargetRequest",
    "GradingContext",
    "Message",
    "Outcome",
    "PluginKind",
    "ReportOptions",
    "ReporterPlugin",
    "RunSummary",
    "SourceLocation",
    "SuiteComparison",
    "TargetError",
    "TargetInvocation",
    "TargetPlugin",
    "TargetProxyClient",
    "TargetProxyError",
    "TargetRequest",
    "TargetResponse",
    "Test",
    "TestComparison",
    "TestResult",
    "TokenUsage",
    "ToolCall",
    "Totals",
    "Verdict",
    "answer_text",
    "call_target",
    "check_plugin",
    "compare_runs",
    "content_text",
    "final_answer",
    "grade_answer",
    "make_grader",
    "outcome_of",
    "pass_fail_result",
    "read_confined_file",
    "reference_answer",
    "score_result",
    "totals_by_suite",
    "totals_of",
]
