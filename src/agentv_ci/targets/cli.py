"""`cli`: run any command as the agent, the portable provider (AgentV-compatible).

`command` placeholders: `{PROMPT}` (the input text), `{PROMPT_FILE}`, `{OUTPUT_FILE}` (the command
must write it; stdout is ignored), `{FILES}` (attached files, each formatted by `files_format`, default
`{path}`, space-separated), `{EVAL_ID}`, `{ATTEMPT}` (0-based). Data (`{PROMPT}`, `{EVAL_ID}`, the
files' `{path}`/`{basename}`) reaches the command as `"$AGENTV_..."` expansions of environment
variables, never as shell code; a template that puts one inside quotes or a nested shell is refused
(security/shell_values.py). Runner-made paths are plain and substituted as written.
The output file is JSON with any of `output` (messages, with AgentV `tool_calls`; legacy
`output_messages`), `text`, `token_usage {input, output, cached}`, `cost_usd`, `duration_ms`;
anything else is taken as the answer text. The answer's cost is the `cost_usd` it reports, else the
`pricing` the target declares (`per_call_usd`, and/or `input_per_mtok`/`output_per_mtok` of its
`token_usage`), else unknown (docs/targets.md: "A cli target's price"). A non-zero exit, a timeout
or a missing output file is an execution error. The timeout is `timeout_seconds`, else the test's,
else the default of `deadlines.py`.
"""

from __future__ import annotations

import asyncio
import errno
import math
import re
import shutil
import time
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agentv_ci.deadlines import default_test_timeout_s, timed_out
from agentv_ci.errors import ConfigError, TargetError, TargetTimeout
from agentv_ci.model.bounds import TimeoutSeconds
from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.model.suite import Message
from agentv_ci.plugins import TargetRequest
from agentv_ci.prompting import final_answer
from agentv_ci.security.child_env import child_environment
from agentv_ci.security.shell_values import (
    CommandProblem,
    Expansion,
    Template,
    UnsafePathError,
    plain_path,
    plain_temp_dir,
    variable,
)
from agentv_ci.targets.answer_cap import oversized_plain_text
from agentv_ci.targets.pricing import CallPrice
from agentv_ci.targets.subprocesses import communicate_capped, spawn_stoppable, stop_group

MAX_OUTPUT_FILE_BYTES = 32 * 1024 * 1024  # of a larger {OUTPUT_FILE}, only this much is read (JSON: refused)
COMMAND = Template(
    re.compile(r"\{([A-Z_]+)\}"),
    data=frozenset({"PROMPT", "EVAL_ID", "FILES"}),
    runner=frozenset({"PROMPT_FILE", "OUTPUT_FILE", "ATTEMPT"}),
)
FILES_FORMAT = Template(re.compile(r"\{([a-z]+)\}"), data=frozenset({"path", "basename"}), runner=frozenset())


class CliConfig(msgspec.Struct, omit_defaults=True):
    command: str = ""
    cwd: str | None = None  # default: the workspace, else the eval file's directory
    timeout_seconds: TimeoutSeconds | None = None
    files_format: str = "{path}"
    keep_temp_files: bool = False
    env: dict[str, str] = {}
    pricing: CallPrice | None = None  # when the output reports no `cost_usd`


def command_problems(config: CliConfig) -> list[CommandProblem]:
    """Where `command` (or `files_format`) puts data inside quotes or a nested shell: refused by
    `validate` and before a run (targets.factory), located at the key."""
    problems = [
        CommandProblem(
            "command", *COMMAND.describe(p, file_hint="{PROMPT_FILE}" if p.name == "PROMPT" else None)
        )
        for p in COMMAND.problems(config.command)
    ]
    # `files_format` is a piece of the command's arguments: read it after a command name.
    for problem in FILES_FORMAT.problems("x " + config.files_format):
        problem.start -= 2
        problems.append(CommandProblem("files_format", *FILES_FORMAT.describe(problem)))
    return problems


