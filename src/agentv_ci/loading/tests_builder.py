"""One raw test mapping (from YAML, JSONL or a case directory) -> a fully merged `Test`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from agentv_ci.loading.context import LoadContext, Node, type_name
from agentv_ci.loading.conversation_turns import (
    AGGREGATIONS,
    CONVERSATION_ONLY,
    TURN_FAILURE,
    build_turns,
    check_conversation_fields,
)
from agentv_ci.loading.docker_workspace import writes_docker
from agentv_ci.loading.execution import merge_execution, parse_execution
from agentv_ci.loading.graders import GraderNormaliser
from agentv_ci.loading.input_files import read_prompt, resolve_input_files
from agentv_ci.loading.interpolate import substitute_vars
from agentv_ci.loading.keys import TEST_DEPRECATED, TEST_KEYS
from agentv_ci.loading.messages import check_role_markers, normalise_expected, normalise_input
from agentv_ci.loading.plain_tests import PlainRow, PlainTemplate
from agentv_ci.loading.rubrics import normalise_rubrics
from agentv_ci.loading.suite_defaults import SuiteDefaults, merge_metadata
from agentv_ci.loading.workspace import merge_workspace, parse_workspace
from agentv_ci.loading.workspace_resets import check_worktree_reset
from agentv_ci.model.suite import (
    ExecutionSpec,
    GraderSpec,
    Message,
    OnDependencyFailure,
    OnTurnFailure,
    Test,
    TestMode,
    Turn,
    TurnAggregation,
)

DEPENDENCY_FAILURE: tuple[OnDependencyFailure, ...] = ("skip", "fail", "run")
_Choice = TypeVar("_Choice", bound=str)  # one of a closed set (a Literal)
_GRADING_KEYS = frozenset(
    (
        "criteria",
        "expected_outcome",
        "outcome",
        "expected_output",
        "expected_messages",
        "assertions",
        "assert",
        "evaluators",
        "rubrics",
        "turns",
    )
)
# The keys of the common dataset line, which `_build_plain` builds directly.
_PLAIN_KEYS = frozenset(("id", "input", "criteria", "expected_output", "metadata"))
_OPTIONAL_KEYS = frozenset(
    (
        "description",
        "note",
        "conversation_id",
        "aggregation",
        "on_turn_failure",
        "window_size",
        "depends_on",
        "on_dependency_failure",
    )
)


_ID = ("id",)


def _written(text: str) -> bool:
    """Not empty nor only whitespace (what `strip()` would leave something of, without a copy)."""
    return bool(text) and not text.isspace()


class _OptionalFields(NamedTuple):
    """The fields few tests write (`_OPTIONAL_KEYS`), in the order their diagnostics are reported."""

    description: str | None
    note: str | None
    conversation_id: str | None
    aggregation: TurnAggregation | None
    on_turn_failure: OnTurnFailure | None
    window_size: int | None
    depends_on: list[str]
    on_dependency_failure: OnDependencyFailure | None


class TestBuilder:
    """Builds `Test`s of one suite."""

    def __init__(self, ctx: LoadContext, defaults: SuiteDefaults, graders: GraderNormaliser) -> None:
        self.ctx = ctx
        self.defaults = defaults
        self.graders = graders
        self.plain = PlainTemplate(defaults)  # what each test `_build_plain` builds shares

    def build(self, raw: Any, node: Node, run: ExecutionSpec | None = None) -> tuple[Test, Node] | None:
        """The test and where its id was written; None when it is unusable (diagnostics recorded)."""
        ctx = self.ctx
        if not isinstance(raw, dict):
            ctx.error("E101", f"a test must be a mapping, got {type_name(raw)}", node)
            return None
        test_id = raw.get("id")
        if run is None and raw.keys() <= _PLAIN_KEYS and isinstance(test_id, str) and _written(test_id):
            plain = self._build_plain(raw, node, test_id)
            if plain is not None:  # a dataset line's node is at its top: its id is at ("id",)
                return plain, Node(node.doc, _ID) if not node.path else node.child("id")
        ctx.check_keys(raw, node, TEST_KEYS, "a test", TEST_DEPRECATED)
        if isinstance(test_id, str) and _written(test_id):
            return self._build(raw, node, test_id, run)
        if test_id is None:
            ctx.error("E102", "test is missing `id`", node, hint="add `id: <unique-name>`")
        else:
            ctx.error(
                "E101", f"test id must be a non-empty string, got {type_name(test_id)}", node.child("id")
            )
        # Still check the rest of the test so every problem is reported at once; then drop it.
        self._build(raw, node, "(no id)", run)
        return None

    def _build_plain(self, raw: dict[str, Any], node: Node, test_id: str) -> Test | None:
        """The most common test (a dataset line: `input` text, `criteria` and/or `expected_output`
        text, `metadata`), built without the checks that cannot fire for it; None when `raw` is
        anything else (then `_build` builds it). Gives exactly the `Test` that `_build` gives, and no
        diagnostic (tests/loading/test_plain_tests.py holds the two to each other)."""
        defaults = self.defaults
        if defaults.input_files:
            return None
        text = raw.get("input")
        if not isinstance(text, str) or not text or "@[" in text:
            return None
        criteria = raw.get("criteria")
        if criteria is not None and not isinstance(criteria, str):
            return None
        expected = raw.get("expected_output")
        if expected is not None and (not isinstance(expected, str) or "@[" in expected):
            return None
        if "criteria" not in raw and "expected_output" not in raw and not defaults.graders_written:
            return None  # nothing to grade unless the suite has graders: `_build` says which
        metadata = raw.get("metadata")
        if metadata is None:
            metadata = {}
        elif not isinstance(metadata, dict):
            return None
        location = node.loc()
        row = PlainRow(test_id, text, criteria, expected, metadata, location.line, location.col)
        return self.plain.build(row, location)

    def _build(
        self, raw: dict[str, Any], node: Node, test_id: str, run: ExecutionSpec | None
    ) -> tuple[Test, Node]:
        # The stages run in the order their diagnostics are reported in; each reads `raw` itself.
        variables = self._vars(raw, node)
        exec_raw, test_exec = self._execution(raw, node, run)
        skip = test_exec.skip_defaults  # `skip_defaults`: the suite's input and graders are not added
        defaults = self.defaults
        criteria = self._criteria(raw, node, variables)
        input_raw, messages, files = self._input(raw, node, variables, skip=skip)
        expected = self._expected(raw, node, variables)
        graders = self._test_graders(raw, exec_raw, node)
        if not skip:
            graders = graders + defaults.graders
        mode, turns = self._conversation(raw, node, variables)
        has_input = bool(messages) or bool(turns) or input_raw not in (None, "", [], {})
        graded = bool(graders) or criteria is not None
        self._check_gradable(
            raw, node, test_id, has_input=has_input, graded=graded, exec_raw=exec_raw, skip=skip
        )
        metadata, tags = self._labels(raw, node)
        workspace = self._workspace(raw, node)
        extra = self._optional_fields(raw, node)
        test = Test(
            id=test_id,
            input=messages,
            criteria=criteria,
            expected_output=expected,
            graders=graders,
            execution=merge_execution(defaults.execution, test_exec),
            input_files=[str(p) for _, p in files],
            vars=variables,
            metadata=merge_metadata(defaults.metadata, metadata),
            tags=tags,
            description=extra.description,
            note=extra.note,
            conversation_id=extra.conversation_id,
            workspace=merge_workspace(defaults.workspace, workspace),
            preprocessors=defaults.preprocessors,
            mode=mode,
            turns=turns,
            aggregation=extra.aggregation,
            on_turn_failure=extra.on_turn_failure,
            window_size=extra.window_size,
            depends_on=extra.depends_on,
            on_dependency_failure=extra.on_dependency_failure,
            suite=raw["suite"] if isinstance(raw.get("suite"), str) else defaults.name,
            location=node.loc(),
        )
        return test, node.child("id")

    # -- the stages of `_build`, in order ----------------------------------------------------------

    def _vars(self, raw: dict[str, Any], node: Node) -> dict[str, Any]:
        variables = raw.get("vars") or {}
        if not isinstance(variables, dict):
            self.ctx.error("E101", f"vars must be a mapping, got {type_name(variables)}", node.child("vars"))
            return {}
        return variables

    def _execution(
        self, raw: dict[str, Any], node: Node, run: ExecutionSpec | None
    ) -> tuple[Any, ExecutionSpec]:
        """The test's `execution:` as written, and the spec it gives with an include's `run:` under it
        and the test's own `run:` over it."""
        ctx = self.ctx
        exec_raw = raw.get("execution")
        test_exec = (
            ExecutionSpec() if exec_raw is None else parse_execution(exec_raw, node.child("execution"), ctx)
        )
        if run is not None:  # an include's `run:` sits under the test's own execution and run
            test_exec = merge_execution(run, test_exec)
        if "run" in raw:
            test_exec = parse_execution(raw["run"], node.child("run"), ctx, test_exec)
        return exec_raw, test_exec

    def _criteria(self, raw: dict[str, Any], node: Node, variables: dict[str, Any]) -> str | None:
        key = (
            "criteria"
            if "criteria" in raw
            else "expected_outcome"
            if "expected_outcome" in raw
            else "outcome"
            if "outcome" in raw
            else None
        )
        if key is None:
            return None
        criteria = substitute_vars(raw[key], variables)
        if criteria is not None and not isinstance(criteria, str):
            self.ctx.error("E101", f"criteria must be a string, got {type_name(criteria)}", node.child(key))
            return None
        return criteria

    def _input(
        self, raw: dict[str, Any], node: Node, variables: dict[str, Any], *, skip: bool
    ) -> tuple[Any, list[Message], list[tuple[str, Path]]]:
        """The input as written (after `vars`), the messages it gives (the suite's input first,
        unless skipped), and the input files (a PROMPT.md among them taken as the input)."""
        ctx = self.ctx
        input_key = "input" if "input" in raw else ("input_messages" if "input_messages" in raw else None)
        input_raw = substitute_vars(raw[input_key], variables) if input_key else None
        if input_key and isinstance(input_raw, str) and "@[" in input_raw:  # markers need `@[`
            check_role_markers(input_raw, node.child(input_key), ctx)
        own_files: list[tuple[str, Path]] | None = None
        if "input_files" in raw:
            own_files = resolve_input_files(
                substitute_vars(raw["input_files"], variables), node.child("input_files"), ctx
            )
        files = own_files if own_files is not None else (None if skip else self.defaults.input_files)
        files = list(files or [])
        if input_raw is None:
            prompt = next((p for ref, p in files if p.name == "PROMPT.md"), None)
            if prompt is not None:
                files = [(ref, p) for ref, p in files if p.name != "PROMPT.md"]
                input_raw = read_prompt(prompt, ctx)
            elif self.defaults.prompt_md is not None:
                input_raw = read_prompt(self.defaults.prompt_md, ctx)
        if files and (input_raw is None or isinstance(input_raw, str)):
            blocks: list[Any] = [{"type": "file", "value": ref, "path": str(p)} for ref, p in files]
            if input_raw is not None:
                blocks.append({"type": "text", "value": input_raw})
            messages = [Message(role="user", content=blocks)]
        else:
            messages = (
                [Message(role="user", content=input_raw)]
                if isinstance(input_raw, str)
                else normalise_input(input_raw, node.child(input_key or "input"), ctx)
            )
        if not skip:
            messages = self._suite_input(variables) + messages
        return input_raw, messages, files

    def _expected(self, raw: dict[str, Any], node: Node, variables: dict[str, Any]) -> list[Message]:
        key = (
            "expected_output"
            if "expected_output" in raw
            else "expected_messages"
            if "expected_messages" in raw
            else None
        )
        if key is None:
            return []
        return normalise_expected(substitute_vars(raw[key], variables), node.child(key), self.ctx)

    def _conversation(
        self, raw: dict[str, Any], node: Node, variables: dict[str, Any]
    ) -> tuple[TestMode | None, list[Turn]]:
        """`mode: conversation` and its `turns`."""
        ctx = self.ctx
        turns = build_turns(raw, node, variables, ctx, self.graders) if "turns" in raw else []
        mode = raw.get("mode")
        if mode is not None and mode != "conversation":
            ctx.error("E103", f"mode must be `conversation`, got {mode!r}", node.child("mode"))
        if mode == "conversation" and not turns:
            ctx.error("E102", "a conversation test needs `turns`", node.child("mode"))
        if mode == "conversation" or not raw.keys().isdisjoint(CONVERSATION_ONLY):
            check_conversation_fields(raw, node, mode == "conversation", ctx)
        return ("conversation" if mode == "conversation" else None), turns  # any other is E103 above

    def _check_gradable(
        self,
        raw: dict[str, Any],
        node: Node,
        test_id: str,
        *,
        has_input: bool,
        graded: bool,
        exec_raw: Any,
        skip: bool,
    ) -> None:
        """A test needs an input and something to grade it by (a suite's graders count, unless
        skipped; so does a grading key written empty, which its own stage reported)."""
        if not has_input:
            self.ctx.error(
                "E111",
                f"test {test_id!r} has no input",
                node,
                hint="add `input:` (or a PROMPT.md next to the eval file)",
            )
        grading_written = not raw.keys().isdisjoint(_GRADING_KEYS) or (
            isinstance(exec_raw, dict) and any(k in exec_raw for k in ("assertions", "evaluators"))
        )
        if not skip and self.defaults.graders_written:
            grading_written = True
        if not grading_written and not graded:
            self.ctx.error(
                "E112",
                f"test {test_id!r} has nothing to grade",
                node,
                hint="add `criteria`, `expected_output` or `assertions`",
            )

    def _labels(self, raw: dict[str, Any], node: Node) -> tuple[dict[str, Any], list[str]]:
        """`metadata` and `tags`."""
        metadata = raw.get("metadata") or {}
        if not isinstance(metadata, dict):
            self.ctx.error(
                "E101", f"metadata must be a mapping, got {type_name(metadata)}", node.child("metadata")
            )
            metadata = {}
        tags = raw.get("tags") or []
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            self.ctx.error("E101", "tags must be a list of strings", node.child("tags"))
            tags = []
        return metadata, tags

    def _workspace(self, raw: dict[str, Any], node: Node) -> dict[str, Any] | None:
        """The test's own `workspace:` fields (merged over the suite's when the test is built)."""
        if "workspace" not in raw:
            return None
        workspace = parse_workspace(raw["workspace"], node.child("workspace"), self.ctx)
        if workspace is not None:
            check_worktree_reset(self.defaults.workspace, workspace, node.child("workspace"), self.ctx)
        return workspace

    def _optional_fields(self, raw: dict[str, Any], node: Node) -> _OptionalFields:
        if raw.keys().isdisjoint(_OPTIONAL_KEYS):  # most tests write none of these
            return _OptionalFields(None, None, None, None, None, None, [], None)
        return _OptionalFields(
            description=self._optional_str(raw, "description", node),
            note=self._optional_str(raw, "note", node),
            conversation_id=self._optional_str(raw, "conversation_id", node),
            aggregation=self._choice(raw, "aggregation", AGGREGATIONS, node),
            on_turn_failure=self._choice(raw, "on_turn_failure", TURN_FAILURE, node),
            window_size=self._window(raw, node),
            depends_on=self._depends_on(raw, node),
            on_dependency_failure=self._choice(raw, "on_dependency_failure", DEPENDENCY_FAILURE, node),
        )

    # -- the helpers of the stages -----------------------------------------------------------------

    def _suite_input(self, variables: dict[str, Any]) -> list[Message]:
        defaults = self.defaults
        if not variables or defaults.input_raw is None or defaults.input_node is None:
            return defaults.input_messages
        quiet = LoadContext(self.ctx.repo_root, self.ctx.env, confinement=self.ctx.confinement)
        return normalise_input(substitute_vars(defaults.input_raw, variables), defaults.input_node, quiet)

    def _test_graders(self, raw: dict[str, Any], exec_raw: Any, node: Node) -> list[GraderSpec]:
        suite_docker = "docker" in (self.defaults.workspace or {})
        self.ctx.graders_in_container = writes_docker(raw.get("workspace")) or suite_docker
        graders: list[GraderSpec] = []
        if "rubrics" in raw:
            items = normalise_rubrics(raw["rubrics"], node.child("rubrics"), self.ctx)
            if items:
                graders.append(
                    GraderSpec(
                        type="rubrics",
                        name="rubrics",
                        config={"criteria": items},
                        location=node.child("rubrics").loc(),
                    )
                )
        for key in ("assertions", "assert", "evaluators"):
            if key in raw:
                graders += self.graders.normalise_list(raw[key], node.child(key))
        if isinstance(exec_raw, dict):
            for key in ("assertions", "evaluators"):
                if key in exec_raw:
                    graders += self.graders.normalise_list(exec_raw[key], node.child("execution").child(key))
        return graders

    def _optional_str(self, raw: dict[str, Any], key: str, node: Node) -> str | None:
        value = raw.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.ctx.error("E101", f"{key} must be a string, got {type_name(value)}", node.child(key))
            return None
        return value

    def _choice(
        self, raw: dict[str, Any], key: str, allowed: tuple[_Choice, ...], node: Node
    ) -> _Choice | None:
        value = raw.get(key)
        if value is None:
            return None
        if value not in allowed:
            self.ctx.error(
                "E103", f"{key} must be one of {', '.join(allowed)}, got {value!r}", node.child(key)
            )
            return None
        return allowed[allowed.index(value)]  # the member itself: typed as the closed set

    def _window(self, raw: dict[str, Any], node: Node) -> int | None:
        value = raw.get("window_size")
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            self.ctx.error(
                "E110", f"window_size must be an integer >= 1, got {value!r}", node.child("window_size")
            )
            return None
        return value

    def _depends_on(self, raw: dict[str, Any], node: Node) -> list[str]:
        value = raw.get("depends_on")
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.ctx.error("E101", "depends_on must be a list of test ids", node.child("depends_on"))
            return []
        return list(value)
