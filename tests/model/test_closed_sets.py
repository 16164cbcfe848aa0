"""Each closed set's `Literal` holds exactly what the loader accepts and the schema / docs list, so
neither can drift from the type mypy checks comparisons against."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

from agentv_ci.graders.composite import AGGREGATORS, Aggregator
from agentv_ci.loading.keys import REPEAT_STRATEGIES
from agentv_ci.model.result import AdaptiveStopReason, DependencyStatus
from agentv_ci.model.suite import (
    OnDependencyFailure,
    OnTurnFailure,
    RepeatStrategy,
    TestMode,
    TurnAggregation,
)
from agentv_ci.model.workspace import WorkspaceIsolation, WorkspaceMode, WorkspaceReset
from agentv_ci.statistics.sequential import Stop

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "src/agentv_ci/validation/schema/eval.schema.json").read_text())


def _schema_enum(*path: str) -> set[str]:
    node: Any = SCHEMA["definitions"]
    for key in path:
        node = node[key]
    enum = node["enum"] if "enum" in node else node["anyOf"][1]["properties"]["strategy"]["enum"]
    return set(enum)


def test_repeat_strategies_are_the_literal_plus_the_written_alias() -> None:
    # `pass_any` is AgentV's other name for pass@k: accepted as written, stored as `pass_at_k`.
    assert set(REPEAT_STRATEGIES) == {*get_args(RepeatStrategy), "pass_any"}
    for key in ("repeat", "trials", "runs"):
        assert _schema_enum("execution", "properties", key) == set(REPEAT_STRATEGIES)


def test_test_level_choices_match_the_schema() -> None:
    test = ("test", "properties")
    assert _schema_enum(*test, "mode") == set(get_args(TestMode))
    assert _schema_enum(*test, "aggregation") == set(get_args(TurnAggregation))
    assert _schema_enum(*test, "on_turn_failure") == set(get_args(OnTurnFailure))
    assert _schema_enum(*test, "on_dependency_failure") == set(get_args(OnDependencyFailure))


def test_test_level_choices_match_the_loader() -> None:
    from agentv_ci.loading.conversation_turns import AGGREGATIONS, TURN_FAILURE
    from agentv_ci.loading.tests_builder import DEPENDENCY_FAILURE

    assert set(AGGREGATIONS) == set(get_args(TurnAggregation))
    assert set(TURN_FAILURE) == set(get_args(OnTurnFailure))
    assert set(DEPENDENCY_FAILURE) == set(get_args(OnDependencyFailure))


def test_composite_aggregators_are_the_literal_and_the_documented_ones() -> None:
    assert get_args(Aggregator) == AGGREGATORS
    composite_doc = (ROOT / "docs/graders.md").read_text().split("## `composite`", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"`([a-z_-]+)`", composite_doc))
    assert set(AGGREGATORS) <= documented


def test_adaptive_stop_reasons_cover_every_decision_of_the_rule() -> None:
    assert set(get_args(Stop)) <= set(get_args(AdaptiveStopReason))
    assert set(get_args(AdaptiveStopReason)) - set(get_args(Stop)) == {"error", "budget", "cost-limit"}


def test_dependency_statuses_are_agentvs() -> None:
    assert set(get_args(DependencyStatus)) == {"passed", "error", "failed"}


def test_workspace_choices_match_the_schema_and_the_loader() -> None:
    from agentv_ci.loading.workspace import ISOLATION, MODES, RESETS, SCOPES

    workspace = SCHEMA["definitions"]["workspace"]["anyOf"][1]["properties"]
    assert set(workspace["isolation"]["enum"]) == set(ISOLATION) == set(get_args(WorkspaceIsolation))
    assert set(SCOPES.values()) <= set(ISOLATION)
    assert set(workspace["mode"]["enum"]) == set(MODES) == set(get_args(WorkspaceMode))
    for hook in ("before_all", "before_each", "after_each", "after_all"):
        reset = workspace["hooks"]["properties"][hook]["anyOf"][2]["properties"]["reset"]["enum"]
        assert set(reset) == set(RESETS) == set(get_args(WorkspaceReset))


def test_field_accuracy_aggregations_are_the_literal_and_the_documented_ones() -> None:
    from agentv_ci.graders.field_accuracy import AGGREGATIONS as FIELD_AGGREGATIONS
    from agentv_ci.graders.field_accuracy import FieldAggregation

    assert get_args(FieldAggregation) == FIELD_AGGREGATIONS
    assert " | ".join(FIELD_AGGREGATIONS) in (ROOT / "docs/graders.md").read_text()