def format_files(files: list[str], template: str) -> Expansion:
    """`{FILES}`: each file through `files_format` (`{path}`, `{basename}`), space-joined; the names
    are variables (`AGENTV_FILE_<n>`, `AGENTV_FILE_<n>_NAME`), so no file name is shell code."""
    words: list[str] = []
    env: dict[str, str] = {}
    for number, path in enumerate(files, 1):
        data = {
            "path": variable(f"AGENTV_FILE_{number}", path),
            "basename": variable(f"AGENTV_FILE_{number}_NAME", Path(path).name),
        }
        word, used = FILES_FORMAT.render(template, data, {})
        words.append(word)
        env.update(used)
    return Expansion(" ".join(words), env)


def parse_output_file(text: str) -> TargetResponse:
    """AgentV's cli output file (JSON) or plain text."""
    try:
        data = msgspec.json.decode(text.encode())
    except (msgspec.DecodeError, RecursionError):  # too deep to be an output file: the text is the answer
        data = None
    if not isinstance(data, dict) or not ({"output", "output_messages", "text"} & data.keys()):
        # Kept as written (line endings normalised by the read), as AgentV does: `regex: end$` must
        # see the trailing newline the agent wrote.
        return TargetResponse(text=text, messages=[Message(role="assistant", content=text)])
    raw_messages = data.get("output", data.get("output_messages"))
    messages: list[Message] = []
    if isinstance(raw_messages, list):
        try:
            messages = msgspec.convert(raw_messages, list[Message], strict=False)
        except msgspec.ValidationError as exc:
            raise TargetError(f"cli output file: bad `output` messages: {exc}") from None
    # As AgentV: `output` messages first, then `text` (stringified when not a string).
    if messages:
        answer = final_answer(messages)
    else:
        answer = _as_text(data.get("text"))
        messages = [Message(role="assistant", content=answer)]
    usage = None
    if isinstance(data.get("token_usage"), dict):
        usage = msgspec.convert(data["token_usage"], TokenUsage, strict=False)
    cost = _non_negative(data.get("cost_usd"))
    duration = _non_negative(data.get("duration_ms"))
    llm_calls = sum(1 for m in messages if m.role == "assistant")
    return TargetResponse(
        text=answer,
        messages=messages,
        token_usage=usage,
        cost_usd=cost,
        duration_ms=duration,
        llm_call_count=llm_calls,
    )


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool | dict | list):
        return msgspec.json.encode(value).decode()
    return str(value)


def _non_negative(value: Any) -> float | None:
    # an infinite or NaN figure from the agent's file is no figure (it would poison the run's spend)
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 and math.isfinite(value):
        return float(value)
    return None


