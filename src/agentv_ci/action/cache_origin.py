"""The Action's response cache directory (`cache: true`), and who wrote it.

The directory is saved and restored across workflow runs by `actions/cache`. Whatever runs in a
fork's pull request (its cli agent, its code graders, its hooks) runs in the same container as the
Action and can write any file there, so an entry's own content can never say who wrote it. The
directory is therefore stamped as a whole, in `origin.json`: the repository whose run wrote into it,
and whether that run could have run a fork's code. A fork PR's run stamps it `fork` before it runs
anything and again after (so a stamp the fork's code rewrote is overwritten). A run of the base
repository (a push, a same-repository PR, a `pull_request_target` proven to run the base's code)
never reads a directory stamped `fork`, stamped by another repository, or holding entries without a
stamp: it removes those entries (the cache's own files only) and starts the directory afresh.
`actions/cache` adds a second wall: a cache saved by a PR's run is scoped to that PR's ref, which the
base branch's runs never restore.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentv_ci.errors import UsageError
from agentv_ci.github.event import SECRET_EVENTS_OUTSIDERS_TRIGGER, WorkflowRun
from agentv_ci.github.inputs import ActionInputs
from agentv_ci.running.cache import tracked_by_git
from agentv_ci.running.session import RunRequest

MARKER = "origin.json"
_SHARD_DIR = re.compile(r"^[0-9a-f]{2}$")
_ENTRY = re.compile(r"^([0-9a-f]{64}\.json|.*\.tmp)$")


@dataclass(frozen=True)
class CacheOrigin:
    """Who writes into the cache in this run: `repository` (owner/name), whether the run could have
    run a fork's code (`fork`), and `writer`, a phrase naming the run for messages."""

    repository: str
    fork: bool
    writer: str

    def as_json(self) -> str:
        return json.dumps({"repository": self.repository, "fork": self.fork, "writer": self.writer}) + "\n"


def origin_of(run: WorkflowRun, workspace: Path, *, trust_fork_code: bool, paths: list[Path]) -> CacheOrigin:
    """The origin of this run's cache entries. A `pull_request` from another repository (or a deleted
    or unnamed one) is a fork's run. On the events that carry the base's secrets, the Action has
    already refused a checkout that is not provably the base's code, unless `trust_fork_code`: then
    the run counts as a fork's unless the checkout is proven to be the base's code all the same."""
    repository = run.repository
    pr = run.pull_request
    if run.event_name == "pull_request" and pr is not None:
        whose = f"pull request #{pr.number} from {pr.head_repo or 'an unknown repository'}"
        # Only a head positively in this repository is not a fork's (a missing head repository is).
        return CacheOrigin(repository, not pr.same_repository, f"a run of {whose}")
    if run.event_name in SECRET_EVENTS_OUTSIDERS_TRIGGER and trust_fork_code:
        # lazy: `action.fork_code` loaded only when `origin_of` runs
        from agentv_ci.action.fork_code import refuse_fork_code_with_secrets

        try:
            refuse_fork_code_with_secrets(run, workspace, trusted=False, paths=paths)
        except UsageError:
            return CacheOrigin(repository, True, f"a {run.event_name} run with trust_fork_code")
    where = f" of {pr.head_repo}'s pull request #{pr.number}" if pr is not None else ""
    return CacheOrigin(repository, False, f"a {run.event_name or 'local'} run{where} of {repository or '?'}")


def _read_marker(directory: Path) -> CacheOrigin | None:
    path = directory / MARKER
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    repository, fork, writer = data.get("repository"), data.get("fork"), data.get("writer")
    if not isinstance(repository, str) or not isinstance(fork, bool) or not isinstance(writer, str):
        return None
    return CacheOrigin(repository, fork, writer)


def _entries(directory: Path) -> list[Path]:
    """The cache's own files in `directory` (`<2 hex>/<key>.json` and leftover `.tmp` files), and
    any `<2 hex>` name that is a symlink or a file instead of a directory."""
    found: list[Path] = []
    try:
        children = list(directory.iterdir())
    except OSError:
        return found
    for child in children:
        if not _SHARD_DIR.match(child.name):
            continue
        if child.is_symlink() or not child.is_dir():
            found.append(child)
            continue
        try:
            found += [f for f in child.iterdir() if _ENTRY.match(f.name) or f.is_symlink()]
        except OSError:
            continue
    return found


