"""`mode: conversation` tests: their `turns` built, and the fields only a conversation may have."""

from __future__ import annotations

from typing import Any

from agentv_ci.loading.context import LoadContext, Node, type_name
from agentv_ci.loading.graders import GraderNormaliser
from agentv_ci.loading.interpolate import substitute_vars
from agentv_ci.loading.keys import TURN_KEYS
from agentv_ci.loading.messages import normalise_expected, normalise_input
from agentv_ci.model.bounds import MAX_TURNS
from agentv_ci.model.suite import GraderSpec, OnTurnFailure, Turn, TurnAggregation

CONVERSATION_ONLY = ("turns", "aggregation", "on_turn_failure", "window_size")
AGGREGATIONS: tuple[TurnAggregation, ...] = ("mean", "min", "max")
TURN_FAILURE: tuple[OnTurnFailure, ...] = ("continue", "stop")


def build_turns(
    raw: dict[str, Any], node: Node, variables: dict[str, Any], ctx: LoadContext, graders: GraderNormaliser
) -> list[Turn]:
    """The turns of a test (none when it has no `turns`), `{{vars}}` substituted."""
    if "turns" not in raw:
        return []
    turns_raw = raw["turns"]
    tnode = node.child("turns")
    if not isinstance(turns_raw, list):
        ctx.error("E101", f"turns must be a list, got {type_name(turns_raw)}", tnode)
        return []
    if len(turns_raw) > MAX_TURNS:
        message = f"a conversation has at most {MAX_TURNS} turns (their bound), got {len(turns_raw)}"
        ctx.error("E115", message, tnode.child(MAX_TURNS), hint="split it into several tests")
        turns_raw = turns_raw[:MAX_TURNS]  # the rest is not built (nor reported)
    turns: list[Turn] = []
    for i, turn in enumerate(turns_raw):
        child = tnode.child(i)
        if isinstance(turn, str):
            turn = {"input": turn}
        if not isinstance(turn, dict):
            ctx.error("E101", f"a turn must be a mapping, got {type_name(turn)}", child)
            continue
        ctx.check_keys(turn, child, TURN_KEYS, "a conversation turn")
        ctx.not_run(
            turn,
            child,
            {
                "criteria": "turns are graded by their `assertions` (strings are rubric criteria)",
                "rubrics": "write the criteria as strings in the turn's `assertions`",
                "id": "turns are named turn-1, turn-2, ... in results",
            },
            "a conversation turn",
        )
        turn_input = substitute_vars(turn.get("input"), variables)
        messages = normalise_input(turn_input, child.child("input"), ctx)
        if not messages or (isinstance(turn_input, str) and not turn_input.strip()):
            ctx.error("E111", f"conversation turn {i + 1} has an empty input", child)
        expected = normalise_expected(
            substitute_vars(turn.get("expected_output"), variables),
            child.child("expected_output"),
            ctx,
        )
        turn_graders: list[GraderSpec] = []
        for key in ("assertions", "assert"):
            if key in turn:
                turn_graders += graders.normalise_list(turn[key], child.child(key))
        turns.append(
            Turn(input=messages, expected_output=expected, graders=turn_graders, location=child.loc())
        )
    return turns


def check_conversation_fields(raw: dict[str, Any], node: Node, conversation: bool, ctx: LoadContext) -> None:
    """AgentV's cross-field rules: live-conversation fields only with `mode: conversation`, and a
    conversation grades per-turn `expected_output`, never a top-level one."""
    if conversation:
        if "expected_output" in raw and isinstance(raw.get("turns"), list):
            ctx.error(
                "E113",
                "a top-level `expected_output` is not allowed with `mode: conversation`",
                node.child("expected_output"),
                key=True,
                hint="put `expected_output` on each turn instead",
            )
        return
    for key in CONVERSATION_ONLY:
        if key in raw:
            ctx.error(
                "E113",
                f"`{key}` requires `mode: conversation`",
                node.child(key),
                key=True,
                hint="add `mode: conversation` (live turns), or put a scripted history in `input`",
            )
