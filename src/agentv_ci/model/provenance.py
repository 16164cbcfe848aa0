"""What produced a result: the target's model and parameters, the judge's, the judge prompt, the
grader plugins' versions (docs/gates.md, "Incomparable baselines").

Two results of one test are compared only when they were produced alike: `differences` names what
differs ("judge model gpt-4o -> gpt-4.1"), and compare.py calls such a test `incomparable`. Values
come from results files, so they are treated as hostile: shown cut and cleaned by the reports.
"""

from __future__ import annotations

import msgspec

__all__ = ["ModelIdentity", "Provenance", "differences"]

_SHOWN = 60  # characters of a value in a reason: a long `system_prompt` says nothing more in a PR


class ModelIdentity(msgspec.Struct, frozen=True, omit_defaults=True):
    """A target as it bears on answers: its name, provider, model and the other request fields that
    can change an answer (temperature, max_tokens, ...; each as canonical JSON text, a long one by its
    digest). Secrets and the runner's knobs are never in it (running/fingerprints.py lists them)."""

    name: str
    provider: str | None = None
    model: str | None = None
    parameters: dict[str, str] = {}


class Provenance(msgspec.Struct, frozen=True, omit_defaults=True):
    """What produced a row. `judges`: the grader targets its judge graders asked (in grader order);
    `judge_prompt`: a digest of their prompt templates (the built-in default ones included, so an
    upgrade that rewords them shows); `plugins`: grader type -> "distribution version" of each grader
    that comes from an outside plugin package (built-ins move with agentv-ci and the prompt digest)."""

    target: ModelIdentity | None = None
    judges: list[ModelIdentity] = []
    judge_prompt: str | None = None
    plugins: dict[str, str] = {}


def _shown(value: str | None) -> str:
    if value is None:
        return "(none)"
    return value if len(value) <= _SHOWN else value[: _SHOWN - 1] + "…"


def _model_changes(role: str, base: ModelIdentity | None, head: ModelIdentity | None) -> list[str]:
    if base == head:
        return []
    if base is None or head is None:
        return [f"{role} {_shown(base.name if base else None)} -> {_shown(head.name if head else None)}"]
    out = []
    if base.provider != head.provider:
        out.append(f"{role} provider {_shown(base.provider)} -> {_shown(head.provider)}")
    if base.model != head.model:
        out.append(f"{role} model {_shown(base.model)} -> {_shown(head.model)}")
    for key in sorted(base.parameters.keys() | head.parameters.keys()):
        old, new = base.parameters.get(key), head.parameters.get(key)
        if old != new:
            out.append(f"{role} {_shown(key)} {_shown(old)} -> {_shown(new)}")
    if not out:  # only the name differs: another target of the same make
        out.append(f"{role} {_shown(base.name)} -> {_shown(head.name)}")
    return out


def _judge_changes(base: list[ModelIdentity], head: list[ModelIdentity]) -> list[str]:
    if base == head:
        return []
    if len(base) == len(head) == 1:
        return _model_changes("judge", base[0], head[0])
    names = [", ".join(_shown(j.model or j.name) for j in side) or "(none)" for side in (base, head)]
    return [f"judges {names[0]} -> {names[1]}"]


def differences(base: Provenance | None, head: Provenance | None) -> list[str]:
    """Why results produced as `base` and `head` say nothing about each other ([] when alike, or when
    either is unknown: rows from older runs and AgentV's carry none, and compare as before)."""
    if base is None or head is None or base == head:
        return []
    out = _model_changes("target", base.target, head.target)
    out += _judge_changes(base.judges, head.judges)
    if base.judge_prompt != head.judge_prompt and base.judges and head.judges:
        out.append("judge prompt template changed")
    for grader in sorted(base.plugins.keys() | head.plugins.keys()):
        old, new = base.plugins.get(grader), head.plugins.get(grader)
        if old != new:
            out.append(f"grader {_shown(grader)} {_shown(old)} -> {_shown(new)}")
    return out
