"""The merge-base of base and head, deepening a shallow clone step by step until it is there."""

from __future__ import annotations

from pathlib import Path

from agentv_ci.selection.git import REMOTE, GitError, has_remote, is_shallow, run_git

FIRST_DEEPEN = 50  # commits added by the first `git fetch --deepen`; each later step doubles it
MAX_DEEPEN_STEPS = 6  # 50 + 100 + ... + 1600: about 3,150 commits before giving up
FULL_HISTORY_HINT = (
    "fetch the full history: `actions/checkout` with `fetch-depth: 0` (or `git fetch --unshallow`)"
)


def merge_base_of(repo: Path, base: str, head: str) -> str | None:
    """`git merge-base base head`, or None when the two share no commit in this clone."""
    done = run_git("merge-base", base, head, cwd=repo, check=False)
    if done.returncode == 0:
        return done.stdout.decode().strip() or None
    if done.returncode == 1:  # no common ancestor (in the history present)
        return None
    stderr = done.stderr.decode("utf-8", "replace").strip()
    raise GitError(f"`git merge-base {base} {head}` failed: {stderr or done.returncode}")


def find_merge_base(
    repo: Path,
    base: str,
    head: str,
    *,
    names: tuple[str, str] | None = None,
    first_deepen: int = FIRST_DEEPEN,
    max_steps: int = MAX_DEEPEN_STEPS,
) -> str:
    """The merge-base of the commits `base` and `head`. In a shallow clone without it, fetch deeper
    history from `origin` (`--deepen=N`, N doubling, at most `max_steps` fetches); `GitError` (exit 2)
    with a `fetch-depth: 0` hint when it still is not there. `names` are the refs as the user wrote them."""
    base_name, head_name = names or (base, head)
    found = merge_base_of(repo, base, head)
    if found is not None:
        return found
    if not is_shallow(repo):
        raise GitError(
            f"{base_name} and {head_name} have no common ancestor",
            hint="compare against the branch this one was started from (--base)",
        )
    if not has_remote(repo, REMOTE):
        raise GitError(
            f"the merge-base of {base_name} and {head_name} is not in this shallow clone, "
            f"and there is no `{REMOTE}` remote to fetch it from",
            hint=FULL_HISTORY_HINT,
        )
    depth = first_deepen
    steps = 0
    while steps < max_steps:
        steps += 1
        _deepen(repo, depth, base)
        found = merge_base_of(repo, base, head)
        if found is not None:
            return found
        if not is_shallow(repo):
            raise GitError(f"{base_name} and {head_name} have no common ancestor")
        depth *= 2
    raise GitError(
        f"the merge-base of {base_name} and {head_name} is not in this shallow clone "
        f"(deepened {steps} time(s) from `{REMOTE}`, {first_deepen * (2**steps - 1)} commits)",
        hint=FULL_HISTORY_HINT,
    )


def _deepen(repo: Path, depth: int, base: str) -> None:
    """`git fetch --deepen`: it moves every shallow boundary back (base's and head's alike). Asking for
    the base commit keeps the fetch to it; a server that refuses a commit id gets the default refspec."""
    deepen = ("fetch", "--no-tags", "--quiet", f"--deepen={depth}", REMOTE)
    if run_git(*deepen, base, cwd=repo, check=False).returncode != 0:
        run_git(*deepen, cwd=repo)
