"""What produced a job's rows (model/provenance.py): the target's model and answer-changing fields,
the judge targets its graders ask, a digest of their prompt templates, and the versions of the
outside grader plugins it uses.

The definition fingerprint (fingerprints.py) already covers the target's fields and the *name* of
its `grader_target`; it misses the judge's own model and parameters, a `--grader-target`, the built-in
prompt templates an upgrade may reword, and a grader plugin's version. This fills those gaps.

Only real runs record it (a dry run's answers come from a mock): target identities, plugin origins
and prompt digests are computed once per run, and jobs produced alike share one `Provenance`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci.errors import ConfigError
from agentv_ci.graders import llm_prompts as prompts
from agentv_ci.graders.composite import DEFAULT_AGGREGATOR_PROMPT
from agentv_ci.grading import graders_for
from agentv_ci.model.provenance import ModelIdentity, Provenance
from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import Test
from agentv_ci.plugins.contracts import NAMESPACES
from agentv_ci.plugins.registry import list_plugins
from agentv_ci.running.fingerprints import answer_fields
from agentv_ci.running.plan import Job
from agentv_ci.targets.config import TargetsConfig
from agentv_ci.targets.grader_caller import default_grader_target

__all__ = ["ProvenanceRecorder"]

_PROMPTED = frozenset({"llm-grader", "rubrics"})  # graders that ask the judge with a prompt template
# Request fields shown as written; any other string (a base_url, a command, a system prompt) is
# recorded by digest: a results file must not carry what a targets.yaml interpolated from secrets.
_PLAIN = frozenset({"api_format", "anthropic_version", "version", "reasoning_effort", "response_format"})
_ENCODER = msgspec.json.Encoder(order="sorted")


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()[:16]


def _parameter(key: str, value: Any) -> str:
    if isinstance(value, str):
        return value if key in _PLAIN and len(value) <= 100 else _digest(value.encode("utf-8", "replace"))
    try:
        text = _ENCODER.encode(value).decode()
    except (TypeError, ValueError):  # a YAML value JSON cannot hold (a date): by its text
        text = repr(value)
    return text if len(text) <= 40 else _digest(text.encode("utf-8", "replace"))


def _default_prompts() -> str:
    """A digest of the built-in templates, rendered with placeholders: a reworded one shows."""
    values = prompts.template_variables(Test(id="x"), TargetResponse(text="x"), [])
    placeholders = {key: "{{" + key + "}}" for key in values}
    rubric = [{"id": "r", "outcome": "{{rubric}}", "weight": 1.0, "required": True}]
    texts = [
        prompts.default_prompt(placeholders),
        prompts.rubric_prompt(placeholders, rubric, score_ranges=False),
        prompts.FREEFORM_SYSTEM,
        prompts.CHECKLIST_SYSTEM,
        prompts.SCORE_RANGE_SYSTEM,
        prompts.REPAIR_TEMPLATE,
        DEFAULT_AGGREGATOR_PROMPT,
    ]
    return _digest("\x00".join(texts).encode())


def _members(config: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(type, config) of a composite's members and of its llm aggregator, nested ones too."""
    for raw in config.get("assertions") or ():
        if isinstance(raw, dict) and isinstance(raw.get("type"), str):
            inner = raw.get("config")
            member = inner if isinstance(inner, dict) else raw
            yield raw["type"], member
            if raw["type"] == "composite":
                yield from _members(member)
    aggregator = config.get("aggregator")
    if isinstance(aggregator, dict) and aggregator.get("type") in ("llm-grader", "llm_judge", "llm-judge"):
        yield "llm-aggregator", aggregator


