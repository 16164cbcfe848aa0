"""Every dialect loads into the same normalised model (seeds 000-004 and AgentV v4.42.4 features)."""

from __future__ import annotations

from pathlib import Path

from agentv_ci.loading.suite_loader import load_suite
from agentv_ci.model.suite import Suite
from agentv_ci.model.suite import Test as EvalTest
from tests.loading.corpus import VALID


def _suite(relative: str, env: dict[str, str] | None = None) -> Suite:
    result = load_suite(VALID / relative, env=env or {})
    assert result.suite is not None
    assert [d for d in result.diagnostics if d.severity == "error"] == []
    return result.suite


def _test(suite: Suite, test_id: str) -> EvalTest:
    return next(t for t in suite.tests if t.id == test_id)


def test_agentevals_spec_dialect_normalises_to_modern_model() -> None:
    suite = _suite("spec-evalcases/EVAL.yaml")
    assert suite.name == "code-review"
    secure = _test(suite, "code-review-security")
    assert secure.criteria is not None and secure.criteria.startswith("Agent identifies SQL injection")
    assert [m.role for m in secure.input] == ["system", "user"]
    file_block = secure.input[0].content[0]
    assert file_block["type"] == "file" and file_block["value"] == "./prompts/security-reviewer.md"
    assert Path(file_block["path"]).is_absolute() and Path(file_block["path"]).is_file()
    assert secure.expected_output[0].role == "assistant"
    # test-level rubrics first, then the test's execution.evaluators, then the suite's evaluators
    assert [g.type for g in secure.graders] == ["rubrics", "code-grader", "code-grader", "llm-grader"]
    rubric_items = secure.graders[0].config["criteria"]
    assert rubric_items[0] == {"id": "identifies-vuln", "outcome": "Identifies SQL injection", "weight": 3.0,
                               "required": True}  # fmt: skip
    assert rubric_items[2]["score_ranges"] == [
        {"score_range": [0, 4], "outcome": "No greeting present"},
        {"score_range": [5, 9], "outcome": "Generic greeting"},
        {"score_range": [10, 10], "outcome": "Personalized greeting"},
    ]
    code = secure.graders[1]
    assert code.written_type == "code_judge"
    assert code.config["command"] == ["python", "./judges/security_check.py"] and "script" not in code.config
    assert secure.execution.timeout_seconds == 300 and secure.execution.target == "default"


def test_spec_legacy_grader_types_and_composite_members() -> None:
    slow = _test(_suite("spec-evalcases/EVAL.yaml"), "slow-task")
    assert slow.execution.timeout_seconds == 600 and slow.execution.target == "powerful_model"
    by_name = {g.name: g for g in slow.graders}
    assert by_name["calls"].type == "tool-trajectory" and by_name["calls"].config["mode"] == "in_order"
    assert by_name["fields"].type == "field-accuracy"
    assert by_name["budget"].type == "execution-metrics" and by_name["budget"].config["max_tool_calls"] == 10
    checklist = by_name["checklist"]
    assert checklist.type == "rubrics" and checklist.written_type == "rubric"
    assert [i["outcome"] for i in checklist.config["criteria"]] == ["Mentions totals", "Explains the method"]
    composite = by_name["structure"]
    assert composite.config["aggregator"] == {
        "type": "weighted_average",
        "weights": {"has-total": 2, "is-object": 1},
    }
    members = composite.config["assertions"]
    assert [(m["name"], m["type"]) for m in members] == [("has-total", "contains"), ("is-object", "is-json")]
    assert isinstance(members[0]["location"], dict)


def test_structured_expected_output_and_conversation_id() -> None:
    suite = _suite("spec-evalcases/EVAL.yaml")
    structured = _test(suite, "structured")
    assert structured.expected_output[0].content == {"name": "Alice", "age": 30, "verified": True}
    assert _test(suite, "turn-2").conversation_id == "support-flow"
    assert [m.role for m in _test(suite, "turn-2").input] == ["user", "assistant", "user"]
    assert _test(suite, "regional-date").note is not None


def test_seed_001_tests_mix_inline_and_file_references() -> None:
    suite = _suite("spec-eval-format/EVAL.yaml")
    assert [t.id for t in suite.tests] == [
        "detect-off-by-one", "code-review-security", "slow-task", "simple-greeting", "named-greeting",
        "quick-check", "greeting",
    ]  # fmt: skip
    first = suite.tests[0]
    assert [g.type for g in first.graders] == ["rubrics", "code-grader", "llm-grader", "code-grader"]
    assert first.graders[2].weight == 2.0
    imported = _test(suite, "code-review-security")
    assert imported.location is not None and imported.location.file.endswith("security.yaml")
    assert imported.location.line == 1
    deps = {Path(p).name for p in suite.dependencies}
    assert {"EVAL.yaml", "security.yaml", "style.yaml", "vulnerable.py", "bug_check.py"} <= deps


