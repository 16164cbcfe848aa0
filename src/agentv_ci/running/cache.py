"""The on-disk response cache: where it lives, when it may be read, and its entries.

Entries are one JSON file each under `<dir>/<2 hex>/<key>.json`, written atomically (rename), so
concurrent runs and crashes never leave a half-written entry. What a key covers is decided in
running/cache_keys.py (documented in docs/running.md).

Where: `--cache-dir DIR` when given, else `$AGENTV_CI_CACHE_DIR`, else
`$XDG_CACHE_HOME/agentv-ci/responses` (`~/.cache/agentv-ci/responses`): outside the checkout, so a
pull request cannot bring answers with it. A cache directory holding any file git tracks (a
committed `.agentv-ci/cache/`, or `--cache-dir` pointed inside the repository at committed files) is
never read nor written, and the run says so once. Files committed under the old default,
`.agentv-ci/cache/` in the checkout, are never read either; the run says that once too.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import msgspec

from agentv_ci.model.cache_use import CacheCounts, CacheUse
from agentv_ci.model.result import TargetResponse
from agentv_ci.security.atomic_write import write_atomically
from agentv_ci.security.redaction import redact_bytes

# The cache's location before agentv-ci kept it outside the checkout: files there are never read.
LEGACY_CACHE_DIR = Path(".agentv-ci") / "cache"
CACHE_DIR_ENV = "AGENTV_CI_CACHE_DIR"
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(TargetResponse)
_warned: set[str] = set()  # each warning once per process (a baseline re-run opens the cache again)


def default_cache_dir() -> Path:
    """`$AGENTV_CI_CACHE_DIR`, else `$XDG_CACHE_HOME/agentv-ci/responses`, else
    `~/.cache/agentv-ci/responses`."""
    chosen = os.environ.get(CACHE_DIR_ENV)
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentv-ci" / "responses"


def tracked_by_git(directory: Path) -> bool:
    """Whether git tracks any file in `directory` (it may not exist yet: then nothing is tracked).
    False outside a repository or without git."""
    if not directory.is_dir():
        return False
    try:
        done = subprocess.run(
            ["git", "ls-files", "-z", "--", "."],
            cwd=directory,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and bool(done.stdout.strip(b"\0"))


def _once(message: str, warnings: list[str]) -> None:
    if message not in _warned:
        _warned.add(message)
        warnings.append(message)


def open_cache(directory: Path | None, warnings: list[str]) -> ResponseCache | None:
    """The cache at `directory` (None: the default), or None when git tracks files in it. Adds a
    warning (once per process) for a tracked cache directory and for tracked files under the old
    in-checkout location `.agentv-ci/cache/`."""
    chosen = (directory or default_cache_dir()).absolute()
    legacy = LEGACY_CACHE_DIR.absolute()
    if legacy != chosen and tracked_by_git(legacy):
        _once(
            f"{LEGACY_CACHE_DIR}/ holds files committed to the repository; they are never read "
            f"(the response cache is {chosen})",
            warnings,
        )
    if tracked_by_git(chosen):
        _once(
            f"the response cache directory {chosen} holds files tracked by git; it is not used "
            "(nothing is read from it or written to it): point --cache-dir outside the repository",
            warnings,
        )
        return None
    return ResponseCache(chosen)


class ResponseCache:
    """The entries of one cache directory, and how this run used them: the targets' answers and the
    judges' replies are counted apart (`judge=True`)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or default_cache_dir()
        self._targets = CacheCounts()  # counted in place as the run reads and writes
        self._judges = CacheCounts()

    @property
    def hits(self) -> int:
        return self._targets.hits + self._judges.hits

    @property
    def misses(self) -> int:
        return self._targets.misses + self._judges.misses

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str, *, judge: bool = False) -> TargetResponse | None:
        counts = self._judges if judge else self._targets
        try:
            data = self._path(key).read_bytes()
            response = _decoder.decode(data)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError, RecursionError):  # a miss
            counts.misses += 1
            return None
        counts.hits += 1
        _count_saving(counts, response)
        return response

    def peek(self, key: str) -> TargetResponse | None:
        """The entry under `key`, not counted as a hit (the cost estimate looks ahead)."""
        try:
            return _decoder.decode(self._path(key).read_bytes())
        except (OSError, msgspec.DecodeError, msgspec.ValidationError, RecursionError):  # a miss
            return None

    def use(self) -> CacheUse:
        """How this run used the cache so far (answers read back, requests sent, what was saved)."""
        targets, judges = self._targets, self._judges
        return CacheUse(
            hits=targets.hits,
            misses=targets.misses,
            saved_input_tokens=targets.saved_input_tokens,
            saved_output_tokens=targets.saved_output_tokens,
            saved_usd=round(targets.saved_usd, 6),
            unpriced=targets.unpriced,
            judge=msgspec.structs.replace(judges, saved_usd=round(judges.saved_usd, 6)),
        )

    def put(self, key: str, response: TargetResponse) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = redact_bytes(_encoder.encode(msgspec.structs.replace(response, raw=None)))
        write_atomically(path, data, mode=0o600)  # answers: readable by this user only


def _count_saving(counts: CacheCounts, response: TargetResponse) -> None:
    usage = response.token_usage
    if usage is not None:
        counts.saved_input_tokens += usage.input
        counts.saved_output_tokens += usage.output
    if response.cost_usd is None:
        counts.unpriced += 1
    else:
        counts.saved_usd += response.cost_usd