class CliTarget:
    """Runs a shell command per test and reads the answer from `{OUTPUT_FILE}`."""

    Config: ClassVar[type[msgspec.Struct]] = CliConfig
    REQUIRED_FIELDS: ClassVar[tuple[str, ...]] = ("command",)
    inline_files: ClassVar[bool] = False  # the agent gets `<file: path="...">` references, as in AgentV

    @staticmethod
    def command_problems(config: CliConfig) -> list[CommandProblem]:
        return command_problems(config)

    def __init__(self, name: str, config: CliConfig, *, base_dir: Path) -> None:
        if not config.command:
            raise ConfigError(
                f"target {name!r} (cli) needs `command`",
                hint='command: "python agent.py {PROMPT_FILE} {OUTPUT_FILE}"',
            )
        self.name = name
        self.config = config
        self.base_dir = base_dir

    def _cwd(self, request: TargetRequest) -> Path:
        if self.config.cwd:
            return (self.base_dir / self.config.cwd).resolve()
        if request.workspace_path is not None:
            return request.workspace_path
        return request.eval_path.parent

    async def invoke(self, request: TargetRequest) -> TargetResponse:
        try:
            temp_dir = plain_temp_dir("agentv-ci-cli-")
        except UnsafePathError as exc:
            raise TargetError(f"cli target {self.name!r}: {exc}") from None
        try:
            return await self._run(request, temp_dir)
        finally:
            if not self.config.keep_temp_files:
                shutil.rmtree(temp_dir, ignore_errors=True)

    async def _run(self, request: TargetRequest, temp_dir: Path) -> TargetResponse:
        prompt_file = temp_dir / "prompt.md"
        output_file = temp_dir / "output.json"
        prompt_file.write_text(request.prompt, encoding="utf-8")
        problems = command_problems(self.config)  # checked before the run too (targets.factory)
        if problems:
            raise TargetError(f"cli target {self.name!r}: {problems[0].message}")
        data = {
            "PROMPT": variable("AGENTV_PROMPT", request.prompt),
            "EVAL_ID": variable("AGENTV_EVAL_ID", request.test.id),
            "FILES": format_files(list(request.files), self.config.files_format),
        }
        runner = {
            "PROMPT_FILE": plain_path(prompt_file, "{PROMPT_FILE}"),
            "OUTPUT_FILE": plain_path(output_file, "{OUTPUT_FILE}"),
            "ATTEMPT": str(request.attempt),
        }
        command, variables = COMMAND.render(self.config.command, data, runner)
        # Scrubbed (security.child_env): the agent gets the variables its `env:` names, not the runner's.
        env = child_environment(
            {
                **self.config.env,
                "AGENTV_EVAL_ID": request.test.id,
                "AGENTV_ATTEMPT": str(request.attempt),
                **variables,
            }
        )
        timeout = self.config.timeout_seconds or request.timeout_s or default_test_timeout_s()
        started = time.perf_counter()
        cwd = self._cwd(request)
        try:
            process = await spawn_stoppable(
                asyncio.create_subprocess_shell(
                    command,
                    cwd=str(cwd),
                    env=env,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,
                )
            )
        except (OSError, ValueError) as exc:
            if isinstance(exc, ValueError) or exc.errno == errno.E2BIG:  # a NUL byte, a value over 128 KiB
                raise TargetError(
                    f"cli target {self.name!r} could not start: {exc} (pass a long or binary prompt "
                    "with {PROMPT_FILE})"
                ) from None
            # the directory went away (or cannot be entered) since the run began
            raise TargetError(f"cli target {self.name!r} cannot start in {cwd}: {exc.strerror}") from None
        try:
            _, stderr = await asyncio.wait_for(communicate_capped(process), timeout)
        except (TimeoutError, asyncio.CancelledError) as exc:
            await stop_group(process)
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise TargetTimeout(f"cli target {self.name!r} {timed_out(timeout)}") from None
        elapsed_ms = (time.perf_counter() - started) * 1000
        if process.returncode != 0:
            tail = stderr.decode("utf-8", errors="replace").strip()[-500:]
            detail = f": {tail}" if tail else ""
            raise TargetError(f"cli target {self.name!r} exited with code {process.returncode}{detail}")
        if not output_file.is_file():
            raise TargetError(f"cli target {self.name!r} did not write {{OUTPUT_FILE}} ({output_file.name})")
        size = output_file.stat().st_size
        if size > MAX_OUTPUT_FILE_BYTES:  # plain text: its head, cut by the answer cap; JSON: refused
            response = oversized_plain_text(output_file, MAX_OUTPUT_FILE_BYTES, size)
            if response is None:
                raise TargetError(
                    f"cli target {self.name!r} wrote {size} bytes of JSON to {{OUTPUT_FILE}}, more than "
                    f"{MAX_OUTPUT_FILE_BYTES // (1024 * 1024)} MiB"
                )
        else:
            response = parse_output_file(output_file.read_text(encoding="utf-8", errors="replace"))
        if response.duration_ms is None:
            response = msgspec.structs.replace(response, duration_ms=elapsed_ms)
        if response.cost_usd is None and self.config.pricing is not None:
            cost = self.config.pricing.cost(response.token_usage)
            response = msgspec.structs.replace(response, cost_usd=cost)
        return response

    async def aclose(self) -> None:
        return None