def _remove(entries: list[Path]) -> None:
    for path in entries:
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:
            pass
        parent = path.parent
        if _SHARD_DIR.match(parent.name):
            try:
                parent.rmdir()  # only when now empty
            except OSError:
                pass


def _symlink_on_the_way(directory: Path, workspace: Path) -> Path | None:
    """A symlink among `directory` and its parents inside the workspace (a PR can commit one to send
    the cache elsewhere); `directory` itself when it lies outside the workspace."""
    try:
        inside = directory.relative_to(workspace)
    except ValueError:
        return directory if directory.is_symlink() else None
    path = workspace
    for part in inside.parts:
        path = path / part
        if path.is_symlink():
            return path
    return None


@dataclass
class CacheDirectory:
    """The Action's cache directory, checked and stamped for this run."""

    directory: Path
    origin: CacheOrigin
    usable: bool = True
    tracked: bool = False  # git tracks files in it: the run refuses it (and says so)

    def settings(self) -> tuple[bool, Path | None]:
        """`RunRequest.cache` and `.cache_dir` for this run: off behind a symlink; a tracked directory
        is handed to the run, which neither reads nor writes it and says so once."""
        if self.usable or self.tracked:
            return True, self.directory
        return False, None

    def stamp(self) -> None:
        """Write this run's origin into the directory (a fork's run: always; a base run: its own)."""
        if not self.usable:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            marker = self.directory / MARKER
            if marker.is_symlink() or marker.is_dir():
                _remove([marker])
            marker.write_text(self.origin.as_json(), encoding="utf-8")
        except OSError:
            pass

    def seal(self) -> list[Path]:
        """After the run: a fork's run stamps the directory again, whatever its code did to it.
        Returns the directory, for handing over to the workspace's owner."""
        if self.usable and self.origin.fork:
            self.stamp()
        return [self.directory]


def prepare_cache_dir(
    directory: Path, origin: CacheOrigin, workspace: Path, warnings: list[str]
) -> CacheDirectory:
    """Check the directory for this run: not usable behind a symlink; left to the run (which refuses
    it, saying so) when git tracks files in it; emptied of entries a base run must not read; stamped."""
    prepared = CacheDirectory(directory, origin)
    link = _symlink_on_the_way(directory, workspace)
    if link is not None:
        warnings.append(
            f"the response cache directory {directory} goes through the symlink {link}; the cache is "
            "off for this run (point `cache_dir` at a plain directory)"
        )
        prepared.usable = False
        return prepared
    if tracked_by_git(directory):
        prepared.usable, prepared.tracked = False, True
        return prepared
    found = _read_marker(directory)
    if not origin.fork:
        entries = _entries(directory)
        foreign = found is None or found.fork or found.repository.lower() != origin.repository.lower()
        if entries and foreign:
            who = found.writer if found is not None else f"an unknown run (no {MARKER})"
            count = sum(1 for entry in entries if entry.name.endswith(".json"))
            warnings.append(
                f"the response cache in {directory} was written by {who}; {origin.writer} never reads "
                f"answers a fork's code could have written: its {count} entr"
                f"{'y was' if count == 1 else 'ies were'} removed and the cache starts empty"
            )
            _remove(entries)
    prepared.stamp()
    return prepared


def action_cache(
    inputs: ActionInputs,
    run: WorkflowRun,
    workspace: Path,
    request: RunRequest,
    *,
    warn: Callable[[str], None],
) -> CacheDirectory | None:
    """With `cache: true`: the `cache_dir` directory (relative to the workspace) prepared for this
    run, and `request` set to use it (`warn` gets what the log should say). None otherwise."""
    if not inputs.cache:
        return None
    text = inputs.cache_dir or ".agentv-ci/response-cache"
    directory = Path(text) if Path(text).is_absolute() else workspace / text
    origin = origin_of(run, workspace, trust_fork_code=inputs.trust_fork_code, paths=list(request.paths))
    warnings: list[str] = []
    prepared = prepare_cache_dir(directory.absolute(), origin, workspace, warnings)
    for line in warnings:
        warn(line)
    request.cache, request.cache_dir = prepared.settings()
    return prepared
