"""`code-grader`: an external script grades the answer (AgentV's stdin/stdout JSON protocol).

The script gets one JSON document on stdin (see `code_protocol.build_payload`) and answers on stdout.
It runs with cwd = `cwd` (relative to the eval file) or the eval file's directory, in its own
process group; `timeout_seconds` (default 300) kills the whole group; stdout is capped at 1 MiB.
Any failure to produce a grade is a grader error (an execution error), never a low score.
With `target: true` / `{max_calls: N}` the script gets AgentV's target proxy (graders/target_proxy.py):
`AGENTV_TARGET_PROXY_URL` and `AGENTV_TARGET_PROXY_TOKEN`, never the grader target's API key.
A test with a docker workspace runs the script in a fresh container (graders/code_in_docker.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agentv_ci.errors import ConfigError
from agentv_ci.graders.code_in_docker import repository_root, run_in_container
from agentv_ci.graders.code_process import ScriptFailure, ScriptRun
from agentv_ci.graders.code_protocol import ProtocolError, interpret, run_with_payload
from agentv_ci.graders.docker_container import ContainerFailure
from agentv_ci.graders.outcome import errored, scored
from agentv_ci.graders.target_proxy import DEFAULT_MAX_CALLS, TargetProxy
from agentv_ci.model.bounds import TimeoutSeconds
from agentv_ci.model.result import GraderResult
from agentv_ci.model.suite import GraderSpec
from agentv_ci.plugins import GradingContext

DEFAULT_TIMEOUT_S = 300.0


class CodeGraderConfig(msgspec.Struct):
    """`command` (argv list, or a string run via `sh -c`; `script` is the deprecated name), `cwd`,
    `timeout_seconds`, `config` (passed to the script; unknown keys are merged in), `target`
    (`true` or `{max_calls: N}`: the target proxy)."""

    command: list[str] | str | None = None
    script: list[str] | str | None = None
    cwd: str | None = None
    timeout_seconds: TimeoutSeconds | None = None
    config: dict[str, Any] | None = None
    target: Any = None


def command_argv(raw: list[str] | str | None, *, what: str, where: Any) -> list[str]:
    """An argv list: lists as written, strings through `sh -c`."""
    if isinstance(raw, str) and raw.strip():
        return ["sh", "-c", raw]
    if isinstance(raw, list) and raw and all(isinstance(a, str) for a in raw):
        return [str(a) for a in raw]
    raise ConfigError(f"{what}: `command` must be a non-empty list of strings or a string", location=where)


def _proxy_calls(raw: Any, what: str, where: Any) -> int | None:
    """`target: true` or `target: {max_calls: N}` -> the proxy's call budget; None = no proxy."""
    if raw is None or raw is False:
        return None
    if raw is True:
        return DEFAULT_MAX_CALLS
    if isinstance(raw, dict):
        unknown = sorted(set(raw) - {"max_calls"})
        if unknown:
            raise ConfigError(
                f"{what}: unknown key `{unknown[0]}` in `target`", location=where, hint="only max_calls"
            )
        calls = raw.get("max_calls", DEFAULT_MAX_CALLS)
        if isinstance(calls, bool) or not isinstance(calls, int | float) or calls < 0 or calls != int(calls):
            raise ConfigError(f"{what}: `target.max_calls` must be a non-negative integer", location=where)
        return int(calls)
    raise ConfigError(
        f"{what}: `target` must be true or a mapping with `max_calls`",
        location=where,
        hint="target: {max_calls: 10} gives the script AgentV's target proxy",
    )


