"""The targets files a run reads, one per eval-file directory, and what an eval file's matrix entries
(`execution.targets: [{name, use_target, hooks}]`) add to them for a job: an alias (`use_target`,
used when no targets file declares the name, as AgentV) and the target's hooks (running/lifecycle.py)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import msgspec

from agentv_ci.model.source import SourceLocation
from agentv_ci.model.workspace import TargetHooks, WorkspaceSpec
from agentv_ci.running.needs import matrix_alias
from agentv_ci.running.plan import Job
from agentv_ci.running.workspace import workspace_of
from agentv_ci.targets.config import TargetsConfig, load_targets

TargetKey = tuple[Path | None, str, str | None]  # eval dir, target name, its matrix alias


class TargetConfigs:
    """Loads each targets file once (per eval-file directory) and derives the aliased ones."""

    def __init__(self, targets_file: Path | None, env: Mapping[str, str] | None, warnings: list[str]) -> None:
        self.targets_file = targets_file
        self.env = env
        self.warnings = warnings
        self._configs: dict[Path, TargetsConfig] = {}
        self._by_suite: dict[str, TargetsConfig] = {}
        self._aliased: dict[tuple[int, str, str], TargetsConfig] = {}
        self._hookless: set[tuple[str, str]] = set()  # (eval path, target) warned: hooks, no workspace

    def for_suite(self, suite_path: str) -> TargetsConfig:
        config = self._by_suite.get(suite_path)
        if config is None:
            directory = Path(suite_path).parent
            config = self._configs.get(directory)
            if config is None:
                config = load_targets(Path(suite_path), explicit=self.targets_file, env=self.env)
                self._configs[directory] = config
            self._by_suite[suite_path] = config
        return config

    def with_alias(
        self, config: TargetsConfig, target: str, alias: tuple[str, SourceLocation | None] | None
    ) -> TargetsConfig:
        """`config` with the eval file's matrix alias for `target` (`{name, use_target}`), if any."""
        if alias is None or target in config.targets:
            return config
        key = (id(config), target, alias[0])
        aliased = self._aliased.get(key)
        if aliased is None:
            aliased = self._aliased[key] = config.with_alias(target, alias[0], alias[1])
        return aliased

    def for_job(self, job: Job) -> TargetsConfig:
        """The targets the job's target resolves in: its suite's file, plus its matrix alias."""
        config = self.for_suite(job.suite.path)
        if not job.test.execution.target_hooks:  # no matrix entry, no alias: asked twice per job
            return config
        return self.with_alias(config, job.target, matrix_alias(job.test, job.target))

    @staticmethod
    def key(config: TargetsConfig, target: str) -> TargetKey:
        """The target instance's key: an alias of the same name in another eval file is another one."""
        return (config.eval_dir, target, config.aliased.get(target))

    def hooks(self, job: Job, shown_path: str) -> TargetHooks | None:
        """The hooks of the job's matrix entry; with no workspace to run them in, a warning (once per
        eval file and target), as AgentV runs them in the workspace only."""
        entry = (job.test.execution.target_hooks or {}).get(job.target)
        if entry is None or not entry.hooks:
            return None
        if workspace_of(job.test, job.suite) is None and (job.suite.path, job.target) not in self._hookless:
            self._hookless.add((job.suite.path, job.target))
            self.warnings.append(
                f"{shown_path}: target {job.target!r}: its matrix hooks run in the test's workspace, and "
                "its tests have none: they are not run (as AgentV)"
            )
        return entry


def setup_of(job: Job) -> WorkspaceSpec | None:
    """The workspace a cache key describes, with the matrix target's hooks in it: they set it up
    too, so a changed target hook never reuses an answer."""
    spec = workspace_of(job.test, job.suite)
    entry = (job.test.execution.target_hooks or {}).get(job.target)
    if spec is None or entry is None or not entry.hooks:
        return spec
    extra = {f"target_{name}": hook for name, hook in entry.hooks.items()}
    return msgspec.structs.replace(spec, hooks={**spec.hooks, **extra})
