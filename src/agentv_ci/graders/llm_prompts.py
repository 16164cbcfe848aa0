"""Prompts for the llm-grader (AgentV v4.42.4 `graders/llm-grader.ts`): the default freeform template,
the rubric checklist and score-range prompts, the output-schema system prompts, and `{{ var }}` rendering
with every historical alias."""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from agentv_ci.graders.outcome import answer_text
from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import Message, Test
from agentv_ci.prompting import reference_answer, render_input

# AgentV's DEFAULT_GRADER_TEMPLATE, word for word.
DEFAULT_TEMPLATE = "\n".join(
    [
        (
            "You are an expert grader. Your goal is to grade the answer based on how well it achieves "
            "the criteria for the original task."
        ),
        "",
        (
            "Use the reference_answer as a gold standard for a high-quality response (if provided). The"
            " reference_answer may be a simple text response, or it may contain a sequence of expected "
            "agent messages including tool calls. When it contains multiple messages, the last message "
            "represents the final expected answer. The answer does not need to match it verbatim, but "
            "should capture the key points and follow the same spirit."
        ),
        "",
        (
            "Be concise and focused in your evaluation. Provide succinct, specific feedback rather than"
            " verbose explanations."
        ),
        "",
        "[[ ## criteria ## ]]",
        "{{criteria}}",
        "",
        "[[ ## question ## ]]",
        "{{input}}",
        "",
        "[[ ## reference_answer ## ]]",
        "{{expected_output}}",
        "",
        "[[ ## answer ## ]]",
        "{{output}}",
    ]
)

# The system prompts are AgentV's, word for word (`buildOutputSchema`, `buildRubricOutputSchema`,
# `buildScoreRangeOutputSchema`): judges tuned on AgentV see the same request.
FREEFORM_SYSTEM = """You must respond with a single JSON object matching this schema:

{
  "score": <number between 0.0 and 1.0>,
  "assertions": [
    {
      "text": "<brief description of what was checked>",
      "passed": <boolean>,
      "evidence": "<concise evidence, 1-2 sentences, optional>"
    }
  ],
  "details": {<optional object with domain-specific structured metrics>}
}"""

CHECKLIST_SYSTEM = """You are an expert grader. Evaluate the candidate answer against each rubric item.
You must return a valid JSON object matching this schema:
{
  "checks": [
    {
      "id": "string (rubric id)",
      "satisfied": boolean,
      "reasoning": "string (brief explanation)"
    }
  ],
  "overall_reasoning": "string (summary)"
}"""

SCORE_RANGE_SYSTEM = """You are an expert grader. Score the candidate answer on each criterion.
You must return a valid JSON object matching this schema:
{
  "checks": [
    {
      "id": "string (criterion id)",
      "score": integer (0-10),
      "reasoning": "string (brief explanation for score)"
    }
  ],
  "overall_reasoning": "string (summary, optional)"
}

Important: The "score" must be an integer from 0 to 10 that falls within one of the defined score ranges \
for that criterion."""

REPAIR_TEMPLATE = """The following evaluation response has useful grading content but invalid JSON structure.
Repair it to satisfy the schema in the system prompt.
Preserve the evaluation meaning, do not re-grade the answer, and return only a single JSON object.

Validation error:
{problem}

Invalid response:
{reply}"""

OPERATOR_GUIDANCE = {
    "correctness": "Correctness: mark satisfied only when the answer positively supports or fulfills the "
    "outcome. Omission or contradiction should not satisfy it.",
    "contradiction": "Contradiction guard: mark satisfied when the answer does not make a claim that "
    "contradicts the outcome. Do not require the answer to mention the outcome; mark unsatisfied only for "
    "incompatible claims.",
}

_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
OUTPUT_VARIABLES = frozenset(
    {
        "output",
        "expected_output",
        "answer",
        "candidate_answer",
        "output_text",
        "reference_answer",
        "expected_output_text",
        "output_messages",
        "expected_messages",
    }
)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _js_values(value: Any) -> Any:
    """Integral floats as ints, so JSON reads as JavaScript writes it (`2`, not `2.0`)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _js_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js_values(v) for v in value]
    return value


def js_json(value: Any, *, pretty: bool) -> str:
    """`JSON.stringify(value, null, 2)` (pretty) or `JSON.stringify(value)`; "" for no value."""
    if value is None or value == {}:
        return ""
    if pretty:
        return json.dumps(_js_values(value), indent=2, ensure_ascii=False, default=str)
    return json.dumps(_js_values(value), separators=(",", ":"), ensure_ascii=False, default=str)


def _rubric_objects(rubrics: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The rubric items as AgentV's template variables show them (key order id, outcome, weight, required)."""
    if not rubrics:
        return None
    keys = ("id", "outcome", "weight", "required", "min_score", "operator", "score_ranges")
    return [{k: item[k] for k in keys if k in item} for item in rubrics]


def _messages_json(messages: list[Message]) -> str:
    return _json(msgspec.to_builtins(messages))


def tool_calls_text(response: TargetResponse) -> str:
    """The answer's tool calls, one JSON line each (empty when there are none)."""
    lines = []
    for message in response.messages:
        for call in message.tool_calls or []:
            lines.append(json.dumps(msgspec.to_builtins(call), ensure_ascii=False, default=str))
    return "\n".join(lines)


