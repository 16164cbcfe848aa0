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

DEFAULT_TEMPLATE = """You are an expert grader. Grade the answer on how well it meets the criteria.
If a reference_answer is given, treat it as a gold standard; it may be a sequence of agent \
messages, in which case the last one is the final answer. Be concise.

[[ ## criteria ## ]]
{{criteria}}

[[ ## question ## ]]
{{input}}

[[ ## reference_answer ## ]]
{{expected_output}}

[[ ## answer ## ]]
{{output}}"""

FREEFORM_SYSTEM = """Reply with a single JSON object and nothing else:
{"score": <number between 0.0 and 1.0>,
 "assertions": [{"text": "<one check you made>", "passed": <true|false>, "evidence": "<short quote>"}],
 "details": {<optional extra fields>}}
Use at most 8 assertions."""

CHECKLIST_SYSTEM = """Reply with a single JSON object and nothing else:
{"checks": [{"id": "<rubric id>", "satisfied": <true|false>, "reasoning": "<why>"}],
 "overall_reasoning": "<summary>"}
Include one check per rubric id."""

SCORE_RANGE_SYSTEM = """Reply with a single JSON object and nothing else:
{"checks": [{"id": "<rubric id>", "score": <integer 0..10>, "reasoning": "<why>"}],
 "overall_reasoning": "<summary>"}
Include one check per rubric id."""

REPAIR_TEMPLATE = """Your previous reply could not be parsed: {problem}
Previous reply:
<<<
{reply}
>>>
Reply again with only the JSON object the instructions ask for, fixing its structure."""

OPERATOR_GUIDANCE = {
    "correctness": "satisfied when the answer does what the outcome states",
    "contradiction": "satisfied when the answer does NOT contradict the outcome",
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
    question = render_input(test.input)
    output = answer_text(response)
    expected = reference_answer(test.expected_output)
    criteria = test.criteria or ""
    metadata = _json(test.metadata)
    values = {
        "input": question,
        "output": output,
        "expected_output": expected,
        "criteria": criteria,
        "metadata": metadata,
        "metadata_json": json.dumps(test.metadata, ensure_ascii=False, default=str),
        "rubrics": rubric_lines(rubrics),
        "rubrics_json": json.dumps(rubrics, ensure_ascii=False),
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


def rubric_lines(rubrics: list[dict[str, Any]]) -> str:
    lines = []
    for item in rubrics:
        flags = " (REQUIRED)" if item.get("required", True) else ""
        outcome = item.get("outcome") or ""
        line = f"- [{item['id']}]{flags} (weight: {item.get('weight', 1.0)}): {outcome}".rstrip()
        operator = item.get("operator")
        if operator in OPERATOR_GUIDANCE:
            line += f"  [operator: {operator}: {OPERATOR_GUIDANCE[operator]}]"
        for band in item.get("score_ranges") or []:
            low, high = band["score_range"]
            line += f"\n    - {low}-{high}: {band.get('outcome') or ''}"
        lines.append(line)
    return "\n".join(lines)


def rubric_prompt(values: dict[str, str], rubrics: list[dict[str, Any]], *, score_ranges: bool) -> str:
    """The checklist / score-range prompt: question, criteria, reference, answer, then the rubrics."""
    parts = [
        "You are an expert grader. Check the answer against each rubric below."
        + (
            " Score each rubric with an integer 0..10 using its score ranges."
            if score_ranges
            else " Decide for each rubric whether it is satisfied."
        ),
        f"[[ ## question ## ]]\n{values['input']}",
    ]
    if values["criteria"]:
        parts.append(f"[[ ## criteria ## ]]\n{values['criteria']}")
    if values["expected_output"]:
        parts.append(f"[[ ## reference_answer ## ]]\n{values['expected_output']}")
    parts.append(f"[[ ## answer ## ]]\n{values['output']}")
    if values["file_changes"]:
        parts.append(f"[[ ## file_changes ## ]]\n{values['file_changes']}")
    if values["tool_calls"]:
        parts.append(f"[[ ## tool_calls ## ]]\n{values['tool_calls']}")
    parts.append(f"[[ ## rubrics ## ]]\n{rubric_lines(rubrics)}")
    return "\n\n".join(parts)
