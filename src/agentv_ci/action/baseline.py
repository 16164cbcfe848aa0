"""The baseline a pull request's results are diffed against, from one of four sources.

- `baseline: PATH`: a results file or run directory already on disk (e.g. a downloaded artifact).
- `baseline: auto`: the newest complete results artifact of the base branch, via the REST API; when
  none can be had (the listing fails or is refused, none is there, none passes the checks), the
  committed sidecars below, named with why the artifact was not used.
- `baseline_ref: REF` (or `merge-base`): the selected evals re-run at REF in a temporary git worktree;
  with the response cache on, prompts that did not change cost nothing the second time.
- none of these: each eval file's committed `<eval>.baseline.jsonl` sidecar, where there is one.

A baseline that cannot be had is a warning, not a failure: the run is still reported, without diffs,
and the reports say under the verdict that the regression gate was not applied (reporting/markdown.py).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import msgspec

from agentv_ci.errors import AgentvCiError, UsageError
from agentv_ci.github.event import WorkflowRun
from agentv_ci.github.inputs import ActionInputs
from agentv_ci.model.baseline import BaselineSource
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.running.session import RunRequest, execute_run

_NONE_USED = "; no baseline used"


@dataclass
class Baseline:
    """The baseline summary (None when there is none), where it came from or why there is none
    (`source`: None when no baseline was asked for), and warnings for the log."""

    summary: RunSummary | None = None
    source: BaselineSource | None = None
    warnings: list[str] = field(default_factory=list)


def missing_baseline(reason: str) -> Baseline:
    """No baseline, for `reason` (one line: the log's warning, the summary and the comment say it)."""
    return Baseline(source=BaselineSource("none", reason=reason), warnings=[reason + _NONE_USED])


def not_compared(inputs: ActionInputs, why: str) -> Baseline:
    """No baseline because the step never got to it (`why`), said in one line when the inputs asked
    for one; nothing is said when they did not."""
    if inputs.baseline_ref:
        return missing_baseline(f"baseline_ref: {inputs.baseline_ref}: not compared: {why}")
    if inputs.baseline:
        return missing_baseline(f"baseline: {inputs.baseline}: not compared: {why}")
    return Baseline()


@contextmanager
def _working_directory(path: Path) -> Iterator[None]:
    previous = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


def _in_tree(path: Path, workspace: Path, tree: Path) -> Path | None:
    """`path` (in the workspace) as it lies in the worktree, or None when it is outside the repo."""
    try:
        relative = path.resolve().relative_to(workspace.resolve())
    except ValueError:
        return None
    return tree / relative


def rerun_at_ref(
    ref: str, eval_paths: Sequence[Path], request: RunRequest, workspace: Path
) -> tuple[RunSummary, list[str], str]:
    """Run the same evals, with the same options, in a worktree at `ref`. Evals that do not exist
    there are left out (they show as `new`). Returns the summary, any warning and the commit run."""
    # lazy: git change selection loaded only when `rerun_at_ref` runs
    from agentv_ci.selection import checkout_worktree
    from agentv_ci.selection.git import commit_of

    warnings: list[str] = []
    with (
        checkout_worktree(workspace, ref) as tree,
        tempfile.TemporaryDirectory(prefix="agentv-ci-base-") as out,
    ):
        commit = commit_of(tree, "HEAD") or ref
        paths = [
            p for p in (_in_tree(e, workspace, tree) for e in eval_paths) if p is not None and p.exists()
        ]
        if not paths:
            note = f"none of the selected evals exists at {ref}: every test is new"
            return RunSummary(results=[]), [note], commit
        targets_file = request.targets_file
        if targets_file is not None:
            mapped = _in_tree(targets_file, workspace, tree)
            targets_file = mapped if mapped is not None and mapped.exists() else targets_file
        base_request = replace(
            request,
            paths=paths,
            output_dir=Path(out),
            targets_file=targets_file,
            cache=True if request.cache is None else request.cache,
            cache_dir=(workspace / request.cache_dir).resolve() if request.cache_dir else None,
            selection={},
            quiet=True,
        )
        with _working_directory(tree):
            outcome = execute_run(base_request)
        warnings += outcome.warnings
        # The run's rows live in `out`, removed on return: read them now (a baseline is compared
        # test by test, so it is held in memory anyway).
        summary = msgspec.structs.replace(outcome.summary, results=list(outcome.summary.results))
        return summary, warnings, commit


def resolve_baseline(
    inputs: ActionInputs,
    run: WorkflowRun,
    *,
    workspace: Path,
    eval_paths: Sequence[Path],
    request: RunRequest | None,
    merge_base: Callable[[], str | None],
    results: Iterable[TestResult] = (),
    from_artifact: Callable[[], Baseline] | None = None,
) -> Baseline:
    """The baseline the inputs ask for; when they ask for none, the committed sidecars of the eval
    files `results` came from (if any). `from_artifact`: the platform's `baseline: auto` (GitHub's
    results artifacts by default). Raises `UsageError` only for contradictory inputs."""
    # lazy: the results store (msgspec) loaded only when `resolve_baseline` runs
    from agentv_ci.results.results_file import load_run

    if inputs.baseline and inputs.baseline_ref:
        raise UsageError("set either `baseline` or `baseline_ref`, not both")
    if inputs.baseline_ref:
        if request is None:
            raise UsageError("`baseline_ref` re-runs evals; it cannot be used with `results`")
        ref = inputs.baseline_ref
        if ref == "merge-base":
            found = merge_base()
            if found is None:
                return missing_baseline("baseline_ref: merge-base: no base to compute a merge-base from")
            ref = found
        try:
            summary, warnings, commit = rerun_at_ref(ref, eval_paths, request, workspace)
        except AgentvCiError as exc:
            return missing_baseline(f"the baseline run at {ref} failed: {exc.message}")
        source = BaselineSource("commit", commit=commit, ref=inputs.baseline_ref)
        return Baseline(summary, source, warnings)
    if inputs.baseline == "auto":
        artifact = from_artifact() if from_artifact is not None else artifact_baseline(inputs, run)
        return artifact if artifact.summary is not None else _sidecars_instead(artifact, results, workspace)
    if inputs.baseline:
        path = Path(inputs.baseline)
        if not path.is_absolute():
            path = workspace / path
        return Baseline(load_run(path), BaselineSource("path", name=inputs.baseline))
    return _sidecars(results, workspace) or Baseline()


def _sidecars(results: Iterable[TestResult], workspace: Path) -> Baseline | None:
    """The committed sidecars of the eval files `results` came from, or None when none has one."""
    # lazy: `results.sidecars` loaded only when `_sidecars` runs
    from agentv_ci.results.sidecars import load_sidecar_baseline

    sidecars = load_sidecar_baseline(results, workspace)
    return None if sidecars is None else Baseline(sidecars.summary, sidecars.source)


def _sidecars_instead(missing: Baseline, results: Iterable[TestResult], workspace: Path) -> Baseline:
    """`baseline: auto` had no artifact (`missing`): the committed sidecars, when there are any, so
    the regression gate is not quietly off where a baseline is committed."""
    reason = missing.source.reason if missing.source is not None else None
    found = _sidecars(results, workspace)
    if found is None or found.source is None or not reason:
        return missing
    passed_over = [w for w in missing.warnings if not w.endswith(_NONE_USED)]
    return Baseline(
        found.summary,
        msgspec.structs.replace(found.source, reason=reason),
        [f"{reason}; using the committed sidecars instead", *passed_over],
    )


def artifact_baseline(inputs: ActionInputs, run: WorkflowRun) -> Baseline:
    """`baseline: auto` on GitHub: the base branch's newest complete results artifact, or none."""
    # lazy: the GitHub API client (httpx) loaded only when `artifact_baseline` runs
    from agentv_ci.github.api import GitHubApiError, GitHubClient
    from agentv_ci.github.artifacts import DEFAULT_ARTIFACT_NAME, download_baseline

    name = inputs.baseline_artifact or DEFAULT_ARTIFACT_NAME
    if not inputs.github_token:
        return missing_baseline("baseline: auto needs `github_token`")
    if not run.repository or not run.base_branch:
        return missing_baseline("baseline: auto needs the repository and a base branch")
    try:
        with GitHubClient(inputs.github_token, run.repository, api_url=run.api_url) as client:
            found = download_baseline(client, run.base_branch, name=name)
    except (GitHubApiError, OSError, ValueError) as exc:
        return missing_baseline(f"baseline: auto: {exc}")
    if found.directory is None or found.summary is None:
        missing = missing_baseline(f"baseline: auto: {found.reason}")
        missing.warnings.extend(f"baseline: auto: passed over {line}" for line in found.passed_over)
        return missing
    source = BaselineSource(
        "artifact",
        name=name,
        artifact_id=found.artifact_id,
        run_id=found.run_id,
        run_url=_run_url(run, found.run_id),
        commit=found.commit,
    )
    return Baseline(found.summary, source)


def _run_url(run: WorkflowRun, run_id: int | None) -> str | None:
    if run_id is None or not run.repository:
        return None
    return f"{run.server_url.rstrip('/')}/{run.repository}/actions/runs/{run_id}"