def template_variables(test: Test, response: TargetResponse, rubrics: list[dict[str, Any]]) -> dict[str, str]:
    """Every `{{ name }}` a custom prompt may use, with v1-v4 aliases."""
    question = render_input(test.input).strip()
    output = answer_text(response).strip()
    expected = reference_answer(test.expected_output).strip()
    criteria = (test.criteria or "").strip()
    metadata = js_json(test.metadata, pretty=True)
    values = {
        "input": question,
        "output": output,
        "expected_output": expected,
        "criteria": criteria,
        "metadata": metadata,
        "metadata_json": js_json(test.metadata, pretty=False),
        "rubrics": js_json(_rubric_objects(rubrics), pretty=True),
        "rubrics_json": js_json(_rubric_objects(rubrics), pretty=False),
        "file_changes": response.file_changes or "",
        "tool_calls": tool_calls_text(response),
        # aliases from earlier dialects
        "question": question,
        "input_text": question,
        "answer": output,
        "candidate_answer": output,
        "output_text": output,
        "reference_answer": expected,
        "expected_output_text": expected,
        "expected_outcome": criteria,
        "input_messages": _messages_json(test.input),
        "expected_messages": _messages_json(test.expected_output),
        "output_messages": _messages_json(response.messages),
    }
    return values


def render_template(template: str, values: dict[str, str]) -> str:
    """Replace `{{ name }}` with its value; unknown names are left as written."""
    return _VARIABLE.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def unknown_variables(template: str, known: set[str]) -> list[str]:
    return sorted({m.group(1) for m in _VARIABLE.finditer(template)} - known)


def references_output(template: str) -> bool:
    return any(m.group(1) in OUTPUT_VARIABLES for m in _VARIABLE.finditer(template))


def default_prompt(values: dict[str, str]) -> str:
    """The default freeform prompt; `file_changes` / `tool_calls` sections only when present."""
    text = render_template(DEFAULT_TEMPLATE, values)
    if values["file_changes"]:
        text += f"\n\n[[ ## file_changes ## ]]\n{values['file_changes']}"
    if values["tool_calls"]:
        text += f"\n\n[[ ## tool_calls ## ]]\n{values['tool_calls']}"
    return text


def js_number(value: float) -> str:
    """A number as JavaScript prints it: 2, 0.5."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _operator_guidance(rubrics: list[dict[str, Any]]) -> list[str]:
    operators = list(dict.fromkeys(r["operator"] for r in rubrics if r.get("operator")))
    return [OPERATOR_GUIDANCE.get(op, "") for op in operators]


def rubric_lines(rubrics: list[dict[str, Any]]) -> str:
    """The checklist lines: `- [id] (REQUIRED) (weight: w) (operator: op): outcome`."""
    lines = []
    for item in rubrics:
        required = " (REQUIRED)" if item.get("required", True) else ""
        weight = item.get("weight", 1.0)
        weight_label = f" (weight: {js_number(weight)})" if weight != 1 else ""
        operator = f" (operator: {item['operator']})" if item.get("operator") else ""
        lines.append(f"- [{item['id']}]{required}{weight_label}{operator}: {item.get('outcome') or ''}")
    return "\n".join(lines)


def _head(values: dict[str, str], intro: list[str]) -> list[str]:
    parts = [
        *intro,
        "",
        "[[ ## question ## ]]",
        values["input"],
        "",
        "[[ ## criteria ## ]]",
        values["criteria"],
        "",
    ]
    if values["expected_output"]:
        parts += ["[[ ## reference_answer ## ]]", values["expected_output"], ""]
    parts += ["[[ ## answer ## ]]", values["output"], ""]
    if values["file_changes"]:
        parts += ["[[ ## file_changes ## ]]", values["file_changes"], ""]
    if values["tool_calls"]:
        parts += ["[[ ## tool_calls ## ]]", values["tool_calls"], ""]
    return parts


def rubric_prompt(values: dict[str, str], rubrics: list[dict[str, Any]], *, score_ranges: bool) -> str:
    """AgentV's checklist (`buildRubricPrompt`) or score-range (`buildScoreRangePrompt`) prompt."""
    if score_ranges:
        return _score_range_prompt(values, rubrics)
    parts = _head(
        values, ["You are an expert grader. Evaluate the candidate answer against each rubric item below."]
    )
    parts.append("[[ ## rubrics ## ]]")
    guidance = _operator_guidance(rubrics)
    if guidance:
        parts += ["", "Operator guidance:", *(f"- {g}" for g in guidance), ""]
    parts.append(rubric_lines(rubrics))
    parts += ["", "For each rubric, determine if it is satisfied and provide brief reasoning."]
    return "\n".join(parts)


def _score_range_prompt(values: dict[str, str], rubrics: list[dict[str, Any]]) -> str:
    parts = _head(
        values,
        [
            "You are an expert grader. Score the candidate answer on each criterion below using the provided "
            "score ranges.",
            "For each criterion, output an integer score from 0 to 10 based on which score range best "
            "matches the answer.",
        ],
    )
    parts.append("[[ ## scoring_criteria ## ]]")
    for item in rubrics:
        weight = item.get("weight", 1.0)
        weight_label = f" (weight: {js_number(weight)})" if weight != 1 else ""
        min_label = f" [REQUIRED: min score {js_number(item['min_score'])}]" if "min_score" in item else ""
        parts += ["", f"### Criterion: {item['id']}{weight_label}{min_label}"]
        if item.get("operator"):
            parts.append(f"Operator: {item['operator']}")
        if item.get("outcome"):
            parts.append(f"Description: {item['outcome']}")
        if item.get("score_ranges"):
            parts.append("Score ranges:")
            for band in item["score_ranges"]:
                low, high = band["score_range"]
                label = f"{low}" if low == high else f"{low}-{high}"
                parts.append(f"  - Score {label}: {band.get('outcome') or ''}")
    guidance = _operator_guidance(rubrics)
    if guidance:
        parts += ["", *guidance]
    parts += [
        "",
        "For each criterion, provide an integer score 0-10 that matches one of its defined score ranges.",
    ]
    return "\n".join(parts)