def test_jsonl_dataset_with_yaml_sidecar_keeps_line_numbers() -> None:
    suite = _suite("jsonl-sidecar/dataset.jsonl")
    assert suite.name == "large-eval"
    assert [t.id for t in suite.tests] == ["test-1", "test-2", "test-3"]
    locations = [(t.location.line if t.location else 0) for t in suite.tests]
    assert locations == [1, 2, 4]  # blank line 3 skipped, numbering kept
    third = suite.tests[2]
    assert third.execution.threshold == 0.5
    assert third.expected_output[0].content == "6"
    assert [g.type for g in third.graders] == ["llm-grader"]


def test_eval_sidecar_without_tests_reads_sibling_jsonl() -> None:
    suite = _suite("v4-jsonl-eval-sidecar/dataset.eval.yaml")
    assert suite.name == "math-tests" and len(suite.tests) == 2
    assert suite.execution.target == "azure-base"
    assert suite.tests[0].graders[0].config["prompt"] == "file://graders/correctness.md"


def test_wrapper_imports_suite_with_its_context_and_raw_cases_without() -> None:
    suite = _suite("v4-wrapper/experiments/refunds-codex.eval.yaml")
    imported, raw = suite.tests
    assert (imported.id, imported.suite) == ("missing-receipt", "refunds")
    assert imported.input[0].content == "Answer using the refund policy in the workspace."
    assert imported.graders[0].type == "rubrics"
    assert imported.workspace is not None
    assert imported.workspace.repos[0].repo == "https://github.com/acme/support-app.git"
    assert raw.id == "damaged-item" and raw.graders == [] and raw.workspace is None
    for test in (imported, raw):
        assert test.execution.target == "codex-gpt5"
        assert test.execution.repeat is not None and test.execution.repeat.count == 2
        assert test.execution.repeat.strategy == "pass_all"


def test_assertion_strings_become_one_rubrics_grader_at_first_position() -> None:
    test = _suite("v4-api-validation/api.eval.yaml").tests[0]
    assert [g.type for g in test.graders] == ["is-json", "contains", "rubrics"]
    assert test.graders[0].required is True
    rubric = test.graders[2]
    assert rubric.weight == 2.0
    assert [i["outcome"] for i in rubric.config["criteria"]] == [
        "Correctly answers the user's question",
        "Explains the reasoning clearly",
    ]
    assert all(i["required"] for i in rubric.config["criteria"])


def test_assertion_templates_are_spliced_in_place() -> None:
    test = _suite("v4-templates/templates.eval.yaml").tests[0]
    assert [g.type for g in test.graders] == ["contains", "regex", "rubrics", "ends-with"]
    regex = test.graders[1]
    assert regex.negate is True
    assert regex.location is not None and regex.location.file.endswith("safe-response.yaml")


def test_suite_input_prepended_unless_skip_defaults() -> None:
    suite = _suite("v4-suite-input/travel.eval.yaml")
    japan, plain = suite.tests
    assert [m.content for m in japan.input] == [
        "Answer as a concise travel assistant.",
        "When is the best time to visit Japan?",
    ]
    assert [m.content for m in plain.input] == ["Hi"] and plain.execution.skip_defaults
    messages = _suite("v4-suite-input/messages.eval.yaml").tests[0].input
    assert [m.role for m in messages] == ["system", "user", "user"]
    assert Path(messages[1].content[0]["path"]).name == "system-prompt.md"


def test_input_files_build_one_message_and_test_list_replaces_suite_list() -> None:
    summarize, validate = _suite("v4-input-files/schema.eval.yaml").tests
    blocks = summarize.input[0].content
    assert [b["type"] for b in blocks] == ["file", "file", "text"]
    assert [Path(p).name for p in summarize.input_files] == ["shared-context.md", "schema.json"]
    assert [Path(p).name for p in validate.input_files] == ["schema.json"]
    assert blocks[2]["value"] == "Summarize the important constraints."


def test_prompt_md_fallback_normalises_crlf() -> None:
    test = _suite("v4-prompt-md/agent-001-fix-bug/EVAL.yaml").tests[0]
    blocks = test.input[0].content
    assert blocks[-1] == {"type": "text", "value": "Fix the failing test.\nSee the log.\n"}
    assert [Path(p).name for p in test.input_files] == ["failing-test.log"]


