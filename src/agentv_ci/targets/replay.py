"""`replay`: answers from a recorded JSONL file; `ReplayRecorder` writes that file (`run --record`).

Rows are AgentV 4.42.4 replay fixtures, so either tool reads the other's recordings:
`{"schema_version": "agentv.replay_fixture.v1", "suite", "eval_path", "test_id", "source_target",
"attempt", "recorded_at", "output": [messages with tool_calls], "token_usage", "cost_usd", "duration_ms"}`.
Rows of earlier agentv-ci versions (`target` + `response`) and rows with just `text` are read too.
Lookup: suite + test id + attempt, then test id + attempt (the latest recording wins), then the test
id's first row.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agentv_ci.clock import now_millis
from agentv_ci.errors import ConfigError, TargetError
from agentv_ci.json_limits import MAX_JSON_DEPTH, too_deep
from agentv_ci.model.bounds import Usd, WaitMs
from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import Message
from agentv_ci.plugins import TargetRequest
from agentv_ci.prompting import final_answer
from agentv_ci.security.redaction import redact_bytes


class ReplayConfig(msgspec.Struct, omit_defaults=True):
    fixtures: str = ""  # JSONL path, relative to the project dir holding .agentv/
    source_target: str | None = None  # only rows recorded from this target


FIXTURE_SCHEMA_VERSION = "agentv.replay_fixture.v1"  # AgentV 4.42.4's replay fixture rows


class ReplayRow(msgspec.Struct, omit_defaults=True):
    """A row as AgentV writes it (`schema_version`, `source_target`, `output`, usage...), or as earlier
    agentv-ci versions did (`target` + `response`)."""

    test_id: str
    suite: str | None = None
    eval_path: str | None = None
    target: str | None = None
    source_target: str | None = None
    attempt: int = 0
    response: TargetResponse | None = None
    output: list[Message] | None = None
    text: str | None = None
    token_usage: TokenUsage | None = None
    cost_usd: Usd | None = None  # a recording is a file like any other: no negative spend
    duration_ms: WaitMs | None = None
    start_time: str | None = None
    end_time: str | None = None

    def to_response(self) -> TargetResponse:
        if self.response is not None:
            return self.response
        messages = self.output or [Message(role="assistant", content=self.text or "")]
        return TargetResponse(
            text=self.text or final_answer(messages),
            messages=messages,
            token_usage=self.token_usage,
            cost_usd=self.cost_usd,
            duration_ms=self.duration_ms,
            start_time=self.start_time,
            end_time=self.end_time,
        )


def read_replay_rows(path: Path) -> list[ReplayRow]:
    decoder = msgspec.json.Decoder(ReplayRow)
    rows: list[ReplayRow] = []
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            deep = too_deep(line)
            if deep is not None:  # the decoder's stack would run out: bad input, not a crash
                raise ConfigError(
                    f"bad replay row: JSON nested more than {MAX_JSON_DEPTH} levels deep",
                    location=SourceLocation(str(path), number, deep + 1),
                    hint="re-record the fixture (`agentv-ci run --record`)",
                )
            try:
                rows.append(decoder.decode(line))
            except (msgspec.DecodeError, RecursionError) as exc:
                raise ConfigError(f"bad replay row: {exc}", hint=f"{path}:{number}") from None
    return rows


class ReplayTarget:
    """Replays recorded answers (no network, fully deterministic)."""

    Config: ClassVar[type[msgspec.Struct]] = ReplayConfig

    def __init__(self, name: str, config: ReplayConfig, *, base_dir: Path) -> None:
        if not config.fixtures:
            raise ConfigError(f"target {name!r} (replay) needs `fixtures: path/to/recording.jsonl`")
        self.name = name
        self.config = config
        self.path = (base_dir / config.fixtures).resolve()
        if not self.path.is_file():
            raise ConfigError(
                f"target {name!r} (replay): fixtures file {self.path} does not exist",
                hint="record one with `agentv-ci run ... --record FILE`",
            )
        self._index: dict[tuple[str | None, str, int | None], ReplayRow] | None = None

    def _load(self) -> dict[tuple[str | None, str, int | None], ReplayRow]:
        index: dict[tuple[str | None, str, int | None], ReplayRow] = {}
        for row in read_replay_rows(self.path):
            source = row.source_target or row.target
            if self.config.source_target and source != self.config.source_target:
                continue
            index[(row.suite, row.test_id, row.attempt)] = row  # the latest recording wins
            index[(None, row.test_id, row.attempt)] = row
            index.setdefault((None, row.test_id, None), row)  # any attempt: the first recorded
        return index

    async def invoke(self, request: TargetRequest) -> TargetResponse:
        if self._index is None:
            self._index = self._load()
        test = request.test
        for key in (
            (test.suite, test.id, request.attempt),
            (None, test.id, request.attempt),
            (None, test.id, None),
        ):
            row = self._index.get(key)
            if row is not None:
                return row.to_response()
        raise TargetError(f"no recorded answer for test {test.id!r} in {self.path}")

    async def aclose(self) -> None:
        return None


class ReplayRecorder:
    """Appends one replay row per live answer (flushed at once, so a crash keeps what was recorded)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._handle = path.open("ab")
        self._encoder = msgspec.json.Encoder()
        self._lock = threading.Lock()

    def record(
        self, *, suite: str, eval_path: str, test_id: str, target: str, attempt: int, response: TargetResponse
    ) -> None:
        messages = response.messages or [Message(role="assistant", content=response.text)]
        row: dict[str, Any] = {  # AgentV's replay fixture row (its schema is strict: these keys only)
            "schema_version": FIXTURE_SCHEMA_VERSION,
            "suite": suite,
            "eval_path": eval_path,
            "test_id": test_id,
            "source_target": target,
            "attempt": attempt,
            "recorded_at": now_millis(),
            "output": [msgspec.structs.replace(m, tool_call_id=None) for m in messages],
        }
        for key in ("token_usage", "cost_usd", "duration_ms", "start_time", "end_time"):
            value = getattr(response, key)
            if value is not None:
                row[key] = value
        with self._lock:
            self._handle.write(redact_bytes(self._encoder.encode(row)) + b"\n")
            self._handle.flush()

    def close(self) -> None:
        self._handle.close()
