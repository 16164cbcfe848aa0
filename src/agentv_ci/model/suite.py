"""Input side of the model: one `Suite` per eval file, every dialect normalised into it.

The loader does all merging (suite input prepended, suite graders appended, vars substituted,
aliases resolved), so later stages read a `Test` as-is and never look at the raw YAML again.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from agentv_ci.model.source import SourceLocation
from agentv_ci.model.workspace import TargetHooks, WorkspaceSpec

JsonValue = Any

# Closed sets the loader checks (E103 at file:line:col) before it builds a `Test`; msgspec never
# decodes user input into them, so its own Literal error cannot reach a user.
# How attempts combine (`repeat.strategy`); AgentV's `pass_any` is read as `pass_at_k`.
RepeatStrategy = Literal["pass_at_k", "pass_all", "mean", "confidence_interval"]
TestMode = Literal["conversation"]
TurnAggregation = Literal["mean", "min", "max"]  # a live conversation's score from its turns'
OnTurnFailure = Literal["continue", "stop"]
OnDependencyFailure = Literal["skip", "fail", "run"]


class ToolCall(msgspec.Struct, omit_defaults=True):
    """One tool call made by an agent (AgentV's shape: `tool`, `input`, `output`, timings)."""

    tool: str
    input: JsonValue = None
    output: JsonValue = None
    id: str | None = None
    status: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    duration_ms: float | None = None


class Message(msgspec.Struct, omit_defaults=True):
    """A chat message. `content` is a string, or a list of content blocks
    (`{"type": "text"|"file"|"image"|"json", "value": ...}`; file blocks carry an absolute `path` too),
    or any JSON value for structured expected outputs."""

    role: str
    content: JsonValue = None
    tool_calls: list[ToolCall] | None = None
    name: str | None = None
    tool_call_id: str | None = None


class GraderSpec(msgspec.Struct, omit_defaults=True):
    """A grader as written in the eval file, after alias resolution.

    The core keeps only the common fields; everything else stays in `config` and is converted by the
    grader plugin into its own msgspec Struct (so third-party graders validate like built-ins).
    `config_locations` maps a top-level config key to where it was written, for diagnostics.
    """

    type: str  # an open set: built-in kinds and plugin graders by entry-point name
    name: str
    weight: float = 1.0
    required: bool | float = False
    min_score: float | None = None
    negate: bool = False
    config: dict[str, JsonValue] = {}
    location: SourceLocation | None = None
    written_type: str | None = None  # the type as the user wrote it, when an alias was resolved
    config_locations: dict[str, SourceLocation] = {}


class RepeatSpec(msgspec.Struct, omit_defaults=True):
    """How many times to run each test and how to combine the attempts."""

    count: int = 1
    strategy: RepeatStrategy = "pass_at_k"
    cost_limit_usd: float | None = None


class ExecutionSpec(msgspec.Struct, omit_defaults=True):
    """Runtime settings (suite `execution:` / `experiment:` and per-test `execution:`). None = not set."""

    target: str | None = None
    targets: list[str] | None = None
    threshold: float | None = None
    timeout_seconds: float | None = None
    workers: int | None = None
    repeat: RepeatSpec | None = None
    budget_usd: float | None = None
    cache: bool | None = None
    fail_on_error: bool | None = None
    skip_defaults: bool = False
    target_location: SourceLocation | None = None  # where `target`/`targets` was written
    # a suite's matrix entries that carry `hooks` / `use_target`, by target name (model/workspace.py)
    target_hooks: dict[str, TargetHooks] | None = None


class Turn(msgspec.Struct, omit_defaults=True):
    """One turn of a live conversation (`mode: conversation`)."""

    input: list[Message]
    expected_output: list[Message] = []
    graders: list[GraderSpec] = []
    location: SourceLocation | None = None


class Test(msgspec.Struct, omit_defaults=True):
    """One test case, fully merged with its suite's defaults."""

    id: str
    input: list[Message] = []
    criteria: str | None = None
    expected_output: list[Message] = []
    graders: list[GraderSpec] = []
    execution: ExecutionSpec = msgspec.field(default_factory=ExecutionSpec)
    input_files: list[str] = []  # absolute paths
    vars: dict[str, JsonValue] = {}
    metadata: dict[str, JsonValue] = {}
    tags: list[str] = []
    description: str | None = None
    note: str | None = None
    conversation_id: str | None = None
    workspace: WorkspaceSpec | None = None
    preprocessors: list[dict[str, JsonValue]] = []  # the suite's `preprocessors` (llm-graders read them)
    mode: TestMode | None = None  # live multi-turn
    turns: list[Turn] = []
    aggregation: TurnAggregation | None = None
    on_turn_failure: OnTurnFailure | None = None
    window_size: int | None = None
    depends_on: list[str] = []
    on_dependency_failure: OnDependencyFailure | None = None  # None: AgentV's default, "skip"
    suite: str = ""
    location: SourceLocation | None = None


class Suite(msgspec.Struct, omit_defaults=True):
    """One eval file (or JSONL dataset with its sidecar) after loading."""

    name: str
    path: str  # absolute path of the eval file
    tests: list[Test] = []
    description: str | None = None
    version: str | None = None
    metadata: dict[str, JsonValue] = {}
    tags: list[str] = []
    execution: ExecutionSpec = msgspec.field(default_factory=ExecutionSpec)
    workspace: WorkspaceSpec | None = None
    preprocessors: list[dict[str, JsonValue]] = []
    dependencies: list[str] = []  # absolute paths of every file this suite read (for selection)
    location: SourceLocation | None = None