class CodeGrader:
    """`code-grader`: runs a script that reads the answer as JSON on stdin and prints its grade."""

    Config: ClassVar[type[msgspec.Struct]] = CodeGraderConfig

    def __init__(self, spec: GraderSpec, config: CodeGraderConfig, *, base_dir: Path) -> None:
        self.spec = spec
        where = spec.config_locations.get("command", spec.location)
        what = f"code-grader {spec.name!r}"
        self.argv = command_argv(
            config.command if config.command is not None else config.script, what=what, where=where
        )
        self.cwd = (base_dir / config.cwd).resolve() if config.cwd else base_dir.resolve()
        self.timeout_s = config.timeout_seconds or DEFAULT_TIMEOUT_S
        self.explicit_timeout_s = config.timeout_seconds
        self.explicit_cwd = bool(config.cwd)
        self.repo_root = repository_root(base_dir)
        if self.timeout_s <= 0:
            raise ConfigError(f"{what}: `timeout_seconds` must be > 0", location=spec.location)
        self.max_calls = _proxy_calls(config.target, what, spec.config_locations.get("target", spec.location))
        known = set(CodeGraderConfig.__struct_fields__)
        extra = {k: v for k, v in spec.config.items() if k not in known}
        self.script_config = {**extra, **(config.config or {})}  # explicit `config` wins

    async def grade(self, ctx: GradingContext) -> GraderResult:
        if self.max_calls is None or ctx.call_grader_target is None:
            return await self._grade(ctx, None)
        proxy = TargetProxy(
            ctx.call_grader_target, max_calls=self.max_calls, test_id=ctx.test.id, attempt=ctx.attempt
        )
        async with proxy:
            result = await self._grade(ctx, proxy)
        details = {**(result.details or {}), "target_proxy": proxy.usage_details()}
        return msgspec.structs.replace(result, details=details, token_usage=proxy.token_usage())

    async def _run(self, ctx: GradingContext, proxy: TargetProxy | None) -> ScriptRun:
        """The script's run: in its test's docker container, or on the host."""
        workspace = ctx.test.workspace
        docker = workspace.docker if workspace is not None else None
        if workspace is not None and docker is not None:
            # AgentV: the docker `timeout` bounds the run; a shorter `timeout_seconds` wins
            timeout = min(float(docker.timeout), self.explicit_timeout_s or float(docker.timeout))
            return await run_in_container(
                self.argv,
                docker,
                ctx.test,
                ctx.response,
                config=self.script_config,
                workspace_path=ctx.workspace_path,
                cwd=self.cwd,
                repo_root=self.repo_root,
                timeout_s=timeout,
                explicit_cwd=self.explicit_cwd,
                image_repos=workspace.image_repos,
                dependencies=ctx.dependency_results,
            )
        env = {"AGENTV_WORKSPACE_PATH": str(ctx.workspace_path)} if ctx.workspace_path else {}
        if proxy is not None:
            env.update(proxy.env)  # the URL and token only: the grader target's key stays here
        return await run_with_payload(
            self.argv,
            ctx.test,
            ctx.response,
            config=self.script_config,
            workspace_path=ctx.workspace_path,
            cwd=self.cwd,
            timeout_s=self.timeout_s,
            spill_prefix="agentv-ci-grader-",
            indent=2,
            env=env or None,
            dependencies=ctx.dependency_results,
        )

    async def _grade(self, ctx: GradingContext, proxy: TargetProxy | None) -> GraderResult:
        try:
            run = await self._run(ctx, proxy)
        except (ScriptFailure, ContainerFailure) as exc:
            return self._failed(str(exc))
        try:
            interpreted = interpret(run.exit_code, run.stdout, run.stderr)
        except ProtocolError as exc:
            return self._failed(str(exc), {"stdout": run.stdout[-2000:]} if run.stdout.strip() else None)
        score, assertions, details, verdict = interpreted
        if run.stderr.strip():
            details.setdefault("stderr", run.stderr[-2000:])
        del verdict  # only the composite code aggregator reads a script's `verdict`
        return scored(self.spec, score, assertions, details=details or None)

    def _failed(self, message: str, details: dict[str, Any] | None = None) -> GraderResult:
        """A grader error (the test becomes an execution error) with AgentV's assertion text."""
        return errored(
            self.spec,
            f"code-grader {self.spec.name!r} failed: {message}",
            details=details,
            text=f"Code evaluator failed: {message}",
        )
