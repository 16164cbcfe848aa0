"""Git plumbing: every git call goes through `run_git` (timeout, C locale, no prompts, clear errors)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from agentv_ci.errors import UsageError

BASE_ENV = "GITHUB_BASE_REF"  # set by GitHub Actions on pull_request events: the target branch

GIT_TIMEOUT_S = 120.0
REMOTE = "origin"


class GitError(UsageError):
    """A git command failed, git is missing, or the directory is not a repository (exit 2)."""


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"LC_ALL": "C", "LANGUAGE": "C", "GIT_TERMINAL_PROMPT": "0"})
    # Never open an editor or a pager, whatever the user's config says.
    env.update({"GIT_EDITOR": "true", "GIT_PAGER": "cat"})
    return env


def _hint(stderr: str, cwd: Path | None) -> str | None:
    if "dubious ownership" in stderr:
        where = cwd if cwd is not None else Path.cwd()
        return f"trust it: git config --global --add safe.directory {where}"
    if "not a git repository" in stderr:
        return "selection by changes needs a git checkout; run on explicit PATHS without --changed"
    return None


def run_git(
    *args: str, cwd: Path | None, timeout: float = GIT_TIMEOUT_S, check: bool = True
) -> subprocess.CompletedProcess[bytes]:
    """Run `git ARGS` in `cwd`. Raises `GitError` when git is missing, times out, or (with `check`)
    exits non-zero; the message names the command and git's own last error line. On a timeout or an
    interrupt the whole process group goes (a fetch's ssh or remote helper included)."""
    command = ["git", *args]
    try:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=_environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError:
        if cwd is not None and not cwd.is_dir():
            raise GitError(f"{cwd} is not a directory") from None
        raise GitError(
            "git is not installed (or not on PATH)",
            hint="install git, or run on explicit PATHS without --changed",
        ) from None
    except NotADirectoryError:
        raise GitError(f"{cwd} is not a directory") from None
    try:
        stdout, stderr_bytes = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        raise GitError(f"`git {' '.join(args)}` did not finish within {timeout:.0f} s") from None
    except BaseException:
        _kill_group(process)
        raise
    done = subprocess.CompletedProcess(command, process.returncode, stdout, stderr_bytes)
    if check and done.returncode != 0:
        stderr = stderr_bytes.decode("utf-8", "replace").strip()
        last = stderr.splitlines()[-1] if stderr else f"exit status {done.returncode}"
        raise GitError(f"`git {' '.join(args)}` failed: {last}", hint=_hint(stderr, cwd))
    return done


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        process.kill()
    process.communicate()


def git_text(*args: str, cwd: Path | None, timeout: float = GIT_TIMEOUT_S) -> str:
    """Stdout of a git command that must succeed, stripped."""
    return run_git(*args, cwd=cwd, timeout=timeout).stdout.decode("utf-8", "surrogateescape").strip()


def repo_toplevel(path: Path) -> Path:
    """The root of the work tree holding `path` (a file or a directory)."""
    start = path if path.is_dir() else path.parent
    if not start.exists():
        raise GitError(f"{path} does not exist")
    done = run_git("rev-parse", "--show-toplevel", cwd=start, check=False)
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", "replace")
        hint = _hint(stderr, start) or _hint("not a git repository", start)
        if "dubious ownership" in stderr:
            raise GitError(f"git refuses to read {start}: it is owned by another user", hint=hint)
        raise GitError(f"{start} is not inside a git repository", hint=hint)
    return Path(done.stdout.decode("utf-8", "surrogateescape").strip())


def commit_of(repo: Path, ref: str) -> str | None:
    """The commit sha `ref` names, or None."""
    if not ref or ref.startswith("-"):
        return None
    done = run_git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=repo, check=False)
    sha = done.stdout.decode().strip()
    return sha if done.returncode == 0 and sha else None


def has_remote(repo: Path, name: str = REMOTE) -> bool:
    return name in git_text("remote", cwd=repo).split()


def is_shallow(repo: Path) -> bool:
    return git_text("rev-parse", "--is-shallow-repository", cwd=repo) == "true"


def resolve_commit(repo: Path, ref: str) -> str:
    """The commit `ref` names: `ref`, else `origin/<ref>`, else `refs/remotes/origin/<ref>`. A branch
    or a full commit id known only on the remote (a CI checkout fetches just the commit under test)
    is fetched from `origin` first."""
    for candidate in (ref, f"{REMOTE}/{ref}", f"refs/remotes/{REMOTE}/{ref}"):
        sha = commit_of(repo, candidate)
        if sha is not None:
            return sha
    fetchable = _looks_like_sha(ref) or _looks_like_branch(ref)
    if fetchable and has_remote(repo):
        depth = ["--depth=1"] if is_shallow(repo) else []
        spec, local = (
            (ref, ref)
            if _looks_like_sha(ref)
            else (
                f"+refs/heads/{ref}:refs/remotes/{REMOTE}/{ref}",
                f"refs/remotes/{REMOTE}/{ref}",
            )
        )
        fetched = run_git("fetch", "--no-tags", "--quiet", *depth, REMOTE, spec, cwd=repo, check=False)
        if fetched.returncode == 0:
            sha = commit_of(repo, local)
            if sha is not None:
                return sha
    raise GitError(
        f"unknown git revision {ref!r}",
        hint=f"tried {ref}, {REMOTE}/{ref} and refs/remotes/{REMOTE}/{ref}; fetch it first "
        f"(e.g. git fetch {REMOTE} {ref}) or check out with `fetch-depth: 0`",
    )


def _looks_like_sha(ref: str) -> bool:
    return len(ref) in (40, 64) and all(ch in "0123456789abcdef" for ch in ref)


def _looks_like_branch(ref: str) -> bool:
    return (
        bool(ref)
        and not ref.startswith(("-", "refs/", "/"))
        and not any(ch in ref for ch in " ~^:?*[\\")
        and ".." not in ref
        and "@{" not in ref
        and ref != "HEAD"
    )


def mark_safe_directory(path: Path) -> None:
    """Add `path` to the global `safe.directory` list unless it (or `*`) is there already: a checkout
    owned by another user (a Docker action's mounted workspace) is otherwise refused by git."""
    listed = run_git("config", "--global", "--get-all", "safe.directory", cwd=None, check=False)
    entries = listed.stdout.decode("utf-8", "surrogateescape").splitlines()
    if str(path) in entries or "*" in entries:
        return
    run_git("config", "--global", "--add", "safe.directory", str(path), cwd=None)