class ProvenanceRecorder:
    """One per run. `of_job` is cheap after the first job of each target and grader set."""

    def __init__(self, grader_target: str | None) -> None:
        self.grader_target = grader_target  # --grader-target: answers every judge grader
        self._identities: dict[tuple[Path | None, str, str | None], ModelIdentity] = {}
        self._origins: dict[str, str] | None = None
        self._prompts: dict[tuple[str, str], str] = {}
        self._defaults: str | None = None
        self._shared: dict[tuple[Any, ...], Provenance] = {}

    def of_job(self, job: Job, targets: TargetsConfig) -> Provenance:
        judges: list[ModelIdentity] = []
        prompt_parts: list[str] = []
        plugins: dict[str, str] = {}
        eval_dir = os.path.dirname(job.suite.path)
        default_judge: str | None = None
        for kind, config in self._graders(job.test):
            origin = self._plugin_origins().get(kind)
            if origin is not None:
                plugins[kind] = origin
            asks_judge = kind in _PROMPTED or kind == "llm-aggregator"
            if not asks_judge and not (kind == "code-grader" and config.get("target")):
                continue
            own = config.get("target") if kind in _PROMPTED else None
            name = self.grader_target or (own if isinstance(own, str) and own else None)
            if name is None:
                default_judge = default_judge or default_grader_target(targets, job.target) or job.target
                name = default_judge
            judge = self._identity(name, targets)
            if judge not in judges:
                judges.append(judge)
            prompt_parts.append(self._prompt(eval_dir, config.get("prompt")) if asks_judge else "script")
        target = self._identity(job.target, targets)
        judge_prompt = _digest("\x00".join(prompt_parts).encode()) if prompt_parts else None
        # identities are made once per run, so their ids name them
        key = (id(target), *(id(j) for j in judges), judge_prompt, *sorted(plugins.items()))
        shared = self._shared.get(key)
        if shared is None:
            shared = self._shared[key] = Provenance(target, judges, judge_prompt, plugins)
        return shared

    # ------------------------------------------------------------------ parts
    @staticmethod
    def _graders(test: Test) -> Iterator[tuple[str, dict[str, Any]]]:
        for spec in graders_for(test):
            yield spec.type, spec.config
            if spec.type == "composite":
                yield from _members(spec.config)

    def _identity(self, name: str, targets: TargetsConfig) -> ModelIdentity:
        key = (targets.path, name, targets.aliased.get(name))
        identity = self._identities.get(key)
        if identity is None:
            identity = self._identities[key] = self._resolve(name, targets)
        return identity

    @staticmethod
    def _resolve(name: str, targets: TargetsConfig) -> ModelIdentity:
        if name not in targets.targets:
            return ModelIdentity(name=name, provider=name if name == "mock" else None)
        try:
            definition = targets.resolve(name)
        except ConfigError:  # a broken alias: the run reports it
            return ModelIdentity(name=name)
        fields = answer_fields(definition.fields)
        model = fields.pop("model", None)
        return ModelIdentity(
            name=name,
            provider=definition.provider,
            model=None if model is None else str(model),
            parameters={key: _parameter(key, value) for key, value in sorted(fields.items())},
        )

    def _plugin_origins(self) -> dict[str, str]:
        """Grader type -> "distribution version" for graders from outside packages (built-ins and a
        name two distributions claim, which fails when used, are left out)."""
        if self._origins is None:
            found: dict[str, list[str | None]] = {}
            for info in list_plugins(NAMESPACES["grader"]):
                found.setdefault(info.name, []).append(None if info.builtin else info.origin)
            self._origins = {
                name: origins[0] for name, origins in found.items() if len(origins) == 1 and origins[0]
            }
        return self._origins

    def _prompt(self, eval_dir: str, raw: Any) -> str:
        """The template's digest: the built-in ones', a file's bytes, inline text, a prompt script's
        settings (what the script prints is not known before it runs)."""
        if raw is None or raw == "":
            if self._defaults is None:
                self._defaults = _default_prompts()
            return self._defaults
        if not isinstance(raw, str):
            return _digest(_ENCODER.encode(raw) if isinstance(raw, dict | list) else repr(raw).encode())
        key = (eval_dir, raw)
        digest = self._prompts.get(key)
        if digest is None:
            path = os.path.join(eval_dir, raw.removeprefix("file://"))
            try:
                is_file = len(raw) <= 300 and "\n" not in raw and os.path.isfile(path)
                data = Path(path).read_bytes() if is_file else raw.encode("utf-8", "replace")
            except (OSError, ValueError):  # unreadable: the grader reports it; the text stands in
                data = raw.encode("utf-8", "replace")
            digest = self._prompts[key] = _digest(data)
        return digest
