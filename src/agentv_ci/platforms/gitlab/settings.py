"""`agentv-ci gitlab`'s settings: the Action's inputs, as flags or `AGENTV_CI_<NAME>` variables.

Every input of action.yml (github/inputs.py's `INPUTS`, the one source of truth) but `github_token`
is a flag of the same name with dashes (`--changed-only`, `--max-regression 0.05`, `--paths=evals`)
and a variable `AGENTV_CI_<NAME>` (`AGENTV_CI_MAX_REGRESSION=0.05`), a flag winning over its
variable. A boolean flag alone means true (`--comment false` and `--comment=false` work too), `--no-<name>`
false. Values are parsed and range-checked
by the same parsers as the Action's inputs, so a bad value is the same bad input (exit 2).
`baseline_artifact` names the job whose artifacts hold the results (default: this job, CI_JOB_NAME).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from agentv_ci.errors import UsageError
from agentv_ci.github.inputs import INPUTS, ActionInputs, _bool, read_inputs

__all__ = ["GITLAB_INPUTS", "read_settings"]

# The GitLab token is AGENTV_CI_GITLAB_TOKEN, never a flag (a flag would show in the job's log).
_BOOL_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0"})
_INPUT = re.compile(r"input `([a-z_]+)`")
GITLAB_INPUTS = {name: spec for name, spec in INPUTS.items() if name != "github_token"}


def _flag_values(args: Sequence[str]) -> dict[str, str]:
    # lazy: `loading.context` loaded only when `_flag_values` runs
    from agentv_ci.loading.context import did_you_mean

    values: dict[str, str] = {}
    items = list(args)
    index = 0
    while index < len(items):
        item = items[index]
        index += 1
        if not item.startswith("--") or item == "--":
            raise UsageError(f"`agentv-ci gitlab` takes only --name value flags, got {item!r}")
        written, has_value, value = item[2:].partition("=")
        name = written.replace("-", "_")
        negated = (
            name.startswith("no_") and name[3:] in GITLAB_INPUTS and GITLAB_INPUTS[name[3:]].parse is _bool
        )
        if negated:
            name = name[3:]
        spec = GITLAB_INPUTS.get(name)
        if spec is None:
            suggestion = did_you_mean(name, GITLAB_INPUTS)
            hint = f"did you mean `--{suggestion.replace('_', '-')}`?" if suggestion else None
            if name == "github_token":
                hint = "on GitLab the token is the AGENTV_CI_GITLAB_TOKEN variable"
            raise UsageError(f"`agentv-ci gitlab` has no flag `--{written}`", hint=hint)
        if spec.parse is _bool and not has_value:
            value = "false" if negated else "true"
            if not negated and index < len(items) and items[index].strip().lower() in _BOOL_WORDS:
                value = items[index]  # `--changed-only false`
                index += 1
        elif negated:
            raise UsageError(f"`--no-{name.replace('_', '-')}` takes no value")
        elif not has_value:
            if index >= len(items):
                raise UsageError(f"`--{written}` needs a value")
            value = items[index]
            index += 1
        # a list flag given twice adds to it (each value split as the input is)
        values[name] = f"{values[name]}\n{value}" if name in values and spec.default == "" else value
    return values


def read_settings(args: Sequence[str], env: Mapping[str, str], *, job_name: str) -> ActionInputs:
    """The step's inputs from `args` (flags) over `env` (`AGENTV_CI_<NAME>`) over action.yml's defaults."""
    flags = _flag_values(args)
    raw: dict[str, str] = {}
    for name in GITLAB_INPUTS:
        variable = env.get(f"AGENTV_CI_{name.upper()}")
        if name in flags:
            raw[f"INPUT_{name.upper()}"] = flags[name]
        elif variable is not None:
            raw[f"INPUT_{name.upper()}"] = variable
    if "INPUT_BASELINE_ARTIFACT" not in raw and job_name:
        raw["INPUT_BASELINE_ARTIFACT"] = job_name
    try:
        return read_inputs(raw)
    except UsageError as exc:  # name the flag and the variable, not action.yml's input
        message = _INPUT.sub(
            lambda m: f"`--{m[1].replace('_', '-')}` (AGENTV_CI_{m[1].upper()})", exc.message
        )
        raise UsageError(message, hint=exc.hint) from None
