"""The Action's inputs, read from `INPUT_*` and checked the way flags are.

The runner passes each `with:` value as `INPUT_<NAME>` (upper-cased; `action.yml` defaults applied),
always as a string. Nothing here goes through a shell: lists are split with `shlex`, numbers and
booleans are parsed and range-checked, and a typo in a value or a name is bad input (exit 2) naming
the input, never a silently ignored setting.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentv_ci.errors import UsageError

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0", ""})
_SHARD = re.compile(r"^\d+/\d+$")
# A PEP 508 name, optional extras, optional version specifiers: nothing pip reads as a path or URL.
_PACKAGE = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_VERSION = r"(?:===|==|!=|~=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+"
_REQUIREMENT = re.compile(
    rf"^{_PACKAGE}(?:\[\s*{_PACKAGE}(?:\s*,\s*{_PACKAGE})*\s*\])?(?:\s*{_VERSION}(?:\s*,\s*{_VERSION})*)?$"
)


@dataclass(frozen=True)
class InputSpec:
    """One input of `action.yml`: its default there, its description, and how its value is read."""

    default: str
    description: str
    parse: Callable[[str, str], Any]


def _words(name: str, raw: str) -> list[str]:
    try:
        return shlex.split(raw, comments=False, posix=True)
    except ValueError as exc:
        raise UsageError(
            f"input `{name}`: cannot split {raw!r}: {exc}", hint="separate items with spaces or new lines"
        ) from None


def _requirements(name: str, raw: str) -> list[str]:
    items = _words(name, raw)
    for item in items:
        if not _REQUIREMENT.match(item):
            raise UsageError(
                f"input `{name}`: {item!r} is not a package requirement",
                hint="give index package names with optional versions, e.g. `my-graders==1.4.0`; "
                "for local code, build a derived image (docs/github.md, third-party plugins)",
            )
    return items


def _text(name: str, raw: str) -> str | None:
    return raw.strip() or None


def _bool(name: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise UsageError(f"input `{name}` must be true or false, got {raw!r}")


def _number(name: str, raw: str, *, low: float, high: float, low_open: bool) -> float | None:
    text = raw.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    below = value <= low if low_open else value < low
    if math.isnan(value) or below or value > high:
        bound = f"greater than {low:g}" if low_open else f"between {low:g} and {high:g}"
        if high == math.inf:
            bound = f"a number greater than {low:g}" if low_open else f"a number of at least {low:g}"
        else:
            bound = f"a number {bound}"
        raise UsageError(f"input `{name}` must be {bound}, got {raw!r}")
    return value


def _rate(name: str, raw: str) -> float | None:
    return _number(name, raw, low=0.0, high=1.0, low_open=False)


def _positive(name: str, raw: str) -> float | None:
    return _number(name, raw, low=0.0, high=math.inf, low_open=True)


def _count(name: str, raw: str) -> int | None:
    text = raw.strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"input `{name}` must be a whole number of at least 1, got {raw!r}")
    return int(text)


MAX_HISTORY_RUNS = 20  # each one a download of up to 256 MiB, within the search's 300 s


def _history_runs(name: str, raw: str) -> int | None:
    count = _count(name, raw)
    if count is not None and count > MAX_HISTORY_RUNS:
        raise UsageError(f"input `{name}` must be a whole number from 1 to {MAX_HISTORY_RUNS}, got {raw!r}")
    return count


def _shard(name: str, raw: str) -> str | None:
    text = raw.strip()
    if text and not _SHARD.match(text):
        raise UsageError(f"input `{name}` must look like 1/4 (shard i of n), got {raw!r}")
    return text or None


def _pr_number(name: str, raw: str) -> int | None:
    text = raw.strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"input `{name}` must be a pull request number, got {raw!r}")
    return int(text)


# The single source of truth for `action.yml`'s inputs (a test checks the file against this table).
INPUTS: dict[str, InputSpec] = {
    "paths": InputSpec(".", "Eval files or directories, separated by spaces or new lines.", _words),
    "changed_only": InputSpec(
        "true",
        "On pull requests, run only the evals the PR's changed files can affect (all on other events).",
        _bool,
    ),
    "select_all_on": InputSpec(
        "",
        "Globs of files (repo-relative) whose change selects every eval (their content keys every "
        "cached answer), e.g. `src/*`.",
        _words,
    ),
    "base_ref": InputSpec(
        "", "Ref to diff against for selection (default: the pull request's base commit).", _text
    ),
    "target": InputSpec("", "Target name(s) from targets.yaml, separated by spaces (a matrix).", _words),
    "targets_file": InputSpec("", "targets.yaml to use (default: the nearest .agentv/targets.yaml).", _text),
    "threshold": InputSpec(
        "",
        "Per-test pass bar 0..1 for EVERY test: overrides each test's own threshold (execution.threshold "
        "in its eval file, else 0.8), as `run --threshold`. Leave empty to judge each test at its own.",
        _rate,
    ),
    "min_pass_rate": InputSpec("", "Gate: minimum pass rate 0..1, per suite and overall.", _rate),
    "min_mean_score": InputSpec("", "Gate: minimum mean score 0..1, per suite and overall.", _rate),
    "max_regression": InputSpec(
        "", "Gate: largest score drop 0..1 tolerated against the baseline (beyond noise).", _rate
    ),
    "baseline": InputSpec(
        "",
        "Baseline results to diff against: a results file or run directory, or `auto` (the newest "
        "complete results artifact of the base branch).",
        _text,
    ),
    "baseline_ref": InputSpec(
        "",
        "Re-run the selected evals at this ref (or `merge-base`) in a temporary worktree as the baseline.",
        _text,
    ),
    "history": InputSpec(
        "",
        f"Measure flakiness on the last N (at most {MAX_HISTORY_RUNS}) results artifacts of the base "
        "branch (`baseline_artifact`'s name): a failing test they label flaky is a note, not a gate "
        "failure. Needs `github_token`.",
        _history_runs,
    ),
    "baseline_artifact": InputSpec(
        "agentv-ci-results", "Name of the results artifact `baseline: auto` looks for.", _text
    ),
    "repeat": InputSpec("", "Independent attempts per test.", _count),
    "adaptive_repeats": InputSpec(
        "",
        "More attempts, up to this many, for the tests whose verdict or comparison is undecided.",
        _count,
    ),
    "workers": InputSpec("", "Tests in flight at once.", _count),
    "budget_usd": InputSpec(
        "",
        "Stop scheduling tests after spending this many US dollars; refuse to start when even the low "
        "end of the cost estimate is over it.",
        _positive,
    ),
    "max_cost_usd": InputSpec(
        "", "Gate: fail when the run actually cost more than this many US dollars.", _positive
    ),
    "shard": InputSpec("", "Run one stable shard of the tests, as i/n (e.g. 2/4).", _shard),
    "dry_run": InputSpec(
        "false",
        "Check the wiring without calling any model: targets resolve as in a real run, answers are "
        "placeholders, scores are not gated (no API key needed).",
        _bool,
    ),
    "results": InputSpec(
        "",
        "Report on finished results instead of running (run directories or index.jsonl files; "
        "several are merged), e.g. shard artifacts or a fork PR's artifact in a workflow_run workflow.",
        _words,
    ),
    "comment": InputSpec("true", "Create or update one sticky comment on the pull request.", _bool),
    "comment_key": InputSpec(
        "", "Extra key for the sticky comment, when one workflow posts several (default: none).", _text
    ),
    "pr_number": InputSpec(
        "", "Pull request to comment on (for workflow_run workflows; default: the event's PR).", _pr_number
    ),
    "output_dir": InputSpec(
        ".agentv-ci/results", "Where index.jsonl, summary.json and the reports are written.", _text
    ),
    "junit_path": InputSpec("", "JUnit XML file (default: <output_dir>/junit.xml).", _text),
    "sarif_path": InputSpec("", "SARIF 2.1.0 file (default: <output_dir>/results.sarif).", _text),
    "sarif_category": InputSpec("", "SARIF automationDetails.id (default: upload-sarif's category).", _text),
    "github_token": InputSpec(
        "${{ github.token }}", "Token for the PR comment and `baseline: auto` (never printed).", _text
    ),
    "fail_on_error": InputSpec(
        "true", "Execution errors (targets or graders failing) make the step fail (exit 3).", _bool
    ),
    "allow_outside_repo": InputSpec(
        "",
        "Directories outside the repository that eval files may reference (default: none; see "
        "docs/security.md).",
        _words,
    ),
    "trust_fork_code": InputSpec(
        "false",
        "On pull_request_target, workflow_run and other events with this repository's secrets, run "
        "eval files even when the checkout is not provably the base's code (dangerous; see "
        "docs/security.md).",
        _bool,
    ),
    "pass_env": InputSpec(
        "",
        "Environment variables handed to code graders, hooks and cli targets besides the safe "
        "defaults, e.g. a key a grader needs (default: none; see docs/security.md).",
        _words,
    ),
    "cache": InputSpec(
        "false",
        "Answer unchanged requests from the response cache in `cache_dir` (the run and the baseline "
        "re-run); save and restore that directory with actions/cache (see docs/github.md).",
        _bool,
    ),
    "cache_dir": InputSpec(
        ".agentv-ci/response-cache",
        "The response cache's directory with `cache: true`, relative to the workspace (git-ignored, "
        "never committed: a directory git tracks is not used).",
        _text,
    ),
    "html_report": InputSpec(
        "false",
        "Also write the HTML report to `<output_dir>/report.html` and link the run's artifacts from the "
        "PR comment; upload it with actions/upload-artifact after this step (see docs/github.md).",
        _bool,
    ),
    "extra_packages": InputSpec(
        "",
        "Plugin packages pip installs in the container before the run, as requirement specifiers "
        "(`my-graders==1.4.0`); they run with the job's secrets: pin versions (see docs/github.md).",
        _requirements,
    ),
}


@dataclass(frozen=True)
class ActionInputs:
    """Every input, parsed. Empty optional inputs are None (or empty lists)."""

    paths: list[str] = field(default_factory=lambda: ["."])
    changed_only: bool = True
    select_all_on: list[str] = field(default_factory=list)
    base_ref: str | None = None
    target: list[str] = field(default_factory=list)
    targets_file: str | None = None
    threshold: float | None = None
    min_pass_rate: float | None = None
    min_mean_score: float | None = None
    max_regression: float | None = None
    baseline: str | None = None
    baseline_ref: str | None = None
    baseline_artifact: str | None = "agentv-ci-results"
    history: int | None = None
    repeat: int | None = None
    adaptive_repeats: int | None = None
    workers: int | None = None
    budget_usd: float | None = None
    max_cost_usd: float | None = None
    shard: str | None = None
    dry_run: bool = False
    results: list[str] = field(default_factory=list)
    comment: bool = True
    comment_key: str | None = None
    pr_number: int | None = None
    output_dir: str | None = ".agentv-ci/results"
    junit_path: str | None = None
    sarif_path: str | None = None
    sarif_category: str | None = None
    github_token: str | None = None
    fail_on_error: bool = True
    allow_outside_repo: list[str] = field(default_factory=list)
    trust_fork_code: bool = False
    pass_env: list[str] = field(default_factory=list)
    cache: bool = False
    cache_dir: str | None = ".agentv-ci/response-cache"
    html_report: bool = False
    extra_packages: list[str] = field(default_factory=list)


def _env_name(name: str) -> str:
    return "INPUT_" + name.replace(" ", "_").upper()


def read_inputs(env: Mapping[str, str]) -> ActionInputs:
    """Parse every `INPUT_*`. An input the Action does not have (a typo such as `treshold`, or `args`)
    is bad input with a suggestion: GitHub itself only warns and the setting would be lost."""
    # lazy: `loading.context` loaded only when `read_inputs` runs
    from agentv_ci.loading.context import did_you_mean

    known = {_env_name(name): name for name in INPUTS}
    for key in env:
        if key.startswith("INPUT_") and key not in known:
            written = key[len("INPUT_") :].lower()
            suggestion = did_you_mean(written.replace("-", "_"), INPUTS)
            hint = f"did you mean `{suggestion}`?" if suggestion else None
            if written in ("args", "entrypoint"):
                hint = "this Docker action takes named inputs, e.g. `with: {dry_run: true}`"
            raise UsageError(f"the action has no input `{written}`", hint=hint)
    values: dict[str, Any] = {}
    for name, spec in INPUTS.items():
        # A default that is an expression (`${{ github.token }}`) only means something to the runner.
        fallback = "" if "${{" in spec.default else spec.default
        raw = env.get(_env_name(name), fallback)
        values[name] = spec.parse(name, raw)
    if values["paths"] == []:
        values["paths"] = ["."]
    if values["output_dir"] is None:
        values["output_dir"] = INPUTS["output_dir"].default
    if values["cache_dir"] is None:
        values["cache_dir"] = INPUTS["cache_dir"].default
    return ActionInputs(**values)