def test_case_directories_sorted_with_workspace_template() -> None:
    suite = _suite("v4-case-dirs/EVAL.yaml")
    assert [t.id for t in suite.tests] == ["add-greeting", "fix-null-check"]
    assert suite.tests[0].workspace is not None
    assert Path(suite.tests[0].workspace.template or "").name == "workspace"
    assert suite.tests[1].workspace is None


def test_env_interpolation_from_dotenv_and_process_env_wins() -> None:
    suite = _suite("v4-env/env.eval.yaml", env={"PROJECT_NAME": "from-process"})
    test = suite.tests[0]
    assert test.input[0].content == "Evaluate the code in from-process"
    assert test.criteria == "Mentions the project"
    assert suite.execution.threshold == 0.75  # whole-string placeholder coerced to a number
    assert suite.workspace is not None and suite.workspace.repos[0].commit == "main"
    assert any(Path(p).name == ".env" for p in suite.dependencies)


def test_vars_substitute_and_whole_placeholders_keep_type() -> None:
    capital, structured = _suite("v4-vars/vars.eval.yaml").tests
    assert capital.input[0].content == "Answer clearly: What is the capital of France?"
    assert capital.input[1].content == "Question: What is the capital of France? {{unknown}}"
    assert capital.criteria == "Answers What is the capital of France? correctly"
    assert capital.expected_output[0].content == "Paris"
    assert structured.expected_output[0].content == {"city": "Paris", "rank": 1}
    assert structured.input[0].content == "Answer clearly: {{question}}"


def test_v4_features_file_entries_includes_runs_and_matrix() -> None:
    suite = _suite("v4-features/features.eval.yaml")
    ids = [t.id for t in suite.tests]
    assert ids[:4] == ["accuracy-1", "regression-1", "extra-1", "extra-2"]
    extra1, extra2 = _test(suite, "extra-1"), _test(suite, "extra-2")
    assert extra1.execution.threshold == 0.9
    assert extra1.execution.repeat is not None and extra1.execution.repeat.strategy == "mean"
    assert extra2.execution.threshold == 0.4  # the test's own run wins over the include's run
    accuracy = _test(suite, "accuracy-1")
    assert accuracy.execution.targets == ["default", "fast"] and accuracy.execution.workers == 4
    assert accuracy.execution.repeat is not None and accuracy.execution.repeat.cost_limit_usd == 1.5
    llm = accuracy.graders[0]
    assert llm.type == "llm-grader" and llm.config["rubrics"][1]["min_score"] == 0.5
    code = accuracy.graders[1]
    assert code.required is True and code.min_score == 0.6
    assert suite.workspace is not None and suite.workspace.isolation == "per_test"
    assert suite.metadata["governance"] == {"owasp": ["LLM01"]}


def test_v4_features_conversation_metadata_and_skip_defaults() -> None:
    suite = _suite("v4-features/features.eval.yaml")
    convo = _test(suite, "conversation")
    assert convo.mode == "conversation" and convo.aggregation == "min" and convo.window_size == 4
    assert [t.input[0].content for t in convo.turns] == ["Hi, I am Bob.", "What is my name?"]
    assert convo.turns[0].graders[0].type == "icontains"
    rooted = _test(suite, "root-relative")
    assert rooted.metadata["owners"] == ["alice", "bob"] and rooted.metadata["tier"] == "silver"
    assert Path(rooted.input[0].content[0]["path"]).name == "shared.md"
    assert rooted.depends_on == ["conversation"]
    composite = _test(suite, "composite-modern")
    assert composite.graders[0].type == "composite"
    assert "llm-grader" not in [g.type for g in composite.graders]
    assert composite.execution.threshold == 0.5 and composite.execution.target == "default"


def test_globs_and_suite_imports_with_select_and_external_workspace() -> None:
    suite = _suite("v4-globs/globs.eval.yaml")
    assert [(t.id, t.suite) for t in suite.tests] == [
        ("glob-a", "glob-wrapper"),
        ("glob-b", "glob-wrapper"),
        ("one-smoke", "suite-one"),
    ]
    assert suite.workspace is None and suite.tests[0].workspace is None
    imported = suite.tests[2].workspace
    assert imported is not None and imported.repos[0].repo == "https://github.com/org/my-repo.git"


def test_unreadable_file_gives_diagnostic_and_no_suite(tmp_path: Path) -> None:
    result = load_suite(tmp_path / "missing.eval.yaml", env={})
    assert result.suite is None
    assert [(d.code, d.severity) for d in result.diagnostics] == [("E001", "error")]
