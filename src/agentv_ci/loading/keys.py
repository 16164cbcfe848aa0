"""The keys each kind of mapping accepts, and the deprecated aliases (reference section 11.1)."""

from __future__ import annotations

SUITE_KEYS = frozenset(
    {
        "$schema", "name", "suite", "description", "version", "author", "license", "category", "tags",
        "requires", "metadata", "governance", "execution", "experiment", "assertions", "input",
        "input_files", "preprocessors", "workspace", "tests", "defaults", "vars",
    }
)  # fmt: skip
SUITE_DEPRECATED = {
    "evalcases": "`tests`",
    "eval_cases": "`tests`",
    "cases": "`tests`",
    "assert": "`assertions`",
    "evaluators": "`assertions`",
    "evaluator": "`assertions`",
    "target": "`execution.target`",
}
TESTS_ALIASES = ("tests", "evalcases", "eval_cases", "cases")

TEST_KEYS = frozenset(
    {
        "id", "vars", "criteria", "input", "input_files", "expected_output", "assertions", "execution",
        "workspace", "metadata", "conversation_id", "suite", "depends_on", "on_dependency_failure", "mode",
        "turns", "aggregation", "on_turn_failure", "window_size", "description", "note", "tags", "rubrics",
        "run",
    }
)  # fmt: skip
TEST_DEPRECATED = {
    "expected_outcome": "`criteria`",
    "input_messages": "`input`",
    "expected_messages": "`expected_output`",
    "assert": "`assertions`",
    "evaluators": "`assertions`",
    "outcome": "`criteria`",
}

EXECUTION_KEYS = frozenset(
    {
        "target", "targets", "workers", "assertions", "evaluators", "skip_defaults", "cache", "cache_path",
        "trials", "repeat", "runs", "budget_usd", "fail_on_error", "threshold", "timeout_seconds", "name",
        "early_exit", "agent", "model", "agent_options", "sandbox", "workspace",
    }
)  # fmt: skip
EXECUTION_DEPRECATED = {
    "evaluators": "`assertions` (suite or test level)",
    "assertions": "`assertions` (suite or test level)",
}
REPEAT_KEYS = frozenset({"count", "strategy", "cost_limit_usd", "early_exit"})
REPEAT_STRATEGIES = ("pass_at_k", "pass_all", "pass_any", "mean", "confidence_interval")

MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "name", "tool_call_id", "metadata"})
ROLES = ("system", "user", "assistant", "tool")
BLOCK_TYPES = ("text", "file", "image", "json")

TURN_KEYS = frozenset({"input", "expected_output", "assertions", "criteria", "id", "assert", "rubrics"})

WORKSPACE_KEYS = frozenset(
    {
        "template",
        "repos",
        "hooks",
        "isolation",
        "mode",
        "path",
        "docker",
        "env",
        "scope",
        "setup",
        "name",
        "allow_reset_of_worktree",
    }
)
WORKSPACE_REPO_KEYS = frozenset({"path", "repo", "commit", "base_commit", "ancestor", "sparse"})
WORKSPACE_HOOKS = ("before_all", "before_each", "after_each", "after_all")
WORKSPACE_HOOK_KEYS = frozenset({"command", "script", "timeout_ms", "cwd", "reset", "env"})

INCLUDE_ENTRY_KEYS = frozenset({"include", "type", "select", "run"})

RUBRIC_KEYS = frozenset(
    {"id", "outcome", "criteria", "expected_outcome", "weight", "required", "min_score", "required_min_score",
     "operator", "score_ranges", "description"}
)  # fmt: skip

# Common grader fields kept on GraderSpec (everything else is plugin config).
GRADER_COMMON = ("type", "name", "weight", "required", "min_score", "negate")

# Written grader type -> canonical type, for names that are not just `_` -> `-`.
GRADER_TYPE_ALIASES = {
    "code-judge": "code-grader",
    "code": "code-grader",
    "llm-judge": "llm-grader",
    "rubric": "rubrics",
    "tool-trajectory": "tool-trajectory",
}
# Canonical forms that were written with a legacy name (deprecation warnings).
LEGACY_GRADER_NAMES = frozenset(
    {"code_judge", "code-judge", "code", "llm_judge", "llm-judge", "rubric", "code_grader", "llm_grader",
     "tool_trajectory", "field_accuracy", "execution_metrics", "is_json", "contains_any", "contains_all",
     "icontains_any", "icontains_all", "starts_with", "ends_with", "token_usage", "skill_trigger"}
)  # fmt: skip


def canonical_grader_type(written: str) -> str:
    kebab = written.strip().replace("_", "-").lower()
    return GRADER_TYPE_ALIASES.get(kebab, kebab)
