"""What every coding-agent target shares: its settings, where it runs, and one run of it.

Where the agent runs: the test's workspace (a copy of `workspace.template`) when it has one, as AgentV
does; else `cwd` from targets.yaml (relative to the project dir); else a fresh empty temporary
directory, deleted afterwards. An agent whose permission prompts are bypassed is never let loose in
your checkout unless you point `cwd:` at it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agentv_ci.deadlines import default_test_timeout_s
from agentv_ci.errors import TargetError
from agentv_ci.model.bounds import TimeoutSeconds
from agentv_ci.model.result import TargetResponse
from agentv_ci.plugins import TargetRequest
from agentv_ci.security.child_env import child_environment
from agentv_ci.targets.agents.stream_runner import EventReader, StreamOutcome, run_event_stream
from agentv_ci.targets.agents.transcript import Transcript
from agentv_ci.targets.pricing import Price


class AgentConfig(msgspec.Struct, omit_defaults=True):
    """Settings every agent target takes (AgentV's names)."""

    executable: str = ""  # default: the agent's usual command on PATH; may hold extra words ("node cli.js")
    args: list[str] = []  # extra arguments, after ours
    model: str | None = None
    cwd: str | None = None
    timeout_seconds: TimeoutSeconds | None = None
    system_prompt: str | None = None
    env: dict[str, str] = {}
    pricing: Price | None = None  # USD per million tokens, when the agent reports tokens but no cost


# AgentV's other spellings of the common settings.
AGENT_FIELD_ALIASES: dict[str, str] = {
    "command": "executable",
    "binary": "executable",
    "arguments": "args",
}


class AgentCliTarget:
    """Base of the agent targets. A family sets `FAMILY`, `AGENT`, `DEFAULT_EXECUTABLE` and says how
    to start the agent (`arguments`, `stdin_text`, `environment`) and read it (`reader`, `finish`)."""

    Config: ClassVar[type[msgspec.Struct]] = AgentConfig
    FIELD_ALIASES: ClassVar[dict[str, str]] = AGENT_FIELD_ALIASES
    FAMILY: ClassVar[str] = ""
    AGENT: ClassVar[str] = ""
    DEFAULT_EXECUTABLE: ClassVar[str] = ""
    # The agent's own credentials: handed through the scrubbed environment (security.child_env)
    # when set, as a cli target's `env:` would; every other runner secret stays out.
    CREDENTIAL_ENV: ClassVar[tuple[str, ...]] = ()
    # The agent's own configuration-directory variables (`CODEX_HOME`, `COPILOT_HOME`,
    # `PI_CODING_AGENT_DIR`...): handed through likewise, so the agent reads the config you pointed it at.
    CONFIG_ENV: ClassVar[tuple[str, ...]] = ()
    inline_files: ClassVar[bool] = False  # the agent reads attached files itself: it gets their paths

    def __init__(self, name: str, config: AgentConfig, *, base_dir: Path) -> None:
        self.name = name
        self.config = config
        self.base_dir = base_dir
        words = shlex.split(config.executable) if config.executable.strip() else [self.DEFAULT_EXECUTABLE]
        self.command = words

    # ------------------------------------------------------------------ family hooks
    def arguments(self, request: TargetRequest, workdir: Path) -> list[str]:
        raise NotImplementedError

    def stdin_text(self, request: TargetRequest) -> str | None:
        """What to write to the agent's stdin before closing it (None: nothing)."""
        return None

    def environment(self, base: dict[str, str], scratch: Path) -> dict[str, str]:
        """The agent's environment, from the scrubbed `base`; `scratch` is a private directory for
        this run (removed afterwards) where a family may write config files the agent reads."""
        return base

    def reader(self, transcript: Transcript, request: TargetRequest, workdir: Path) -> EventReader:
        raise NotImplementedError

    def finish(self, reader: Any, transcript: Transcript, outcome: StreamOutcome) -> TargetResponse:
        raise NotImplementedError

    # ------------------------------------------------------------------ shared
    def prompt_with_system(self, request: TargetRequest) -> str:
        """The prompt, with `system_prompt` first when set (how AgentV gives it to most agents)."""
        system = (self.config.system_prompt or "").strip()
        return f"{system}\n\n{request.prompt}" if system else request.prompt

    def failed(self, outcome: StreamOutcome, message: str | None = None) -> TargetError:
        """The agent failed: its own message, else its exit code and the tail of what it printed."""
        head = f"{self.AGENT} exited with code {outcome.exit_code}"
        detail = message or outcome.detail()
        return TargetError(f"{head}: {detail}" if detail else head)

    def _workdir(self, request: TargetRequest) -> tuple[Path, Path | None]:
        if request.workspace_path is not None:
            return request.workspace_path, None
        if self.config.cwd:
            return (self.base_dir / self.config.cwd).resolve(), None
        temp = Path(tempfile.mkdtemp(prefix=f"agentv-ci-{self.FAMILY}-"))
        return temp, temp

    async def invoke(self, request: TargetRequest) -> TargetResponse:
        workdir, temporary = self._workdir(request)
        scratch = Path(tempfile.mkdtemp(prefix=f"agentv-ci-{self.FAMILY}-config-"))
        try:
            transcript = Transcript(self.FAMILY, wall_start=time.time())
            transcript.model = self.config.model
            reader = self.reader(transcript, request, workdir)
            names = (*self.CREDENTIAL_ENV, *self.CONFIG_ENV)
            own = {k: os.environ[k] for k in names if os.environ.get(k)}
            env = self.environment(child_environment({**own, **self.config.env}), scratch)
            timeout = self.config.timeout_seconds or request.timeout_s or default_test_timeout_s()
            outcome = await run_event_stream(
                [*self.command, *self.arguments(request, workdir)],
                reader,
                cwd=workdir,
                env=env,
                stdin_text=self.stdin_text(request),
                timeout_s=timeout,
                agent=self.AGENT,
            )
            response = self.finish(reader, transcript, outcome)
            if not response.text.strip() and not transcript.tool_calls():
                # Exited 0 having said and done nothing: no answer, never graded as an empty string.
                raise TargetError(f"{self.AGENT}: the agent gave no answer (no text, no tool calls)")
            return response
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
            if temporary is not None:
                shutil.rmtree(temporary, ignore_errors=True)

    async def aclose(self) -> None:
        return None
