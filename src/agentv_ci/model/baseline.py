"""Where a run's baseline came from, or why there was none (the log, the Markdown summary, the PR
comment and `summary.json` name it, so a reader knows what a delta was measured against)."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["BaselineKind", "BaselineSource"]

BaselineKind = Literal["artifact", "commit", "path", "sidecar", "none"]


class BaselineSource(msgspec.Struct, frozen=True, omit_defaults=True):
    """One baseline's provenance.

    - `artifact`: a results artifact (`name`, `artifact_id`) of a workflow run (`run_id`, `run_url`),
      made from `commit` when the API said so (`baseline: auto`).
    - `commit`: the evals re-run at `commit` (`ref`: what was asked for, e.g. `merge-base`).
    - `path`: results on disk (`name`: the path as given: `--baseline DIR`, `baseline: PATH`).
    - `sidecar`: the committed `<eval>.baseline.jsonl` files next to the eval files run (`files`:
      their paths, repo-relative when possible), used when no other baseline was given, or when
      `baseline: auto` found no artifact (`reason`: why it found none).
    - `none`: a baseline was asked for and none could be had; `reason` says why.
    """

    kind: BaselineKind
    name: str = ""
    artifact_id: int | None = None
    run_id: int | None = None
    run_url: str | None = None
    commit: str | None = None
    ref: str | None = None
    reason: str | None = None
    files: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        return self.kind != "none"

    def describe(self) -> str:
        """One plain-text line: `artifact 'agentv-ci-results' (id 12) of workflow run 345 (URL), commit
        SHA`, `re-run at commit SHA (merge-base)`, `results at DIR`, `committed sidecar FILE, ...` or
        `none: REASON` (a sidecar used in place of an artifact adds `(fallback: REASON)`)."""
        if self.kind == "artifact":
            text = f"artifact {self.name!r}" + (f" (id {self.artifact_id})" if self.artifact_id else "")
            if self.run_id is not None:
                text += f" of workflow run {self.run_id}" + (f" ({self.run_url})" if self.run_url else "")
            return text + (f", commit {self.commit}" if self.commit else "")
        if self.kind == "commit":
            asked = f" ({self.ref})" if self.ref and self.ref != self.commit else ""
            return f"re-run at commit {self.commit or self.ref or '?'}{asked}"
        if self.kind == "path":
            return f"results at {self.name}"
        if self.kind == "sidecar":
            fallback = f" (fallback: {self.reason})" if self.reason else ""
            return "committed sidecar " + ", ".join(self.files) + fallback
        return f"none: {self.reason or 'no reason recorded'}"
